"""answer_interaction and the endings: expiry, cancel, parking and settling (interaction-format.md,
"Answering a request", "How a run ends")."""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

import pytest

from parley.clock import ManualClock
from parley.definitions.model import PlaybookRef
from parley.errors import Problem
from parley.ports.waiting import CANCELLED, EXPIRED, RunKey
from parley.runs.service import RunService

PLAYBOOK = PlaybookRef("acme", "campaigns")
APPROVE = "approve-campaign-brief"
TWO_DAYS = 2 * 24 * 3600


def refused(call: Any, *args: Any, **kwargs: Any) -> Problem:
    with pytest.raises(Problem) as caught:
        call(*args, **kwargs)
    return caught.value


def key(run_id: str) -> RunKey:
    return RunKey("acme", "campaigns", run_id)


def history(service: RunService, run_id: str) -> list[str]:
    return [e["type"] for e in service.get_run_history(PLAYBOOK, run_id).items]


# --- answering -------------------------------------------------------------------------------------------


def test_an_answer_is_recorded_as_one_fact_and_the_run_succeeds_with_it(
    run: Any, answer: Any, service: RunService, waits: Any, scheduler: Any, manual_clock: ManualClock
) -> None:
    started = run()
    manual_clock.advance(90)

    fact = answer(started.run_id, {"verdict": "approve", "note": "Ready to launch."}, "the campaign team")

    assert fact.as_json() == {
        "run_id": started.run_id,
        "answer_id": fact.answer_id,
        "answer": {"verdict": "approve", "note": "Ready to launch."},
        "claimed_for": "the campaign team",
        "answered_by": "dev",
        "answered_at": "2026-10-17T10:20:12.000Z",
    }
    event = service.get_event(PLAYBOOK, fact.answer_id)
    assert event == {
        "id": fact.answer_id,
        "type": "request_answered",
        "at": "2026-10-17T10:20:12.000Z",
        "run_id": started.run_id,
        "data": {
            "answer": {"verdict": "approve", "note": "Ready to launch."},
            "claimed_for": "the campaign team",
            "answered_by": "dev",
        },
    }
    # the request leaves the inbox, frees its place, ends the wait; the run settles with the answer
    assert service.list_interactions(PLAYBOOK).items == ()
    assert service.store.open_requests(PLAYBOOK) == 0
    assert waits.ended == {f"token-{started.run_id}": ("succeeded", {"ending": "answered"})}
    assert f"expire-{key(started.run_id).scoped_id}" not in scheduler.schedules
    done = service.get_run(PLAYBOOK, started.run_id)
    assert (done.status, done.output, done.finished_at) == (
        "succeeded", {"verdict": "approve", "note": "Ready to launch."}, "2026-10-17T10:20:12.000Z",
    )  # fmt: skip
    assert history(service, started.run_id) == ["interaction_requested", "request_answered", "run_succeeded"]


def test_the_answer_is_checked_against_the_schema_the_request_recorded(
    run: Any, answer: Any, runtime: Any, service: RunService, example_source: str
) -> None:
    started = run()
    # the function changes after the request was asked: its new schema takes a `decision`
    changed = example_source.replace("verdict", "decision")
    runtime.definition_service().update_definition(PLAYBOOK, "interaction", APPROVE, changed)

    problem = refused(answer, started.run_id, {"decision": "approve"})

    assert (problem.reason, problem.status) == ("invalid_input", 422)
    assert [e.pointer for e in problem.errors] == ["/answer"]
    assert "verdict" in problem.errors[0].detail
    # the request stays open
    assert [r["run_id"] for r in service.list_interactions(PLAYBOOK).items] == [started.run_id]
    assert answer(started.run_id, {"verdict": "revise", "note": "Name the job role."}).answer["verdict"] == (
        "revise"
    )


def test_each_problem_of_an_answer_has_its_pointer_under_answer(run: Any, answer: Any) -> None:
    started = run()

    problem = refused(answer, started.run_id, {"verdict": "maybe", "note": 3})

    assert [e.pointer for e in problem.errors] == ["/answer/verdict", "/answer/note"]


