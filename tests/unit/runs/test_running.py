"""run_definition: checking and rendering, the bounds, notifications, questions, and retrying under a
run id (interaction-format.md, "How a run ends", "Bounds"; http-api.md, "Runs")."""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

import pytest

from parley.clock import ManualClock, format_time
from parley.definitions.model import PlaybookRef
from parley.errors import Problem
from parley.ports.waiting import RunKey
from parley.runs.service import RunService

PLAYBOOK = PlaybookRef("acme", "campaigns")
APPROVE = "approve-campaign-brief"
BRIEF = {"owner": "maria@example.com", "review": "Clear goals; the budget needs a source."}


def refused(call: Any, *args: Any, **kwargs: Any) -> Problem:
    with pytest.raises(Problem) as caught:
        call(*args, **kwargs)
    return caught.value


def events_of(service: RunService, run_id: str) -> list[dict[str, Any]]:
    return list(service.get_run_history(PLAYBOOK, run_id).items)


# --- a question through the inbox ------------------------------------------------------------------------


def test_a_question_starts_and_waits_in_the_inbox(
    run: Any, service: RunService, waits: Any, scheduler: Any, manual_clock: ManualClock
) -> None:
    started = run()

    assert started.status == "started"
    assert started.as_json() == {
        "run_id": started.run_id,
        "type": "interaction",
        "name": APPROVE,
        "definition_version": 1,
        "status": "started",
        "started_at": "2026-10-17T10:18:42.000Z",
        "started_by": "dev",
    }
    assert uuid.UUID(started.run_id).version == 4
    listed = service.list_interactions(PLAYBOOK).as_json()
    assert listed == {
        "interactions": [
            {
                "run_id": started.run_id,
                "type": "interaction",
                "function": APPROVE,
                "version": 1,
                "to": "maria@example.com",
                "delivery": None,
                "message": "The review of your campaign brief is ready:\n\nClear goals; the budget needs a "
                "source.\n\nApprove the brief as it stands, or ask for a revision.\n",
                "takes_answer": True,
                "requested_at": "2026-10-17T10:18:42.000Z",
                "expires_at": "2026-10-19T10:18:42.000Z",
                "attempts": 0,
                "standing": "in_inbox",
                "answer_schema": {
                    "type": "object",
                    "required": ["verdict"],
                    "properties": {
                        "verdict": {"type": "string", "enum": ["approve", "revise"]},
                        "note": {"type": "string", "maxLength": 2000},
                    },
                },
                "conversation": None,
                "answerer": None,
                "reply_refusals": 0,
            }
        ],
        "next_cursor": None,
    }
    # the expiry is scheduled, and the execution waits expires plus one minute
    at, work = scheduler.schedules[
        f"expire-{RunKey(PLAYBOOK.org, PLAYBOOK.playbook, started.run_id).scoped_id}"
    ]
    assert at == manual_clock.now() + timedelta(days=2)
    assert work == {
        "work": "expire",
        "run": {"org": "acme", "playbook": "campaigns", "run_id": started.run_id},
    }
    assert waits.started == {started.run_id: 2 * 24 * 3600 + 60}
    assert service.store.get_request(PLAYBOOK, started.run_id).token == f"token-{started.run_id}"  # type: ignore[union-attr]
    assert service.store.open_requests(PLAYBOOK) == 1
    [requested] = events_of(service, started.run_id)
    assert requested["type"] == "interaction_requested"
    assert requested["data"] == {
        "delivery": None,
        "to": "maria@example.com",
        "from": "maria@example.com",
        "message_size": len(listed["interactions"][0]["message"].encode()),
        "takes_answer": True,
        "expires_at": "2026-10-19T10:18:42.000Z",
    }


def test_today_and_now_are_the_runs_moment(run: Any, service: RunService, manual_clock: ManualClock) -> None:
    manual_clock.advance(3600 * 20)  # 2026-10-18T06:18:42Z

    done = run("brief-sent", {"owner": "maria", "campaign": "Spring"})

    assert done.started_at == "2026-10-18T06:18:42.000Z"
    requested = events_of(service, done.run_id)[0]
    assert requested["data"]["message_size"] == len(
        "The brief for Spring went out on 2026-10-18 at 2026-10-18T06:18:42.000Z.\n"
    )


