"""Step Functions' JSONata query language on one machine: the interpreter of the state machines
workflows compile to (``workflow-format.md``, "On AWS"; ``parley.workflow.engine`` for what the
machines and the workflow entry say to each other). ``parley.local.steps`` is its sibling for the
run's state machine, in JSONPath.

:class:`WorkflowMachine` takes a definition with ``"QueryLanguage": "JSONata"`` and checks it when it is
built: anything it does not interpret raises :class:`~parley.local.steps.UnsupportedDefinition` at once,
and every ``{% %}`` expression is parsed. What it interprets:

- **Pass** (``Output``, ``Assign``), **Succeed** (``Output``), **Fail** (``Error``, ``Cause``: a string
  or an expression), **Choice** (rules of ``Condition``, ``Next``, ``Output``, ``Assign``; ``Default``
  with the state's own ``Output`` and ``Assign``), **Wait** (``Seconds`` or ``Timestamp``, a value or
  an expression; ``Output``, ``Assign``), **Parallel** (``Branches``, ``Arguments``, ``Output``,
  ``Assign``, ``Retry``, ``Catch``), **Task** on ``arn:aws:states:::lambda:invoke`` (its result is
  ``{"ExecutedVersion", "Payload", "StatusCode"}``) and ``…:lambda:invoke.waitForTaskToken`` (its result
  is what ``SendTaskSuccess`` sent), with ``Arguments`` ``{"FunctionName", "Payload"}``, ``Output``,
  ``Assign``, ``TimeoutSeconds`` (a number or an expression), ``Retry`` and ``Catch`` (``ErrorEquals``,
  ``Next``, ``Output``, ``Assign``); ``Comment``, ``Next`` and ``End`` everywhere they belong, and the
  machine's own ``TimeoutSeconds``.
- ``$states``: ``input``, ``result`` (a Task's or Parallel's ``Output`` and ``Assign``), ``errorOutput``
  (``{"Error", "Cause"}`` in a ``Catch``), ``context`` (``Execution.Id/Name/Input/StartTime/RoleArn``,
  ``State.Name/EnteredTime/RetryCount``, ``StateMachine.Id/Name``, ``Task.Token`` in a
  ``waitForTaskToken`` task).
- Variables: ``Assign`` sets them once the state's expressions are all evaluated (each sees the values
  from before the state); a Parallel's branches read the variables of the scopes around them, and
  what a branch assigns stays in it; a branch assigning a variable of an outer scope fails with
  ``States.Runtime``, as Step Functions refuses it.
- Errors, as Step Functions names them: a Lambda function that raises fails its task with the
  exception's type and Lambda's error document as the cause (``steps.function_error``); an expression
  that fails (or gives nothing, or a value its field cannot take) ``States.QueryEvaluationError``; a task
  past its ``TimeoutSeconds`` ``States.Timeout``; a Parallel fails with the error of the branch that
  failed (its other branches are stopped); ``States.ALL`` and ``States.TaskFailed`` match as in
  ``steps``; ``Retry`` intervals are accepted and not waited for. Step Functions' bounds hold too: a
  state's output, a task's result or a variable past 256 KiB ends the execution with
  ``States.DataLimitExceeded`` (no Catch takes it), and an execution fails with ``States.Runtime`` once
  its history reaches 25,000 events (so a loop without an end cannot run forever).

**No thread, no clock of its own.** An execution is a small tree of :class:`Frame` s: the machine's top
level, and a frame for each branch of each Parallel under way, each with its own state, input,
variables, and what it is parked on (a task token, or the time a Wait ends). :meth:`WorkflowMachine.run`
runs the branches side by side (a state of each in turn) in the calling thread until every one is
parked or the execution has ended. What it waits for is on the execution: :attr:`WorkflowExecution.tokens`
(SendTaskSuccess/SendTaskFailure end them: :meth:`WorkflowMachine.resume`) and
:attr:`WorkflowExecution.timers` (a Wait's end, a parked task's timeout, the machine's timeout, each by
name with its due time; the caller's scheduler calls :meth:`WorkflowMachine.fire` with the name).
The clock (``now``) gives ``$now()``, the context's times, and the due times.
"""

from __future__ import annotations

import itertools
import json
import re
import secrets
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from parley.clock import format_time
from parley.local.jsonata_eval import (
    Expression,
    ExpressionFailed,
    check_syntax,
    evaluate,
    expression_text,
    parse_template,
)
from parley.local.steps import (
    ABORTED,
    ALL_ERRORS,
    FAILED,
    NO_CHOICE_MATCHED,
    RUNNING,
    RUNTIME_ERROR,
    SUCCEEDED,
    TASK_FAILED,
    TIMEOUT_ERROR,
    UNCATCHABLE,
    ExecutionError,
    Outcome,
    TaskFailed,
    TaskSucceeded,
    UnsupportedDefinition,
    function_error,
)
from parley.workflow.engine import EXPRESSION_ERROR, INVOKE_RESOURCE, WAIT_FOR_TOKEN_RESOURCE

__all__ = [
    "DATA_LIMIT_ERROR",
    "QUERY_EVALUATION_ERROR",
    "TIMED_OUT",
    "Frame",
    "Outcome",
    "TaskFailed",
    "TaskSucceeded",
    "UnsupportedDefinition",
    "WorkflowExecution",
    "WorkflowMachine",
]

QUERY_EVALUATION_ERROR: Final = EXPRESSION_ERROR
#: A state's data past Step Functions' payload limit: it ends the execution, no Catch takes it.
DATA_LIMIT_ERROR: Final = "States.DataLimitExceeded"
BRANCH_FAILED: Final = "States.BranchFailed"
#: An execution that ran past the machine's own ``TimeoutSeconds``.
TIMED_OUT: Final = "TIMED_OUT"
#: Step Functions' payload limit (a state's input, output, a task's result, a variable).
MAX_PAYLOAD: Final = 256 * 1024
MAX_TIMEOUT_SECONDS: Final = 99_999_999
#: Step Functions' limit on an execution's history: past it, the execution fails.
MAX_HISTORY: Final = 25_000
_UNCATCHABLE: Final = UNCATCHABLE | {DATA_LIMIT_ERROR}
_DEFAULT_MAX_ATTEMPTS: Final = 3
_ROLE_ARN: Final = "arn:aws:iam::123456789012:role/parley-local-workflows"
#: A field left out of the definition.
_ABSENT: Final[Any] = object()
#: An argument left out: the state's own field applies.
_OWN: Final[Any] = object()
_TOKEN_PATH: Final = "$states.context.Task.Token"
_VARIABLE_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_TIMESTAMP: Final = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})")

