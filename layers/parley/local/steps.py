"""Step Functions on one machine: an interpreter of the ASL the run's state machine is written in
(``parley.infrastructure.state_machine``), event-driven, so that a waiting execution is a small record
and holds no thread.

:class:`StateMachine` takes the very dict ``state_machine_definition(...)`` returns (the one ``cdk
deploy`` ships) and checks it when it is built: a state type, field, resource, path or Choice operator it
does not interpret raises :class:`UnsupportedDefinition` at once, so that the ASL cannot drift from what
runs locally without a loud failure. What it interprets (JSONPath only):

- **Task** on ``arn:aws:states:::lambda:invoke`` (the result is ``{"ExecutedVersion", "Payload",
  "StatusCode"}``, as the optimized integration's) and ``…:lambda:invoke.waitForTaskToken`` (the result
  is the output ``SendTaskSuccess`` sends), each with ``Parameters`` ``{"FunctionName", "Payload"}``,
  ``ResultSelector``, ``ResultPath``, ``TimeoutSeconds``/``TimeoutSecondsPath``, ``Retry``
  (``ErrorEquals``, ``MaxAttempts``; the intervals are accepted and not waited: nothing on one machine
  recovers by waiting) and ``Catch`` (``ErrorEquals``, ``ResultPath``, ``Next``);
- **Choice** with ``And``, ``Or``, ``Not`` and ``Variable`` with ``StringEquals``, ``NumericEquals``,
  ``BooleanEquals``, ``IsPresent`` or ``IsNull``, and ``Default``;
- **Pass** (``Parameters``, ``Result``, ``ResultPath``), **Succeed**, **Fail**;
- paths ``$``, ``$.a.b`` and the context object's ``$$.Task.Token``, ``$$.Execution.Id`` and the like;
  templates whose ``key.$`` entries take a path (no intrinsic functions).

Errors follow Step Functions: a function that raises fails its task with the exception's type as the
error and Lambda's JSON error document as the cause; ``States.ALL`` matches every error but
``States.Runtime`` (a path that is not there), which fails the execution; ``States.TaskFailed`` every
one but ``States.Timeout``.

The interpreter owns no thread and no clock. :meth:`StateMachine.run` runs an execution's states in the
calling thread until it parks on a task token (``Execution.token``, with the task's timeout in
``Execution.timeout_seconds``) or ends; :meth:`StateMachine.resume` takes the outcome of a parked task (a
``SendTaskSuccess``, ``SendTaskFailure``, or ``States.Timeout`` when the caller's timer fired) and runs on.
Whoever calls them (``parley.local.executor``) runs one call at a time per execution.
"""

from __future__ import annotations

import functools
import json
import re
import secrets
import time
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from parley.errors import ParleyError
from parley.infrastructure.state_machine import INVOKE_RESOURCE, WAIT_FOR_TOKEN_RESOURCE

#: Error names of Step Functions itself.
ALL_ERRORS: Final = "States.ALL"
TASK_FAILED: Final = "States.TaskFailed"
TIMEOUT_ERROR: Final = "States.Timeout"
RUNTIME_ERROR: Final = "States.Runtime"
NO_CHOICE_MATCHED: Final = "States.NoChoiceMatched"
RESULT_PATH_ERROR: Final = "States.ResultPathMatchFailure"
#: Errors no Retry or Catch takes (``States.ALL`` included): they fail the execution.
UNCATCHABLE: Final = frozenset({RUNTIME_ERROR})

RUNNING: Final = "RUNNING"
SUCCEEDED: Final = "SUCCEEDED"
FAILED: Final = "FAILED"
ABORTED: Final = "ABORTED"