def test_from_names_the_answerer_and_defaults_to_to(run: Any, service: RunService) -> None:
    both = run("party-check", {"to": "design-room", "from": "lee"})
    only_to = run("party-check", {"to": "lee"})

    first = service.store.get_request(PLAYBOOK, both.run_id)
    second = service.store.get_request(PLAYBOOK, only_to.run_id)
    assert first is not None and (first.to, first.answerer) == ("design-room", "lee")
    assert second is not None and (second.to, second.answerer) == ("lee", "lee")


# --- a notification ------------------------------------------------------------------------------------


def test_a_notification_without_deliver_succeeds_at_once_with_an_empty_output(
    run: Any, service: RunService, waits: Any, scheduler: Any
) -> None:
    done = run("brief-sent", {"owner": "maria", "campaign": "Spring"})

    assert done.status == "succeeded"
    assert done.as_json()["output"] == {}
    assert done.finished_at == done.started_at
    assert service.get_run(PLAYBOOK, done.run_id) == done
    assert service.list_interactions(PLAYBOOK).items == ()
    assert [e["type"] for e in events_of(service, done.run_id)] == ["interaction_requested", "run_succeeded"]
    assert events_of(service, done.run_id)[0]["data"]["takes_answer"] is False
    assert (waits.starts, scheduler.schedules) == (0, {})
    assert service.store.open_requests(PLAYBOOK) == 0


# --- rejections, each recorded on the run ----------------------------------------------------------------


def test_input_that_does_not_match_the_schema_is_invalid_input_under_input(
    run: Any, service: RunService
) -> None:
    run_id = str(uuid.uuid4())

    problem = refused(run, APPROVE, {"owner": 7}, run_id)

    assert (problem.reason, problem.status) == ("invalid_input", 422)
    assert [e.pointer for e in problem.errors] == ["/input", "/input/owner"]
    recorded = service.get_run(PLAYBOOK, run_id)
    assert recorded.status == "rejected"
    assert recorded.rejection is not None and recorded.rejection.as_json() == {
        "reason": "invalid_input",
        "detail": problem.detail,
        "errors": [e.as_json() for e in problem.errors],
    }
    assert recorded.finished_at == recorded.started_at
    assert [e["type"] for e in events_of(service, run_id)] == ["run_rejected"]
    assert events_of(service, run_id)[0]["data"]["rejection"] == recorded.rejection.as_json()
    assert service.store.open_requests(PLAYBOOK) == 0


@pytest.mark.parametrize("value", [[], "text", 3, None])
def test_input_is_a_json_object(run: Any, service: RunService, value: Any) -> None:
    problem = refused(
        service.run_definition, PLAYBOOK, "interaction", "brief-sent", input_value=value, run_id=None,
        started_by="dev",
    )  # fmt: skip

    assert problem.reason == "invalid_input"
    assert [e.pointer for e in problem.errors] == ["/input"]


def test_a_template_naming_a_missing_value_is_invalid_input_at_its_pointer_with_its_line(run: Any) -> None:
    problem = refused(run, "brief-sent", {"owner": "maria"})

    assert problem.reason == "invalid_input"
    assert [e.as_json() for e in problem.errors] == [
        {"pointer": "/input/campaign", "detail": "Line 5: the input has no field 'campaign'"}
    ]
    party = refused(run, "brief-sent", {"campaign": "Spring"})
    assert [e.as_json() for e in party.errors] == [
        {"pointer": "/input/owner", "detail": "Line 2: the input has no field 'owner'"}
    ]