def test_an_answer_is_at_most_64_kib_and_512_levels(run: Any, answer: Any, service: RunService) -> None:
    started = run()
    deep: Any = "x"
    for _ in range(513):
        deep = [deep]

    too_large = refused(answer, started.run_id, {"verdict": "approve", "note": "n" * 70_000})
    too_deep = refused(answer, started.run_id, deep)

    assert too_large.reason == "invalid_input" and [e.pointer for e in too_large.errors] == ["/answer"]
    assert "65,536" in too_large.errors[0].detail
    assert too_deep.reason == "invalid_input" and too_deep.errors[0].pointer.startswith("/answer/0/0")
    assert "512" in too_deep.errors[0].detail
    assert len(service.list_interactions(PLAYBOOK).items) == 1


def test_claimed_for_is_at_most_256_bytes_and_never_checked(run: Any, answer: Any) -> None:
    first, second = run(), run()

    problem = refused(answer, first.run_id, {"verdict": "approve"}, "é" * 129)
    fact = answer(second.run_id, {"verdict": "approve"}, "x" * 256)

    assert problem.reason == "invalid_input"
    assert [e.pointer for e in problem.errors] == ["/claimed_for"]
    assert fact.claimed_for == "x" * 256


def test_the_same_answer_again_returns_the_recorded_fact(
    run: Any, answer: Any, manual_clock: ManualClock
) -> None:
    started = run()
    fact = answer(started.run_id, {"verdict": "approve", "note": "ok"}, "team")
    manual_clock.advance(30)

    again = answer(started.run_id, {"note": "ok", "verdict": "approve"}, None, "someone-else")

    assert again == fact


def test_a_different_answer_is_conflict(run: Any, answer: Any) -> None:
    started = run()
    answer(started.run_id, {"verdict": "approve"})

    problem = refused(answer, started.run_id, {"verdict": "revise"})

    assert (problem.reason, problem.status) == ("conflict", 409)
    assert "one answer" in problem.detail


def test_a_notification_takes_no_answer(run: Any, answer: Any) -> None:
    done = run("brief-sent", {"owner": "maria", "campaign": "Spring"})

    problem = refused(answer, done.run_id, {})

    assert (problem.reason, problem.status) == ("conflict", 409)
    assert "notification" in problem.detail


def test_a_rejected_run_takes_no_answer(run: Any, answer: Any) -> None:
    run_id = str(uuid.uuid4())
    refused(run, APPROVE, {}, run_id)

    assert refused(answer, run_id, {"verdict": "approve"}).reason == "conflict"


@pytest.mark.parametrize("run_id", ["0f5e8c1a-4d3b-4f6e-9a2c-7b1d3e5f7a9c", "not-a-uuid"])
def test_an_unknown_run_is_not_found(answer: Any, functions: None, run_id: str) -> None:
    assert refused(answer, run_id, {"verdict": "approve"}).reason == "not_found"


def test_an_answer_that_comes_before_the_token_ends_the_run_at_once_and_the_wait_when_it_parks(
    run: Any, answer: Any, service: RunService, waits: Any
) -> None:
    waits.park_on_start = False
    started = run()

    answer(started.run_id, {"verdict": "approve"})

    assert waits.ended == {}
    assert service.get_run(PLAYBOOK, started.run_id).status == "succeeded"  # in the answer's own write
    assert waits.park(key(started.run_id)) == "answered"
    assert waits.ended == {f"token-{started.run_id}": ("succeeded", {"ending": "answered"})}
    assert history(service, started.run_id) == ["interaction_requested", "request_answered", "run_succeeded"]


def _answer_without_its_ending(service: RunService, run_id: str, moment: Any) -> Any:
    """What an older version wrote, or a crash between its two writes left: the request answered, the
    run still ``started``."""
    from parley.runs.answering import answer_fact

    fact, event = answer_fact(moment, run_id, {"verdict": "approve"}, None, "dev")
    service.store.answer_request(PLAYBOOK, fact, event)
    assert service.get_run(PLAYBOOK, run_id).status == "started"
    return fact


def test_a_run_answered_without_its_ending_is_ended_by_the_same_answer_sent_again(
    run: Any, answer: Any, service: RunService, waits: Any, manual_clock: ManualClock
) -> None:
    started = run()
    fact = _answer_without_its_ending(service, started.run_id, manual_clock.now())

    again = answer(started.run_id, {"verdict": "approve"})

    assert again == fact
    done = service.get_run(PLAYBOOK, started.run_id)
    assert (done.status, done.output) == ("succeeded", {"verdict": "approve"})
    assert waits.ended == {f"token-{started.run_id}": ("succeeded", {"ending": "answered"})}
    assert history(service, started.run_id) == ["interaction_requested", "request_answered", "run_succeeded"]