_DEFAULT_MAX_ATTEMPTS: Final = 3
#: The fields each state type may have here; anything else is refused.
_FIELDS: Final[Mapping[str, frozenset[str]]] = {
    "Task": frozenset(
        {
            "Type",
            "Comment",
            "Resource",
            "Parameters",
            "ResultSelector",
            "ResultPath",
            "TimeoutSeconds",
            "TimeoutSecondsPath",
            "Retry",
            "Catch",
            "Next",
            "End",
        }
    ),
    "Choice": frozenset({"Type", "Comment", "Choices", "Default"}),
    "Pass": frozenset({"Type", "Comment", "Parameters", "Result", "ResultPath", "Next", "End"}),
    "Succeed": frozenset({"Type", "Comment"}),
    "Fail": frozenset({"Type", "Comment", "Error", "Cause"}),
}
_TOP_FIELDS: Final = frozenset({"Comment", "QueryLanguage", "StartAt", "States"})
_RETRY_FIELDS: Final = frozenset(
    {"ErrorEquals", "IntervalSeconds", "MaxAttempts", "BackoffRate", "MaxDelaySeconds", "JitterStrategy"}
)
_CATCH_FIELDS: Final = frozenset({"ErrorEquals", "ResultPath", "Next"})
_LAMBDA_PARAMETERS: Final = frozenset({"FunctionName", "Payload", "Payload.$"})
#: Choice comparisons: the operand's type, and the test.
_COMPARISONS: Final[Mapping[str, tuple[type | tuple[type, ...], Callable[[Any, Any], bool]]]] = {
    "StringEquals": (str, lambda value, operand: isinstance(value, str) and value == operand),
    "NumericEquals": (
        (int, float),
        lambda value, operand: _is_number(value) and value == operand,
    ),
    "BooleanEquals": (bool, lambda value, operand: isinstance(value, bool) and value == operand),
    "IsNull": (bool, lambda value, operand: (value is None) == operand),
}
_PATH: Final = re.compile(r"\$\$?((?:\.[A-Za-z_][A-Za-z0-9_-]*)*)")


class UnsupportedDefinition(ParleyError, ValueError):
    """The definition uses ASL this interpreter does not run (or is not valid ASL)."""


class ExecutionError(ParleyError):
    """A state's failure, by name: what Retry and Catch match (``{"Error", "Cause"}``)."""

    def __init__(self, error: str, cause: str = "") -> None:
        super().__init__(f"{error}: {cause}" if cause else error)
        self.error = error
        self.cause = cause


@dataclass(frozen=True)
class TaskSucceeded:
    """``SendTaskSuccess``: the parked task's result."""

    output: Any


@dataclass(frozen=True)
class TaskFailed:
    """``SendTaskFailure`` (or ``States.Timeout``: the task's own timeout)."""

    error: str
    cause: str = ""


Outcome = TaskSucceeded | TaskFailed


@dataclass(eq=False, slots=True)
class Execution:
    """One execution: where it is, its state's input, and the token it is parked on (if it is)."""

    arn: str
    name: str
    input: Any
    #: The state it is in (or will run next).
    state: str
    #: That state's input.
    data: Any
    status: str = RUNNING
    #: The task token it waits for (``None``: not parked).
    token: str | None = None
    #: How long the parked task may wait, in seconds (``None``: no timeout).
    timeout_seconds: int | None = None
    #: Attempts made so far per retrier of the current state (``None``: the state is not entered yet).
    attempts: list[int] | None = None
    output: Any = None
    error: str | None = None
    cause: str | None = None
    #: ``(event type, state name or "")`` in order, as ``GetExecutionHistory`` would list them.
    history: list[tuple[str, str]] = field(default_factory=list)


# -- paths and templates ------------------------------------------------------------------------------


class _Missing(Exception):
    pass


@functools.lru_cache(maxsize=256)
def _parse_path(text: str) -> tuple[bool, tuple[str, ...]]:
    """``$.a.b`` → ``(False, ("a", "b"))``; ``$$.Task.Token`` → ``(True, ("Task", "Token"))``."""
    match = _PATH.fullmatch(text) if isinstance(text, str) else None
    if match is None:
        raise UnsupportedDefinition(f"path {text!r}: only $, $.a.b and $$.a.b paths are interpreted")
    return text.startswith("$$"), tuple(key for key in match.group(1).split(".") if key)


def _get(path: str, data: Any, context: Callable[[], Any]) -> Any:
    is_context, keys = _parse_path(path)
    value = context() if is_context else data
    for key in keys:
        if not isinstance(value, dict) or key not in value:
            raise _Missing(path)
        value = value[key]
    return value


