"""The workflow corpus (``tests/unit/workflow/machines.py``) on the local runtime: every case's compiled
machine run by the JSONata interpreter (``parley.local.jsonata_states``), its calls answered as the case
says, its Waits fired by the clock, and its ending, waits and call attempts compared with the case's;
then every case again through the local executor on the manual clock, its calls answered from within
the entry's own invocation (the answer that races ahead of the parked task). Listens are answered as
calls are; emits and deadlines are recorded; a task never answered waits for its timeout, which the
clock brings. Where an expression outside
any ``try`` fails, the execution fails without its end, and the run's ending is what the runtime reads
from that failure (``machines.run_ending``)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import pytest
import yaml
from unit.workflow.machines import CASES, RUN, Answer, Case, check_told, run_ending
from unit.workflow.machines import check_ending as check_run_ending

from parley.clock import ManualClock
from parley.local.clock_routes import advance
from parley.local.executor import LocalExecutor
from parley.local.jsonata_states import TaskFailed, TaskSucceeded, WorkflowMachine
from parley.local.scheduler import LocalScheduler
from parley.workflow import engine
from parley.workflow.compiler import compile_workflow

ENTRY = "arn:aws:lambda:us-east-1:123456789012:function:parley-workflow-local"
#: Timers fired for one case at most (a case's retries wait a few times).
MAX_TIMERS = 100


def compiled(case: Case) -> dict[str, Any]:
    definition: dict[str, Any] = compile_workflow(yaml.safe_load(case.document)).definition
    return definition


class FakeEntry:
    """The workflow entry as a case answers it: each call of a task takes the task's next answer (the
    last repeats; none is a ``runtime`` error); the end records the run's ending."""

    def __init__(self, case: Case) -> None:
        self.case = case
        self.counts: dict[str, int] = {}
        self.calls: list[dict[str, Any]] = []
        self.ends: list[dict[str, Any]] = []
        self.ended: list[dict[str, Any]] = []
        self.told: list[dict[str, Any]] = []

    def tell(self, event: dict[str, Any]) -> dict[str, Any]:
        """An emit or a deadline: recorded."""
        self.told.append(event)
        return {}

    def answer(self, event: dict[str, Any]) -> Answer | None:
        self.calls.append(event)
        task = str(event["task"])
        answers = self.case.answers.get(task, ())
        index = self.counts.get(task, 0)
        self.counts[task] = index + 1
        return answers[min(index, len(answers) - 1)] if answers else None

    def end(self, event: dict[str, Any]) -> dict[str, Any]:
        self.ends.append(event)
        return {"outcome": "ended"}


def outcome_of(answer: Answer | None) -> TaskSucceeded | TaskFailed:
    if answer is None or answer.error is not None:
        error = answer.error if answer is not None else {"type": "runtime", "status": 500}
        return TaskFailed(engine.ERROR_NAME, json.dumps(dict(error), separators=(",", ":")))
    return TaskSucceeded({"output": answer.output})


def check_ending(
    case: Case,
    end: dict[str, Any] | None,
    status: str,
    output: Any,
    error: str | None,
    cause: str | None,
) -> None:
    """The run ended as the case says: through the entry, the end Task outputting the ending it sent;
    or, where an expression outside any try failed, by the execution's failure."""
    if end is None:
        assert (status, error) == ("FAILED", engine.EXPRESSION_ERROR), (
            status,
            error,
            cause,
        )
    else:
        assert status == "SUCCEEDED", (status, error, cause)
        assert end["run"] == RUN
        assert output == {key: value for key, value in end.items() if key in ("output", "error")}
    check_run_ending(case, run_ending(status, end, error, cause))


@dataclass
class Run:
    """One case run by the interpreter."""

    entry: FakeEntry
    status: str
    output: Any
    waits: list[int] = field(default_factory=list)
    error: str | None = None
    cause: str | None = None


