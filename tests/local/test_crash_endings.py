"""An ending is written with the fact that decides it (issue 26): ``parley serve --clock manual`` is made
to die (``PARLEY_LOCAL_FAULT=crash-before-token``, ``parley.local.executor``) between an ending's write
and the token that tells the run's wait, then started again on the same data folder. Whatever the kill
kept, no run is left that nothing will end. The fault lets the writes made so far reach the disk before
the process dies, so the restart meets the ending's write kept and its token lost: the answer's write took
the run's ending with it; the expiry's write rejected the run. The same answer again gets its recorded
fact, and each run's request and status agree on disk.
"""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from local.test_crash_durability import BASE, BRIEF, EXAMPLE, OPERATOR, check_on_disk, serving
from mcp_servers import free_port

pytestmark = pytest.mark.http

TWO_DAYS = 2 * 24 * 3600


def _history(client: httpx.Client, run_id: str) -> list[str]:
    return [event["type"] for event in client.get(f"{BASE}/runs/{run_id}/history").json()["events"]]


def _crash_at(monkeypatch: pytest.MonkeyPatch, folder: Path, request: str) -> str:
    (folder / "operator.yaml").write_text(OPERATOR, encoding="utf-8")
    monkeypatch.setenv("PARLEY_LOCAL_FAULT", "crash-before-token")
    with serving(folder, free_port()) as (process, client):
        created = client.post(f"{BASE}/definitions/interaction", json={"name": "approve", "source": EXAMPLE})
        assert created.status_code == 201, created.text
        run = client.post(f"{BASE}/definitions/interaction/approve/run", json={"input": BRIEF})
        assert run.status_code == 200, run.text
        run_id: str = run.json()["run_id"]
        with pytest.raises(httpx.TransportError):  # the server dies under the request: no answer
            if request == "answer":
                client.post(f"{BASE}/runs/{run_id}/answer", json={"answer": {"verdict": "approve"}})
            else:
                client.post("/_local/clock/advance", json={"seconds": TWO_DAYS + 1})
        assert process.wait(timeout=30) == 137  # it died where the fault put it, not elsewhere
    monkeypatch.delenv("PARLEY_LOCAL_FAULT")
    # What the dead server left, before anything repairs it: the request ended, and its run with it.
    check_on_disk(folder / "data" / "parley-local.sqlite")
    return run_id


def test_killed_between_the_answers_write_and_the_token_the_run_is_ended_or_still_takes_the_answer(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    run_id = _crash_at(monkeypatch, tmp_path, "answer")

    with serving(tmp_path, free_port()) as (_, client):
        # The answer's write was kept (the fault waits for the disk), its token lost: the run has ended
        # all the same, since the ending was in the write. (Two writes would leave it started here.)
        run = client.get(f"{BASE}/runs/{run_id}").json()
        assert (run["status"], run["output"]) == ("succeeded", {"verdict": "approve"}), run
        assert _history(client, run_id) == ["interaction_requested", "request_answered", "run_succeeded"]
        again = client.post(f"{BASE}/runs/{run_id}/answer", json={"answer": {"verdict": "approve"}})
        assert again.status_code == 200, again.text  # the recorded fact, or the answer taken now
        done = client.get(f"{BASE}/runs/{run_id}").json()
        assert (done["status"], done["output"]) == ("succeeded", {"verdict": "approve"})
        assert _history(client, run_id).count("run_succeeded") == 1
        assert client.get(f"{BASE}/interactions").json()["interactions"] == []
    check_on_disk(tmp_path / "data" / "parley-local.sqlite")


def test_killed_between_the_expirys_write_and_the_token_the_run_is_rejected_as_unanswered(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    run_id = _crash_at(monkeypatch, tmp_path, "expiry")

    with serving(tmp_path, free_port()) as (_, client):
        # The expiry's write was kept, its token lost: the run has ended, and nothing is left to expire.
        run = client.get(f"{BASE}/runs/{run_id}").json()
        assert run["status"] == "rejected", run
        assert (run["rejection"]["reason"], run["rejection"]["kind"]) == ("unanswered", "expired")
        assert _history(client, run_id) == ["interaction_requested", "run_rejected"]
        late = client.post(f"{BASE}/runs/{run_id}/answer", json={"answer": {"verdict": "approve"}})
        assert late.status_code == 409
    check_on_disk(tmp_path / "data" / "parley-local.sqlite")
