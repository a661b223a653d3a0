"""Events of workflow runs end to end over HTTP and MCP, against a real ``parley serve --clock manual``
(workflow-format.md, "Events", "Bounds"; http-api.md, "Runs": ``send_run_event``): an event sent to a
run answers ``202`` once per id, a listen takes it (sent before or after it waits), and an emit reaches
the listens of its type in the playbook.

Each test works in a playbook of its own, so the tests share one server and its clock.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from tool_serving import PlaybookClient, problem, serving_manually, serving_with, writer_and_viewer

pytestmark = pytest.mark.http

ROOT = Path(__file__).resolve().parents[2]
PLAYBOOKS = [f"e{n:02d}" for n in range(1, 21)]
OPERATOR = writer_and_viewer(PLAYBOOKS)
APPROVE = "approve-campaign-brief"
BRIEF = {"owner": "maria@example.com", "review": "Clear goals; the budget needs a source."}
BRIEF_APPROVAL = (ROOT / "examples" / "definitions" / "brief-approval.yaml").read_text(encoding="utf-8")
READER = {"Authorization": "Bearer viewer-token"}

#: Waits for the decision on one brief, then shows it.
DECISION = """\
document: { dsl: '1.0.3', namespace: campaigns, name: wait-decision, version: '1.0.0' }
do:
  - decision:
      listen:
        to:
          one:
            with: { type: com.acme.decision, data: '${ $data.brief = "b-1" }' }
  - done: { set: { decided: '${ $data[0] }' } }
"""

#: Waits for both a legal and a finance sign-off, in any order, as whole events.
BOTH = """\
document: { dsl: '1.0.3', namespace: campaigns, name: both-signoffs, version: '1.0.0' }
do:
  - signoffs:
      listen:
        to:
          all:
            - with: { type: com.acme.legal }
            - with: { type: com.acme.finance, subject: b-1 }
        read: envelope
"""

#: Publishes that a brief is ready.
ANNOUNCE = """\
document: { dsl: '1.0.3', namespace: campaigns, name: announce, version: '1.0.0' }
do:
  - tell:
      emit:
        event:
          with:
            type: com.acme.brief.ready
            source: https://example.com/workflows/announce
            data: { brief: '${ $data.brief }' }
  - done: { set: { told: true } }
"""

#: Waits for a brief to be ready.
AWAIT_READY = """\
document: { dsl: '1.0.3', namespace: campaigns, name: await-ready, version: '1.0.0' }
do:
  - ready:
      listen:
        to: { any: [ { with: { type: com.acme.brief.ready } } ] }
"""

#: Ends at once.
INSTANT = """\
document: { dsl: '1.0.3', namespace: campaigns, name: instant, version: '1.0.0' }
do:
  - done: { set: { done: true } }
