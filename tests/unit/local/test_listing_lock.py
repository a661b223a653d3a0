"""One slow request holds no other (issue 31): a listing on the local server is answered outside the
server's lock, so a listing stopped half-way lets reads and writes of other requests through."""

from __future__ import annotations

import threading
from typing import Any

import httpx
import pytest

from parley.config import parse_operator_config
from parley.local.server import ServeOptions, running
from parley.runs.store import DynamoRunStore

OPERATOR = parse_operator_config(
    "principals: [{id: dev, token: dev-token, grants: [{org: acme, playbook: campaigns, role: write}]}]",
    "test",
    environ={},
)
BASE = "/v1/orgs/acme/playbooks/campaigns"
WRITER = {"Authorization": "Bearer dev-token"}


@pytest.mark.parametrize(
    ("path", "method"),
    [("runs?status=rejected", "list_runs"), ("events?type=interaction", "list_events")],
)
def test_a_listing_stopped_half_way_holds_no_other_request(
    monkeypatch: pytest.MonkeyPatch, example_source: str, path: str, method: str
) -> None:
    entered, release = threading.Event(), threading.Event()
    original = getattr(DynamoRunStore, method)

    def stopped(self: DynamoRunStore, *args: Any, **kwargs: Any) -> Any:
        entered.set()
        release.wait(60)  # (released by the test once the other requests are answered)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(DynamoRunStore, method, stopped)
    with (
        running(ServeOptions(port=0), OPERATOR) as server,
        httpx.Client(base_url=server.url, timeout=30) as http,
    ):
        listed: list[httpx.Response] = []
        listing = threading.Thread(target=lambda: listed.append(http.get(f"{BASE}/{path}", headers=WRITER)))
        listing.start()
        try:
            assert entered.wait(30)
            created = http.post(
                f"{BASE}/definitions/interaction",
                json={"name": "approve-campaign-brief", "source": example_source},
                headers=WRITER,
            )
            read = http.get(f"{BASE}/definitions/interaction/approve-campaign-brief", headers=WRITER)

            assert created.status_code == 201, created.text
            assert read.status_code == 200, read.text
            assert not listed  # the listing is still where it stopped
        finally:
            release.set()
            listing.join(30)

    assert listed[0].status_code == 200, listed[0].text
