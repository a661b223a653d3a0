"""The local server keeps its data across restarts (``parley serve --data DIR``): definitions, runs,
open requests that can still be answered (their executions started again), pending work and the manual
clock's time; ``--data none`` forgets everything when it stops."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from tool_serving import serving_manually

pytestmark = pytest.mark.http

BASE = "/v1/orgs/acme/playbooks/campaigns"
AUTH = {"Authorization": "Bearer dev-token"}
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "definitions" / "approve-campaign-brief.md"
OPERATOR = """
principals:
  - { id: dev, token: dev-token, grants: [{ org: acme, playbook: campaigns, role: write }] }
"""
BRIEF = {"owner": "maria@example.com", "review": "Clear goals; the budget needs a source."}


def test_definitions_runs_open_requests_and_the_clock_survive_a_restart(tmp_path: Path) -> None:
    config = tmp_path / "operator.yaml"
    config.write_text(OPERATOR, encoding="utf-8")
    data, log = tmp_path / "data", tmp_path / "serve.log"
    with serving_manually(config, log, data=data) as url, httpx.Client(base_url=url, headers=AUTH) as http:
        saved = http.post(
            f"{BASE}/definitions/interaction",
            json={"name": "approve-campaign-brief", "source": EXAMPLE.read_text(encoding="utf-8")},
        )
        assert saved.status_code == 201, saved.text
        run = http.post(
            f"{BASE}/definitions/interaction/approve-campaign-brief/run", json={"input": BRIEF}
        ).json()
        assert run["status"] == "started"
        http.post("/_local/clock/advance", json={"seconds": 3600})
        before = http.get("/_local/clock").json()["now"]
    assert "data: " in log.read_text() and "(new)" in log.read_text()

    with serving_manually(config, log, data=data) as url, httpx.Client(base_url=url, headers=AUTH) as http:
        assert "items" in log.read_text().splitlines()[-1] or "restored" in log.read_text()
        assert http.get("/_local/clock").json()["now"] == before
        assert http.get(f"{BASE}/definitions/interaction/approve-campaign-brief").status_code == 200
        listed = http.get(f"{BASE}/interactions").json()["interactions"]
        assert [item["run_id"] for item in listed] == [run["run_id"]]

        answered = http.post(f"{BASE}/runs/{run['run_id']}/answer", json={"answer": {"verdict": "approve"}})

        assert answered.status_code == 200, answered.text
        done = http.get(f"{BASE}/runs/{run['run_id']}").json()
        assert done["status"] == "succeeded", done


def test_an_open_request_still_expires_after_a_restart(tmp_path: Path) -> None:
    config = tmp_path / "operator.yaml"
    config.write_text(OPERATOR, encoding="utf-8")
    data, log = tmp_path / "data", tmp_path / "serve.log"
    with serving_manually(config, log, data=data) as url, httpx.Client(base_url=url, headers=AUTH) as http:
        http.post(
            f"{BASE}/definitions/interaction",
            json={"name": "approve-campaign-brief", "source": EXAMPLE.read_text(encoding="utf-8")},
        )
        run = http.post(
            f"{BASE}/definitions/interaction/approve-campaign-brief/run", json={"input": BRIEF}
        ).json()

    with serving_manually(config, log, data=data) as url, httpx.Client(base_url=url, headers=AUTH) as http:
        http.post("/_local/clock/advance", json={"seconds": 30 * 24 * 3600})
        done = http.get(f"{BASE}/runs/{run['run_id']}").json()
        assert (done["status"], done["rejection"]["reason"]) == ("rejected", "unanswered")


def test_data_none_forgets_everything(tmp_path: Path) -> None:
    config = tmp_path / "operator.yaml"
    config.write_text(OPERATOR, encoding="utf-8")
    log = tmp_path / "serve.log"
    for _ in range(2):
        with serving_manually(config, log) as url, httpx.Client(base_url=url, headers=AUTH) as http:
            assert http.get(f"{BASE}/definitions/interaction/approve-campaign-brief").status_code == 404
            saved = http.post(
                f"{BASE}/definitions/interaction",
                json={"name": "approve-campaign-brief", "source": EXAMPLE.read_text(encoding="utf-8")},
            )
            assert saved.status_code == 201
    assert "data: none" in log.read_text()


def test_a_waiting_workflow_goes_on_after_a_restart(tmp_path: Path) -> None:
    """Its machine runs again from its start and meets the run it called under the same id: the open
    request keeps waiting, and its answer ends the workflow."""
    config = tmp_path / "operator.yaml"
    config.write_text(OPERATOR, encoding="utf-8")
    data, log = tmp_path / "data", tmp_path / "serve.log"
    workflow = EXAMPLE.parent / "brief-approval.yaml"
    with serving_manually(config, log, data=data) as url, httpx.Client(base_url=url, headers=AUTH) as http:
        for kind, name, path in (
            ("interaction", "approve-campaign-brief", EXAMPLE),
            ("workflow", "brief-approval", workflow),
        ):
            saved = http.post(
                f"{BASE}/definitions/{kind}", json={"name": name, "source": path.read_text(encoding="utf-8")}
            )
            assert saved.status_code == 201, saved.text
        run = http.post(f"{BASE}/definitions/workflow/brief-approval/run", json={"input": BRIEF}).json()
        assert run["status"] == "started", run
        (asked,) = http.get(f"{BASE}/interactions").json()["interactions"]

    with serving_manually(config, log, data=data) as url, httpx.Client(base_url=url, headers=AUTH) as http:
        listed = http.get(f"{BASE}/interactions").json()["interactions"]
        assert [item["run_id"] for item in listed] == [asked["run_id"]]
        answered = http.post(f"{BASE}/runs/{asked['run_id']}/answer", json={"answer": {"verdict": "approve"}})
        assert answered.status_code == 200, answered.text
        done = http.get(f"{BASE}/runs/{run['run_id']}").json()
        assert (done["status"], done.get("output")) == ("succeeded", {"verdict": "approve"}), done
        calls = [
            e
            for e in http.get(f"{BASE}/runs/{run['run_id']}/history").json()["events"]
            if e["type"] == "call_started"
        ]
        assert len(calls) == 1
