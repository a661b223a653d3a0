"""The local server in process (the subprocess runs of ``parley serve`` are in ``tests/http``)."""

from __future__ import annotations

from datetime import datetime, timedelta

import httpx

from parley.config import parse_operator_config
from parley.local.server import ServeOptions, running

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
            quiet = http.post("/_local/clock/advance", json={"seconds": 10})
            failed = http.post("/_local/clock/advance", json={"seconds": 60})
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
        port = server.httpd.server_address[1]
        assert server.url == f"http://127.0.0.1:{port}"
        assert httpx.get(server.url + "/_local/clock", timeout=10).status_code == 404  # real clock