_COMMON: Final = frozenset({"Type", "Comment", "QueryLanguage"})
_FIELDS: Final[Mapping[str, frozenset[str]]] = {
    "Pass": _COMMON | {"Output", "Assign", "Next", "End"},
    "Task": _COMMON
    | {"Resource", "Arguments", "Output", "Assign", "TimeoutSeconds", "Retry", "Catch", "Next", "End"},
    "Choice": _COMMON | {"Choices", "Default", "Output", "Assign"},
    "Parallel": _COMMON | {"Branches", "Arguments", "Output", "Assign", "Retry", "Catch", "Next", "End"},
    "Wait": _COMMON | {"Seconds", "Timestamp", "Output", "Assign", "Next", "End"},
    "Succeed": _COMMON | {"Output"},
    "Fail": _COMMON | {"Error", "Cause"},
}
_TOP_FIELDS: Final = frozenset({"Comment", "QueryLanguage", "StartAt", "States", "TimeoutSeconds", "Version"})
_BRANCH_FIELDS: Final = frozenset({"Comment", "QueryLanguage", "StartAt", "States"})
_RULE_FIELDS: Final = frozenset({"Condition", "Next", "Comment", "Output", "Assign"})
_RETRY_FIELDS: Final = frozenset(
    {
        "ErrorEquals",
        "IntervalSeconds",
        "MaxAttempts",
        "BackoffRate",
        "MaxDelaySeconds",
        "JitterStrategy",
        "Comment",
    }
)
_CATCH_FIELDS: Final = frozenset({"ErrorEquals", "Next", "Output", "Assign", "Comment"})
_LAMBDA_ARGUMENTS: Final = frozenset({"FunctionName", "Payload"})


# -- the checked definition ------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Retrier:
    errors: frozenset[str]
    max_attempts: int


@dataclass(frozen=True)
class _Catcher:
    errors: frozenset[str]
    next: str
    output: Any
    assign: Mapping[str, Any] | None


@dataclass(frozen=True)
class _Rule:
    condition: Any
    next: str
    output: Any
    assign: Mapping[str, Any] | None


@dataclass(frozen=True)
class _State:
    name: str
    type: str
    #: The state to go to after it (``None``: it ends its branch or the machine).
    next: str | None = None
    arguments: Any = _ABSENT
    output: Any = _ABSENT
    assign: Mapping[str, Any] | None = None
    retry: tuple[_Retrier, ...] = ()
    catch: tuple[_Catcher, ...] = ()
    resource: str = ""
    timeout: Any = None
    rules: tuple[_Rule, ...] = ()
    default: str | None = None
    branches: tuple[_Branch, ...] = ()
    seconds: Any = None
    timestamp: Any = None
    error: Any = None
    cause: Any = None


@dataclass(frozen=True)
class _Branch:
    """A list of states with its first: the machine itself, or one branch of a Parallel."""

    start_at: str
    states: Mapping[str, _State]


# -- executions ------------------------------------------------------------------------------------------


@dataclass(eq=False, slots=True)
class Frame:
    """One line of an execution: its top level, or a branch of a Parallel under way."""

    branch: _Branch
    #: The state it is in, and that state's input.
    state: str
    input: Any
    #: The scope around it (``None`` at the top level): its variables are readable here.
    parent: Frame | None = None
    #: The variables assigned in this scope.
    variables: dict[str, Any] = field(default_factory=dict)
    status: str = RUNNING
    output: Any = None
    error: str | None = None
    cause: str | None = None
    #: The current state's entry is recorded (its Entered event, its retriers' counts).
    entered: bool = False
    entered_time: str = ""
    attempts: list[int] = field(default_factory=list)
    #: Parked on a task token (with the task's timeout timer's name), or on a Wait's end (its timer).
    token: str | None = None
    token_timer: str | None = None
    wake_timer: str | None = None
    #: The branches of the Parallel it is in, while they run.
    branches: list[Frame] | None = None

    @property
    def parked(self) -> bool:
        return self.token is not None or self.wake_timer is not None

    def scope(self) -> dict[str, Any]:
        """The variables readable here: the outer scopes', then this one's."""
        outer = self.parent.scope() if self.parent is not None else {}
        outer.update(self.variables)
        return outer

    def walk(self) -> Iterator[Frame]:
        yield self
        for branch in self.branches or ():
            yield from branch.walk()


@dataclass(eq=False, slots=True)
class WorkflowExecution:
    """One execution of a :class:`WorkflowMachine`."""

    arn: str
    name: str
    input: Any
    start_time: str
    root: Frame
    status: str = RUNNING
    output: Any = None
    error: str | None = None
    cause: str | None = None
    stop_time: str | None = None
    #: Its events, as ``GetExecutionHistory`` lists them (``id``, ``type``, ``name``, ``timestamp``;
    #: ``error`` and ``cause`` for a failure).
    history: list[dict[str, Any]] = field(default_factory=list)
    #: The task tokens it waits for, each with the frame parked on it.
    tokens: dict[str, Frame] = field(default_factory=dict)
    #: What it waits for the clock for: timer name → due time (the frame, ``None`` for the machine's
    #: own timeout).
    timers: dict[str, tuple[datetime, Frame | None]] = field(default_factory=dict)
    parks: Iterator[int] = field(default_factory=lambda: itertools.count(1))

    def due(self) -> dict[str, datetime]:
        """The timers, by name: what the caller schedules (and calls :meth:`WorkflowMachine.fire` for)."""
        return {name: at for name, (at, _) in self.timers.items()}


class _FrameFailed(Exception):
    """A frame ends in failure (no Retry or Catch of its state took the error)."""

    def __init__(self, failure: ExecutionError) -> None:
        super().__init__(failure.error)
        self.failure = failure