"""


class Playbook(PlaybookClient):
    def save(self, definition_type: str, name: str, source: str) -> None:
        created = self.post(f"/definitions/{definition_type}", {"name": name, "source": source})
        assert created.status_code == 201, created.text

    def run(self, name: str, input_value: Any, definition_type: str = "workflow") -> dict[str, Any]:
        reply = self.post(f"/definitions/{definition_type}/{name}/run", {"input": input_value})
        assert reply.status_code == 200, reply.text
        body: dict[str, Any] = reply.json()
        return body

    def started(self, name: str, input_value: Any = None) -> str:
        body = self.run(name, {} if input_value is None else input_value)
        assert body["status"] == "started", body
        run_id: str = body["run_id"]
        return run_id

    def send(self, run_id: str, event: Any, headers: dict[str, str] | None = None) -> httpx.Response:
        return self.post(f"/runs/{run_id}/events", event, headers)

    def mcp(self, tool: str, arguments: dict[str, Any], token: str = "dev-token") -> dict[str, Any]:
        """One ``tools/call`` through the front door (its result)."""
        org, playbook = self.base.split("/")[3], self.base.split("/")[5]
        message = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": tool, "arguments": {"org": org, "playbook": playbook, **arguments}},
        }
        reply = self.http.post(
            "/mcp",
            content=json.dumps(message),
            headers={
                "Authorization": f"Bearer {token}",
                "Content-Type": "application/json",
                "Accept": "application/json, text/event-stream",
            },
        )
        assert reply.status_code == 200, reply.text
        text = reply.text
        if text.startswith("event:") or text.startswith("data:"):
            text = next(line[5:] for line in text.splitlines() if line.startswith("data:"))
        result: dict[str, Any] = json.loads(text)["result"]
        return result


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with serving_with(tmp_path_factory.mktemp("serve-workflow-events"), OPERATOR) as url:
        yield url


_next_playbook = iter(PLAYBOOKS)


@pytest.fixture
def playbook(server: str, example_source: str) -> Iterator[Playbook]:
    with httpx.Client(base_url=server, timeout=30) as http:
        chosen = Playbook(http, f"/v1/orgs/acme/playbooks/{next(_next_playbook)}")
        chosen.save("interaction", APPROVE, example_source)
        chosen.save("workflow", "brief-approval", BRIEF_APPROVAL)
        yield chosen


# --- send_run_event's rules ------------------------------------------------------------------------


def test_an_event_is_taken_202_once_per_id_and_recorded_in_the_runs_history(playbook: Playbook) -> None:
    run_id = playbook.started("brief-approval", BRIEF)

    first = playbook.send(run_id, {"type": "com.acme.decision", "id": "d-1", "data": {"ok": True}})
    again = playbook.send(run_id, {"type": "com.acme.decision", "id": "d-1", "data": {"ok": True}})
    other = playbook.send(run_id, {"type": "com.acme.decision"})

    assert first.status_code == 202, first.text
    body = first.json()
    assert set(body) == {"run_id", "event_id", "received_at"} and body["run_id"] == run_id
    assert again.status_code == 202 and again.json() == body
    assert other.status_code == 202 and other.json()["event_id"] != body["event_id"]
    received = [e for e in playbook.history(run_id) if e["type"] == "event_received"]
    assert [e["id"] for e in received] == [body["event_id"], other.json()["event_id"]]
    assert received[0]["data"]["source"] == "/callers/dev"
    assert received[0]["data"]["event_id"] == "d-1" and received[0]["data"]["data"] == {"ok": True}
    whole = playbook.get(f"/events/{body['event_id']}")
    assert whole.status_code == 200 and whole.json()["type"] == "event_received"


def test_an_ended_run_or_one_not_a_workflows_is_conflict(playbook: Playbook) -> None:
    playbook.save("workflow", "instant", INSTANT)
    ended = playbook.run("instant", {})
    assert ended["status"] == "succeeded", ended
    problem(playbook.send(ended["run_id"], {"type": "a"}), 409, "conflict")

    asked = playbook.run(APPROVE, BRIEF, definition_type="interaction")
    assert asked["status"] == "started", asked
    body = problem(playbook.send(asked["run_id"], {"type": "a"}), 409, "conflict")
    assert "workflow" in body["detail"]

    problem(playbook.send("0f5e8c1a-4d3b-4f6e-9a2c-7b1d3e5f7a9c", {"type": "a"}), 404, "not_found")


def test_a_reader_may_not_send_an_event(playbook: Playbook) -> None:
    run_id = playbook.started("brief-approval", BRIEF)
    problem(playbook.send(run_id, {"type": "a"}, READER), 403, "forbidden")


def test_an_event_is_at_most_256_kib_and_has_a_type(playbook: Playbook) -> None:
    run_id = playbook.started("brief-approval", BRIEF)
    big = problem(playbook.send(run_id, {"type": "a", "data": "x" * (256 * 1024)}), 422, "invalid_input")
    assert "256 KiB" in json.dumps(big)
    problem(playbook.send(run_id, {"type": "a", "data": "x" * (1024 * 1024)}), 413, "content_too_large")
    problem(playbook.send(run_id, {"type": ""}), 422, "invalid_input")
    problem(playbook.send(run_id, {"type": "x" * 257}), 422, "invalid_input")
    problem(playbook.send(run_id, {"data": 1}), 422, "invalid_input")
    problem(playbook.send(run_id, {"type": "a", "colour": "red"}), 422, "invalid_input")
    assert playbook.send(run_id, {"type": "a", "data": "x" * (200 * 1024)}).status_code == 202


# --- listen and emit (the compiled tasks on the local interpreter) --------------------------------


def test_a_listen_waits_for_the_event_sent_over_http(playbook: Playbook) -> None:
    playbook.save("workflow", "wait-decision", DECISION)
    run_id = playbook.started("wait-decision")

    other = playbook.send(run_id, {"type": "com.acme.decision", "data": {"brief": "b-2", "ok": False}})
    assert other.status_code == 202
    assert playbook.run_of(run_id)["status"] == "started"
    sent = playbook.send(run_id, {"type": "com.acme.decision", "data": {"brief": "b-1", "ok": True}})
    assert sent.status_code == 202

    done = playbook.run_of(run_id)
    assert done["status"] == "succeeded", done
    assert done["output"] == {"decided": {"brief": "b-1", "ok": True}}
    types = [event["type"] for event in playbook.history(run_id)]
    assert types.count("event_received") == 2 and types[-1] == "run_succeeded"


def test_an_event_sent_before_the_listen_waits_is_kept_for_it(playbook: Playbook) -> None:
    # brief-approval waits for its call; the events sent meanwhile are kept, but it listens for none.
    playbook.save("workflow", "both-signoffs", BOTH)
    run_id = playbook.started("both-signoffs")
    playbook.send(run_id, {"type": "com.acme.finance", "subject": "b-1", "id": "f-1", "data": 2})
    assert playbook.run_of(run_id)["status"] == "started"
    playbook.send(run_id, {"type": "com.acme.legal", "source": "/legal", "id": "l-1", "data": 1})

    done = playbook.run_of(run_id)
    assert done["status"] == "succeeded", done
    legal, finance = done["output"]
    assert (legal["type"], legal["id"], legal["source"], legal["data"]) == (
        "com.acme.legal",
        "l-1",
        "/legal",
        1,
    )
    assert (finance["subject"], finance["source"], finance["data"]) == ("b-1", "/callers/dev", 2)
    assert set(legal) == {"type", "id", "time", "source", "subject", "data"}


def test_a_listen_gets_the_event_sent_over_mcp(playbook: Playbook) -> None:
    playbook.save("workflow", "wait-decision", DECISION)
    run_id = playbook.started("wait-decision")

    result = playbook.mcp(
        "send_run_event", {"run_id": run_id, "type": "com.acme.decision", "data": {"brief": "b-1"}}
    )
    assert result.get("isError") is not True, result
    assert result["structuredContent"]["run_id"] == run_id
    assert playbook.run_of(run_id)["output"] == {"decided": {"brief": "b-1"}}

    refused = playbook.mcp("send_run_event", {"run_id": run_id, "type": "a"}, token="viewer-token")
    assert refused["isError"] is True
    assert json.loads(refused["content"][1]["text"])["reason"] == "forbidden"


def test_an_emit_reaches_a_listen_of_its_type_once(playbook: Playbook) -> None:
    playbook.save("workflow", "await-ready", AWAIT_READY)
    playbook.save("workflow", "announce", ANNOUNCE)
    waiting = playbook.started("await-ready")

    told = playbook.run("announce", {"brief": "b-7"})
    assert told["status"] == "succeeded", told
    assert told["output"] == {"told": True}

    done = playbook.run_of(waiting)
    assert done["status"] == "succeeded", done
    assert done["output"] == [{"brief": "b-7"}]
    published = playbook.get("/events", {"type": "event_published"}).json()["events"]
    assert [(e["run_id"], e["data"]["type"], e["data"]["data"]) for e in published] == [
        (told["run_id"], "com.acme.brief.ready", {"brief": "b-7"})
    ]
    [received] = [e for e in playbook.history(waiting) if e["type"] == "event_received"]
    assert received["data"]["emitted_by"] == told["run_id"]
    assert received["data"]["event_id"] == published[0]["data"]["event_id"]


def test_a_cancelled_workflow_forgets_its_listen(playbook: Playbook) -> None:
    playbook.save("workflow", "wait-decision", DECISION)
    run_id = playbook.started("wait-decision")
    cancelled = playbook.post(f"/runs/{run_id}/cancel", {})
    assert cancelled.status_code == 200, cancelled.text
    problem(playbook.send(run_id, {"type": "com.acme.decision", "data": {"brief": "b-1"}}), 409, "conflict")


#: Waits a minute for a decision; without one, asks again and waits for the next.
TWICE = """\
document: { dsl: '1.0.3', namespace: campaigns, name: wait-twice, version: '1.0.0' }
do:
  - first:
      try:
        - decision:
            listen: { to: { one: { with: { type: com.acme.decision } } } }
            timeout: { after: PT1M }
      catch:
        errors: { with: { status: 408 } }
        do:
          - late: { set: { late: true } }
  - second:
      listen: { to: { one: { with: { type: com.acme.decision } } } }
