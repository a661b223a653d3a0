"""moto's Step Functions executor (an ASL implementation that is not Parley's: its parser is a port of
LocalStack's) runs every compiled machine of the corpus as the corpus says the run ends: its output or
its uncaught error, the retries' waits, the calls' attempts; the execution itself succeeds whatever the
run's ending, through the end Task (but where an expression outside any try fails: the runtime reads
that failure as the run's ending). moto evaluates JSONata through Parley's evaluator (jsonata-python)
and is patched where it is not Step Functions (``moto_runs`` says where)."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime
from typing import Any

import pytest
from unit.workflow.machines import CASES, RUN, Case, case, check_ending, check_told
from unit.workflow.moto_runs import CorpusRun, run_corpus

from parley.aws.workflows import history_events
from parley.workflow import engine
from parley.workflow.history import task_events

#: moto's executor stops a Parallel's other branches by letting their worker threads fail after the
#: program has stopped (a competing fork's losers): its own thread's error, not the run's ending, which
#: is what these tests check.
pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")


@pytest.fixture(scope="module")
def corpus() -> CorpusRun:
    return run_corpus()


@pytest.mark.parametrize("case", CASES, ids=[found.name for found in CASES])
def test_moto_ends_the_run_as_the_corpus_says(corpus: CorpusRun, case: Case) -> None:
    outcome = corpus.outcomes[case.name]
    if outcome.end is None:
        # Only an expression of a Pass or a Choice outside any try fails an execution before its end.
        assert (outcome.status, outcome.error) == ("FAILED", engine.EXPRESSION_ERROR), outcome.cause
    else:
        assert outcome.status == "SUCCEEDED", (outcome.error, outcome.cause)
        assert outcome.end == {"action": engine.END_ACTION, "run": RUN, **outcome.output}
    check_ending(case, outcome.ending())
    if case.waits is not None:
        assert tuple(outcome.waits) == case.waits
    attempts = tuple((call["task"], call["attempt"]) for call in outcome.calls)
    if case.attempts is not None:
        assert attempts == case.attempts
    assert len(set(attempts)) == len(attempts), "a call made again under the same attempt"
    check_told(case, outcome.told)


@pytest.mark.parametrize("case", CASES, ids=[found.name for found in CASES])
def test_every_state_entered_is_known_by_its_task(corpus: CorpusRun, case: Case) -> None:
    machine = corpus.compiled[case.name]
    outcome = corpus.outcomes[case.name]
    assert outcome.entered[0] == machine.definition["StartAt"]
    if outcome.end is not None:
        assert outcome.entered[-1] == "#end"
    assert set(outcome.entered) <= set(machine.states)


def test_the_brief_approval_enters_few_states(corpus: CorpusRun) -> None:
    """Each state entered is a transition Step Functions bills: answered, the call and the end; expired
    and caught, the call, the catch's decision (which gives the recovery's value) and the end."""
    assert corpus.outcomes["brief-approval: answered"].entered == ["/do/0/approval/try/0/ask", "#end"]
    assert corpus.outcomes["brief-approval: expired, caught"].entered == [
        "/do/0/approval/try/0/ask",
        "/do/0/approval#catch",
        "#end",
    ]
    assert corpus.outcomes["brief-approval: unanswered of another kind is not caught"].entered == [
        "/do/0/approval/try/0/ask",
        "/do/0/approval#catch",
        "/do/0/approval#raise",
        "#end",
    ]


def _events(corpus: CorpusRun, name: str) -> list[tuple[str, str]]:
    """The tasks' events the run's history reads from moto's execution history (``parley.workflow.history``
    over the events as ``parley.aws.workflows`` maps Step Functions' own)."""
    found = task_events(
        RUN["run_id"],
        history_events(corpus.outcomes[name].events),
        corpus.compiled[name].states,
        datetime(2026, 1, 1, tzinfo=UTC),
    )
    short = {"task_started": "started", "task_completed": "completed", "task_skipped": "skipped"}
    short |= {"task_failed": "failed", "task_retried": "retried"}
    return [(short[event.type], str(event.data["task"])) for event in found]


def test_the_history_reads_back_as_task_events(corpus: CorpusRun) -> None:
    """Starts, completions, skips, retries and failures, each task's once, where states stand for several
    tasks too."""
    assert _events(corpus, "if: a skipped task hands its input on and its then is not followed") == [
        ("skipped", "/do/0/skipped"),
        ("started", "/do/1/next"),
        ("completed", "/do/1/next"),
    ]
    retried = _events(corpus, "retry: linear backoff, from use.retries")
    assert Counter(event for event, _ in retried) == Counter(
        {"started": 4, "failed": 3, "retried": 2, "completed": 1}
    )
    assert retried[0] == ("started", "/do/0/guarded")
    assert retried[-1] == ("completed", "/do/0/guarded")
    assert _events(corpus, "raise an error written inline") == [
        ("started", "/do/0/stop"),
        ("failed", "/do/0/stop"),
    ]
    approval, ask = "/do/0/approval", "/do/0/approval/try/0/ask"
    assert _events(corpus, "brief-approval: answered") == [
        ("started", approval),
        ("started", ask),
        ("completed", ask),
        ("completed", approval),
    ]
    assert _events(corpus, "brief-approval: expired, caught") == [
        ("started", approval),
        ("started", ask),
        ("failed", ask),
        ("started", "/do/0/approval/catch/do/0/unanswered"),
        ("completed", "/do/0/approval/catch/do/0/unanswered"),
        ("completed", approval),
    ]
    assert _events(corpus, "brief-approval: unanswered of another kind is not caught") == [
        ("started", approval),
        ("started", ask),
        ("failed", ask),
        ("failed", approval),
    ]
    assert _events(corpus, "try: the list's output when nothing fails") == [
        ("started", "/do/0/guarded"),
        ("started", "/do/0/guarded/try/0/one"),
        ("completed", "/do/0/guarded/try/0/one"),
        ("started", "/do/0/guarded/try/1/two"),
        ("completed", "/do/0/guarded/try/1/two"),
        ("completed", "/do/0/guarded"),
    ]