def _put(data: Any, path: str | None, value: Any) -> Any:
    """``ResultPath``: ``value`` at ``path`` in a copy of ``data`` (``$``: ``value`` itself; ``None``:
    ``data`` unchanged)."""
    if path is None:
        return data
    _, keys = _parse_path(path)
    if not keys:
        return value
    if not isinstance(data, dict):
        raise ExecutionError(RESULT_PATH_ERROR, f"ResultPath {path} needs an object as the state's input")
    result = dict(data)
    inner = result
    for key in keys[:-1]:
        child = inner.get(key)
        child = dict(child) if isinstance(child, dict) else {}
        inner[key] = child
        inner = child
    inner[keys[-1]] = value
    return result


def _apply(template: Any, data: Any, context: Callable[[], Any]) -> Any:
    """A ``Parameters``/``ResultSelector`` template on ``data``: ``key.$`` entries take the path's value."""
    if isinstance(template, dict):
        result: dict[str, Any] = {}
        for key, value in template.items():
            if key.endswith(".$"):
                try:
                    result[key[:-2]] = _get(value, data, context)
                except _Missing as missing:
                    raise ExecutionError(
                        RUNTIME_ERROR, f"The JSONPath {missing} of field {key!r} could not be found"
                    ) from None
            else:
                result[key] = _apply(value, data, context)
        return result
    if isinstance(template, list):
        return [_apply(value, data, context) for value in template]
    return template


def _check_template(template: Any, where: str) -> None:
    if isinstance(template, dict):
        for key, value in template.items():
            if not isinstance(key, str):
                raise UnsupportedDefinition(f"{where}: keys are strings")
            if key.endswith(".$"):
                if not isinstance(value, str) or not value.startswith("$"):
                    raise UnsupportedDefinition(
                        f"{where}: {key} takes a path (no intrinsic functions here), not {value!r}"
                    )
                _parse_path(value)
            else:
                _check_template(value, f"{where}.{key}")
    elif isinstance(template, list):
        for index, value in enumerate(template):
            _check_template(value, f"{where}[{index}]")


def _uses_path(template: Any, path: str) -> bool:
    if isinstance(template, dict):
        return any(
            (key.endswith(".$") and value == path) or _uses_path(value, path)
            for key, value in template.items()
        )
    if isinstance(template, list):
        return any(_uses_path(value, path) for value in template)
    return False


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


# -- the states -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Retrier:
    errors: frozenset[str]
    max_attempts: int


@dataclass(frozen=True)
class _Catcher:
    errors: frozenset[str]
    result_path: str | None
    next: str


@dataclass(frozen=True)
class _State:
    name: str
    type: str
    raw: Mapping[str, Any]
    next: str | None = None
    retry: tuple[_Retrier, ...] = ()
    catch: tuple[_Catcher, ...] = ()
    result_path: str | None = "$"

    @property
    def entered(self) -> str:
        return _EVENTS[self.type][0]

    @property
    def exited(self) -> str:
        return _EVENTS[self.type][1]


#: History event types, one string each (an execution's history keeps references, not copies).
_EVENTS: Final = {kind: (f"{kind}StateEntered", f"{kind}StateExited") for kind in _FIELDS}
_ENDED: Final = {status: f"Execution{status.title()}" for status in (SUCCEEDED, FAILED, ABORTED)}


def _matches(errors: frozenset[str], error: str) -> bool:
    if error in UNCATCHABLE:
        return False
    if error in errors or ALL_ERRORS in errors:
        return True
    return TASK_FAILED in errors and error != TIMEOUT_ERROR