class WorkflowMachine:
    """A JSONata state machine (see the module's docstring for what it interprets).

    ``invoke(function_name, payload)`` runs a Lambda function and returns its result (an exception is
    the function's error). ``on_token(execution, token)`` is told each task token before the function
    that receives it is invoked. ``now`` is the clock (UTC).
    """

    def __init__(
        self,
        definition: Mapping[str, Any],
        *,
        arn: str,
        invoke: Callable[[str, Any], Any],
        on_token: Callable[[WorkflowExecution, str], None] = lambda execution, token: None,
        now: Callable[[], datetime] | None = None,
    ) -> None:
        self.arn = arn
        self.name = _machine_name(arn)
        self._invoke = invoke
        self._on_token = on_token
        self._now = now or (lambda: datetime.now(UTC))
        self.definition: Final = definition
        self._main, self.timeout_seconds = _checked(definition)

    # -- executions --------------------------------------------------------------------------------------

    def start(self, arn: str, name: str, input_value: Any) -> WorkflowExecution:
        """A new execution at its first state; :meth:`run` runs it."""
        now = self._now()
        root = Frame(branch=self._main, state=self._main.start_at, input=input_value)
        execution = WorkflowExecution(
            arn=arn, name=name, input=input_value, start_time=format_time(now), root=root
        )
        self._event(execution, "ExecutionStarted", "")
        if self.timeout_seconds is not None:
            execution.timers["execution-timeout"] = (now + timedelta(seconds=self.timeout_seconds), None)
        return execution

    def run(self, execution: WorkflowExecution) -> None:
        """Run until every branch is parked (on a token or a timer) or the execution has ended."""
        while execution.status == RUNNING and self._tick(execution, execution.root):
            if len(execution.history) >= MAX_HISTORY:
                self._stop_all(execution)
                self._end(
                    execution,
                    FAILED,
                    "ExecutionFailed",
                    error=RUNTIME_ERROR,
                    cause=f"The execution's history reached Step Functions' limit of {MAX_HISTORY:,} events.",
                )
                return
        root = execution.root
        if execution.status != RUNNING or root.status == RUNNING:
            return
        if root.status == SUCCEEDED:
            self._end(execution, SUCCEEDED, "ExecutionSucceeded", output=root.output)
        else:
            self._end(execution, FAILED, "ExecutionFailed", error=root.error, cause=root.cause)

    def resume(self, execution: WorkflowExecution, token: str, outcome: Outcome) -> bool:
        """End the task parked on ``token`` with ``outcome`` and run on; ``False`` (nothing done) when
        the execution does not wait for that token (any more)."""
        frame = execution.tokens.get(token) if execution.status == RUNNING else None
        if frame is None or frame.token != token:
            return False
        self._unpark(execution, frame)
        state = frame.branch.states[frame.state]
        try:
            if isinstance(outcome, TaskSucceeded):
                self._event(execution, "TaskSucceeded", state.name)
                self._task_done(execution, frame, state, outcome.output)
            else:
                kind = "TaskTimedOut" if outcome.error == TIMEOUT_ERROR else "TaskFailed"
                self._event(execution, kind, state.name, error=outcome.error, cause=outcome.cause)
                self._failed(execution, frame, state, ExecutionError(outcome.error, outcome.cause))
        except _FrameFailed as failed:
            self._fail_frame(frame, failed.failure)
        self.run(execution)
        return True

    def fire(self, execution: WorkflowExecution, timer: str) -> bool:
        """The timer ``timer`` fell due; ``False`` (nothing done) when it is no longer pending."""
        entry = execution.timers.get(timer) if execution.status == RUNNING else None
        if entry is None:
            return False
        _, frame = entry
        if frame is None:  # the machine's own timeout
            self._stop_all(execution)
            self._end(
                execution,
                TIMED_OUT,
                "ExecutionTimedOut",
                error=TIMEOUT_ERROR,
                cause="The execution ran past its state machine's TimeoutSeconds.",
            )
            return True
        if timer == frame.token_timer and frame.token is not None:
            return self.resume(
                execution, frame.token, TaskFailed(TIMEOUT_ERROR, "The task ran past its TimeoutSeconds.")
            )
        if timer != frame.wake_timer:
            execution.timers.pop(timer, None)
            return False
        self._unpark(execution, frame)
        state = frame.branch.states[frame.state]
        try:
            self._leave(execution, frame, state, bindings=self._bindings(execution, frame, state))
        except _FrameFailed as failed:
            self._fail_frame(frame, failed.failure)
        self.run(execution)
        return True

    def abort(self, execution: WorkflowExecution, error: str | None = None, cause: str | None = None) -> None:
        """``StopExecution``: the execution ends where it is (its tokens spent, its timers dropped)."""
        if execution.status != RUNNING:
            return
        self._stop_all(execution)
        self._end(execution, ABORTED, "ExecutionAborted", error=error, cause=cause)

    # -- running frames ----------------------------------------------------------------------------------

    def _tick(self, execution: WorkflowExecution, frame: Frame) -> bool:
        """One step of ``frame`` (a state, or one state of each of its running branches); ``False`` when
        it can make none (parked, waiting for parked branches, or ended)."""
        if frame.status != RUNNING or frame.parked:
            return False
        if frame.branches is not None:
            progressed = False
            for branch in frame.branches:
                if self._tick(execution, branch):
                    progressed = True
                if branch.status == FAILED:
                    self._branch_failed(execution, frame, branch)
                    return True
            if all(branch.status == SUCCEEDED for branch in frame.branches):
                self._branches_done(execution, frame)
                return True
            return progressed
        try:
            self._step(execution, frame)
        except _FrameFailed as failed:
            self._fail_frame(frame, failed.failure)
        return True

    def _step(self, execution: WorkflowExecution, frame: Frame) -> None:
        state = frame.branch.states[frame.state]
        if not frame.entered:
            frame.entered = True
            frame.entered_time = format_time(self._now())
            frame.attempts = [0] * len(state.retry)
            # The input's size, as GetExecutionHistory gives every state's input (a Choice's way into this
            # state completes a task with it), and a Wait's input itself (a retry's attempt and delay).
            entered: dict[str, Any] = {"input_size": _size(frame.input)}
            if state.type == "Wait":
                entered["input"] = frame.input
            self._event(execution, f"{state.type}StateEntered", state.name, **entered)
        handler = getattr(self, f"_{state.type.lower()}")
        handler(execution, frame, state)

    def _pass(self, execution: WorkflowExecution, frame: Frame, state: _State) -> None:
        self._leave(execution, frame, state, bindings=self._bindings(execution, frame, state))

    def _succeed(self, execution: WorkflowExecution, frame: Frame, state: _State) -> None:
        self._leave(execution, frame, state, bindings=self._bindings(execution, frame, state))

    def _fail(self, execution: WorkflowExecution, frame: Frame, state: _State) -> None:
        bindings = self._bindings(execution, frame, state)
        error = self._string(state, "Error", state.error, bindings)
        cause = self._string(state, "Cause", state.cause, bindings)
        raise _FrameFailed(ExecutionError(error or "", cause or ""))

    def _choice(self, execution: WorkflowExecution, frame: Frame, state: _State) -> None:
        bindings = self._bindings(execution, frame, state)
        for index, rule in enumerate(state.rules):
            holds = self._value(state, f"Choices[{index}].Condition", rule.condition, bindings)
            if not isinstance(holds, bool):
                raise _FrameFailed(
                    _query_error(state, f"Choices[{index}].Condition", f"gave {_short(holds)}, not a boolean")
                )
            if holds:
                self._leave(
                    execution,
                    frame,
                    state,
                    bindings=bindings,
                    output=rule.output,
                    assign=rule.assign,
                    next_state=rule.next,
                )
                return
        if state.default is None:
            raise _FrameFailed(
                ExecutionError(NO_CHOICE_MATCHED, f"No Choice rule of '{state.name}' matched.")
            )
        self._leave(execution, frame, state, bindings=bindings, next_state=state.default)

    def _wait(self, execution: WorkflowExecution, frame: Frame, state: _State) -> None:
        bindings = self._bindings(execution, frame, state)
        now = self._now()
        if state.seconds is not None:
            seconds = self._value(state, "Seconds", state.seconds, bindings)
            if not _is_integer(seconds) or seconds < 0 or seconds > MAX_TIMEOUT_SECONDS:
                raise _FrameFailed(
                    _query_error(state, "Seconds", f"gave {_short(seconds)}, not whole seconds")
                )
            due = now + timedelta(seconds=seconds)
        else:
            stamp = self._value(state, "Timestamp", state.timestamp, bindings)
            moment = _timestamp(stamp)
            if moment is None:
                raise _FrameFailed(_query_error(state, "Timestamp", f"gave {_short(stamp)}, not a timestamp"))
            due = moment
        if due <= now:
            self._leave(execution, frame, state, bindings=bindings)
            return
        name = f"wait-{next(execution.parks)}"
        frame.wake_timer = name
        execution.timers[name] = (due, frame)

    def _task(self, execution: WorkflowExecution, frame: Frame, state: _State) -> None:
        waits = state.resource == WAIT_FOR_TOKEN_RESOURCE
        token = secrets.token_urlsafe(48) if waits else None
        bindings = self._bindings(execution, frame, state, token=token)
        try:
            arguments = self._arguments(state, bindings)
            timeout = self._timeout(state, bindings)
        except _FrameFailed as failed:
            self._failed(execution, frame, state, failed.failure)
            return
        self._event(execution, "TaskScheduled", state.name, resource=state.resource)
        self._event(execution, "TaskStarted", state.name)
        if token is not None:
            self._on_token(execution, token)
        started = time.monotonic()
        try:
            result = self._invoke(arguments["FunctionName"], arguments.get("Payload", {}))
        except Exception as exc:
            failure = function_error(exc)
            self._event(execution, "TaskFailed", state.name, error=failure.error, cause=failure.cause)
            self._failed(execution, frame, state, failure)
            return
        if token is not None:
            self._event(execution, "TaskSubmitted", state.name)
            frame.token = token
            execution.tokens[token] = frame
            if timeout is not None:
                name = f"timeout-{next(execution.parks)}"
                frame.token_timer = name
                execution.timers[name] = (self._now() + timedelta(seconds=timeout), frame)
            return
        if timeout is not None and time.monotonic() - started > timeout:
            self._event(execution, "TaskTimedOut", state.name, error=TIMEOUT_ERROR)
            self._failed(
                execution,
                frame,
                state,
                ExecutionError(TIMEOUT_ERROR, "The task ran past its TimeoutSeconds."),
            )
            return
        self._event(execution, "TaskSucceeded", state.name)
        self._task_done(
            execution, frame, state, {"ExecutedVersion": "$LATEST", "Payload": result, "StatusCode": 200}
        )

    def _arguments(self, state: _State, bindings: dict[str, Any]) -> dict[str, Any]:
        arguments = self._value(state, "Arguments", state.arguments, bindings)
        if (
            not isinstance(arguments, dict)
            or not isinstance(arguments.get("FunctionName"), str)
            or set(arguments) - _LAMBDA_ARGUMENTS
        ):
            raise _FrameFailed(
                _query_error(state, "Arguments", f"gave {_short(arguments)}, not {{FunctionName, Payload}}")
            )
        return arguments

    def _timeout(self, state: _State, bindings: dict[str, Any]) -> int | None:
        if state.timeout is None:
            return None
        seconds = self._value(state, "TimeoutSeconds", state.timeout, bindings)
        if not _is_integer(seconds) or not 1 <= seconds <= MAX_TIMEOUT_SECONDS:
            raise _FrameFailed(
                _query_error(state, "TimeoutSeconds", f"gave {_short(seconds)}, not a positive integer")
            )
        return int(seconds)

    def _task_done(self, execution: WorkflowExecution, frame: Frame, state: _State, result: Any) -> None:
        try:
            _check_size(state, "result", result)
            bindings = self._bindings(execution, frame, state, result=result)
            self._leave(execution, frame, state, bindings=bindings, default_output=result)
        except _FrameFailed as failed:
            self._failed(execution, frame, state, failed.failure)

    def _parallel(self, execution: WorkflowExecution, frame: Frame, state: _State) -> None:
        bindings = self._bindings(execution, frame, state)
        try:
            if state.arguments is _ABSENT:
                branch_input = frame.input
            else:
                branch_input = self._value(state, "Arguments", state.arguments, bindings)
        except _FrameFailed as failed:
            self._failed(execution, frame, state, failed.failure)
            return
        self._event(execution, "ParallelStateStarted", state.name)
        frame.branches = [
            Frame(branch=branch, state=branch.start_at, input=branch_input, parent=frame)
            for branch in state.branches
        ]

    def _branches_done(self, execution: WorkflowExecution, frame: Frame) -> None:
        state = frame.branch.states[frame.state]
        result = [branch.output for branch in frame.branches or ()]
        frame.branches = None
        self._event(execution, "ParallelStateSucceeded", state.name)
        try:
            _check_size(state, "result", result)
            bindings = self._bindings(execution, frame, state, result=result)
            self._leave(execution, frame, state, bindings=bindings, default_output=result)
        except _FrameFailed as failed:
            try:
                self._failed(execution, frame, state, failed.failure)
            except _FrameFailed as uncaught:
                self._fail_frame(frame, uncaught.failure)

    def _branch_failed(self, execution: WorkflowExecution, frame: Frame, failed: Frame) -> None:
        """A branch failed: the others stop, and the Parallel fails with its error."""
        state = frame.branch.states[frame.state]
        for branch in frame.branches or ():
            if branch is not failed:
                self._stop(execution, branch)
        frame.branches = None
        failure = ExecutionError(failed.error or "", failed.cause or "")
        self._event(execution, "ParallelStateFailed", state.name, error=failure.error, cause=failure.cause)
        try:
            self._failed(execution, frame, state, failure)
        except _FrameFailed as uncaught:
            self._fail_frame(frame, uncaught.failure)

    # -- leaving a state, failing ------------------------------------------------------------------------

    def _leave(
        self,
        execution: WorkflowExecution,
        frame: Frame,
        state: _State,
        *,
        bindings: dict[str, Any],
        output: Any = _OWN,
        assign: Any = _OWN,
        next_state: Any = _OWN,
        default_output: Any = _ABSENT,
    ) -> None:
        """Evaluate ``output`` and ``assign`` (the state's own ``Output`` and ``Assign`` unless given; both
        with the variables from before the state), assign, and go on to ``next_state`` (the state's own
        ``Next`` unless given; ``None``: the frame ends). Without an ``Output``, the output is
        ``default_output`` (the state's input unless given)."""
        template = state.output if output is _OWN else output
        assignments: Mapping[str, Any] | None = state.assign if assign is _OWN else assign
        target: str | None = state.next if next_state is _OWN else next_state
        if template is _ABSENT:
            value = frame.input if default_output is _ABSENT else default_output
        else:
            value = self._value(state, "Output", template, bindings)
        size = _check_size(state, "output", value)
        self._assign(frame, state, assignments, bindings)
        # The output's size, as GetExecutionHistory's stateExitedEventDetails give the output itself.
        self._event(execution, f"{state.type}StateExited", state.name, output_size=size)
        self._go(frame, target, value)

    def _assign(
        self, frame: Frame, state: _State, assignments: Mapping[str, Any] | None, bindings: dict[str, Any]
    ) -> None:
        if not assignments:
            return
        values = {
            name: self._value(state, f"Assign.{name}", template, bindings)
            for name, template in assignments.items()
        }
        outer = frame.parent.scope() if frame.parent is not None else {}
        for name, value in values.items():
            if name in outer:
                raise _FrameFailed(
                    ExecutionError(
                        RUNTIME_ERROR,
                        f"The state '{state.name}' cannot assign the variable '{name}': "
                        "it belongs to an outer scope.",
                    )
                )
            _check_size(state, f"variable '{name}'", value)
        frame.variables.update(values)

    def _go(self, frame: Frame, next_state: str | None, output: Any) -> None:
        frame.entered = False
        frame.attempts = []
        if next_state is None:
            frame.status = SUCCEEDED
            frame.output = output
            return
        frame.state = next_state
        frame.input = output

    def _failed(
        self, execution: WorkflowExecution, frame: Frame, state: _State, failure: ExecutionError
    ) -> None:
        """The state failed with ``failure``: its Retry runs it again, or its Catch goes on, or the frame
        fails (raises :class:`_FrameFailed`)."""
        if failure.error == EXPRESSION_ERROR:
            self._event(execution, "EvaluationFailed", state.name, error=failure.error, cause=failure.cause)
        if failure.error in _UNCATCHABLE:
            raise _FrameFailed(failure)
        for index, retrier in enumerate(state.retry):
            if _matches(retrier.errors, failure.error):
                if frame.attempts[index] < retrier.max_attempts:
                    frame.attempts[index] += 1
                    return  # the state runs again at the next step (its interval is not waited for)
                break  # the first retrier that matches decides: its attempts are spent
        for catcher in state.catch:
            if _matches(catcher.errors, failure.error):
                error_output = {"Error": failure.error, "Cause": failure.cause}
                bindings = self._bindings(execution, frame, state, error_output=error_output)
                self._leave(
                    execution,
                    frame,
                    state,
                    bindings=bindings,
                    output=catcher.output,
                    assign=catcher.assign,
                    next_state=catcher.next,
                    default_output=error_output,
                )
                return
        raise _FrameFailed(failure)

    def _fail_frame(self, frame: Frame, failure: ExecutionError) -> None:
        frame.status = FAILED
        frame.error = failure.error
        frame.cause = failure.cause

    # -- parking and stopping ----------------------------------------------------------------------------

    def _unpark(self, execution: WorkflowExecution, frame: Frame) -> None:
        if frame.token is not None:
            execution.tokens.pop(frame.token, None)
        for timer in (frame.token_timer, frame.wake_timer):
            if timer is not None:
                execution.timers.pop(timer, None)
        frame.token = frame.token_timer = frame.wake_timer = None

    def _stop(self, execution: WorkflowExecution, frame: Frame) -> None:
        """Stop a frame and every branch under it: its tokens are spent, its timers dropped."""
        for inner in list(frame.walk()):
            if inner.status != RUNNING:
                continue
            self._unpark(execution, inner)
            if inner.entered:
                state = inner.branch.states[inner.state]
                self._event(execution, f"{state.type}StateAborted", state.name)
            inner.status = ABORTED
            inner.branches = None

    def _stop_all(self, execution: WorkflowExecution) -> None:
        self._stop(execution, execution.root)
        execution.tokens.clear()
        execution.timers.clear()

    def _end(
        self,
        execution: WorkflowExecution,
        status: str,
        event: str,
        *,
        output: Any = None,
        error: str | None = None,
        cause: str | None = None,
    ) -> None:
        execution.status = status
        execution.output = output
        execution.error = error
        execution.cause = cause
        execution.stop_time = format_time(self._now())
        execution.tokens.clear()
        execution.timers.clear()
        details: dict[str, Any] = {}
        if error is not None:
            details["error"] = error
        if cause is not None:
            details["cause"] = cause
        self._event(execution, event, "", **details)

    # -- values ------------------------------------------------------------------------------------------

    def _bindings(
        self,
        execution: WorkflowExecution,
        frame: Frame,
        state: _State,
        *,
        token: str | None = None,
        result: Any = _ABSENT,
        error_output: Any = _ABSENT,
    ) -> dict[str, Any]:
        context: dict[str, Any] = {
            "Execution": {
                "Id": execution.arn,
                "Input": execution.input,
                "Name": execution.name,
                "RoleArn": _ROLE_ARN,
                "StartTime": execution.start_time,
                "RedriveCount": 0,
            },
            "State": {
                "EnteredTime": frame.entered_time,
                "Name": state.name,
                "RetryCount": sum(frame.attempts),
            },
            "StateMachine": {"Id": self.arn, "Name": self.name},
        }
        if token is not None:
            context["Task"] = {"Token": token}
        states: dict[str, Any] = {"input": frame.input, "context": context}
        if result is not _ABSENT:
            states["result"] = result
        if error_output is not _ABSENT:
            states["errorOutput"] = error_output
        bindings = frame.scope()
        bindings["states"] = states
        return bindings

    def _value(self, state: _State, where: str, template: Any, bindings: Mapping[str, Any]) -> Any:
        """A field's value: its expressions evaluated (a failure is ``States.QueryEvaluationError``)."""
        if isinstance(template, Expression):
            try:
                return evaluate(template.text, bindings, now=self._now)
            except ExpressionFailed as failed:
                raise _FrameFailed(_query_error(state, where, failed.message)) from None
        if isinstance(template, dict):
            return {key: self._value(state, where, item, bindings) for key, item in template.items()}
        if isinstance(template, list):
            return [self._value(state, where, item, bindings) for item in template]
        return template

    def _string(self, state: _State, where: str, template: Any, bindings: Mapping[str, Any]) -> str | None:
        if template is None:
            return None
        value = self._value(state, where, template, bindings)
        if not isinstance(value, str):
            raise _FrameFailed(_query_error(state, where, f"gave {_short(value)}, not a string"))
        return value

    def _event(self, execution: WorkflowExecution, kind: str, name: str, **details: Any) -> None:
        event: dict[str, Any] = {
            "id": len(execution.history) + 1,
            "type": kind,
            "name": name,
            "timestamp": format_time(self._now()),
        }
        event.update(details)
        execution.history.append(event)