def test_a_run_answered_without_its_ending_is_ended_by_its_expirys_timer(
    run: Any, service: RunService, handlers: Any, manual_clock: ManualClock
) -> None:
    started = run()
    _answer_without_its_ending(service, started.run_id, manual_clock.now())
    manual_clock.advance(TWO_DAYS)

    fired = handlers["timer"]({"work": "expire", "run": key(started.run_id).as_json()}, None)

    assert fired["outcome"] == "succeeded"
    assert service.get_run(PLAYBOOK, started.run_id).status == "succeeded"


def test_a_run_answered_without_its_ending_is_ended_by_its_backstop_or_its_wait(
    run: Any, service: RunService, waits: Any, manual_clock: ManualClock
) -> None:
    by_backstop, by_wait = run(), run()
    waits.park_on_start = False
    for started in (by_backstop, by_wait):
        _answer_without_its_ending(service, started.run_id, manual_clock.now())

    assert waits.time_out(by_backstop.run_id) == "succeeded"
    assert waits.park(key(by_wait.run_id)) == "answered"

    for started in (by_backstop, by_wait):
        assert service.get_run(PLAYBOOK, started.run_id).status == "succeeded"
        assert history(service, started.run_id).count("run_succeeded") == 1


# --- expiry ----------------------------------------------------------------------------------------------


def test_a_request_nobody_answers_expires_and_its_run_is_rejected_as_unanswered(
    run: Any, answer: Any, service: RunService, waits: Any, scheduler: Any, manual_clock: ManualClock
) -> None:
    started = run()
    manual_clock.advance(TWO_DAYS - 1)
    assert scheduler.fire_due(manual_clock.now()) == []

    manual_clock.advance(1)
    outcomes = scheduler.fire_due(manual_clock.now())

    assert [o["outcome"] for o in outcomes] == ["expired"]
    ended = service.get_run(PLAYBOOK, started.run_id)
    assert ended.status == "rejected"
    assert ended.as_json()["rejection"] == {
        "reason": "unanswered",
        "kind": "expired",
        "detail": "Nobody answered the request before it expired at 2026-10-19T10:18:42.000Z.",
    }
    assert ended.finished_at == "2026-10-19T10:18:42.000Z"
    assert waits.ended == {f"token-{started.run_id}": ("succeeded", {"ending": EXPIRED})}
    assert service.list_interactions(PLAYBOOK).items == ()
    assert service.store.open_requests(PLAYBOOK) == 0
    assert history(service, started.run_id) == ["interaction_requested", "run_rejected"]
    # an answer now is too late, and a retry under the run id is 410
    assert refused(answer, started.run_id, {"verdict": "approve"}).reason == "conflict"
    retried = refused(run, APPROVE, None, started.run_id)
    assert (retried.reason, retried.status, retried.kind) == ("unanswered", 410, "expired")


def test_the_timer_is_idempotent_and_does_nothing_before_the_expiry(
    run: Any, service: RunService, handlers: Any, manual_clock: ManualClock
) -> None:
    started = run()
    work = {"work": "expire", "run": key(started.run_id).as_json()}

    early = handlers["timer"](work, None)
    manual_clock.advance(TWO_DAYS)
    first = handlers["timer"](work, None)
    second = handlers["timer"](work, None)

    assert [early["outcome"], first["outcome"], second["outcome"]] == ["unchanged", "expired", "unchanged"]
    assert history(service, started.run_id) == ["interaction_requested", "run_rejected"]
    assert service.store.open_requests(PLAYBOOK) == 0


def test_an_answer_after_the_expiry_time_is_refused_even_before_the_timer_runs(
    run: Any, answer: Any, service: RunService, scheduler: Any, manual_clock: ManualClock
) -> None:
    started = run()
    manual_clock.advance(TWO_DAYS)

    problem = refused(answer, started.run_id, {"verdict": "approve"})

    assert problem.reason == "conflict" and "expired" in problem.detail
    assert service.list_interactions(PLAYBOOK).items == ()  # past its time: not listed
    assert [o["outcome"] for o in scheduler.fire_due(manual_clock.now())] == ["expired"]