class StateMachine:
    """An ASL state machine (see the module's docstring for what it interprets).

    ``invoke(function_name, payload)`` runs a Lambda function (``FunctionName`` as the definition gives
    it) and returns its result; an exception is the function's error. ``on_token(execution, token)`` is
    told each task token before the function that receives it is invoked, so that a ``SendTaskSuccess``
    during that invocation finds it.
    """

    def __init__(
        self,
        definition: Mapping[str, Any],
        *,
        arn: str,
        invoke: Callable[[str, Any], Any],
        on_token: Callable[[Execution, str], None] = lambda execution, token: None,
    ) -> None:
        self.arn = arn
        self.name = arn.rpartition(":")[2]
        self._invoke = invoke
        self._on_token = on_token
        self._states = _checked(definition)
        self.start_at: str = definition["StartAt"]

    # -- executions -----------------------------------------------------------------------------------

    def start(self, arn: str, name: str, input_value: Any) -> Execution:
        """A new execution at its first state; :meth:`run` runs it."""
        execution = Execution(arn=arn, name=name, input=input_value, state=self.start_at, data=input_value)
        execution.history.append(("ExecutionStarted", ""))
        return execution

    def run(self, execution: Execution) -> None:
        """Run states until the execution parks on a task token or ends (nothing if it is parked)."""
        while execution.status == RUNNING and execution.token is None:
            state = self._states[execution.state]
            try:
                if execution.attempts is None:
                    execution.attempts = [0] * len(state.retry)
                    execution.history.append((state.entered, state.name))
                self._step(execution, state)
            except ExecutionError as failure:
                self._end(execution, FAILED, error=failure.error, cause=failure.cause)

    def resume(self, execution: Execution, token: str, outcome: Outcome) -> bool:
        """End the parked task of ``token`` with ``outcome`` and run on; ``False`` (and nothing done) when
        the execution does not wait on that token (any more)."""
        if execution.status != RUNNING or execution.token is None or execution.token != token:
            return False
        state = self._states[execution.state]
        execution.token = None
        execution.timeout_seconds = None
        try:
            if isinstance(outcome, TaskSucceeded):
                execution.history.append(("TaskSucceeded", state.name))
                self._task_done(execution, state, outcome.output)
            else:
                kind = "TaskTimedOut" if outcome.error == TIMEOUT_ERROR else "TaskFailed"
                execution.history.append((kind, state.name))
                self._task_failed(execution, state, ExecutionError(outcome.error, outcome.cause))
        except ExecutionError as failure:
            self._end(execution, FAILED, error=failure.error, cause=failure.cause)
        self.run(execution)
        return True

    def abort(self, execution: Execution) -> None:
        """``StopExecution``: the execution ends where it is (no state after it runs)."""
        if execution.status == RUNNING:
            execution.token = None
            execution.timeout_seconds = None
            self._end(execution, ABORTED)

    # -- states -------------------------------------------------------------------------------------------

    def _context(self, execution: Execution, state: _State, token: str | None = None) -> Callable[[], Any]:
        def context() -> Any:
            entered: dict[str, Any] = {"Name": state.name, "RetryCount": sum(execution.attempts or [])}
            built: dict[str, Any] = {
                "Execution": {"Id": execution.arn, "Name": execution.name, "Input": execution.input},
                "State": entered,
                "StateMachine": {"Id": self.arn, "Name": self.name},
            }
            if token is not None:
                built["Task"] = {"Token": token}
            return built

        return context

    def _step(self, execution: Execution, state: _State) -> None:
        data = execution.data
        if state.type == "Task":
            self._task(execution, state)
        elif state.type == "Pass":
            context = self._context(execution, state)
            if "Parameters" in state.raw:
                result = _apply(state.raw["Parameters"], data, context)
            else:
                result = state.raw.get("Result", data)
            self._leave(execution, state, _put(data, state.result_path, result), state.next)
        elif state.type == "Choice":
            for rule in state.raw["Choices"]:
                if self._holds(rule, data):
                    self._leave(execution, state, data, rule["Next"])
                    return
            if "Default" not in state.raw:
                raise ExecutionError(NO_CHOICE_MATCHED, f"No Choice rule of {state.name!r} matched")
            self._leave(execution, state, data, state.raw["Default"])
        elif state.type == "Succeed":
            self._leave(execution, state, data, None)
        else:  # Fail
            self._end(execution, FAILED, error=state.raw.get("Error", ""), cause=state.raw.get("Cause", ""))

    def _task(self, execution: Execution, state: _State) -> None:
        waits = state.raw["Resource"] == WAIT_FOR_TOKEN_RESOURCE
        token = secrets.token_urlsafe(32) if waits else None
        parameters = _apply(state.raw["Parameters"], execution.data, self._context(execution, state, token))
        payload = parameters.get("Payload", {})
        timeout = self._timeout(execution, state)
        execution.history.append(("TaskScheduled", state.name))
        execution.history.append(("TaskStarted", state.name))
        if token is not None:
            execution.token = token
            execution.timeout_seconds = timeout
            self._on_token(execution, token)
        started = time.monotonic()
        try:
            result = self._invoke(parameters["FunctionName"], payload)
        except Exception as exc:
            execution.token = None
            execution.timeout_seconds = None
            failure = function_error(exc)
            execution.history.append(("TaskFailed", state.name))
            self._task_failed(execution, state, failure)
            return
        if token is not None:
            execution.history.append(("TaskSubmitted", state.name))
            return  # parked: resume() takes it on
        if timeout is not None and time.monotonic() - started > timeout:
            execution.history.append(("TaskTimedOut", state.name))
            self._task_failed(
                execution, state, ExecutionError(TIMEOUT_ERROR, "The task ran past its timeout")
            )
            return
        execution.history.append(("TaskSucceeded", state.name))
        self._task_done(
            execution, state, {"ExecutedVersion": "$LATEST", "Payload": result, "StatusCode": 200}
        )

    def _timeout(self, execution: Execution, state: _State) -> int | None:
        if "TimeoutSeconds" in state.raw:
            return int(state.raw["TimeoutSeconds"])
        if "TimeoutSecondsPath" not in state.raw:
            return None
        path = state.raw["TimeoutSecondsPath"]
        try:
            seconds = _get(path, execution.data, self._context(execution, state))
        except _Missing:
            raise ExecutionError(RUNTIME_ERROR, f"The TimeoutSecondsPath {path} could not be found") from None
        if not _is_number(seconds) or seconds != int(seconds) or seconds < 1:
            raise ExecutionError(RUNTIME_ERROR, f"The TimeoutSecondsPath {path} is not a positive integer")
        return int(seconds)

    def _task_done(self, execution: Execution, state: _State, result: Any) -> None:
        if "ResultSelector" in state.raw:
            result = _apply(state.raw["ResultSelector"], result, self._context(execution, state))
        self._leave(execution, state, _put(execution.data, state.result_path, result), state.next)

    def _task_failed(self, execution: Execution, state: _State, failure: ExecutionError) -> None:
        attempts = execution.attempts if execution.attempts is not None else [0] * len(state.retry)
        for index, retrier in enumerate(state.retry):
            if _matches(retrier.errors, failure.error):
                if attempts[index] < retrier.max_attempts:
                    attempts[index] += 1
                    return  # the task runs again (its intervals are not waited locally)
                break  # the first retrier that matches decides: its attempts are spent
        for catcher in state.catch:
            if _matches(catcher.errors, failure.error):
                output = _put(
                    execution.data, catcher.result_path, {"Error": failure.error, "Cause": failure.cause}
                )
                self._leave(execution, state, output, catcher.next)
                return
        raise failure

    def _leave(self, execution: Execution, state: _State, output: Any, next_state: str | None) -> None:
        execution.history.append((state.exited, state.name))
        execution.attempts = None
        if next_state is None:
            self._end(execution, SUCCEEDED, output=output)
            return
        execution.state = next_state
        execution.data = output

    def _end(
        self,
        execution: Execution,
        status: str,
        *,
        output: Any = None,
        error: str | None = None,
        cause: str | None = None,
    ) -> None:
        execution.status = status
        execution.output = output
        execution.error = error
        execution.cause = cause
        execution.token = None
        execution.attempts = None
        execution.data = None
        execution.history.append((_ENDED[status], ""))

    def _holds(self, rule: Mapping[str, Any], data: Any) -> bool:
        if "And" in rule:
            return all(self._holds(inner, data) for inner in rule["And"])
        if "Or" in rule:
            return any(self._holds(inner, data) for inner in rule["Or"])
        if "Not" in rule:
            return not self._holds(rule["Not"], data)
        path = rule["Variable"]
        try:
            value = _get(path, data, lambda: {})
            present = True
        except _Missing:
            value, present = None, False
        if "IsPresent" in rule:
            return present is rule["IsPresent"]
        if not present:
            raise ExecutionError(RUNTIME_ERROR, f"Invalid path {path!r}: the Choice's Variable is not there")
        (operator,) = (key for key in rule if key in _COMPARISONS)
        return _COMPARISONS[operator][1](value, rule[operator])