# -- helpers ---------------------------------------------------------------------------------------------


def _machine_name(arn: str) -> str:
    """``…:stateMachine:<name>[:<version>]`` → ``<name>``."""
    _, _, rest = arn.partition(":stateMachine:")
    return (rest or arn).split(":", 1)[0]


def _matches(errors: frozenset[str], error: str) -> bool:
    if error in _UNCATCHABLE:
        return False
    if error in errors or ALL_ERRORS in errors:
        return True
    return TASK_FAILED in errors and error != TIMEOUT_ERROR


def _query_error(state: _State, where: str, message: str) -> ExecutionError:
    return ExecutionError(
        QUERY_EVALUATION_ERROR,
        f"An error occurred while executing the state '{state.name}'. "
        f"The JSONata expression of the field '{where}': {message}",
    )


def _short(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _is_integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _timestamp(value: Any) -> datetime | None:
    if not isinstance(value, str) or not _TIMESTAMP.fullmatch(value):
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment.astimezone(UTC)


def _size(value: Any) -> int:
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))


def _check_size(state: _State, what: str, value: Any) -> int:
    """The value's size as JSON; ``States.DataLimitExceeded`` past the payload's bound."""
    size = _size(value)
    if size <= MAX_PAYLOAD:
        return size
    raise _FrameFailed(
        ExecutionError(
            DATA_LIMIT_ERROR,
            f"The state '{state.name}' made a {what} of {size} bytes, past the limit of {MAX_PAYLOAD}.",
        )
    )