@pytest.mark.parametrize(
    ("party", "words"),
    [
        ({"to": ""}, "renders empty"),
        ({"to": "   "}, "renders empty"),
        ({"to": "lee\nroom"}, "U+000A"),
        ({"to": "lee\x7f"}, "U+007F"),
        ({"to": "x" * 257}, "257 bytes"),
        ({"to": "é" * 129}, "258 bytes"),
        ({"to": ["lee", "kim"]}, "not as a list or an object"),
        ({"to": {"name": "lee"}}, "not as a list or an object"),
        ({"to": "lee", "from": ""}, "The answerer (from) renders empty"),
        ({"to": "lee", "from": "a\tb"}, "U+0009"),
        ({"to": "lee", "from": "y" * 300}, "300 bytes"),
    ],
)
def test_a_party_out_of_bounds_is_conflict_unworkable(
    run: Any, service: RunService, party: dict[str, Any], words: str
) -> None:
    run_id = str(uuid.uuid4())

    problem = refused(run, "party-check", party, run_id)

    assert (problem.reason, problem.kind, problem.status) == ("conflict", "unworkable", 409)
    assert words in problem.detail
    rejection = service.get_run(PLAYBOOK, run_id).rejection
    assert rejection is not None and (rejection.reason, rejection.kind) == ("conflict", "unworkable")


def test_a_party_of_256_bytes_is_within_bounds(run: Any) -> None:
    assert run("party-check", {"to": "x" * 256}).status == "started"


def test_a_message_over_8_kib_is_conflict_unworkable(run: Any) -> None:
    # the body renders the message and its line end
    assert run("party-check", {"to": "lee", "message": "m" * 8191}).status == "started"

    problem = refused(run, "party-check", {"to": "lee", "message": "m" * 8192})

    assert (problem.reason, problem.kind) == ("conflict", "unworkable")
    assert "8,193 bytes" in problem.detail


def test_a_retired_definition_does_not_run(run: Any, runtime: Any, service: RunService) -> None:
    runtime.definition_service().retire_definition(PLAYBOOK, "interaction", APPROVE)
    run_id = str(uuid.uuid4())

    problem = refused(run, APPROVE, BRIEF, run_id)

    assert (problem.reason, problem.status) == ("conflict", 409)
    assert "retired" in problem.detail
    assert service.get_run(PLAYBOOK, run_id).status == "rejected"


def test_an_unknown_definition_is_not_found_and_records_nothing(run: Any, service: RunService) -> None:
    run_id = str(uuid.uuid4())

    problem = refused(run, "no-such-function", {}, run_id)

    assert (problem.reason, problem.status) == ("not_found", 404)
    assert refused(service.get_run, PLAYBOOK, run_id).reason == "not_found"


def test_a_reasoning_run_is_not_found_without_definitions(service: RunService) -> None:
    problem = refused(
        service.run_definition, PLAYBOOK, "reasoning", "x-y-z", input_value={}, run_id=None, started_by="dev"
    )
    assert problem.reason == "not_found"
    assert (
        refused(
            service.run_definition,
            PLAYBOOK,
            "agent",
            "x-y-z",
            input_value={},
            run_id=None,
            started_by="dev",
        ).reason
        == "not_found"
    )


# --- run ids and retrying under one ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "run_id", ["", "abc", "0f5e8c1a4d3b4f6e9a2c7b1d3e5f7a9c", "{0f5e8c1a-4d3b-4f6e-9a2c-7b1d3e5f7a9c}"]
)
def test_a_run_id_is_a_uuid(run: Any, run_id: str) -> None:
    problem = refused(run, APPROVE, BRIEF, run_id)

    assert problem.reason == "invalid_input"
    assert [e.pointer for e in problem.errors] == ["/run_id"]


def test_the_same_id_and_input_return_the_recorded_run(run: Any, service: RunService, waits: Any) -> None:
    run_id = "0F5E8C1A-4D3B-4F6E-9A2C-7B1D3E5F7A9C"

    first = run(APPROVE, BRIEF, run_id)
    again = run(APPROVE, dict(reversed(list(BRIEF.items()))), run_id.lower())

    assert first.run_id == run_id.lower()
    assert again == first
    assert len(service.list_interactions(PLAYBOOK).items) == 1
    assert service.store.open_requests(PLAYBOOK) == 1
    assert waits.starts == 2  # a retry starts the (same) execution again: idempotent, and a repair


def test_the_same_id_with_other_input_or_another_definition_is_conflict(run: Any) -> None:
    run_id = str(uuid.uuid4())
    run(APPROVE, BRIEF, run_id)

    other_input = refused(run, APPROVE, {**BRIEF, "review": "Another"}, run_id)
    other_function = refused(run, "brief-sent", BRIEF, run_id)

    for problem in (other_input, other_function):
        assert (problem.reason, problem.status, problem.kind) == ("conflict", 409, None)
        assert "taken" in problem.detail