def run_on_interpreter(case: Case) -> Run:
    clock = ManualClock()
    entry = FakeEntry(case)
    answers: list[tuple[str, Answer | None]] = []

    def invoke(function: str, payload: Any) -> Any:
        assert function == ENTRY
        if payload["action"] == engine.END_ACTION:
            return entry.end(payload)
        if payload["action"] == engine.STOPPED_ACTION:  # a competing fork won: nothing waits here
            return {}
        if payload["action"] in (engine.EMIT_ACTION, engine.DEADLINE_ACTION):
            return entry.tell(payload)
        answer = entry.answer(payload)
        if answer is not None and answer.never:
            return {"outcome": "waiting"}
        answers.append((payload["token"], answer))  # answered once the task is parked
        return {"outcome": "started"}

    machine = WorkflowMachine(
        engine.with_entry(compiled(case), ENTRY),
        arn="arn:aws:states:us-east-1:123456789012:stateMachine:corpus:1",
        invoke=invoke,
        now=clock.now,
    )
    execution = machine.start(
        "arn:aws:states:us-east-1:123456789012:execution:corpus:run-1",
        "run-1",
        engine.execution_input(RUN, case.input, 0),
    )
    machine.run(execution)
    waits: list[int] = []
    for _ in range(MAX_TIMERS):
        if execution.status != "RUNNING":
            break
        if answers:
            token, answer = answers.pop(0)
            assert machine.resume(execution, token, outcome_of(answer))
            continue
        due = execution.due()
        assert due, f"the execution waits for nothing it can be given: {execution.history[-3:]}"
        name, at = min(due.items(), key=lambda item: item[1])
        if name.startswith("wait-"):
            waits.append(int((at - clock.now()).total_seconds()))
        clock.advance((at - clock.now()).total_seconds())
        assert machine.fire(execution, name)
    return Run(
        entry,
        execution.status,
        execution.output,
        waits,
        execution.error,
        execution.cause,
    )


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_the_interpreter_runs_the_corpus_as_the_cases_say(case: Case) -> None:
    ran = run_on_interpreter(case)
    end = ran.entry.ends[-1] if ran.entry.ends else None
    check_ending(case, end, ran.status, ran.output, ran.error, ran.cause)
    assert len(ran.entry.ends) <= 1
    if case.waits is not None:
        assert tuple(ran.waits) == case.waits
    if case.attempts is not None:
        assert tuple((call["task"], call["attempt"]) for call in ran.entry.calls) == case.attempts
    check_told(case, ran.entry.told)


# -- through the executor, on the manual clock ------------------------------------------------------------


@pytest.mark.parametrize("index", range(len(CASES)), ids=[case.name for case in CASES])
def test_the_executor_runs_the_corpus_on_the_manual_clock(index: int) -> None:
    case = CASES[index]
    clock = ManualClock()
    scheduler = LocalScheduler(clock, lambda work: None)
    entry = FakeEntry(case)
    executors: list[LocalExecutor] = []

    def invoke(name: str, event: Any) -> Any:
        assert name == "workflow"
        if event["action"] == engine.END_ACTION:
            return entry.end(event)
        if event["action"] == engine.ENDED_ACTION:  # the execution failed without its end
            entry.ended.append(event)
            return {"outcome": "unchanged"}
        if event["action"] == engine.STOPPED_ACTION:  # a competing fork won: nothing waits here
            return {}
        if event["action"] in (engine.EMIT_ACTION, engine.DEADLINE_ACTION):
            return entry.tell(event)
        answer = entry.answer(event)
        if answer is not None and answer.never:
            return {"outcome": "waiting"}
        outcome = outcome_of(answer)
        if isinstance(outcome, TaskSucceeded):  # the called run ended before the call returned
            executors[0].succeed(event["token"], outcome.output)
        else:
            executors[0].fail(event["token"], outcome.error, outcome.cause)
        return {"outcome": "ended"}

    executor = LocalExecutor(invoke, scheduler=scheduler)
    executors.append(executor)
    scheduler.after_each = executor.settle
    try:
        machine = executor.create_state_machine(f"corpus-{index}", compiled(case))
        execution = executor.start_execution(machine, "run-1", engine.execution_input(RUN, case.input, 0))
        executor.settle()
        for _ in range(MAX_TIMERS):
            if executor.describe_execution(execution)["status"] != "RUNNING" or not scheduler.pending():
                break
            at, _ = scheduler.pending()[0]
            advance(clock, max((at - clock.now()) / timedelta(seconds=1), 0), [scheduler])
        described = executor.describe_execution(execution)
        end = entry.ends[-1] if entry.ends else None
        check_ending(
            case,
            end,
            described["status"],
            described["output"],
            described["error"],
            described["cause"],
        )
        if end is None:  # the executor told the workflow function the execution's failure
            assert [(told["run"], told["error"]) for told in entry.ended] == [(RUN, engine.EXPRESSION_ERROR)]
        if case.attempts is not None:
            assert tuple((call["task"], call["attempt"]) for call in entry.calls) == case.attempts
        check_told(case, entry.told)
    finally:
        executor.close()