# -- checking a definition -------------------------------------------------------------------------------


def _checked(definition: Mapping[str, Any]) -> tuple[_Branch, int | None]:
    """The machine, checked; raises :class:`UnsupportedDefinition` for anything not interpreted."""
    if not isinstance(definition, Mapping):
        raise UnsupportedDefinition("a state machine is an object")
    extra = set(definition) - _TOP_FIELDS
    if extra:
        raise UnsupportedDefinition(f"top-level fields not interpreted: {sorted(extra)}")
    if definition.get("QueryLanguage") != "JSONata":
        raise UnsupportedDefinition('only "QueryLanguage": "JSONata" is interpreted here')
    timeout = definition.get("TimeoutSeconds")
    if timeout is not None and (not _is_integer(timeout) or not 1 <= timeout <= MAX_TIMEOUT_SECONDS):
        raise UnsupportedDefinition("the machine's TimeoutSeconds is a positive integer")
    return _checked_branch(definition, "the machine"), timeout


def _checked_branch(raw: Mapping[str, Any], where: str) -> _Branch:
    if not isinstance(raw, Mapping):
        raise UnsupportedDefinition(f"{where} is not an object")
    if where != "the machine":
        extra = set(raw) - _BRANCH_FIELDS
        if extra:
            raise UnsupportedDefinition(f"{where}: fields not interpreted: {sorted(extra)}")
        if raw.get("QueryLanguage", "JSONata") != "JSONata":
            raise UnsupportedDefinition(f"{where}: only JSONata is interpreted")
    raw_states = raw.get("States")
    if not isinstance(raw_states, Mapping) or not raw_states:
        raise UnsupportedDefinition(f"{where}: States is an object of at least one state")
    start_at = raw.get("StartAt")
    if not isinstance(start_at, str) or start_at not in raw_states:
        raise UnsupportedDefinition(f"{where}: StartAt names one of its states, not {start_at!r}")
    states = {name: _checked_state(name, value) for name, value in raw_states.items()}
    for state in states.values():
        targets = [state.next, state.default, *(c.next for c in state.catch), *(r.next for r in state.rules)]
        for target in targets:
            if target is not None and target not in states:
                raise UnsupportedDefinition(f"state {state.name!r}: no state named {target!r} in {where}")
    return _Branch(start_at=start_at, states=states)


