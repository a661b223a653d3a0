"""Workflow schedules end to end over HTTP, against a real ``parley serve --clock manual``
(workflow-format.md, "Schedules"): a workflow with ``schedule`` starts its own runs as the manual clock
passes its due times, one at a time (``schedule_skipped`` in the playbook's events); saving a version
without a schedule, or retiring the workflow, stops it.

Each test works in a playbook of its own and retires what it scheduled, so the tests share one server
and its clock.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from tool_serving import PlaybookClient, serving_manually, serving_with, writer_and_viewer

pytestmark = pytest.mark.http

PLAYBOOKS = [f"s{n:02d}" for n in range(1, 10)]
#: The playbook of the restart test, which runs servers of its own.
RESTARTED = "s10"
OPERATOR = writer_and_viewer([*PLAYBOOKS, RESTARTED])
APPROVE = "approve-campaign-brief"
HOUR = 3600

#: Every hour, a run whose output is its input.
HOURLY = """\
document: { dsl: '1.0.3', namespace: campaigns, name: hourly, version: '1.0.0' }
schedule: { every: PT1H }
do:
  - keep: { set: '${ $data }' }
"""

#: The same steps, without a schedule.
UNSCHEDULED = """\
document: { dsl: '1.0.3', namespace: campaigns, name: hourly, version: '1.0.1' }
do:
  - keep: { set: '${ $data }' }
"""

#: At minute 0 of every hour (cron, UTC).
ON_THE_HOUR = """\
document: { dsl: '1.0.3', namespace: campaigns, name: on-the-hour, version: '1.0.0' }
schedule: { cron: '0 * * * *' }
do:
  - keep: { set: '${ $data }' }
"""

#: Every hour, a run that asks a person and waits for the answer.
ASKING = """\
document: { dsl: '1.0.3', namespace: campaigns, name: asking, version: '1.0.0' }
schedule: { every: PT1H }
do:
  - ask:
      call: run_definition
      with:
        type: interaction
        name: approve-campaign-brief
        input: { owner: maria@example.com, review: '${ "Due " & $data.schedule.due }' }
"""


class Playbook(PlaybookClient):
    def save(self, definition_type: str, name: str, source: str) -> dict[str, Any]:
        created = self.post(f"/definitions/{definition_type}", {"name": name, "source": source})
        assert created.status_code == 201, created.text
        body: dict[str, Any] = created.json()
        return body

    def update(self, name: str, source: str) -> dict[str, Any]:
        reply = self.http.put(
            f"{self.base}/definitions/workflow/{name}",
            json={"source": source},
            headers={"Authorization": "Bearer dev-token"},
        )
        assert reply.status_code == 200, reply.text
        body: dict[str, Any] = reply.json()
        return body

    def retire(self, name: str) -> None:
        reply = self.post(f"/definitions/workflow/{name}/retire", {})
        assert reply.status_code == 200, reply.text

    def runs_of(self, name: str) -> list[dict[str, Any]]:
        """The workflow's runs, oldest first."""
        reply = self.get("/runs", {"type": "workflow", "name": name, "limit": "100"})
        assert reply.status_code == 200, reply.text
        runs: list[dict[str, Any]] = reply.json()["runs"]
        return list(reversed(runs))

    def events_of(self, event_type: str) -> list[dict[str, Any]]:
        reply = self.get("/events", {"type": event_type, "order": "asc", "limit": "100"})
        assert reply.status_code == 200, reply.text
        events: list[dict[str, Any]] = reply.json()["events"]
        return events


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with serving_with(tmp_path_factory.mktemp("serve-schedules"), OPERATOR) as url:
        yield url


_next_playbook = iter(PLAYBOOKS)


@pytest.fixture
def playbook(server: str) -> Iterator[Playbook]:
    with httpx.Client(base_url=server, timeout=60) as http:
        yield Playbook(http, f"/v1/orgs/acme/playbooks/{next(_next_playbook)}")


def test_every_hour_starts_a_run_each_hour_with_its_due_time(playbook: Playbook) -> None:
    saved = playbook.save("workflow", "hourly", HOURLY)
    assert saved["schedule"] == {"every": "PT1H"}
    playbook.advance(3 * HOUR)
    runs = playbook.runs_of("hourly")
    assert len(runs) == 3, runs
    dues = [run["output"]["schedule"]["due"] for run in runs]
    assert len(set(dues)) == 3 and dues == sorted(dues)
    for run in runs:
        assert run["status"] == "succeeded", run
        assert run["started_by"] == "schedule:hourly"
        assert run["output"] == {"schedule": {"due": run["started_at"]}}
    assert len({run["run_id"] for run in runs}) == 3
    playbook.retire("hourly")


def test_a_cron_schedule_starts_a_run_at_each_time_it_names(playbook: Playbook) -> None:
    playbook.save("workflow", "on-the-hour", ON_THE_HOUR)
    playbook.advance(3 * HOUR)
    runs = playbook.runs_of("on-the-hour")
    assert len(runs) == 3, runs
    for run in runs:
        assert run["output"]["schedule"]["due"].endswith(":00:00.000Z"), run
        assert run["started_by"] == "schedule:on-the-hour"
    playbook.retire("on-the-hour")


