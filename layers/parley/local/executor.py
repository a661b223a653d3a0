"""Waiting runs on one machine: the run's state machine (``parley.infrastructure.state_machine``, the
ASL ``cdk deploy`` ships) run by the local interpreter (``parley.local.steps``), its Lambda tasks run by
the project's ``wait``, ``settle`` and ``reason`` handlers in process.

:class:`LocalExecutor` is the local ``Waits``. A waiting execution is a small record (its state, its
input, its token) and holds no thread: an execution runs its states on a small pool of worker threads
until its wait task has invoked the wait function and parks on the task token; ``succeed``/``fail`` on
that token (or its timeout) hand it back to the pool, which runs it on to its end or to its next wait.
Ten thousand waiting runs cost ten thousand records, not ten thousand threads (moto's own executor
starts a thread per execution, blocked on its token, and keeps each one in a module-level list).

The bookkeeping the local server needs to answer only once the effects of a call have happened
(``http-api.md``, "Local server": the advance call "returns once all the work that fell due … and its
effects has run"): every execution it starts or signals is watched until it is at rest again, parked
on a (new) token or ended. :meth:`LocalExecutor.settle` waits for them, at most ``settle_within``
seconds. It holds no lock of the server while it waits, and the handlers it waits for take none.

Like IAM on AWS, it refuses a start or a SendTask call from a function the stack does not grant it to
(``parley.local.functions.require_grant``).

Each wait's backstop is its task's own timeout (``TimeoutSecondsPath``: ``expires`` plus a minute, or
the ``timeout_seconds`` a resumption that waits again gives), counted from when it parks, as on AWS.
With a ``scheduler`` (the manual clock's) it is timed by that scheduler (``call_later``), so that it
follows the clock; without one, by a real-time scheduler of its own (one thread for all of them).
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import os
import re
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final

from parley.errors import ParleyError
from parley.infrastructure.functions import MAY_ANSWER_CALLS, MAY_END_WAITS, MAY_RUN_WORKFLOWS, MAY_START_RUNS
from parley.infrastructure.state_machine import execution_input, state_machine_definition
from parley.local.aws import LOCAL_REGION
from parley.local.functions import LOCAL_ACCOUNT, require_grant
from parley.local.steps import (
    FAILED,
    RUNNING,
    RUNTIME_ERROR,
    TIMEOUT_ERROR,
    Execution,
    Outcome,
    StateMachine,
    TaskFailed,
    TaskSucceeded,
)
from parley.ports.waiting import RunKey
from parley.workflow.engine import ENDED_ACTION

if TYPE_CHECKING:
    from moto.core.config import DefaultConfig

    from parley.local.jsonata_states import WorkflowExecution, WorkflowMachine
    from parley.local.scheduler import LocalScheduler

__all__ = ["TIMEOUT_ERROR", "LocalExecutor", "SettleTimeout", "local_aws"]

#: moto in process: Lambda without Docker (``parley.local.functions`` routes invocations to handlers).
MOTO_CONFIG: Final[DefaultConfig] = {"lambda": {"use_docker": False}}
SETTLE_WITHIN: Final = 10.0
#: An execution that ran past its own ``TimeoutSeconds`` (``parley.local.jsonata_states``).
TIMED_OUT: Final = "TIMED_OUT"
#: How long :meth:`LocalExecutor.close` lets steps under way finish (they may touch moto).
RELEASE_WITHIN: Final = 2.0
#: Worker threads that run executions' steps. A step is a handler's invocation: the wait and settle
#: handlers take milliseconds, a resumption (the reason function) may wait for a model; a waiting
#: execution takes none. Threads are started as work comes, up to this many.
WORKERS: Final = 8
#: SendTaskFailure takes an error of at most 256 characters and a cause of at most 32,768.
MAX_ERROR: Final = 256
MAX_CAUSE: Final = 32_768
LOG: Final = logging.getLogger("parley.local")
#: A fault the crash tests inject (``tests/local/test_crash_endings.py``): with ``crash-before-token``,
#: the process dies (``os._exit``, as SIGKILL would stop it) when a run's wait is about to be told its
#: ending, that is between the ending's write and its ``SendTaskSuccess`` — once the writes made so far
#: are on disk (:attr:`LocalExecutor.before_crash`), so that the test meets the ending's write kept and
#: the token lost. Never set outside those tests.
FAULT_VARIABLE: Final = "PARLEY_LOCAL_FAULT"
CRASH_BEFORE_TOKEN: Final = "crash-before-token"
#: Step Functions' names of state machines and executions.
_NAME: Final = re.compile(r"[A-Za-z0-9_-]{1,80}")


@contextlib.contextmanager
def local_aws() -> Iterator[None]:
    """moto in process for the block (DynamoDB, S3, Lambda without Docker), with the local runtime's
    patches of moto (``parley.local.moto_patches``: transactions that copy only what they touch)."""
    from moto import mock_aws

    from parley.local.moto_patches import patched_moto

    with mock_aws(config=MOTO_CONFIG), patched_moto():
        yield


class SettleTimeout(ParleyError, RuntimeError):
    """Executions did not reach where they were going within the bound."""


@dataclass(eq=False, slots=True)
class _Record:
    """An execution, and what the executor does with it."""

    execution: Execution
    #: Its steps are queued or running on the pool (it is not at rest).
    busy: bool = False
    #: An outcome for its parked task that arrived while it was busy: ``(token, outcome)``.
    pending: tuple[str, Outcome] | None = None
    #: The token the executor maps to it (the interpreter's current one, until it is spent).
    token: str | None = None


@dataclass(eq=False, slots=True)
class _WorkflowRecord:
    """A workflow's execution, and what the executor does with it."""

    execution: WorkflowExecution
    machine: WorkflowMachine
    #: What its timers are named after on the scheduler.
    key: str
    #: Its steps are queued or running on the pool (it is not at rest).
    busy: bool = False
    #: Its first run has happened.
    started: bool = False
    #: The thread that runs its steps (while it is busy).
    driver: int | None = None
    #: What happened to it since it last ran, in order: ``("token", token, outcome)``, ``("fire",
    #: timer)``, ``("stop", error, cause)``.
    events: deque[tuple[Any, ...]] = field(default_factory=deque)
    #: The tokens the executor maps to it, and the timers it has on the scheduler.
    tokens: set[str] = field(default_factory=set)
    timers: set[str] = field(default_factory=set)
    #: Its ending without its end task (a failure of Step Functions itself) was told to the workflow
    #: function, as the stack's rule on the execution's status change tells it on AWS.
    told: bool = False