def test_the_backstop_timeout_expires_a_request_whose_schedule_was_lost(
    run: Any, service: RunService, handlers: Any, waits: Any
) -> None:
    waits.park_on_start = False
    started = run()

    settled = handlers["settle"](
        {"run": key(started.run_id).as_json(), "error": {"Error": "States.Timeout", "Cause": ""}}, None
    )

    assert settled["outcome"] == "expired"
    rejection = service.get_run(PLAYBOOK, started.run_id).rejection
    assert rejection is not None and (rejection.reason, rejection.kind) == ("unanswered", "expired")
    assert service.store.open_requests(PLAYBOOK) == 0


def test_the_backstop_ends_no_wait_itself(run: Any, service: RunService, waits: Any) -> None:
    """Settle may not call SendTask* (least privilege): the wait is over when the backstop fires."""
    started = run()
    assert service.store.get_request(PLAYBOOK, started.run_id).token is not None  # type: ignore[union-attr]

    assert waits.time_out(started.run_id) == "expired"
    assert waits.ended == {f"token-{started.run_id}": ("timed out", "States.Timeout")}
    assert waits.calls == []  # not even to the token that timed out


# --- cancel ----------------------------------------------------------------------------------------------


def test_cancel_rejects_the_run_as_cancelled_and_ends_its_wait(
    run: Any, answer: Any, service: RunService, waits: Any, scheduler: Any
) -> None:
    started = run()

    cancelled = service.cancel_run(PLAYBOOK, started.run_id, reason="Launch moved", cancelled_by="dev")

    assert cancelled.status == "rejected"
    assert cancelled.as_json()["rejection"] == {"reason": "cancelled", "detail": "Launch moved"}
    assert service.get_run(PLAYBOOK, started.run_id) == cancelled
    assert waits.ended == {f"token-{started.run_id}": ("succeeded", {"ending": CANCELLED})}
    assert f"expire-{key(started.run_id).scoped_id}" not in scheduler.schedules
    assert service.list_interactions(PLAYBOOK).items == ()
    assert service.store.open_requests(PLAYBOOK) == 0
    [_, rejected] = service.get_run_history(PLAYBOOK, started.run_id).items
    assert rejected["data"] == {"rejection": cancelled.as_json()["rejection"], "cancelled_by": "dev"}
    # it has ended: another cancel and an answer are 409; a retry answers its problem
    assert (
        refused(service.cancel_run, PLAYBOOK, started.run_id, reason=None, cancelled_by="dev").status == 409
    )
    assert refused(answer, started.run_id, {"verdict": "approve"}).reason == "conflict"
    assert refused(run, APPROVE, None, started.run_id).reason == "cancelled"


def test_cancel_without_a_reason_says_who_cancelled(run: Any, service: RunService) -> None:
    started = run()
    cancelled = service.cancel_run(PLAYBOOK, started.run_id, reason=None, cancelled_by="alice")
    assert cancelled.rejection is not None and "alice" in cancelled.rejection.detail


@pytest.mark.parametrize("reason", ["", "r" * 1025])
def test_a_cancel_reason_is_1_to_1024_characters(run: Any, service: RunService, reason: str) -> None:
    started = run()

    problem = refused(service.cancel_run, PLAYBOOK, started.run_id, reason=reason, cancelled_by="dev")

    assert problem.reason == "invalid_input" and [e.pointer for e in problem.errors] == ["/reason"]
    assert service.cancel_run(PLAYBOOK, started.run_id, reason="r" * 1024, cancelled_by="dev").status == (
        "rejected"
    )


def test_cancelling_an_ended_or_answered_run_is_conflict(run: Any, answer: Any, service: RunService) -> None:
    done = run("brief-sent", {"owner": "maria", "campaign": "Spring"})
    answered = run()
    answer(answered.run_id, {"verdict": "approve"})

    for run_id in (done.run_id, answered.run_id):
        assert refused(service.cancel_run, PLAYBOOK, run_id, reason=None, cancelled_by="dev").status == 409
    assert refused(
        service.cancel_run, PLAYBOOK, str(uuid.uuid4()), reason=None, cancelled_by="dev"
    ).status == (404)