def function_error(exc: BaseException) -> ExecutionError:
    """A Lambda function's failure as Step Functions reports it: the error is the exception's type, the
    cause Lambda's error document (``errorMessage``, ``errorType``, ``stackTrace``)."""
    if isinstance(exc, ExecutionError):
        return exc
    error = type(exc).__name__
    document = {
        "errorMessage": str(exc),
        "errorType": error,
        "stackTrace": traceback.format_tb(exc.__traceback__),
    }
    return ExecutionError(error, json.dumps(document))


# -- checking a definition -------------------------------------------------------------------------------


def _checked(definition: Mapping[str, Any]) -> dict[str, _State]:
    """Every state, checked; raises :class:`UnsupportedDefinition` for anything not interpreted."""
    extra = set(definition) - _TOP_FIELDS
    if extra:
        raise UnsupportedDefinition(f"top-level fields not interpreted: {sorted(extra)}")
    if definition.get("QueryLanguage", "JSONPath") != "JSONPath":
        raise UnsupportedDefinition("only JSONPath is interpreted, not " + str(definition["QueryLanguage"]))
    raw_states = definition.get("States")
    if not isinstance(raw_states, Mapping) or not raw_states:
        raise UnsupportedDefinition("States is an object of at least one state")
    states = {name: _checked_state(name, raw) for name, raw in raw_states.items()}
    targets = [("StartAt", definition.get("StartAt"))]
    for state in states.values():
        targets.append((state.name, state.next))
        targets += [(state.name, catcher.next) for catcher in state.catch]
        if state.type == "Choice":
            targets += [(state.name, rule["Next"]) for rule in state.raw["Choices"]]
            targets.append((state.name, state.raw.get("Default")))
    for where, target in targets:
        if target is not None and target not in states:
            raise UnsupportedDefinition(f"{where}: no state named {target!r}")
    if definition.get("StartAt") is None:
        raise UnsupportedDefinition("StartAt names the first state")
    return states


