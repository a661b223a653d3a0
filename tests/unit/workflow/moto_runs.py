"""Running the corpus's compiled machines on moto's Step Functions executor (moto 5, its parser a port of
LocalStack's), its JSONata hook pointed at Parley's evaluator (``parley.local.jsonata_eval``), for the
agreement test and the reference JSONata test.

moto is patched while a run is open, to be what Step Functions is where moto is not (each patch says
where): the JSONata hook (empty as moto ships it); a JSONata failure is ``States.QueryEvaluationError``
(moto lets it out as ``States.Runtime``); a Parallel whose branch failed with a Step Functions error
fails with that error (moto cannot name one: ``CustomErrorName`` refuses the ``States.`` prefix); a Wait
records its seconds instead of sleeping them (a timeout's clock, racing its task, sleeps a twentieth of
them, and so does every Wait of a case whose waits race a timeout: ``Case.real_waits``).

Calls and listens go to a fake entry (a moto Lambda function routed to Python): it answers each of a
task with the case's next :class:`~unit.workflow.machines.Answer`, from another thread, with
``SendTaskSuccess``/``SendTaskFailure`` as the workflow entry does (or never, for a task whose timeout
the case is about: moto times it out in real time); the end Task's payload, the emits and the
deadlines are recorded.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import threading
import time
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Final, cast

from unit.workflow.machines import CASES, RUN, Case, run_ending

from parley.local.functions import routed_lambda_invocations
from parley.local.jsonata_eval import ExpressionFailed, evaluate
from parley.workflow import engine
from parley.workflow.compiler import CompiledWorkflow, compile_workflow
from parley.workflow.document import check_workflow_document

REGION: Final = "us-east-1"
ENTRY: Final = "parley-workflow-entry"
#: The Wait of a task's timeout, racing the task (``parley.workflow.compiler``), and how much of its
#: seconds moto waits in real time (every other Wait records its seconds and goes on at once).
CLOCK: Final = "#clock"
CLOCK_SCALE: Final = 0.05
#: describe_execution is asked at most this many times (every 10 ms) for a run to end.
POLLS: Final = 3000


@dataclass
class Outcome:
    """How one case ran on moto: the execution's status and output, the end Task's payload, the Wait
    states' seconds, each call's payload, the names of the states entered (in order), and the
    execution's history (``GetExecutionHistory``'s events)."""

    status: str
    output: Any
    end: dict[str, Any] | None
    waits: list[int] = field(default_factory=list)
    calls: list[dict[str, Any]] = field(default_factory=list)
    told: list[dict[str, Any]] = field(default_factory=list)
    entered: list[str] = field(default_factory=list)
    error: str | None = None
    cause: str | None = None
    events: list[dict[str, Any]] = field(default_factory=list)

    def ending(self) -> dict[str, Any]:
        """How the run ended, as the runtime reads it (``machines.run_ending``)."""
        return run_ending(self.status, self.end, self.error, self.cause)


@dataclass
class _Recorder:
    """What the patched moto saw: expressions evaluated, waits, calls (for the case under way)."""

    expressions: list[str] = field(default_factory=list)
    waits: list[int] = field(default_factory=list)
    calls: list[dict[str, Any]] = field(default_factory=list)
    ends: list[dict[str, Any]] = field(default_factory=list)
    told: list[dict[str, Any]] = field(default_factory=list)
    #: Every Wait of the case under way sleeps (``Case.real_waits``).
    real_waits: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)


@dataclass(frozen=True)
class CorpusRun:
    """Every case run: its compiled machine and outcome; every expression moto evaluated (text)."""

    compiled: dict[str, CompiledWorkflow]
    outcomes: dict[str, Outcome]
    expressions: tuple[str, ...]


def compiled(case: Case) -> CompiledWorkflow:
    """The case's machine, its document read as saving reads it."""
    return compile_workflow(check_workflow_document(case.document).data)