def test_the_history_reads_the_new_tasks(corpus: CorpusRun) -> None:
    """A for's iterations, a fork's branches, a race with a timeout's clock: each task started once before
    it ends."""
    assert _events(corpus, "a do's timeout: in time, its output and its export go on") == [
        ("started", "/do/0/steps"),
        ("started", "/do/0/steps/do/0/pause"),
        ("completed", "/do/0/steps/do/0/pause"),
        ("started", "/do/0/steps/do/1/one"),
        ("completed", "/do/0/steps/do/1/one"),
        ("completed", "/do/0/steps"),
        ("started", "/do/1/after"),
        ("completed", "/do/1/after"),
    ]
    assert _events(corpus, "a call's timeout: the deadline told, then timeout raised at the task") == [
        ("started", "/do/0/ask"),
        ("failed", "/do/0/ask"),
    ]
    step, stop = "/do/0/add/do/1/step", "/do/0/add/do/0/stop"
    assert _events(corpus, "for: then exit leaves the loop; an empty list hands the input on") == [
        ("started", "/do/0/add"),
        *[("skipped", stop), ("started", step), ("completed", step)] * 2,
        ("started", stop),
        ("completed", stop),
        ("completed", "/do/0/add"),
        ("started", "/do/1/none"),
        ("completed", "/do/1/none"),
    ]
    forked = _events(corpus, "fork: the branches' outputs in the order written, output.as")
    assert forked[0] == ("started", "/do/0/both")
    assert forked[-3:] == [
        ("completed", "/do/0/both"),
        ("started", "/do/1/after"),
        ("completed", "/do/1/after"),
    ]
    assert Counter(forked) == Counter(set(forked))  # each event once
    raced = _events(
        corpus, "fork compete: the fork fails only when every branch fails, with the first branch's error"
    )
    assert raced[0] == ("started", "/do/0/race")
    assert raced[-1] == ("failed", "/do/0/race")


@pytest.mark.parametrize("case", CASES, ids=[found.name for found in CASES])
def test_a_task_ends_only_after_it_started(corpus: CorpusRun, case: Case) -> None:
    """In every run of the corpus, each time a task completes or fails it had started (and not ended
    since); a skipped task did not start. (An error a task's list lets out ends it without an event.)"""
    started: Counter[str] = Counter()
    for event, task in _events(corpus, case.name):
        if event == "started":
            started[task] += 1
        elif event in ("completed", "failed"):
            assert started[task] > 0, f"{task} {event} before it started"
            started[task] -= 1
        elif event == "skipped":
            assert started[task] == 0


def test_a_retry_waits_with_its_number_and_delay_in_its_input(corpus: CorpusRun) -> None:
    name = "retry: the try runs again after each delay (exponential), then catch.do"
    states = corpus.compiled[name].states
    retries = [state for state in corpus.outcomes[name].entered if states[state].has("retried")]
    assert retries == ["/do/0/guarded#retry"] * 3


def test_a_call_carries_what_the_entry_reads(corpus: CorpusRun) -> None:
    calls = corpus.outcomes["review-and-approve: approved"].calls
    first: dict[str, Any] = calls[0]
    assert set(first) == {"action", "token", "run", "depth", "task", "attempt", "type", "name", "input"}
    assert first["action"] == engine.CALL_ACTION
    assert first["run"] == RUN
    assert first["depth"] == 0
    assert (first["type"], first["name"]) == ("reasoning", "review-brief")
    assert first["input"] == {"brief": "Spring"}
    assert first["token"]
    second = calls[1]
    assert second["input"] == {"owner": "ana@example.com", "review": {"score": 9}}


def test_with_input_left_out_is_an_empty_object(corpus: CorpusRun) -> None:
    calls = corpus.outcomes["a call's input, its with.input left out, output.as and export.as"].calls
    assert calls[0]["input"] == {}
    assert calls[1]["input"] == {"summary": "short"}


def test_a_call_a_then_runs_again_has_another_attempt(corpus: CorpusRun) -> None:
    calls = corpus.outcomes[case("a call a then runs again").name].calls
    attempts = [call["attempt"] for call in calls]
    assert len(attempts) == 2
    assert all(attempt.startswith("0@") for attempt in attempts)
    assert attempts[0] != attempts[1]