def _checked_state(name: str, raw: Any) -> _State:
    if not isinstance(raw, Mapping):
        raise UnsupportedDefinition(f"state {name!r} is not an object")
    kind = raw.get("Type")
    if not isinstance(kind, str) or kind not in _FIELDS:
        raise UnsupportedDefinition(f"state {name!r}: type {kind!r} is not interpreted")
    extra = set(raw) - _FIELDS[kind]
    if extra:
        raise UnsupportedDefinition(f"state {name!r}: fields not interpreted: {sorted(extra)}")
    where = f"state {name!r}"
    next_state: str | None = None
    if kind in ("Task", "Pass"):
        if ("Next" in raw) == bool(raw.get("End")):
            raise UnsupportedDefinition(f"{where}: exactly one of Next and End")
        next_state = raw.get("Next")
    result_path = raw.get("ResultPath", "$")
    if result_path is not None:
        _parse_path(result_path)
        if result_path.startswith("$$"):
            raise UnsupportedDefinition(f"{where}: ResultPath cannot name the context object")
    if "Parameters" in raw:
        _check_template(raw["Parameters"], f"{where}.Parameters")
    if kind == "Task":
        return _checked_task(name, raw, next_state, result_path)
    if kind == "Choice":
        choices = raw.get("Choices")
        if not isinstance(choices, list) or not choices:
            raise UnsupportedDefinition(f"{where}: Choices is a list of at least one rule")
        for index, rule in enumerate(choices):
            _check_rule(rule, f"{where}.Choices[{index}]", top=True)
    return _State(name=name, type=kind, raw=raw, next=next_state, result_path=result_path)