@contextlib.contextmanager
def patched_moto(recorder: _Recorder) -> Iterator[None]:
    """moto patched as the module says, for the block."""
    from unittest import mock

    import moto.stepfunctions.parser.asl.component.state.exec.state_parallel.branches_decl as branches
    import moto.stepfunctions.parser.asl.jsonata.jsonata as moto_jsonata
    from moto.stepfunctions.parser.api import EvaluationFailedEventDetails, HistoryEventType
    from moto.stepfunctions.parser.asl.component.common.error_name.custom_error_name import CustomErrorName
    from moto.stepfunctions.parser.asl.component.common.error_name.failure_event import (
        FailureEvent,
        FailureEventException,
    )
    from moto.stepfunctions.parser.asl.component.common.error_name.states_error_name import StatesErrorName
    from moto.stepfunctions.parser.asl.component.common.error_name.states_error_name_type import (
        StatesErrorNameType,
    )
    from moto.stepfunctions.parser.asl.component.common.string.string_expression import StringJSONata
    from moto.stepfunctions.parser.asl.component.intrinsic import jsonata as moto_functions
    from moto.stepfunctions.parser.asl.component.state.wait.wait_function.wait_function import WaitFunction
    from moto.stepfunctions.parser.asl.eval.event.event_detail import EventDetails

    # moto declares Step Functions' functions in the expression ($parse as $eval, $hash and $uuid as
    # "not supported"): Parley's evaluator has its own.
    declarations = list(moto_functions._DECLARATION_BY_VARIABLE_REFERENCE.values())

    def evaluate_jsonata(text: str) -> Any:
        for declaration in declarations:
            text = text.replace(declaration, "")
        with recorder.lock:
            recorder.expressions.append(text)
        try:
            return evaluate(text, {})
        except ExpressionFailed as exc:
            if "returned nothing" in exc.message:
                return None  # moto tells undefined itself (its _validate_null_output)
            raise moto_jsonata.JSONataException("QueryEvaluationError", exc.message) from None

    original_eval = StringJSONata._eval_body

    def eval_body(self: Any, env: Any) -> None:
        try:
            original_eval(self, env)
        except moto_jsonata.JSONataException as exc:
            name = StatesErrorName(typ=StatesErrorNameType.StatesQueryEvaluationError)
            details = EvaluationFailedEventDetails(error=name.error_name, cause=exc.details or "")
            raise FailureEventException(
                failure_event=FailureEvent(
                    env=env,
                    error_name=name,
                    event_type=HistoryEventType.EvaluationFailed,
                    event_details=cast(Any, EventDetails)(evaluationFailedEventDetails=details),
                )
            ) from None

    def error_name(error_name: str) -> Any:
        if error_name.startswith("States."):
            return StatesErrorName.from_name(error_name)
        return CustomErrorName(error_name)

    def wait(self: Any, env: Any, wait_seconds: int) -> None:
        with recorder.lock:
            recorder.waits.append(wait_seconds)
        state = env.states.context_object.context_object_data.get("State") or {}
        if recorder.real_waits or str(state.get("Name", "")).endswith(CLOCK):
            # A timeout's clock races the task it limits: it waits, a twentieth of its seconds, until
            # the Parallel stops it.
            env.program_state_event.wait(wait_seconds * CLOCK_SCALE)

    with contextlib.ExitStack() as stack:
        stack.enter_context(mock.patch.object(moto_jsonata, "_eval_jsonata", evaluate_jsonata))
        stack.enter_context(mock.patch.object(StringJSONata, "_eval_body", eval_body))
        stack.enter_context(mock.patch.object(branches, "CustomErrorName", error_name))
        stack.enter_context(mock.patch.object(WaitFunction, "_wait_interval", wait))
        yield


def _entry_function(lambda_client: Any, role: str) -> str:
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr("entry.py", "def handler(event, context):\n    return {}\n")
    created = lambda_client.create_function(
        FunctionName=ENTRY,
        Runtime="python3.11",
        Role=role,
        Handler="entry.handler",
        Code={"ZipFile": archive.getvalue()},
    )
    return str(created["FunctionArn"])