"""


def test_a_listen_whose_timeout_passed_leaves_the_event_to_the_next(playbook: Playbook) -> None:
    playbook.save("workflow", "wait-twice", TWICE)
    run_id = playbook.started("wait-twice")
    playbook.advance(61)
    assert playbook.run_of(run_id)["status"] == "started"

    assert playbook.send(run_id, {"type": "com.acme.decision", "data": "yes"}).status_code == 202

    done = playbook.run_of(run_id)
    assert done["status"] == "succeeded", done
    assert done["output"] == ["yes"]


#: As TWICE, with an hour between the first listen's timeout and the second listen.
TWICE_LATER = TWICE.replace("name: wait-twice", "name: wait-twice-later").replace(
    "  - second:\n", "  - pause: { wait: PT1H }\n  - second:\n"
)


def test_an_event_sent_after_a_listens_timeout_is_kept_for_the_next(playbook: Playbook) -> None:
    playbook.save("workflow", "wait-twice-later", TWICE_LATER)
    run_id = playbook.started("wait-twice-later")
    playbook.advance(61)
    assert playbook.send(run_id, {"type": "com.acme.decision", "data": "yes"}).status_code == 202
    playbook.advance(3600)

    done = playbook.run_of(run_id)
    assert done["status"] == "succeeded", done
    assert done["output"] == ["yes"]


def test_a_listen_still_waits_after_a_restart(tmp_path: Path, example_source: str) -> None:
    """The revived execution runs its listen again, under a new token: the event sent after the restart
    answers it, and one taken before is not taken twice."""
    config = tmp_path / "operator.yaml"
    config.write_text(writer_and_viewer(["restart"]), encoding="utf-8")
    data, log = tmp_path / "data", tmp_path / "serve.log"
    again = "  - again:\n      listen: { to: { one: { with: { type: com.acme.second } } } }\n"
    two = DECISION.replace("name: wait-decision", "name: two-steps").replace("  - done:", again + "  - done:")
    with serving_manually(config, log, data=data) as url, httpx.Client(base_url=url, timeout=30) as http:
        playbook = Playbook(http, "/v1/orgs/acme/playbooks/restart")
        playbook.save("workflow", "two-steps", two)
        run_id = playbook.started("two-steps")
        sent = playbook.send(run_id, {"type": "com.acme.decision", "data": {"brief": "b-1", "n": 1}})
        assert sent.status_code == 202

    with serving_manually(config, log, data=data) as url, httpx.Client(base_url=url, timeout=30) as http:
        playbook = Playbook(http, "/v1/orgs/acme/playbooks/restart")
        assert playbook.run_of(run_id)["status"] == "started"
        assert playbook.send(run_id, {"type": "com.acme.second", "data": 2}).status_code == 202
        done = playbook.run_of(run_id)
        assert done["status"] == "succeeded", done
        assert done["output"] == {"decided": 2}
