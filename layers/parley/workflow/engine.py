"""What a compiled state machine and Parley's ``workflow`` entry function say to each other
(``workflow-format.md``, "Calling a function", "On AWS").

The compiler (``parley.workflow.compiler``) writes machines that follow this; the entry
(``parley.executions.workflow``) answers them; the local interpreter runs them as Step Functions does.

**The execution's input**: ``{"run": {"org", "playbook", "run_id"}, "input": <the run's input>,
"depth": <calls above this run, 0 for a run a person started>}``.

**A call** (``call: run_definition``) is a Task on :data:`WAIT_FOR_TOKEN_RESOURCE` whose ``Arguments``
are ``{"FunctionName": ENTRY_FUNCTION, "Payload": {"action": "call", "token": <the task token>,
"run": <the workflow's run key>, "depth": <its depth>, "task": <the task's reference>, "attempt":
<a string that changes each time a retry runs the task again>, "type", "name", "input"}}``. The entry
starts the child run and keeps the token on it; the child's ending answers the token:
``SendTaskSuccess`` with ``{"output": <the child's output>}``, or ``SendTaskFailure`` with the error
:data:`ERROR_NAME` and, as the cause, the workflow error as JSON (``parley.workflow.errors``).

**A raised error** is a Fail state with the error :data:`ERROR_NAME` and the workflow error as JSON for
its cause. Errors of Step Functions itself are read as the page's errors: ``States.Timeout`` is
``timeout`` (408), ``States.QueryEvaluationError`` is ``expression`` (400), any other is ``runtime``
(500).

**An ending without the end**: ``{"action": "ended", "run": <run key>, "status", "error", "cause"}``
when Step Functions itself ended the execution (``FAILED``, ``TIMED_OUT``): the entry ends a run that
is still started as the ``runtime`` error says, never leaving it started.

**The end**: an execution ends through one Task on :data:`INVOKE_RESOURCE` with ``{"action": "end",
"run": <run key>, "output": <the run's output>}`` or ``{"action": "end", "run": <run key>, "error":
<the workflow error as an object>}``; the entry writes the run's ending (idempotent). Every Task
outside any ``try`` catches into it, and so does a ``raise`` nothing catches. What cannot be caught
there without a transition of its own on every run — a Pass's or a Choice's expression failing outside
any ``try`` — fails the execution instead (``States.QueryEvaluationError``), and the run ends from that
failure as an ending without the end (above), as the ``expression`` error.

**A listen** (``listen``) is a Task on :data:`WAIT_FOR_TOKEN_RESOURCE` whose payload is ``{"action":
"listen", "token", "run", "task", "attempt", "to": {"one": <filter>} | {"any": [<filter>…]} | {"all":
[<filter>…]}, "read": "data" | "envelope"}``; a filter is ``{"with": {"type"?, "source"?, "subject"?,
"data"?}}`` as written in the document (a value that is an expression is kept as its ``${ … }`` text: the
entry evaluates it over the event's attribute as ``$data``). The entry takes kept events that match, or
keeps the token with the filters; a sent or emitted event that completes them answers the token with
``{"output": <the events' data, or the whole events with read: envelope, as a list>}``.

**An emit** (``emit``) is a Task on :data:`INVOKE_RESOURCE` with ``{"action": "emit", "run", "task",
"attempt", "event": {"type", "source", "subject"?, "data"?}}`` (evaluated); the entry records
``event_published`` once per run, task and attempt, and hands the event to the playbook's listens whose
filter writes its ``type`` out. Its result is ignored: the task's output is its input.

**A deadline** (a task's ``timeout`` passed while a call waited): a Task on :data:`INVOKE_RESOURCE` with
``{"action": "deadline", "run", "task", "attempt"}`` before the ``timeout`` error is raised: the entry
cancels the called run (kind ``deadline``) if it is still started.

**Stopped branches** (a competing ``fork`` won by one branch: Step Functions stops the others and tells
no one): a Task on :data:`INVOKE_RESOURCE` with ``{"action": "stopped", "run", "task": <the fork's
reference>}`` after the win: the entry cancels (kind ``parent_ended``) every run a task within the fork
called that is still started.

``ENTRY_FUNCTION`` is a placeholder in the saved ``state_machine`` (what a caller sees); the runtime
puts the entry function's ARN in its place when it creates the state machine.
"""

from __future__ import annotations

from typing import Any, Final

#: The one ASL error name every workflow error travels under; its cause is the error as JSON.
ERROR_NAME: Final = "Parley.Error"
#: The placeholder of the workflow entry function's ARN in a compiled machine.
ENTRY_FUNCTION: Final = "${ParleyWorkflowFunctionArn}"
WAIT_FOR_TOKEN_RESOURCE: Final = "arn:aws:states:::lambda:invoke.waitForTaskToken"
INVOKE_RESOURCE: Final = "arn:aws:states:::lambda:invoke"
#: The entry's actions.
CALL_ACTION: Final = "call"
END_ACTION: Final = "end"
LISTEN_ACTION: Final = "listen"
EMIT_ACTION: Final = "emit"
DEADLINE_ACTION: Final = "deadline"
STOPPED_ACTION: Final = "stopped"
#: Not from the machine: the execution ended without its end task (Step Functions failed it: a payload
#: past 256 KiB, 25,000 history events, its own timeout). On AWS a rule on the execution's status change
#: invokes the entry; locally the executor does.
ENDED_ACTION: Final = "ended"
#: Step Functions' own errors, as the page reads them.
TIMEOUT_ERROR: Final = "States.Timeout"
EXPRESSION_ERROR: Final = "States.QueryEvaluationError"
#: Calls above a run (``workflow-format.md``, "Bounds").
MAX_DEPTH: Final = 8


def execution_input(run: dict[str, str], input_value: Any, depth: int) -> dict[str, Any]:
    """A workflow execution's input."""
    return {"run": dict(run), "input": input_value, "depth": depth}


def with_entry(definition: Any, entry_arn: str) -> Any:
    """The machine with the entry function's ARN in place of :data:`ENTRY_FUNCTION` (every string)."""
    if isinstance(definition, dict):
        return {key: with_entry(value, entry_arn) for key, value in definition.items()}
    if isinstance(definition, list):
        return [with_entry(value, entry_arn) for value in definition]
    if definition == ENTRY_FUNCTION:
        return entry_arn
    return definition
