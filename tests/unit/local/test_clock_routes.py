"""The manual clock's routes (http-api.md, "Local server"), without a server."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

import pytest

from parley.clock import ManualClock, format_time
from parley.config import parse_operator_config
from parley.local.clock_routes import advance, answer_clock_route, is_clock_path
from parley.local.events import api_gateway_event

#: ``dev-token`` writes a playbook; ``viewer-token`` only reads one.
OPERATOR = parse_operator_config(
    """
principals:
  - {id: dev, token: dev-token, grants: [{org: acme, playbook: campaigns, role: write}]}
  - {id: viewer, token: viewer-token, grants: [{org: acme, playbook: campaigns, role: read}]}
""",
    "test",
    environ={},
)
WRITER = ("Authorization", "Bearer dev-token")


class Deliveries:
    """Due work that schedules more work: each run at time t schedules another ``gap`` later."""

    def __init__(self, first: datetime, gap: timedelta, times: int) -> None:
        self.pending = [first]
        self.gap = gap
        self.left = times
        self.ran: list[tuple[datetime, datetime]] = []  # (due, clock when it ran)

    def next_due(self) -> datetime | None:
        return min(self.pending, default=None)

    def run_due(self, now: datetime) -> None:
        for due in sorted(d for d in self.pending if d <= now):
            self.pending.remove(due)
            self.ran.append((due, now))
            self.left -= 1
            if self.left > 0:
                self.pending.append(due + self.gap)


def request(
    clock: ManualClock, method: str, path: str, body: Any = None, work: Any = ()
) -> tuple[int, dict[str, list[str]], Any]:
    raw = json.dumps(body).encode() if body is not None else b""
    headers = [WRITER, ("Content-Type", "application/json")] if body is not None else [WRITER]
    result = answer_clock_route(api_gateway_event(method, path, headers, raw), clock, list(work), OPERATOR)
    return result["statusCode"], result["multiValueHeaders"], json.loads(result["body"])


def test_get_answers_now(manual_clock: ManualClock) -> None:
    status, headers, body = request(manual_clock, "GET", "/_local/clock")

    assert (status, body) == (200, {"now": "2026-10-17T10:18:42.000Z"})
    assert headers["Content-Type"] == ["application/json"]
    assert headers["Cache-Control"] == ["no-store"]


def test_advance_moves_the_clock_and_answers_now(manual_clock: ManualClock) -> None:
    status, _, body = request(manual_clock, "POST", "/_local/clock/advance", {"seconds": 172800})

    assert (status, body) == (200, {"now": "2026-10-19T10:18:42.000Z"})
    assert request(manual_clock, "GET", "/_local/clock")[2] == body
    assert request(manual_clock, "POST", "/_local/clock/advance", {"seconds": 0.5})[2] == {
        "now": "2026-10-19T10:18:42.500Z"
    }


@pytest.mark.parametrize(
    "body", [{"seconds": -1}, {"seconds": "10"}, {"seconds": True}, {"seconds": None}, {}, {"seconds": 1e300}]
)
def test_advance_wants_a_number_of_seconds_at_least_0(manual_clock: ManualClock, body: Any) -> None:
    status, headers, problem = request(manual_clock, "POST", "/_local/clock/advance", body)

    assert (status, problem["reason"]) == (400, "bad_request")
    assert headers["Content-Type"] == ["application/problem+json"]
    assert manual_clock.now() == datetime(2026, 10, 17, 10, 18, 42, tzinfo=manual_clock.now().tzinfo)


def test_advance_with_a_body_that_is_not_json(manual_clock: ManualClock) -> None:
    event = api_gateway_event(
        "POST", "/_local/clock/advance", [WRITER, ("Content-Type", "application/json")], b"{nope"
    )
    assert answer_clock_route(event, manual_clock, [], OPERATOR)["statusCode"] == 400


@pytest.mark.parametrize(
    "media_type", [None, "application/x-www-form-urlencoded", "text/plain", "multipart/form-data; boundary=x"]
)
def test_advance_takes_json_only(manual_clock: ManualClock, media_type: str | None) -> None:
    """What a cross-site form or simple request can send (issue 27) is refused as the API refuses it."""
    headers = [WRITER] + ([("Content-Type", media_type)] if media_type else [])
    event = api_gateway_event("POST", "/_local/clock/advance", headers, b'{"seconds": 1}')
    result = answer_clock_route(event, manual_clock, [], OPERATOR)
    assert (result["statusCode"], json.loads(result["body"])["reason"]) == (415, "unsupported_media_type")
    assert manual_clock.now() == datetime(2026, 10, 17, 10, 18, 42, tzinfo=manual_clock.now().tzinfo)


@pytest.mark.parametrize(
    ("authorization", "status", "reason"),
    [
        (None, 401, "unauthenticated"),
        ("Bearer wrong-token", 401, "unauthenticated"),
        ("Basic ZGV2OmRldg==", 401, "unauthenticated"),
        ("Bearer viewer-token", 403, "forbidden"),
    ],
)
def test_advance_takes_a_writers_token(
    manual_clock: ManualClock, authorization: str | None, status: int, reason: str
) -> None:
    headers = [("Content-Type", "application/json")]
    headers += [("Authorization", authorization)] if authorization else []
    event = api_gateway_event("POST", "/_local/clock/advance", headers, b'{"seconds": 1}')
    result = answer_clock_route(event, manual_clock, [], OPERATOR)
    assert (result["statusCode"], json.loads(result["body"])["reason"]) == (status, reason)
    assert manual_clock.now() == datetime(2026, 10, 17, 10, 18, 42, tzinfo=manual_clock.now().tzinfo)


def test_reading_the_clock_needs_no_token(manual_clock: ManualClock) -> None:
    event = api_gateway_event("GET", "/_local/clock", [], b"")
    assert answer_clock_route(event, manual_clock, [], OPERATOR)["statusCode"] == 200


@pytest.mark.parametrize(
    ("method", "path", "allow"),
    [("POST", "/_local/clock", "GET, HEAD"), ("GET", "/_local/clock/advance", "POST")],
)
def test_other_methods_are_405(manual_clock: ManualClock, method: str, path: str, allow: str) -> None:
    status, headers, problem = request(manual_clock, method, path)

    assert (status, problem["reason"], headers["Allow"]) == (405, "method_not_allowed", [allow])


def test_clock_paths() -> None:
    assert is_clock_path("/_local/clock") and is_clock_path("/_local/clock/advance/")
    assert not is_clock_path("/_local/clocks") and not is_clock_path("/v1/_local/clock")


def test_advance_runs_work_that_falls_due_at_its_own_time(manual_clock: ManualClock) -> None:
    start = manual_clock.now()
    work = Deliveries(start + timedelta(seconds=60), timedelta(seconds=60), times=4)

    now = advance(manual_clock, 150, [work])

    assert now == start + timedelta(seconds=150)
    assert work.ran == [(start + timedelta(seconds=60),) * 2, (start + timedelta(seconds=120),) * 2]
    assert work.next_due() == start + timedelta(seconds=180)
    advance(manual_clock, 3600, [work])
    assert [due for due, ran in work.ran] == [start + timedelta(seconds=60 * n) for n in range(1, 5)]
    assert all(due == ran for due, ran in work.ran)
    assert work.next_due() is None


def test_advance_by_zero_runs_what_is_already_due(manual_clock: ManualClock) -> None:
    work = Deliveries(manual_clock.now() - timedelta(seconds=5), timedelta(seconds=60), times=1)

    status, _, body = request(manual_clock, "POST", "/_local/clock/advance", {"seconds": 0}, [work])

    assert (status, body["now"]) == (200, format_time(manual_clock.now()))
    assert len(work.ran) == 1