def _checked_task(
    name: str, raw: Mapping[str, Any], next_state: str | None, result_path: str | None
) -> _State:
    where = f"state {name!r}"
    resource = raw.get("Resource")
    if resource not in (INVOKE_RESOURCE, WAIT_FOR_TOKEN_RESOURCE):
        raise UnsupportedDefinition(f"{where}: resource {resource!r} is not interpreted")
    parameters = raw.get("Parameters")
    if not isinstance(parameters, Mapping) or not isinstance(parameters.get("FunctionName"), str):
        raise UnsupportedDefinition(f"{where}: Parameters names the function (FunctionName)")
    extra = set(parameters) - _LAMBDA_PARAMETERS
    if extra:
        raise UnsupportedDefinition(f"{where}: Lambda parameters not interpreted: {sorted(extra)}")
    if resource == WAIT_FOR_TOKEN_RESOURCE and not _uses_path(parameters, "$$.Task.Token"):
        raise UnsupportedDefinition(f"{where}: a waitForTaskToken task passes $$.Task.Token")
    if "ResultSelector" in raw:
        _check_template(raw["ResultSelector"], f"{where}.ResultSelector")
    if "TimeoutSeconds" in raw and "TimeoutSecondsPath" in raw:
        raise UnsupportedDefinition(f"{where}: TimeoutSeconds or TimeoutSecondsPath, not both")
    if "TimeoutSeconds" in raw and (not _is_number(raw["TimeoutSeconds"]) or raw["TimeoutSeconds"] < 1):
        raise UnsupportedDefinition(f"{where}: TimeoutSeconds is a positive integer")
    if "TimeoutSecondsPath" in raw:
        _parse_path(raw["TimeoutSecondsPath"])
    retry: list[_Retrier] = []
    for index, entry in enumerate(raw.get("Retry", [])):
        errors = _checked_errors(entry, _RETRY_FIELDS, f"{where}.Retry[{index}]")
        attempts = entry.get("MaxAttempts", _DEFAULT_MAX_ATTEMPTS)
        if not isinstance(attempts, int) or isinstance(attempts, bool) or attempts < 0:
            raise UnsupportedDefinition(f"{where}.Retry[{index}]: MaxAttempts is an integer, 0 or more")
        retry.append(_Retrier(errors, attempts))
    catch: list[_Catcher] = []
    for index, entry in enumerate(raw.get("Catch", [])):
        errors = _checked_errors(entry, _CATCH_FIELDS, f"{where}.Catch[{index}]")
        path = entry.get("ResultPath", "$")
        if path is not None:
            _parse_path(path)
        if not isinstance(entry.get("Next"), str):
            raise UnsupportedDefinition(f"{where}.Catch[{index}]: Next names a state")
        catch.append(_Catcher(errors, path, entry["Next"]))
    return _State(
        name=name,
        type="Task",
        raw=raw,
        next=next_state,
        retry=tuple(retry),
        catch=tuple(catch),
        result_path=result_path,
    )


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
    if entry.get("JitterStrategy", "FULL") not in ("FULL", "NONE"):
        raise UnsupportedDefinition(f"{where}: JitterStrategy is FULL or NONE")
    return frozenset(errors)


def _check_rule(rule: Any, where: str, *, top: bool) -> None:
    if not isinstance(rule, Mapping):
        raise UnsupportedDefinition(f"{where} is not an object")
    allowed = {"Next", "Comment"} if top else {"Comment"}
    if top and not isinstance(rule.get("Next"), str):
        raise UnsupportedDefinition(f"{where}: a top-level rule names its Next state")
    body = {key: value for key, value in rule.items() if key not in allowed}
    if set(body) in ({"And"}, {"Or"}):
        (inner,) = body.values()
        if not isinstance(inner, list) or not inner:
            raise UnsupportedDefinition(f"{where}: And/Or take a list of rules")
        for index, nested in enumerate(inner):
            _check_rule(nested, f"{where}[{index}]", top=False)
        return
    if set(body) == {"Not"}:
        _check_rule(body["Not"], f"{where}.Not", top=False)
        return
    operators = set(body) - {"Variable"}
    if "Variable" not in body or len(operators) != 1:
        raise UnsupportedDefinition(f"{where}: a rule is And, Or, Not, or a Variable with one comparison")
    (operator,) = operators
    _parse_path(body["Variable"])
    if body["Variable"].startswith("$$"):
        raise UnsupportedDefinition(f"{where}: a Variable on the context object is not interpreted")
    if operator == "IsPresent":
        expected: type | tuple[type, ...] = bool
    elif operator in _COMPARISONS:
        expected = _COMPARISONS[operator][0]
    else:
        raise UnsupportedDefinition(f"{where}: the comparison {operator} is not interpreted")
    operand = body[operator]
    if not isinstance(operand, expected) or (expected is not bool and isinstance(operand, bool)):
        raise UnsupportedDefinition(f"{where}: {operator} takes a {expected}, not {operand!r}")