class LocalExecutor:
    """The local ``Waits`` and ``WorkflowEngine``. ``invoke(name, event)`` runs the function ``wait``,
    ``settle``, ``reason`` or ``workflow``.

    ``scheduler`` (the manual clock's) times the waits' backstops and the workflows' timers; without it,
    a real-time scheduler of the executor's own does. :meth:`close` when done.
    """

    def __init__(
        self,
        invoke: Callable[[str, Any], Any],
        *,
        scheduler: LocalScheduler | None = None,
        settle_within: float = SETTLE_WITHIN,
        workers: int = WORKERS,
    ) -> None:
        self._invoke = invoke
        self.settle_within = settle_within
        self._crash_before_token = os.environ.get(FAULT_VARIABLE) == CRASH_BEFORE_TOKEN
        #: What the fault calls before it stops the process (the server's: every write on disk).
        self.before_crash: Callable[[], None] | None = None
        suffix = uuid.uuid4().hex[:8]
        self.state_machine_name = f"parley-runs-{suffix}"
        self.state_machine_arn = (
            f"arn:aws:states:{LOCAL_REGION}:{LOCAL_ACCOUNT}:stateMachine:{self.state_machine_name}"
        )
        self.wait_function = f"parley-wait-{suffix}"
        self.settle_function = f"parley-settle-{suffix}"
        self.workflow_function = f"parley-workflow-{suffix}"
        #: The workflow entry's ARN, in place of ``parley.workflow.engine.ENTRY_FUNCTION`` in workflows.
        self.workflow_function_arn = self.function_arn(self.workflow_function)
        self._functions = {
            self.function_arn(self.wait_function): "wait",
            self.function_arn(self.settle_function): "settle",
            self.workflow_function_arn: "workflow",
        }
        #: The ASL it runs: the dict ``cdk deploy`` ships, with local ARNs.
        self.definition: Final = state_machine_definition(
            self.function_arn(self.wait_function), self.function_arn(self.settle_function)
        )
        self._machine = StateMachine(
            self.definition, arn=self.state_machine_arn, invoke=self._run_function, on_token=self._on_token
        )
        self._changed = threading.Condition()
        self._executions: dict[str, _Record] = {}
        self._tokens: dict[str, _Record] = {}
        self._watched: set[str] = set()
        self._running_steps = 0
        self._closed = False
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="parley-steps")
        self._scheduler = scheduler
        self._own_scheduler: LocalScheduler | None = None
        #: Workflows: each state machine's versions (version ``n`` at index ``n - 1``), the executions,
        #: and the tokens their tasks wait for.
        self._machines: dict[str, list[WorkflowMachine]] = {}
        self._creating = threading.Lock()
        self._workflows: dict[str, _WorkflowRecord] = {}
        self._workflow_tokens: dict[str, _WorkflowRecord] = {}

    @staticmethod
    def function_arn(name: str) -> str:
        return f"arn:aws:lambda:{LOCAL_REGION}:{LOCAL_ACCOUNT}:function:{name}"

    def execution_arn(self, run: RunKey, number: int = 1) -> str:
        """The ARN the execution of the run's ``number``-th wait has (``…:execution:<state machine>:<execution
        name>``)."""
        prefix, _, name = self.state_machine_arn.rpartition(":stateMachine:")
        return f"{prefix}:execution:{name}:{run.wait_execution_name(number)}"

    # -- the Waits port --------------------------------------------------------------------------------

    def start(self, run: RunKey, *, timeout_seconds: int, number: int = 1) -> None:
        """Start the execution of the run's ``number``-th wait. A second start is harmless, as on AWS:
        while it runs, or once it has ended, the execution of that name exists already
        (``ExecutionAlreadyExists``, which the AWS adapter ignores) and goes on as it was."""
        require_grant(MAY_START_RUNS, "start a run's execution (states:StartExecution)")
        arn = self.execution_arn(run, number)
        with self._changed:
            if self._closed:
                raise RuntimeError("the local executor is closed")
            record = self._executions.get(arn)
            if record is not None:
                if record.busy:  # on its way somewhere: what the caller reads next comes after
                    self._watched.add(arn)
                return
            execution = execution_input(run.as_json(), timeout_seconds)
            record = _Record(self._machine.start(arn, run.wait_execution_name(number), execution), busy=True)
            self._executions[arn] = record
            self._watched.add(arn)
        self._submit(record)

    def succeed(self, token: str, output: Mapping[str, Any]) -> None:
        """SendTaskSuccess, to a run's wait or a workflow's task."""
        outcome = TaskSucceeded(json.loads(json.dumps(dict(output))))
        if self._answers_call(token, "SendTaskSuccess"):
            self._signal_workflow(token, outcome)
        else:
            if self._crash_before_token:
                if self.before_crash is not None:
                    self.before_crash()
                LOG.error("%s=%s: the process stops before the token", FAULT_VARIABLE, CRASH_BEFORE_TOKEN)
                os._exit(137)
            self._signal(token, outcome)

    def fail(self, token: str, error: str, cause: str) -> None:
        """SendTaskFailure, to a run's wait or a workflow's task."""
        outcome = TaskFailed(error[:MAX_ERROR], cause[:MAX_CAUSE])
        if self._answers_call(token, "SendTaskFailure"):
            self._signal_workflow(token, outcome)
        else:
            self._signal(token, outcome)

    def _answers_call(self, token: str, operation: str) -> bool:
        """Whether ``token`` is a workflow's task's, once the caller's grant for it is checked: a run's
        wait is ended by the functions the stack lets end waits, a workflow's call answered by those it
        lets answer calls; a token that is neither (any more) by either, to no effect."""
        with self._changed:
            workflow = token in self._workflow_tokens
            run = token in self._tokens
        if workflow:
            require_grant(MAY_ANSWER_CALLS, f"answer a workflow's call (states:{operation})")
        elif run:
            require_grant(MAY_END_WAITS, f"end a wait (states:{operation})")
        else:
            require_grant(MAY_END_WAITS | MAY_ANSWER_CALLS, f"end a wait (states:{operation})")
        return workflow

    def _signal(self, token: str, outcome: Outcome) -> None:
        """End the wait of ``token``. A token that is spent (or unknown) ends nothing, as on AWS, where
        the call gets ``TaskTimedOut``/``InvalidToken``, which the adapter ignores."""
        with self._changed:
            record = self._tokens.pop(token, None)
            if record is None or record.execution.token != token or record.execution.status != RUNNING:
                return
            record.token = None
            record.pending = (token, outcome)
            self._forget_backstop(record.execution)
            self._watched.add(record.execution.arn)
            if record.busy:  # still in its wait task's invocation: it takes the outcome when that returns
                return
            record.busy = True
        self._submit(record)

    def _time_out(self, token: str) -> None:
        """The backstop: the wait task ran past its timeout (``States.Timeout``, which no caller of
        SendTaskFailure may send)."""
        self._signal(token, TaskFailed(TIMEOUT_ERROR, "The wait ran past its timeout (TimeoutSecondsPath)."))

    # -- running executions --------------------------------------------------------------------------------

    def _submit(self, record: _Record) -> None:
        try:
            self._pool.submit(self._drive, record)
        except RuntimeError:  # closed meanwhile: the execution stays where it is
            with self._changed:
                record.busy = False
                self._changed.notify_all()

    def _drive(self, record: _Record) -> None:
        """Run the execution until it is at rest (parked on a token with no outcome waiting, or ended)."""
        execution = record.execution
        with self._changed:
            self._running_steps += 1
        try:
            while True:
                with self._changed:
                    pending, record.pending = record.pending, None
                try:
                    if pending is None:
                        self._machine.run(execution)
                    else:
                        self._machine.resume(execution, *pending)
                except Exception:  # a bug of the interpreter: the execution cannot go on
                    LOG.exception("the local state machine failed in execution %s", execution.name)
                    self._machine.abort(execution)
                with self._changed:
                    if record.pending is not None and execution.status == RUNNING:
                        continue  # an outcome came during the wait function's invocation
                    record.pending = None
                    record.busy = False
                    if record.token is not None and record.token != execution.token:
                        self._tokens.pop(record.token, None)  # the wait function failed: no wait
                        record.token = None
                    if execution.token is not None and execution.timeout_seconds is not None:
                        self._schedule_backstop(execution)
                    self._changed.notify_all()
                    return
        finally:
            with self._changed:
                self._running_steps -= 1
                self._changed.notify_all()

    def _on_token(self, execution: Execution, token: str) -> None:
        """The interpreter made a task token: a SendTask call may use it from now on (the wait function
        may even end its own wait, when the answer came first)."""
        with self._changed:
            record = self._executions[execution.arn]
            if record.token is not None:
                self._tokens.pop(record.token, None)
            record.token = token
            self._tokens[token] = record

    def _run_function(self, function: str, payload: Any) -> Any:
        """A Lambda task: the function's handler in this thread, the event and the result as JSON."""
        name = self._functions.get(function)
        if name is None:
            raise LookupError(f"no local function {function}")
        event = json.loads(json.dumps(payload))
        try:
            result = self._invoke(name, event)
        except Exception:
            LOG.exception("local function %s failed", name)
            raise
        return json.loads(json.dumps(result))

    # -- backstops ----------------------------------------------------------------------------------------

    @staticmethod
    def _backstop_name(run: RunKey | Execution) -> str:
        name = run.execution_name if isinstance(run, RunKey) else run.name
        return f"backstop-{name}"

    def _timer(self) -> LocalScheduler:
        if self._scheduler is not None:
            return self._scheduler
        if self._own_scheduler is None:
            from parley.clock import SystemClock
            from parley.local.scheduler import LocalScheduler

            self._own_scheduler = LocalScheduler(SystemClock(), lambda work: None)
            self._own_scheduler.start()
        return self._own_scheduler

    def _schedule_backstop(self, execution: Execution) -> None:
        """The parked wait's timeout, from now (replacing any earlier wait's)."""
        assert execution.token is not None and execution.timeout_seconds is not None
        timer, name, token = self._timer(), self._backstop_name(execution), execution.token
        timer.forget(name)
        timer.call_later(name, execution.timeout_seconds, lambda: self._time_out(token))

    def _forget_backstop(self, execution: Execution) -> None:
        if self._scheduler is not None or self._own_scheduler is not None:
            self._timer().forget(self._backstop_name(execution))

    # -- workflows (the WorkflowEngine port) -------------------------------------------------------------

    def create_state_machine(self, name: str, definition: Mapping[str, Any]) -> str:
        """The ARN of the version of the state machine ``name`` that runs ``definition``
        (``…:stateMachine:<name>:<n>``): the version made before for the same definition, else a new one.
        The definition is checked as Step Functions checks it (``UnsupportedDefinition`` for what the
        local interpreter does not run); the workflow entry's placeholder becomes this executor's
        ``workflow`` function."""
        require_grant(MAY_RUN_WORKFLOWS, "create a workflow's state machine (states:CreateStateMachine)")
        from parley.local.jsonata_states import WorkflowMachine
        from parley.workflow.engine import with_entry

        if not _NAME.fullmatch(name):
            raise ValueError(f"a state machine's name is 1 to 80 letters, digits, - and _: {name!r}")
        resolved = with_entry(json.loads(json.dumps(dict(definition))), self.workflow_function_arn)
        with self._creating:  # one at a time: a version's number is the count before it, plus one
            with self._changed:
                versions = list(self._machines.get(name, []))
            for machine in versions:
                if machine.definition == resolved:
                    return machine.arn
            made = WorkflowMachine(
                resolved,
                arn=f"{self._machine_arn(name)}:{len(versions) + 1}",
                invoke=self._run_function,
                on_token=self._on_workflow_token,
                now=self._now,
            )
            with self._changed:
                self._machines.setdefault(name, []).append(made)
            return made.arn

    def start_execution(self, state_machine_arn: str, name: str, input_value: Any) -> str:
        """Start the execution ``name`` of a state machine's version (its latest for an ARN without one)
        and answer its ARN (``…:execution:<machine>:<name>``). A second start of the same name does
        nothing and answers the same ARN."""
        require_grant(MAY_RUN_WORKFLOWS, "start a workflow's execution (states:StartExecution)")
        if not _NAME.fullmatch(name):
            raise ValueError(f"an execution's name is 1 to 80 letters, digits, - and _: {name!r}")
        with self._changed:
            machine = self._machine_of(state_machine_arn)
            prefix, _, rest = machine.arn.partition(":stateMachine:")
            arn = f"{prefix}:execution:{rest.split(':', 1)[0]}:{name}"
            if self._closed:
                raise RuntimeError("the local executor is closed")
            record = self._workflows.get(arn)
            if record is not None:
                if record.busy:  # on its way somewhere: what the caller reads next comes after
                    self._watched.add(arn)
                return arn
            execution = machine.start(arn, name, json.loads(json.dumps(input_value)))
            record = _WorkflowRecord(execution, machine, key=uuid.uuid4().hex[:12], busy=True)
            self._workflows[arn] = record
            self._watched.add(arn)
        self._submit_workflow(record)
        return arn

    def stop_execution(self, execution_arn: str, error: str, cause: str) -> None:
        """``StopExecution``: the execution ends ``ABORTED`` where it is; the tokens it waits for are spent
        and its timers dropped. Nothing for one that has ended (or is unknown). An execution whose step is
        under way stops once that step returns: the call waits for it (at most ``settle_within``), unless
        it comes from within that step (a function the execution invoked)."""
        require_grant(MAY_RUN_WORKFLOWS, "stop a workflow's execution (states:StopExecution)")
        with self._changed:
            record = self._workflows.get(execution_arn)
            if record is None or record.execution.status != RUNNING:
                return
            if record.busy:  # its steps run: the stop comes before anything else that is waiting
                record.events.appendleft(("stop", error[:MAX_ERROR], cause[:MAX_CAUSE]))
                self._watched.add(execution_arn)
                if record.driver == threading.get_ident():
                    return  # asked from within the execution's own step: it stops when the step returns
                deadline = time.monotonic() + self.settle_within
                while record.busy and (left := deadline - time.monotonic()) > 0:
                    self._changed.wait(left)
                return
            record.machine.abort(record.execution, error[:MAX_ERROR], cause[:MAX_CAUSE])
            self._reconcile(record)
            self._changed.notify_all()

    def describe_execution(self, execution_arn: str) -> dict[str, Any]:
        """``DescribeExecution``: ``status`` (``RUNNING``, ``SUCCEEDED``, ``FAILED``, ``ABORTED``,
        ``TIMED_OUT``; ``UNKNOWN`` for no such execution), ``output``, ``error``, ``cause``, and where it
        is known, ``name``, ``stateMachineArn``, ``input``, ``startDate``, ``stopDate``."""
        require_grant(MAY_RUN_WORKFLOWS, "read a workflow's execution (states:DescribeExecution)")
        with self._changed:
            record = self._workflows.get(execution_arn)
            if record is None:
                return {"status": "UNKNOWN", "output": None, "error": None, "cause": None}
            execution = record.execution
            return {
                "executionArn": execution.arn,
                "stateMachineArn": record.machine.arn,
                "name": execution.name,
                "status": execution.status,
                "input": execution.input,
                "output": execution.output,
                "error": execution.error,
                "cause": execution.cause,
                "startDate": execution.start_time,
                "stopDate": execution.stop_time,
            }

    def execution_history(self, execution_arn: str) -> list[dict[str, Any]]:
        """``GetExecutionHistory``: the events, oldest first (``id``, ``type``, ``name`` of the state,
        ``timestamp``; ``error`` and ``cause`` for a failure). Empty for no such execution."""
        require_grant(MAY_RUN_WORKFLOWS, "read a workflow's execution (states:GetExecutionHistory)")
        with self._changed:
            record = self._workflows.get(execution_arn)
            events = [] if record is None else list(record.execution.history)
        return [dict(event) for event in events]

    def _machine_arn(self, name: str) -> str:
        return f"arn:aws:states:{LOCAL_REGION}:{LOCAL_ACCOUNT}:stateMachine:{name}"

    def _machine_of(self, arn: str) -> WorkflowMachine:
        """The version an ARN names (the latest for an ARN without a version)."""
        _, _, rest = arn.partition(":stateMachine:")
        name, _, version = rest.partition(":")
        versions = self._machines.get(name) if rest else None
        if not versions:
            raise LookupError(f"no state machine {arn}")
        if not version:
            return versions[-1]
        if not version.isdigit() or not 1 <= int(version) <= len(versions):
            raise LookupError(f"no state machine version {arn}")
        return versions[int(version) - 1]

    def _now(self) -> datetime:
        return self._scheduler.clock.now() if self._scheduler is not None else datetime.now(UTC)

    def _on_workflow_token(self, execution: WorkflowExecution, token: str) -> None:
        """A workflow's task made a token: SendTask calls may use it from now on (the function it is sent
        to may even answer it during its own invocation)."""
        with self._changed:
            record = self._workflows[execution.arn]
            record.tokens.add(token)
            self._workflow_tokens[token] = record

    def _signal_workflow(self, token: str, outcome: Outcome) -> None:
        with self._changed:
            record = self._workflow_tokens.pop(token, None)
            if record is None or record.execution.status != RUNNING:
                return
            record.tokens.discard(token)
            self._queue(record, ("token", token, outcome))

    def _fire_workflow(self, arn: str, timer: str) -> None:
        """A workflow's timer fell due (a Wait's end, a task's or the execution's timeout)."""
        with self._changed:
            record = self._workflows.get(arn)
            if record is None or record.execution.status != RUNNING:
                return
            record.timers.discard(timer)
            self._queue(record, ("fire", timer))

    def _queue(self, record: _WorkflowRecord, event: tuple[Any, ...]) -> None:
        """Hand ``event`` to the execution (held by the caller: the lock)."""
        record.events.append(event)
        self._watched.add(record.execution.arn)
        if record.busy:  # its steps run: it takes the event when they return
            return
        record.busy = True
        self._submit_workflow(record)

    def _submit_workflow(self, record: _WorkflowRecord) -> None:
        try:
            self._pool.submit(self._drive_workflow, record)
        except RuntimeError:  # closed meanwhile: the execution stays where it is
            with self._changed:
                record.busy = False
                self._changed.notify_all()

    def _drive_workflow(self, record: _WorkflowRecord) -> None:
        """Run the execution, then what happened to it meanwhile, until it is at rest."""
        execution, machine = record.execution, record.machine
        with self._changed:
            self._running_steps += 1
            record.driver = threading.get_ident()
        try:
            while True:
                with self._changed:
                    event: tuple[Any, ...] | None = None
                    told = self._untold_ending(record)
                    if record.started and told is None:
                        if not record.events or execution.status != RUNNING:
                            record.events.clear()
                            record.busy = False
                            record.driver = None
                            self._reconcile(record)
                            self._changed.notify_all()
                            return
                        event = record.events.popleft()
                    record.started = True
                if told is not None:
                    self._tell_ending(told)
                    continue
                try:
                    if event is None:
                        machine.run(execution)
                    elif event[0] == "token":
                        machine.resume(execution, event[1], event[2])
                    elif event[0] == "fire":
                        machine.fire(execution, event[1])
                    else:
                        machine.abort(execution, event[1], event[2])
                except Exception:  # a bug of the interpreter: the execution cannot go on
                    LOG.exception("the local workflow interpreter failed in execution %s", execution.name)
                    machine.abort(execution, RUNTIME_ERROR, "The local interpreter failed.")
                with self._changed:
                    self._reconcile(record)
        finally:
            with self._changed:
                self._running_steps -= 1
                self._changed.notify_all()

    @staticmethod
    def _untold_ending(record: _WorkflowRecord) -> dict[str, Any] | None:
        """The event telling the workflow function that the execution failed or timed out (it ended
        without its end task), once; ``None`` when there is nothing to tell (held: the lock)."""
        execution = record.execution
        if record.told or execution.status not in (FAILED, TIMED_OUT):
            return None
        record.told = True
        given = execution.input if isinstance(execution.input, dict) else {}
        return {
            "action": ENDED_ACTION,
            "run": given.get("run"),
            "status": execution.status,
            "error": execution.error,
            "cause": execution.cause,
        }

    def _tell_ending(self, event: dict[str, Any]) -> None:
        try:
            self._invoke("workflow", event)
        except Exception:  # the run stays started; its caller may cancel it
            LOG.exception("the workflow function could not take the ending of an execution")

    def _reconcile(self, record: _WorkflowRecord) -> None:
        """Make the executor's tokens and timers of the execution what it waits for (held: the lock)."""
        execution = record.execution
        for token in record.tokens - set(execution.tokens):
            if self._workflow_tokens.get(token) is record:
                del self._workflow_tokens[token]
        record.tokens &= set(execution.tokens)
        due = execution.due()
        gone = record.timers - set(due)
        if gone:
            timer = self._timer()
            for name in gone:
                timer.forget(f"workflow-{record.key}-{name}")
            record.timers -= gone
        for name, at in due.items():
            if name not in record.timers:
                record.timers.add(name)
                self._timer().call_at(
                    f"workflow-{record.key}-{name}",
                    at,
                    functools.partial(self._fire_workflow, execution.arn, name),
                )

    # -- what the server and tests read ----------------------------------------------------------------

    def status(self, execution_arn: str) -> str:
        """``RUNNING``, ``SUCCEEDED``, ``FAILED`` or ``ABORTED``; ``UNKNOWN`` for no such execution."""
        with self._changed:
            record = self._executions.get(execution_arn)
            return "UNKNOWN" if record is None else record.execution.status

    def executions(self) -> list[dict[str, str]]:
        """Every execution, as ``ListExecutions`` shows them (``executionArn``, ``name``, ``status``)."""
        with self._changed:
            return [
                {"executionArn": arn, "name": r.execution.name, "status": r.execution.status}
                for arn, r in self._executions.items()
            ]

    def history(self, run: RunKey) -> list[dict[str, Any]]:
        """The run's execution's events, as ``GetExecutionHistory`` lists them: ``id``, ``type`` (e.g.
        ``TaskStateEntered``, ``TaskSubmitted``) and the state's ``name`` (empty for the execution's)."""
        with self._changed:
            record = self._executions.get(self.execution_arn(run))
            events = [] if record is None else list(record.execution.history)
        return [{"id": i, "type": kind, "name": name} for i, (kind, name) in enumerate(events, 1)]

    # -- settling ---------------------------------------------------------------------------------------

    def _busy(self, arn: str) -> bool:
        record = self._executions.get(arn)
        if record is not None:
            return record.busy
        workflow = self._workflows.get(arn)
        return workflow is not None and workflow.busy

    def settle(self, timeout: float | None = None) -> None:
        """Return once every execution started or signalled since has come to rest: parked on a token
        (its wait function has run) or ended (its settle step has written the run's ending); for a
        workflow's, every branch parked on a token or a timer, or ended.

        Raises :class:`SettleTimeout` after ``timeout`` (default ``settle_within``) seconds; what did not
        settle by then is no longer waited for.
        """
        deadline = time.monotonic() + (self.settle_within if timeout is None else timeout)
        with self._changed:
            while True:
                self._watched = {arn for arn in self._watched if self._busy(arn)}
                if not self._watched:
                    return
                left = deadline - time.monotonic()
                if left <= 0:
                    stuck = sorted(self._watched)
                    self._watched.clear()
                    raise SettleTimeout(f"runs' executions did not settle in time: {', '.join(stuck)}")
                self._changed.wait(left)

    # -- closing ----------------------------------------------------------------------------------------

    def close(self) -> None:
        """Stop: no step starts any more, steps under way get a little time to finish, and executions
        still running are stopped (``ABORTED``; a run's open request is started again by the data
        folder's restore, ``parley.local.persistence``)."""
        with self._changed:
            self._closed = True
        self._pool.shutdown(wait=False, cancel_futures=True)
        deadline = time.monotonic() + RELEASE_WITHIN
        with self._changed:
            while self._running_steps and (left := deadline - time.monotonic()) > 0:
                self._changed.wait(left)
            for record in self._executions.values():
                if record.execution.status == RUNNING:
                    self._forget_backstop(record.execution)
                    self._machine.abort(record.execution)
            for workflow in self._workflows.values():
                if workflow.execution.status == RUNNING:
                    workflow.machine.abort(workflow.execution)
                self._reconcile(workflow)
            self._tokens.clear()
            self._workflow_tokens.clear()
            self._watched.clear()
            self._changed.notify_all()
        if self._own_scheduler is not None:
            self._own_scheduler.stop()
