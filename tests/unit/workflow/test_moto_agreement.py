"""moto's Step Functions executor (an ASL implementation that is not Parley's: its parser is a port of
LocalStack's) runs every compiled machine of the corpus as the corpus says the run ends: its output or
its uncaught error, the retries' waits, the calls' attempts; the execution itself succeeds whatever the
run's ending, through the end Task. moto evaluates JSONata through Parley's evaluator (jsonata-python)
and is patched where it is not Step Functions (``moto_runs`` says where)."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from unit.workflow.machines import CASES, RUN, Case, Rejected, Succeeded, case
from unit.workflow.moto_runs import CorpusRun, run_corpus

from parley.workflow import engine
from parley.workflow.states import DOCUMENT, Role


@pytest.fixture(scope="module")
def corpus() -> CorpusRun:
    return run_corpus()


@pytest.mark.parametrize("case", CASES, ids=[found.name for found in CASES])
def test_moto_ends_the_run_as_the_corpus_says(corpus: CorpusRun, case: Case) -> None:
    outcome = corpus.outcomes[case.name]
    assert outcome.status == "SUCCEEDED", (outcome.error, outcome.cause)
    assert outcome.end is not None
    assert outcome.end == {"action": engine.END_ACTION, "run": RUN, **outcome.output}
    expected = case.expected
    if isinstance(expected, Succeeded):
        assert outcome.output == {"output": expected.output}
    else:
        assert isinstance(expected, Rejected)
        error = outcome.output["error"]
        assert (error["type"], error["status"]) == (expected.type, expected.status), error
        if expected.instance is not None:
            assert error["instance"] == expected.instance
    if case.waits is not None:
        assert tuple(outcome.waits) == case.waits
    attempts = tuple((call["task"], call["attempt"]) for call in outcome.calls)
    if case.attempts is not None:
        assert attempts == case.attempts
    assert len(set(attempts)) == len(attempts), "a call made again under the same attempt"


@pytest.mark.parametrize("case", CASES, ids=[found.name for found in CASES])
def test_every_state_entered_is_known_by_its_task(corpus: CorpusRun, case: Case) -> None:
    states = corpus.compiled[case.name].states
    entered = corpus.outcomes[case.name].entered
    assert entered[0] == "#start"
    assert entered[-2:] == ["#end", "#finish"]
    assert set(entered) <= set(states)


def test_the_history_reads_back_as_task_events(corpus: CorpusRun) -> None:
    """Starts, completions, skips, retries and failures by the roles of the states entered."""

    def events(name: str) -> list[tuple[str, str]]:
        states = corpus.compiled[name].states
        read: list[tuple[str, str]] = []
        for state in corpus.outcomes[name].entered:
            found = states[state]
            if found.reference == DOCUMENT:
                continue
            reading: tuple[tuple[Role, str], ...] = (
                ("entered", "started"),
                ("skipped", "skipped"),
                ("retried", "retried"),
                ("failed", "failed"),
                ("completed", "completed"),
            )
            for role, event in reading:
                if found.has(role):
                    read.append((event, found.reference))
        return read

    assert events("if: a skipped task hands its input on and its then is not followed") == [
        ("skipped", "/do/0/skipped"),
        ("started", "/do/1/next"),
        ("completed", "/do/1/next"),
    ]
    retried = events("retry: linear backoff, from use.retries")
    assert Counter(event for event, _ in retried) == Counter(
        {"started": 4, "failed": 3, "retried": 2, "completed": 1}
    )
    assert retried[0] == ("started", "/do/0/guarded")
    assert retried[-1] == ("completed", "/do/0/guarded")
    assert events("raise an error written inline") == [("started", "/do/0/stop"), ("failed", "/do/0/stop")]


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