def test_a_recorded_rejection_answers_again_with_its_problem(run: Any) -> None:
    run_id = str(uuid.uuid4())
    first = refused(run, APPROVE, {"owner": "maria"}, run_id)

    again = refused(run, APPROVE, {"owner": "maria"}, run_id)

    assert again.as_json() == first.as_json()


def test_a_succeeded_notification_is_returned_as_recorded(run: Any, manual_clock: ManualClock) -> None:
    run_id = str(uuid.uuid4())
    first = run("brief-sent", {"owner": "maria", "campaign": "Spring"}, run_id)
    manual_clock.advance(60)

    assert run("brief-sent", {"owner": "maria", "campaign": "Spring"}, run_id) == first


def test_a_run_rejected_as_unworkable_runs_again_under_its_id(
    run: Any, runtime: Any, service: RunService, manual_clock: ManualClock
) -> None:
    run_id = str(uuid.uuid4())
    refused(run, "party-check", {"to": ""}, run_id)
    manual_clock.advance(5)

    # the same input renders the same party: rejected again, as a new attempt
    again = refused(run, "party-check", {"to": ""}, run_id)

    assert again.kind == "unworkable"
    recorded = service.get_run(PLAYBOOK, run_id)
    assert (recorded.attempt, recorded.started_at) == (2, format_time(manual_clock.now()))
    assert [e["type"] for e in events_of(service, run_id)] == ["run_rejected", "run_rejected"]


# --- the open-requests bound -----------------------------------------------------------------------------


def test_the_open_requests_bound_is_unavailable_requests_full_recorded_on_the_run(
    run: Any, answer: Any, service: RunService
) -> None:
    started = [run() for _ in range(5)]
    run_id = str(uuid.uuid4())

    problem = refused(run, APPROVE, BRIEF, run_id)

    assert (problem.reason, problem.kind, problem.status) == ("unavailable", "requests_full", 503)
    assert "5 open requests" in problem.detail
    recorded = service.get_run(PLAYBOOK, run_id)
    assert recorded.status == "rejected" and recorded.rejection is not None
    assert recorded.rejection.kind == "requests_full"
    assert service.store.get_request(PLAYBOOK, run_id) is None
    assert service.store.open_requests(PLAYBOOK) == 5
    # a request that ends frees its place, and the rejected run runs again under its id
    answer(started[0].run_id, {"verdict": "approve"})
    assert service.store.open_requests(PLAYBOOK) == 4
    again = run(APPROVE, BRIEF, run_id)
    assert (again.status, again.attempt) == ("started", 2)
    assert service.store.open_requests(PLAYBOOK) == 5


def test_a_notification_takes_no_place(run: Any, service: RunService) -> None:
    for _ in range(5):
        run()

    assert run("brief-sent", {"owner": "maria", "campaign": "Spring"}).status == "succeeded"


def test_without_waits_a_question_cannot_run(run: Any, runtime: Any, service: RunService) -> None:
    runtime.waits = None
    problem = refused(run)
    assert problem.reason == "unavailable"


def test_a_run_that_cannot_start_waiting_gives_its_place_back_and_may_run_again(
    run: Any, service: RunService, waits: Any, manual_clock: ManualClock
) -> None:
    run_id = str(uuid.uuid4())
    starting = waits.start

    def broken(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("Step Functions is down")

    waits.start = broken
    problem = refused(run, APPROVE, BRIEF, run_id)
    waits.start = starting
    manual_clock.advance(1)
    again = run(APPROVE, BRIEF, run_id)

    assert (problem.reason, problem.status) == ("unavailable", 503)
    assert (again.status, again.attempt) == ("started", 2)
    assert service.store.open_requests(PLAYBOOK) == 1
    assert [r["run_id"] for r in service.list_interactions(PLAYBOOK).items] == [run_id]
    types = [e["type"] for e in events_of(service, run_id)]
    assert types == ["interaction_requested", "run_rejected", "interaction_requested"]