class _FakeEntry:
    """The workflow entry as the case answers it."""

    def __init__(self, sfn: Any, recorder: _Recorder) -> None:
        self.sfn = sfn
        self.recorder = recorder
        self.case: Case | None = None
        self.counts: dict[str, int] = {}
        self.threads: list[threading.Thread] = []

    def start(self, case: Case) -> None:
        self.case = case
        self.counts = {}

    def __call__(self, event: dict[str, Any]) -> Any:
        if event.get("action") == engine.END_ACTION:
            with self.recorder.lock:
                self.recorder.ends.append(event)
            return {}
        if event.get("action") == engine.STOPPED_ACTION:  # a competing fork won: nothing waits here
            return {}
        if event.get("action") in (engine.EMIT_ACTION, engine.DEADLINE_ACTION):
            with self.recorder.lock:
                self.recorder.told.append(event)
            return {}
        with self.recorder.lock:
            self.recorder.calls.append(event)
        task = str(event.get("task"))
        answers = self.case.answers.get(task, ()) if self.case else ()
        index = self.counts.get(task, 0)
        self.counts[task] = index + 1
        answer = answers[min(index, len(answers) - 1)] if answers else None
        if answer is not None and answer.never:
            return {}
        # moto keeps the token before it invokes the entry: the answer may come before the Task waits.
        thread = threading.Thread(target=self.answer, args=(str(event["token"]), answer), daemon=True)
        self.threads.append(thread)
        thread.start()
        return {}

    def answer(self, token: str, answer: Any) -> None:
        from moto.core.models import DEFAULT_ACCOUNT_ID
        from moto.stepfunctions.parser.models import stepfunctions_parser_backends

        if answer is None or answer.error is not None:
            error = answer.error if answer is not None else {"type": "runtime", "status": 500}
            cause = json.dumps(dict(error), separators=(",", ":"))
            # moto's API drops SendTaskFailure's cause: its backend is told directly.
            backend = stepfunctions_parser_backends[DEFAULT_ACCOUNT_ID][REGION]
            backend.send_task_failure(token, error=engine.ERROR_NAME, cause=cause)
        else:
            self.sfn.send_task_success(taskToken=token, output=json.dumps({"output": answer.output}))


@cache
def _join_branch_workers() -> None:
    """Wait (a bounded while) for moto's branch worker threads: a Parallel's stopped branches end after
    the execution has, and what they raise then belongs to this run, not to a test that comes later."""
    for thread in threading.enumerate():
        if thread.name.startswith("BranchWorker"):
            thread.join(timeout=2)


def run_corpus(with_calls: bool = True) -> CorpusRun:
    """Runs every case of the corpus on moto (once a process)."""
    import boto3
    from moto import mock_aws

    recorder = _Recorder()
    outcomes: dict[str, Outcome] = {}
    machines: dict[str, CompiledWorkflow] = {}
    logging.getLogger("moto").setLevel(logging.CRITICAL)
    config: Any = {"stepfunctions": {"execute_state_machine": True}, "lambda": {"use_docker": False}}
    with mock_aws(config=config), patched_moto(recorder):
        iam = boto3.client("iam", region_name=REGION)
        role = iam.create_role(RoleName="workflows", AssumeRolePolicyDocument="{}")["Role"]["Arn"]
        entry_arn = _entry_function(boto3.client("lambda", region_name=REGION), role)
        sfn = boto3.client("stepfunctions", region_name=REGION)
        entry = _FakeEntry(sfn, recorder)
        with routed_lambda_invocations({ENTRY: entry}):
            for index, case in enumerate(CASES):
                if case.calls and not with_calls:
                    continue
                machine = compiled(case)
                machines[case.name] = machine
                outcomes[case.name] = _execute(sfn, role, entry_arn, index, case, machine, recorder, entry)
    return CorpusRun(machines, outcomes, tuple(recorder.expressions))


def _execute(
    sfn: Any,
    role: str,
    entry_arn: str,
    index: int,
    case: Case,
    machine: CompiledWorkflow,
    recorder: _Recorder,
    entry: _FakeEntry,
) -> Outcome:
    with recorder.lock:
        recorder.waits.clear()
        recorder.calls.clear()
        recorder.ends.clear()
        recorder.told.clear()
        recorder.real_waits = case.real_waits
    entry.start(case)
    definition = engine.with_entry(machine.definition, entry_arn)
    arn = sfn.create_state_machine(name=f"case-{index}", definition=json.dumps(definition), roleArn=role)[
        "stateMachineArn"
    ]
    execution = sfn.start_execution(
        stateMachineArn=arn,
        name=f"run-{index}",
        input=json.dumps(engine.execution_input(RUN, case.input, 0)),
    )["executionArn"]
    described: dict[str, Any] = {}
    for _ in range(POLLS):
        described = sfn.describe_execution(executionArn=execution)
        if described["status"] != "RUNNING":
            break
        time.sleep(0.01)
    _join_branch_workers()
    events = sfn.get_execution_history(executionArn=execution, maxResults=1000)["events"]
    entered = [
        event["stateEnteredEventDetails"]["name"] for event in events if "stateEnteredEventDetails" in event
    ]
    with recorder.lock:
        return Outcome(
            status=described["status"],
            output=json.loads(described["output"]) if described.get("output") else None,
            end=recorder.ends[-1] if recorder.ends else None,
            waits=list(recorder.waits),
            calls=list(recorder.calls),
            told=list(recorder.told),
            entered=entered,
            error=described.get("error"),
            cause=described.get("cause"),
            events=list(events),
        )