def _checked_state(name: str, raw: Any) -> _State:
    where = f"state {name!r}"
    if not isinstance(name, str) or not 1 <= len(name) <= 80:
        raise UnsupportedDefinition(f"{where}: a state's name is 1 to 80 characters")
    if not isinstance(raw, Mapping):
        raise UnsupportedDefinition(f"{where} is not an object")
    kind = raw.get("Type")
    if not isinstance(kind, str) or kind not in _FIELDS:
        raise UnsupportedDefinition(f"{where}: type {kind!r} is not interpreted")
    extra = set(raw) - _FIELDS[kind]
    if extra:
        raise UnsupportedDefinition(f"{where}: fields not interpreted: {sorted(extra)}")
    if raw.get("QueryLanguage", "JSONata") != "JSONata":
        raise UnsupportedDefinition(f"{where}: only JSONata is interpreted")
    fields: dict[str, Any] = {"name": name, "type": kind}
    if kind in ("Pass", "Task", "Parallel", "Wait"):
        if ("Next" in raw) == bool(raw.get("End")) or ("End" in raw and raw["End"] is not True):
            raise UnsupportedDefinition(f"{where}: exactly one of Next and End (true)")
        if "Next" in raw:
            fields["next"] = _name(raw["Next"], f"{where}.Next")
    if "Output" in raw:
        fields["output"] = _template(raw["Output"], f"{where}.Output")
    if "Assign" in raw:
        fields["assign"] = _assignments(raw["Assign"], f"{where}.Assign")
    if "Arguments" in raw:
        fields["arguments"] = _template(raw["Arguments"], f"{where}.Arguments")
    if kind == "Task":
        fields.update(_checked_task(raw, where, fields.get("arguments", _ABSENT)))
    elif kind == "Parallel":
        branches = raw.get("Branches")
        if not isinstance(branches, list) or not branches:
            raise UnsupportedDefinition(f"{where}: Branches is a list of at least one branch")
        fields["branches"] = tuple(
            _checked_branch(branch, f"{where}.Branches[{index}]") for index, branch in enumerate(branches)
        )
        fields.update(_checked_handlers(raw, where))
    elif kind == "Choice":
        fields.update(_checked_choice(raw, where))
    elif kind == "Wait":
        fields.update(_checked_wait(raw, where))
    elif kind == "Fail":
        for key in ("Error", "Cause"):
            if key in raw:
                if not isinstance(raw[key], str):
                    raise UnsupportedDefinition(f"{where}.{key} is a string or an expression")
                fields[key.lower()] = _template(raw[key], f"{where}.{key}")
    return _State(**fields)


