"""The local server in process (the subprocess runs of ``parley serve`` are in ``tests/http``)."""

from __future__ import annotations

import threading
from datetime import datetime, timedelta

import httpx

from parley.config import parse_operator_config
from parley.local.server import ServeOptions, running
from parley.ports.waiting import RunKey

OPERATOR = parse_operator_config(
    "principals: [{id: dev, token: dev-token, grants: [{org: acme, playbook: campaigns, role: write}]}]",
    "test",
    environ={},
)


class FailingWork:
    def __init__(self, due: datetime) -> None:
        self.due = due

    def next_due(self) -> datetime | None:
        return self.due

    def run_due(self, now: datetime) -> None:
        raise RuntimeError("the delivery tool is on fire")


def test_due_work_runs_under_advance_and_a_failure_is_a_500_problem() -> None:
    with running(ServeOptions(port=0, clock="manual"), OPERATOR) as server:
        server.runtime.due_work.append(FailingWork(server.clock.now() + timedelta(seconds=30)))
        with httpx.Client(base_url=server.url, timeout=10) as http:
            quiet = http.post("/_local/clock/advance", json={"seconds": 10}, headers=WRITER)
            failed = http.post("/_local/clock/advance", json={"seconds": 60}, headers=WRITER)
            listed = http.get(
                "/v1/orgs/acme/playbooks/campaigns/definitions/interaction",
                headers={"Authorization": "Bearer dev-token"},
            )

    assert quiet.status_code == 200
    assert failed.status_code == 500
    assert failed.json()["reason"] == "internal"
    assert failed.json()["instance"].startswith("urn:uuid:")
    assert "on fire" not in failed.text
    assert listed.json() == {"definitions": [], "next_cursor": None}


def test_port_0_picks_a_free_port_and_the_url_names_it() -> None:
    with running(ServeOptions(port=0), OPERATOR) as server:
        port = server.front.address[1]
        assert server.url == f"http://127.0.0.1:{port}"
        assert httpx.get(server.url + "/_local/clock", timeout=10).status_code == 404  # real clock


# -- runs on the local runtime: the local executor and scheduler, with the project's handlers ---------------

RUNS = "/v1/orgs/acme/playbooks/campaigns"
WRITER = {"Authorization": "Bearer dev-token"}
BRIEF = {"owner": "maria@example.com", "review": "Clear goals; the budget needs a source."}


def _save_example(http: httpx.Client, example_source: str) -> None:
    created = http.post(
        f"{RUNS}/definitions/interaction",
        json={"name": "approve-campaign-brief", "source": example_source},
        headers=WRITER,
    )
    assert created.status_code == 201, created.text


def _run(http: httpx.Client) -> str:
    started = http.post(
        f"{RUNS}/definitions/interaction/approve-campaign-brief/run", json={"input": BRIEF}, headers=WRITER
    )
    assert started.status_code == 200, started.text
    run_id: str = started.json()["run_id"]
    return run_id


def _run_of(http: httpx.Client, run_id: str) -> dict[str, object]:
    got = http.get(f"{RUNS}/runs/{run_id}", headers=WRITER)
    assert got.status_code == 200, got.text
    run: dict[str, object] = got.json()
    return run


def test_each_reply_comes_once_its_runs_executions_have_arrived(example_source: str) -> None:
    with (
        running(ServeOptions(port=0, clock="manual"), OPERATOR) as server,
        httpx.Client(base_url=server.url, timeout=30) as http,
    ):
        _save_example(http, example_source)
        answered, expiring = _run(http), _run(http)
        # run_definition answers once the wait function has run (kept the token): the task is submitted.
        for run in (RunKey("acme", "campaigns", run_id) for run_id in (answered, expiring)):
            assert server.executor.status(server.executor.execution_arn(run)) == "RUNNING"
            assert "TaskSubmitted" in [event["type"] for event in server.executor.history(run)]

        reply = http.post(
            f"{RUNS}/runs/{answered}/answer", json={"answer": {"verdict": "approve"}}, headers=WRITER
        )
        # The answer's reply comes after the settle step: the run has already succeeded.
        assert reply.status_code == 200, reply.text
        assert _run_of(http, answered)["status"] == "succeeded"

        moved = http.post("/_local/clock/advance", json={"seconds": 2 * 86400}, headers=WRITER)
        # The advance call's reply comes after the expiry and its settle step.
        assert moved.status_code == 200
        assert _run_of(http, expiring)["status"] == "rejected"
        assert server.scheduler.pending() == []
        statuses = {e["name"]: e["status"] for e in server.executor.executions()}
        names = {
            run_id: RunKey("acme", "campaigns", run_id).execution_name for run_id in (answered, expiring)
        }
        assert statuses == {names[answered]: "SUCCEEDED", names[expiring]: "SUCCEEDED"}


def test_answers_and_an_advance_at_once_never_deadlock(example_source: str) -> None:
    # The advance holds the server's lock while it waits for settle steps; the settle steps run on the
    # executor's workers and use the table; answers queue behind the lock. All must finish, each run ending
    # once.
    with running(ServeOptions(port=0, clock="manual"), OPERATOR) as server:
        with httpx.Client(base_url=server.url, timeout=30) as http:
            _save_example(http, example_source)
            run_ids = [_run(http) for _ in range(4)]
            http.post("/_local/clock/advance", json={"seconds": 2 * 86400 - 0.001}, headers=WRITER)

        replies: dict[str, int] = {}
        barrier = threading.Barrier(len(run_ids) + 1)

        def answer(run_id: str) -> None:
            with httpx.Client(base_url=server.url, timeout=30) as own:
                barrier.wait()
                reply = own.post(
                    f"{RUNS}/runs/{run_id}/answer", json={"answer": {"verdict": "revise"}}, headers=WRITER
                )
                replies[run_id] = reply.status_code

        def move() -> None:
            with httpx.Client(base_url=server.url, timeout=30) as own:
                barrier.wait()
                moved = own.post("/_local/clock/advance", json={"seconds": 1}, headers=WRITER)
                replies["advance"] = moved.status_code

        threads = [threading.Thread(target=answer, args=(r,)) for r in run_ids] + [
            threading.Thread(target=move)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
        assert not any(thread.is_alive() for thread in threads)

        with httpx.Client(base_url=server.url, timeout=30) as http:
            assert replies["advance"] == 200
            for run_id in run_ids:
                run = _run_of(http, run_id)
                if replies[run_id] == 200:
                    assert run["status"] == "succeeded"
                else:
                    assert (replies[run_id], run["status"]) == (409, "rejected")


def test_under_the_real_clock_timed_work_runs_on_its_own() -> None:
    fired = threading.Event()
    with running(ServeOptions(port=0, clock="real"), OPERATOR) as server:
        server.scheduler.call_later("probe", 0.2, fired.set)
        assert fired.wait(30)  # a generous wait for 0.2 s