def test_a_cancel_before_the_token_is_taken_ends_the_wait_when_it_parks(
    run: Any, service: RunService, waits: Any
) -> None:
    waits.park_on_start = False
    started = run()
    service.cancel_run(PLAYBOOK, started.run_id, reason=None, cancelled_by="dev")

    assert waits.park(key(started.run_id)) == "cancelled"
    assert waits.ended == {f"token-{started.run_id}": ("succeeded", {"ending": CANCELLED})}


# --- the execution's steps -------------------------------------------------------------------------------


def test_settling_is_idempotent(run: Any, answer: Any, service: RunService, handlers: Any) -> None:
    started = run()
    answer(started.run_id, {"verdict": "approve"})
    timed_out = {"run": key(started.run_id).as_json(), "error": {"Error": "States.Timeout", "Cause": ""}}

    again = handlers["settle"](timed_out, None)
    expired_late = handlers["settle"](timed_out, None)

    assert (again["outcome"], expired_late["outcome"]) == ("unchanged", "unchanged")
    assert history(service, started.run_id).count("run_succeeded") == 1
    assert service.get_run(PLAYBOOK, started.run_id).status == "succeeded"


def test_the_wait_handler_keeps_the_token_on_the_open_request(
    run: Any, service: RunService, handlers: Any, waits: Any
) -> None:
    waits.park_on_start = False
    started = run()

    outcome = handlers["wait"]({"token": "AQCEAAAAKgAAAA", "run": key(started.run_id).as_json()}, None)

    assert outcome == {"run": key(started.run_id).as_json(), "outcome": "parked"}
    assert service.store.get_request(PLAYBOOK, started.run_id).token == "AQCEAAAAKgAAAA"  # type: ignore[union-attr]


def test_the_wait_handler_ends_a_wait_whose_request_expired(
    run: Any, service: RunService, handlers: Any, waits: Any, scheduler: Any, manual_clock: ManualClock
) -> None:
    waits.park_on_start = False
    started = run()
    manual_clock.advance(TWO_DAYS)
    scheduler.fire_due(manual_clock.now())

    outcome = waits.park(key(started.run_id))

    assert outcome == "expired"
    assert waits.ended == {f"token-{started.run_id}": ("succeeded", {"ending": EXPIRED})}


def test_the_timer_refuses_work_it_does_not_know(handlers: Any) -> None:
    with pytest.raises(ValueError, match="deliver"):
        handlers["timer"]({"work": "deliver", "run": key(str(uuid.uuid4())).as_json()}, None)


def test_the_expiry_is_the_moment_plus_expires(run: Any, service: RunService, waits: Any) -> None:
    started = run("party-check", {"to": "lee"})  # expires: PT10M

    request = service.store.get_request(PLAYBOOK, started.run_id)

    assert request is not None and request.expires_at == "2026-10-17T10:28:42.000Z"
    assert waits.started[started.run_id] == int(timedelta(minutes=11).total_seconds())


# --- a run a workflow called ----------------------------------------------------------------------------


def test_a_run_a_workflow_called_has_no_execution_and_its_answer_tells_the_workflow_in_the_same_call(
    service: RunService, waits: Any, scheduler: Any, answer: Any, functions: None
) -> None:
    from parley.runs.model import Parent

    told: list[Any] = []
    service.store.ended = lambda playbook, run: told.append(run)
    parent = Parent(str(uuid.uuid4()), "/do/0/ask", token="workflow-token")
    started = service.run_definition(
        PLAYBOOK, "interaction", APPROVE, input_value={"owner": "maria", "review": "ok"}, run_id=None,
        started_by="dev", parent=parent,
    )  # fmt: skip

    assert waits.starts == 0  # the workflow's own execution is the wait
    assert f"expire-{key(started.run_id).scoped_id}" in scheduler.schedules  # the expiry still ends it
    answer(started.run_id, {"verdict": "approve"})

    (ended,) = told
    assert (ended.run_id, ended.status, ended.output) == (started.run_id, "succeeded", {"verdict": "approve"})
    assert ended.parent is not None and ended.parent.token == "workflow-token"
    assert waits.ended == {}