def _checked_task(raw: Mapping[str, Any], where: str, arguments: Any) -> dict[str, Any]:
    resource = raw.get("Resource")
    if resource not in (INVOKE_RESOURCE, WAIT_FOR_TOKEN_RESOURCE):
        raise UnsupportedDefinition(f"{where}: resource {resource!r} is not interpreted")
    if isinstance(arguments, Mapping):
        extra = set(arguments) - _LAMBDA_ARGUMENTS
        if extra:
            raise UnsupportedDefinition(f"{where}: Lambda arguments not interpreted: {sorted(extra)}")
        if not isinstance(arguments.get("FunctionName"), str):
            raise UnsupportedDefinition(f"{where}: Arguments names the function (FunctionName)")
    elif not isinstance(arguments, Expression):
        raise UnsupportedDefinition(f"{where}: Arguments is {{FunctionName, Payload}} or an expression")
    if resource == WAIT_FOR_TOKEN_RESOURCE and _TOKEN_PATH not in json.dumps(raw["Arguments"]):
        raise UnsupportedDefinition(f"{where}: a waitForTaskToken task passes {_TOKEN_PATH}")
    fields: dict[str, Any] = {"resource": resource, "arguments": arguments}
    if "TimeoutSeconds" in raw:
        timeout = raw["TimeoutSeconds"]
        if expression_text(timeout) is None and (
            not _is_integer(timeout) or not 1 <= timeout <= MAX_TIMEOUT_SECONDS
        ):
            raise UnsupportedDefinition(f"{where}: TimeoutSeconds is a positive integer or an expression")
        fields["timeout"] = _template(timeout, f"{where}.TimeoutSeconds")
    fields.update(_checked_handlers(raw, where))
    return fields


