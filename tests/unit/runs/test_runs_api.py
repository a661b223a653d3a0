"""The run and event routes through the Lambda handler, with the API Gateway events of ``events/api``, and
the wait/settle/timer entries with the Step Functions and Scheduler payloads of ``events/``."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from parley.api.app import Handler, build_handler
from parley.clock import ManualClock
from parley.ports.runtime import Runtime
from parley.runs.service import RunService

PLAYBOOK_PATH = "/v1/orgs/acme/playbooks/campaigns"
RUN_ID = "0f5e8c1a-4d3b-4f6e-9a2c-7b1d3e5f7a9c"
RUN_PATH = f"{PLAYBOOK_PATH}/runs/{RUN_ID}"
TWO_DAYS = 2 * 24 * 3600

LoadEvent = Callable[[str], dict[str, Any]]


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: Any


@pytest.fixture
def call(runtime: Runtime, service: RunService, functions: None) -> Callable[[dict[str, Any]], Reply]:
    handler: Handler = build_handler(runtime)

    def invoke(event: dict[str, Any]) -> Reply:
        result = handler(event, None)
        headers = {k: ", ".join(v) for k, v in (result.get("multiValueHeaders") or {}).items()}
        return Reply(result["statusCode"], headers, json.loads(result["body"]) if result["body"] else None)

    return invoke


def body(event: dict[str, Any], value: Any) -> dict[str, Any]:
    event["body"] = value if isinstance(value, str) else json.dumps(value)
    return event


def at(event: dict[str, Any], method: str, path: str, query: dict[str, str] | None = None) -> dict[str, Any]:
    event["httpMethod"] = event["requestContext"]["httpMethod"] = method
    event["path"] = path
    event["pathParameters"] = {"proxy": path.removeprefix("/v1/")}
    event["requestContext"]["path"] = "/prod" + path
    event["queryStringParameters"] = query
    event["multiValueQueryStringParameters"] = {k: [v] for k, v in query.items()} if query else None
    return event


def as_principal(event: dict[str, Any], token: str | None) -> dict[str, Any]:
    for name in ("Authorization",):
        event["headers"].pop(name, None)
        event["multiValueHeaders"].pop(name, None)
    if token is not None:
        event["headers"]["Authorization"] = f"Bearer {token}"
        event["multiValueHeaders"]["Authorization"] = [f"Bearer {token}"]
    return event


def is_problem(reply: Reply, status: int, reason: str) -> None:
    assert reply.status == status, reply.body
    assert reply.headers["Content-Type"] == "application/problem+json"
    assert reply.body["reason"] == reason
    assert reply.body["type"] == f"https://on.auto/problems/{reason}"


# --- the operations with the event fixtures ---------------------------------------------------------------


def test_run_answer_and_read_with_the_event_fixtures(
    call: Any, load_event: LoadEvent, manual_clock: ManualClock
) -> None:
    started = call(load_event("api/run_definition"))
    got = call(load_event("api/get_run"))
    listed = call(load_event("api/list_runs"))
    inbox = call(load_event("api/list_interactions"))
    manual_clock.advance(60)
    answered = call(load_event("api/answer_interaction"))
    again = call(load_event("api/answer_interaction"))
    done = call(load_event("api/get_run"))
    history = call(load_event("api/get_run_history"))
    events = call(load_event("api/list_playbook_events"))
    event = call(
        at(load_event("api/get_event"), "GET", f"{PLAYBOOK_PATH}/events/{answered.body['answer_id']}")
    )
    late_cancel = call(load_event("api/cancel_run"))

    assert started.status == 200, started.body
    assert started.headers["Cache-Control"] == "no-store"
    assert started.body == {
        "run_id": RUN_ID,
        "type": "interaction",
        "name": "approve-campaign-brief",
        "definition_version": 1,
        "status": "started",
        "started_at": "2026-10-17T10:18:42.000Z",
        "started_by": "dev",
    }
    assert (got.status, got.body) == (200, started.body)
    assert listed.body == {"runs": [started.body], "next_cursor": None}
    assert [r["run_id"] for r in inbox.body["interactions"]] == [RUN_ID]
    assert inbox.body["interactions"][0]["standing"] == "in_inbox"
    assert answered.status == 200
    assert answered.body == {
        "run_id": RUN_ID,
        "answer_id": answered.body["answer_id"],
        "answer": {"verdict": "approve", "note": "Ready to launch."},
        "claimed_for": "the campaign team",
        "answered_by": "dev",
        "answered_at": "2026-10-17T10:19:42.000Z",
    }
    assert (again.status, again.body) == (200, answered.body)
    assert done.body["status"] == "succeeded"
    assert done.body["output"] == {"verdict": "approve", "note": "Ready to launch."}
    assert done.body["finished_at"] == "2026-10-17T10:19:42.000Z"
    assert "record" not in done.body
    assert [e["type"] for e in history.body["events"]] == [
        "interaction_requested", "request_answered", "run_succeeded",
    ]  # fmt: skip
    assert events.body == history.body
    assert event.status == 200 and event.body["id"] == answered.body["answer_id"]
    assert event.body["data"]["answer"] == {"verdict": "approve", "note": "Ready to launch."}
    is_problem(late_cancel, 409, "conflict")


def test_cancel_with_its_fixture(call: Any, load_event: LoadEvent) -> None:
    call(load_event("api/run_definition"))

    cancelled = call(load_event("api/cancel_run"))
    answer = call(load_event("api/answer_interaction"))
    retried = call(load_event("api/run_definition"))

    assert cancelled.status == 200
    assert cancelled.body["status"] == "rejected"
    assert cancelled.body["rejection"] == {"reason": "cancelled", "detail": "The launch moved to spring."}
    is_problem(answer, 409, "conflict")
    is_problem(retried, 409, "cancelled")


def test_an_expired_run_is_410_when_run_again(
    call: Any, load_event: LoadEvent, scheduler: Any, manual_clock: ManualClock
) -> None:
    call(load_event("api/run_definition"))
    manual_clock.advance(TWO_DAYS)
    scheduler.fire_due(manual_clock.now())

    retried = call(load_event("api/run_definition"))
    answer = call(load_event("api/answer_interaction"))

    is_problem(retried, 410, "unanswered")
    assert retried.body["kind"] == "expired"
    is_problem(answer, 409, "conflict")


def test_a_notification_succeeds_at_once(call: Any, load_event: LoadEvent) -> None:
    event = at(
        load_event("api/run_definition"), "POST", f"{PLAYBOOK_PATH}/definitions/interaction/brief-sent/run"
    )

    reply = call(body(event, {"input": {"owner": "maria", "campaign": "Spring"}}))

    assert reply.status == 200
    assert (reply.body["status"], reply.body["output"]) == ("succeeded", {})
    assert reply.body["finished_at"] == reply.body["started_at"]


# --- rejections and bodies -------------------------------------------------------------------------------


def test_invalid_input_is_422_with_pointers_under_input_and_recorded(
    call: Any, load_event: LoadEvent
) -> None:
    reply = call(body(load_event("api/run_definition"), {"input": {"owner": 3}, "run_id": RUN_ID}))
    recorded = call(load_event("api/get_run"))

    is_problem(reply, 422, "invalid_input")
    assert [e["pointer"] for e in reply.body["errors"]] == ["/input", "/input/owner"]
    assert recorded.body["status"] == "rejected"
    assert recorded.body["rejection"]["errors"] == reply.body["errors"]


@pytest.mark.parametrize(
    ("payload", "pointer"),
    [
        ({"run_id": "nope"}, "/run_id"),
        ({"run_id": 7}, "/run_id"),
        ({"input": None}, "/input"),
        ({"input": [1]}, "/input"),
        ({"inputs": {}}, "/inputs"),
    ],
)
def test_a_run_body_that_cannot_be_used_is_422(
    call: Any, load_event: LoadEvent, payload: dict[str, Any], pointer: str
) -> None:
    reply = call(body(load_event("api/run_definition"), payload))

    is_problem(reply, 422, "invalid_input")
    assert reply.body["errors"][0]["pointer"] == pointer


def test_a_function_that_delivers_through_an_unconfigured_server_is_503_tool_not_offered(
    call: Any, load_event: LoadEvent
) -> None:
    event = at(
        load_event("api/run_definition"), "POST", f"{PLAYBOOK_PATH}/definitions/interaction/deliver-post/run"
    )

    reply = call(body(event, {"input": {"owner": "maria"}}))

    is_problem(reply, 503, "unavailable")
    assert reply.body["kind"] == "tool_not_offered" and "search" in reply.body["detail"]


def test_requests_full_is_503(call: Any, load_event: LoadEvent) -> None:
    for _ in range(5):
        assert (
            call(body(load_event("api/run_definition"), {"input": {"owner": "o", "review": "r"}})).status
            == 200
        )

    reply = call(load_event("api/run_definition"))

    is_problem(reply, 503, "unavailable")
    assert reply.body["kind"] == "requests_full"


def test_an_unknown_definition_or_type_is_404(call: Any, load_event: LoadEvent) -> None:
    for path in ("/definitions/interaction/no-such-thing/run", "/definitions/agent/x/run"):
        is_problem(call(at(load_event("api/run_definition"), "POST", PLAYBOOK_PATH + path)), 404, "not_found")


@pytest.mark.parametrize(
    ("payload", "pointer"),
    [({}, "/answer"), ({"answer": {"verdict": "approve"}, "claimed_for": 3}, "/claimed_for"),
     ({"answer": {"verdict": "nope"}}, "/answer/verdict"), ({"answer": {}, "extra": 1}, "/extra")],
)  # fmt: skip
def test_an_answer_body_that_cannot_be_used_is_422(
    call: Any, load_event: LoadEvent, payload: dict[str, Any], pointer: str
) -> None:
    call(load_event("api/run_definition"))

    reply = call(body(load_event("api/answer_interaction"), payload))

    is_problem(reply, 422, "invalid_input")
    assert reply.body["errors"][0]["pointer"] == pointer


def test_a_cancel_reason_is_checked(call: Any, load_event: LoadEvent) -> None:
    call(load_event("api/run_definition"))

    empty = call(body(load_event("api/cancel_run"), {"reason": ""}))
    no_body = call(body(load_event("api/cancel_run"), ""))

    is_problem(empty, 422, "invalid_input")
    assert empty.body["errors"] == [{"pointer": "/reason", "detail": "A reason is 1 to 1,024 characters."}]
    assert no_body.status == 200 and no_body.body["rejection"]["reason"] == "cancelled"


def test_unknown_runs_and_events_are_404(call: Any, load_event: LoadEvent) -> None:
    for name in (
        "api/get_run",
        "api/get_run_history",
        "api/answer_interaction",
        "api/cancel_run",
        "api/get_event",
    ):
        is_problem(call(load_event(name)), 404, "not_found")
    is_problem(
        call(at(load_event("api/get_run"), "GET", f"{PLAYBOOK_PATH}/runs/not-a-uuid")), 404, "not_found"
    )


def test_bad_queries_are_400(call: Any, load_event: LoadEvent) -> None:
    cases = [
        at(load_event("api/list_runs"), "GET", f"{PLAYBOOK_PATH}/runs", {"limit": "101"}),
        at(load_event("api/list_runs"), "GET", f"{PLAYBOOK_PATH}/runs", {"status": "finished"}),
        at(load_event("api/list_interactions"), "GET", f"{PLAYBOOK_PATH}/interactions", {"cursor": "x"}),
        at(load_event("api/list_playbook_events"), "GET", f"{PLAYBOOK_PATH}/events", {"order": "sideways"}),
        at(load_event("api/list_playbook_events"), "GET", f"{PLAYBOOK_PATH}/events", {"since": "last week"}),
    ]
    for event in cases:
        is_problem(call(event), 400, "bad_request")


# --- who may call ----------------------------------------------------------------------------------------


def test_readers_read_writers_write(call: Any, load_event: LoadEvent) -> None:
    call(load_event("api/run_definition"))

    for name in ("api/get_run", "api/list_runs", "api/get_run_history", "api/list_interactions",
                 "api/list_playbook_events"):  # fmt: skip
        assert call(as_principal(load_event(name), "viewer-token")).status == 200
    for name in ("api/run_definition", "api/answer_interaction", "api/cancel_run"):
        is_problem(call(as_principal(load_event(name), "viewer-token")), 403, "forbidden")
        is_problem(call(as_principal(load_event(name), "outsider-token")), 404, "not_found")
        is_problem(call(as_principal(load_event(name), None)), 401, "unauthenticated")
    is_problem(call(as_principal(load_event("api/list_interactions"), "outsider-token")), 404, "not_found")


def test_other_methods_are_405_with_allow(call: Any, load_event: LoadEvent) -> None:
    reply = call(at(load_event("api/get_run"), "DELETE", RUN_PATH))

    is_problem(reply, 405, "method_not_allowed")
    assert reply.headers["Allow"] == "GET, HEAD"


# --- the entries of the execution and the scheduler, with their payloads ----------------------------------


def test_the_wait_settle_and_timer_entries_with_their_payloads(
    call: Any,
    load_event: LoadEvent,
    handlers: Any,
    waits: Any,
    manual_clock: ManualClock,
    service: RunService,
) -> None:
    waits.park_on_start = False
    call(load_event("api/run_definition"))

    parked = handlers["wait"](load_event("stepfunctions/wait"), None)
    early = handlers["timer"](load_event("scheduler/expire"), None)
    manual_clock.advance(TWO_DAYS)
    expired = handlers["timer"](load_event("scheduler/expire"), None)
    settled = handlers["settle"](load_event("stepfunctions/settle_timeout"), None)["outcome"]

    run = {"org": "acme", "playbook": "campaigns", "run_id": RUN_ID}
    assert parked == {"run": run, "outcome": "parked"}
    assert (early["outcome"], expired["outcome"]) == ("unchanged", "expired")
    assert expired == {"run": run, "work": "expire", "outcome": "expired"}
    token = load_event("stepfunctions/wait")["token"]
    assert waits.ended == {token: ("succeeded", {"ending": "expired"})}
    assert settled == "unchanged"
    assert call(load_event("api/get_run")).body["rejection"]["kind"] == "expired"


def test_an_answer_ends_its_run_in_its_own_write_and_the_backstop_finds_it_ended(
    call: Any, load_event: LoadEvent, handlers: Any, waits: Any
) -> None:
    waits.park_on_start = False
    call(load_event("api/run_definition"))
    call(load_event("api/answer_interaction"))

    assert call(load_event("api/get_run")).body["status"] == "succeeded"
    assert handlers["settle"](load_event("stepfunctions/settle_timeout"), None)["outcome"] == "unchanged"
    assert call(load_event("api/get_run")).body["status"] == "succeeded"