def test_a_time_due_while_the_last_run_waits_is_skipped(playbook: Playbook, example_source: str) -> None:
    playbook.save("interaction", APPROVE, example_source)
    playbook.save("workflow", "asking", ASKING)
    playbook.advance(3 * HOUR)
    (run,) = playbook.runs_of("asking")
    assert run["status"] == "started" and run["started_by"] == "schedule:asking"
    skipped = playbook.events_of("schedule_skipped")
    assert len(skipped) == 2, skipped
    for event in skipped:
        assert event["data"]["workflow"] == "asking" and event["data"]["running"] == run["run_id"]
        assert "run_id" not in event
    assert [event["data"]["due"] for event in skipped] == sorted(event["data"]["due"] for event in skipped)

    (request,) = playbook.open_requests()
    answered = playbook.post(f"/runs/{request['run_id']}/answer", {"answer": {"verdict": "approve"}})
    assert answered.status_code == 200, answered.text
    assert playbook.run_of(run["run_id"])["status"] == "succeeded"
    playbook.advance(HOUR)
    runs = playbook.runs_of("asking")
    assert [r["status"] for r in runs] == ["succeeded", "started"], runs
    assert len(playbook.events_of("schedule_skipped")) == 2
    playbook.retire("asking")


def test_saving_a_version_without_a_schedule_stops_it(playbook: Playbook) -> None:
    playbook.save("workflow", "hourly", HOURLY)
    playbook.advance(HOUR)
    assert len(playbook.runs_of("hourly")) == 1
    updated = playbook.update("hourly", UNSCHEDULED)
    assert updated["schedule"] is None
    playbook.advance(3 * HOUR)
    assert len(playbook.runs_of("hourly")) == 1

    # Saved with a schedule again, it counts from that save.
    playbook.update("hourly", HOURLY)
    playbook.advance(2 * HOUR)
    runs = playbook.runs_of("hourly")
    assert len(runs) == 3 and [run["definition_version"] for run in runs] == [1, 3, 3]
    playbook.retire("hourly")


def test_retiring_the_workflow_stops_it(playbook: Playbook) -> None:
    playbook.save("workflow", "hourly", HOURLY)
    playbook.advance(HOUR)
    assert len(playbook.runs_of("hourly")) == 1
    playbook.retire("hourly")
    playbook.advance(3 * HOUR)
    assert len(playbook.runs_of("hourly")) == 1


def test_a_new_version_replaces_the_schedule_and_the_old_one_starts_nothing(playbook: Playbook) -> None:
    playbook.save("workflow", "hourly", HOURLY)
    playbook.advance(HOUR // 2)
    playbook.update("hourly", HOURLY.replace("PT1H", "PT2H"))
    playbook.advance(4 * HOUR)
    runs = playbook.runs_of("hourly")
    assert len(runs) == 2, runs
    assert {run["definition_version"] for run in runs} == {2}
    playbook.retire("hourly")


def test_a_schedule_saved_and_retired_over_mcp(playbook: Playbook) -> None:
    import anyio
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    url = str(playbook.http.base_url).rstrip("/") + playbook.base + "/mcp"

    async def call(tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        async with (
            httpx2.AsyncClient(headers={"Authorization": "Bearer dev-token"}, timeout=60) as http,
            Client(streamable_http_client(url, http_client=http)) as client,
        ):
            result = await client.call_tool(tool, arguments)
            assert result.is_error is False, result.content
            found: dict[str, Any] = result.structured_content
            return found

    def called(tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        outcome: dict[str, Any] = {}

        def worker() -> None:  # an event loop of its own thread, as tests/http/test_mcp.py does
            outcome["value"] = anyio.run(call, tool, arguments)

        thread = threading.Thread(target=worker, name="mcp-client")
        thread.start()
        thread.join(timeout=120)
        value: dict[str, Any] = outcome["value"]
        return value

    created = called("create_definition", {"type": "workflow", "name": "hourly", "source": HOURLY})
    assert created["schedule"] == {"every": "PT1H"}
    playbook.advance(2 * HOUR)
    assert len(playbook.runs_of("hourly")) == 2
    retired = called("retire_definition", {"type": "workflow", "name": "hourly"})
    assert retired["status"] == "retired"
    playbook.advance(2 * HOUR)
    assert len(playbook.runs_of("hourly")) == 2


def test_a_schedule_goes_on_after_a_restart(tmp_path: Path) -> None:
    """The local scheduler keeps the pending time in the data folder (``parley serve --data``)."""
    config = tmp_path / "operator.yaml"
    config.write_text(OPERATOR, encoding="utf-8")
    data, log = tmp_path / "data", tmp_path / "serve.log"
    with serving_manually(config, log, data=data) as url, httpx.Client(base_url=url, timeout=60) as http:
        chosen = Playbook(http, f"/v1/orgs/acme/playbooks/{RESTARTED}")
        chosen.save("workflow", "hourly", HOURLY)
        chosen.advance(HOUR)
        assert len(chosen.runs_of("hourly")) == 1
    with serving_manually(config, log, data=data) as url, httpx.Client(base_url=url, timeout=60) as http:
        chosen = Playbook(http, f"/v1/orgs/acme/playbooks/{RESTARTED}")
        chosen.advance(2 * HOUR)
        runs = chosen.runs_of("hourly")
        assert len(runs) == 3 and len({run["run_id"] for run in runs}) == 3, runs