def _checked_handlers(raw: Mapping[str, Any], where: str) -> dict[str, Any]:
    retry: list[_Retrier] = []
    retry_entries = raw.get("Retry", [])
    if not isinstance(retry_entries, list):
        raise UnsupportedDefinition(f"{where}: Retry is a list")
    for index, entry in enumerate(retry_entries):
        at = f"{where}.Retry[{index}]"
        errors = _checked_errors(entry, _RETRY_FIELDS, at)
        attempts = entry.get("MaxAttempts", _DEFAULT_MAX_ATTEMPTS)
        if not _is_integer(attempts) or attempts < 0:
            raise UnsupportedDefinition(f"{at}: MaxAttempts is an integer, 0 or more")
        interval = entry.get("IntervalSeconds", 1)
        if not _is_integer(interval) or interval < 1:
            raise UnsupportedDefinition(f"{at}: IntervalSeconds is a positive integer")
        rate = entry.get("BackoffRate", 2.0)
        if isinstance(rate, bool) or not isinstance(rate, int | float) or rate < 1:
            raise UnsupportedDefinition(f"{at}: BackoffRate is a number, 1 or more")
        delay = entry.get("MaxDelaySeconds")
        if delay is not None and (not _is_integer(delay) or delay < 1):
            raise UnsupportedDefinition(f"{at}: MaxDelaySeconds is a positive integer")
        if entry.get("JitterStrategy", "NONE") not in ("FULL", "NONE"):
            raise UnsupportedDefinition(f"{at}: JitterStrategy is FULL or NONE")
        if ALL_ERRORS in errors and index != len(retry_entries) - 1:
            raise UnsupportedDefinition(f"{at}: {ALL_ERRORS} is in the last retrier only")
        retry.append(_Retrier(errors, attempts))
    catch: list[_Catcher] = []
    catch_entries = raw.get("Catch", [])
    if not isinstance(catch_entries, list):
        raise UnsupportedDefinition(f"{where}: Catch is a list")
    for index, entry in enumerate(catch_entries):
        at = f"{where}.Catch[{index}]"
        errors = _checked_errors(entry, _CATCH_FIELDS, at)
        if ALL_ERRORS in errors and index != len(catch_entries) - 1:
            raise UnsupportedDefinition(f"{at}: {ALL_ERRORS} is in the last catcher only")
        catch.append(
            _Catcher(
                errors=errors,
                next=_name(entry.get("Next"), f"{at}.Next"),
                output=_template(entry["Output"], f"{at}.Output") if "Output" in entry else _ABSENT,
                assign=_assignments(entry["Assign"], f"{at}.Assign") if "Assign" in entry else None,
            )
        )
    return {"retry": tuple(retry), "catch": tuple(catch)}


def _checked_errors(entry: Any, fields: frozenset[str], where: str) -> frozenset[str]:
    if not isinstance(entry, Mapping):
        raise UnsupportedDefinition(f"{where} is not an object")
    extra = set(entry) - fields
    if extra:
        raise UnsupportedDefinition(f"{where}: fields not interpreted: {sorted(extra)}")
    errors = entry.get("ErrorEquals")
    if not isinstance(errors, list) or not errors or not all(isinstance(e, str) for e in errors):
        raise UnsupportedDefinition(f"{where}: ErrorEquals is a list of error names")
    if ALL_ERRORS in errors and len(errors) > 1:
        raise UnsupportedDefinition(f"{where}: {ALL_ERRORS} stands alone")
    return frozenset(errors)


def _checked_choice(raw: Mapping[str, Any], where: str) -> dict[str, Any]:
    choices = raw.get("Choices")
    if not isinstance(choices, list) or not choices:
        raise UnsupportedDefinition(f"{where}: Choices is a list of at least one rule")
    rules: list[_Rule] = []
    for index, rule in enumerate(choices):
        at = f"{where}.Choices[{index}]"
        if not isinstance(rule, Mapping):
            raise UnsupportedDefinition(f"{at} is not an object")
        extra = set(rule) - _RULE_FIELDS
        if extra:
            raise UnsupportedDefinition(
                f"{at}: fields not interpreted (JSONata rules take a Condition): {sorted(extra)}"
            )
        condition = rule.get("Condition")
        if not isinstance(condition, bool) and expression_text(condition) is None:
            raise UnsupportedDefinition(f"{at}: Condition is an expression or a boolean")
        rules.append(
            _Rule(
                condition=_template(condition, f"{at}.Condition"),
                next=_name(rule.get("Next"), f"{at}.Next"),
                output=_template(rule["Output"], f"{at}.Output") if "Output" in rule else _ABSENT,
                assign=_assignments(rule["Assign"], f"{at}.Assign") if "Assign" in rule else None,
            )
        )
    default = raw.get("Default")
    return {"rules": tuple(rules), "default": None if default is None else _name(default, f"{where}.Default")}


def _checked_wait(raw: Mapping[str, Any], where: str) -> dict[str, Any]:
    if ("Seconds" in raw) == ("Timestamp" in raw):
        raise UnsupportedDefinition(f"{where}: exactly one of Seconds and Timestamp")
    if "Seconds" in raw:
        seconds = raw["Seconds"]
        if expression_text(seconds) is None and (
            not _is_integer(seconds) or not 0 <= seconds <= MAX_TIMEOUT_SECONDS
        ):
            raise UnsupportedDefinition(f"{where}: Seconds is whole seconds or an expression")
        return {"seconds": _template(seconds, f"{where}.Seconds")}
    stamp = raw["Timestamp"]
    if expression_text(stamp) is None and _timestamp(stamp) is None:
        raise UnsupportedDefinition(f"{where}: Timestamp is an RFC 3339 time or an expression")
    return {"timestamp": _template(stamp, f"{where}.Timestamp")}


def _name(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value:
        raise UnsupportedDefinition(f"{where} names a state")
    return value


def _assignments(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise UnsupportedDefinition(f"{where} is an object of variables")
    for name in value:
        if not isinstance(name, str) or not _VARIABLE_NAME.fullmatch(name) or len(name) > 80:
            raise UnsupportedDefinition(f"{where}: {name!r} is not a variable's name")
        if name == "states":
            raise UnsupportedDefinition(f"{where}: $states is Step Functions' own")
    return {name: _template(item, f"{where}.{name}") for name, item in value.items()}


def _template(value: Any, where: str) -> Any:
    """A field's value with its expressions parsed (checked now: one that does not parse is refused)."""
    _check_expressions(value, where)
    return parse_template(value)


def _check_expressions(value: Any, where: str) -> None:
    if isinstance(value, Mapping):
        for key, item in value.items():
            if not isinstance(key, str):
                raise UnsupportedDefinition(f"{where}: keys are strings")
            _check_expressions(item, f"{where}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _check_expressions(item, f"{where}[{index}]")
    elif isinstance(value, str):
        text = expression_text(value)
        if text is None:
            stripped = value.strip()
            if stripped.startswith("{%") and stripped.endswith("%}"):
                raise UnsupportedDefinition(
                    f"{where}: an expression is exactly {{% … %}}, with nothing around it"
                )
            return
        try:
            check_syntax(text)
        except ExpressionFailed as failed:
            raise UnsupportedDefinition(f"{where}: {failed.message}") from None
