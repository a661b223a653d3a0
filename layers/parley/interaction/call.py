"""Running a function that asks a system (``interaction-format.md``: "Asking a system", "`call`", "How a
run ends", "The run's history", "Bounds"; ``reasoning-format.md``: "When a tool-calling run cannot
finish").

A run makes one call, synchronously, inside the request that runs it:

1. ``with`` is rendered typed over ``input``, ``today`` and ``now`` (a text that is one ``{{ }}`` sends
   the value itself); a structure among text, or arguments over 16 KiB as JSON: ``409 unworkable``.
2. The server must serve the playbook and allow the tool (``503 unavailable``, kind
   ``tool_not_offered``); the server is opened and its tools listed (``tool_server_failed`` with its
   ``because``); the tool must be listed (``tool_not_offered``, ``tool_not_listed``); arguments its
   ``input_schema`` refuses are ``unworkable``. Until here nothing was sent: the run can run again.
3. ``tool_call_started`` is written with the run, ``started`` and holding the tool it calls, *before*
   the call is sent (the client's ``before_call``); from then on the run id never runs again unless it
   succeeded (``409 tools_called``).
4. The call: the client's bounds (10 s to open, 10 to list, 30 to respond, then closing) keep it within
   the 70 seconds of "Calls in one run of a function with ``call``". A failure once sent, or an
   answer with ``isError``, ends a read-only tool ``unavailable`` as ``tools_unfinished``, any other
   ``conflict`` as ``effect_unknown`` (answered under the problem types of those names, status 503 and
   409), ``because`` ``server_failed`` or ``tool_error``. A
   429 or a refused key on the call is the server refusing it: ``tool_server_failed``, and the run may
   run again. The tool refusing the arguments (``-32602``) is ``unworkable``.
5. The part of the answer at ``read`` must exist, take at most 1 MiB as JSON and 512 levels, and match
   ``output.schema`` (else ``unworkable``; for a tool not read-only the detail says that running again
   calls the tool again); it is the run's output.

Each ending is written on the run with the call's end (``tool_call_answered`` or ``tool_call_failed``)
and ``run_succeeded`` or ``run_rejected``, in one transaction.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any, Final

from parley.clock import format_time
from parley.errors import ErrorEntry, Problem, capped_errors
from parley.runs import events
from parley.runs.events import new_event_id
from parley.runs.model import CalledTool, Event, Rejection, Run, invalid_input

if TYPE_CHECKING:
    from parley.config import ToolServer
    from parley.definitions.model import PlaybookRef
    from parley.ports.runtime import Runtime
    from parley.ports.tools import ListedTool, ToolAnswer, ToolServerFailure
    from parley.runs.store import DynamoRunStore
    from parley.tools.servers import HeaderSecrets, ResolvedServer

#: "Bounds": the arguments of a call, as JSON.
ARGUMENTS_MAX_BYTES: Final = 16 * 1024
#: "Bounds": what a function's ``read`` takes.
READ_MAX_BYTES: Final = 1024 * 1024
READ_MAX_DEPTH: Final = 512
#: "Bounds": one call within 70 seconds; the client's own bounds (open, list, respond, close) sum below.
CALL_WITHIN_SECONDS: Final = 70
#: How much of a tool's error text a rejection quotes.
ERROR_TEXT_MAX_CHARS: Final = 500


@dataclass(frozen=True)
class CallBlock:
    """A function's ``call``: ``arguments`` is ``with`` as written; ``first_line`` is its line."""

    server: str
    tool: str
    arguments: Any
    read: str | None
    first_line: int


def render_arguments(block: CallBlock, input_value: dict[str, Any], moment: datetime) -> tuple[Any, int]:
    """``with`` rendered typed, and its size as JSON. ``invalid_input`` for a value the input lacks;
    ``unworkable`` for a structure among text or more than 16 KiB."""
    from parley.documents.json_schema import json_size
    from parley.templates.render import RenderFailure, render_typed

    data = {"input": input_value, "today": moment.strftime("%Y-%m-%d"), "now": format_time(moment)}
    try:
        arguments = render_typed(block.arguments, data, first_line=block.first_line)
    except RenderFailure as failure:
        if failure.structure_among_text:
            raise unworkable(
                f"{failure}: an argument of call.with renders a list or an object among text. Write the "
                "argument as one {{ }} to send the value itself."
            ) from None
        raise invalid_input([ErrorEntry(failure.pointer or "/input", str(failure))]) from None
    size = json_size(arguments)
    if size > ARGUMENTS_MAX_BYTES:
        raise unworkable(
            f"The arguments of call.with render {size:,} bytes as JSON; a call sends at most "
            f"{ARGUMENTS_MAX_BYTES:,} bytes (16 KiB). Nothing was sent."
        )
    return arguments, size


def unworkable(detail: str, errors: list[ErrorEntry] | None = None) -> Problem:
    return Problem("conflict", detail, kind="unworkable", errors=capped_errors(errors or []))


@dataclass
class _Sent:
    """What ``before_call`` wrote: the run as started, and the tool as listed."""

    run: Run
    tool: ListedTool


class CallRun:
    """One run's call of its tool. ``rejected`` records a rejection before anything was sent (the
    service's, so that a run refused before sending may run again under its id)."""

    def __init__(
        self,
        runtime: Runtime,
        store: DynamoRunStore,
        secrets: HeaderSecrets,
        playbook: PlaybookRef,
        *,
        rejected: Callable[[Problem], Problem],
    ) -> None:
        self._runtime = runtime
        self._store = store
        self._secrets = secrets
        self._playbook = playbook
        self._rejected = rejected

    def run(
        self,
        run: Run,
        block: CallBlock,
        output_schema: Any,
        arguments: Any,
        size: int,
        replacing: int | None,
    ) -> Run:
        """Make the call and end the run: the run ``succeeded``, or the ending's problem raised."""
        from parley.ports.tools import ToolNotOffered, ToolServerFailure
        from parley.tools.recording import server_failed, started_data
        from parley.tools.servers import SecretUnavailable, check_allowed, server_serving
        from parley.tools.service import schema_errors

        try:
            server = server_serving(self._runtime.operator, self._playbook, block.server)
            check_allowed(server, block.tool)
            resolved = self._secrets.resolve(server)
        except ToolNotOffered as not_offered:
            raise self._rejected(_not_offered(not_offered.because, not_offered.detail)) from None
        except SecretUnavailable as unavailable:
            refused = Problem("unavailable", str(unavailable), kind="tool_server_failed", because="failing")
            raise self._rejected(refused) from None
        call_id = str(uuid.uuid4())
        sent: list[_Sent] = []

        def before_call(tool: ListedTool) -> None:
            errors = schema_errors(arguments, tool.input_schema)
            if errors:
                raise unworkable(
                    f"The arguments of call.with do not match the input_schema of {tool.name!r}: "
                    f"{errors[0].pointer}: {errors[0].detail}. Nothing was sent.",
                    errors,
                )
            started = replace(run, called=CalledTool(server.name, tool.name, tool.read_only))
            data = started_data(server, resolved, call_id, tool, arguments, size)
            event = _event(events.TOOL_CALL_STARTED, self._runtime.clock.now(), run.run_id, data)
            self._store.record_run(self._playbook, started, [event], replacing=replacing)  # RunTaken rises
            sent.append(_Sent(started, tool))

        try:
            answer = self._runtime.tool_client.call_tool(
                resolved.address, block.tool, arguments, before_call=before_call
            )
        except ToolNotOffered as not_offered:
            raise self._rejected(_not_offered(not_offered.because, not_offered.detail)) from None
        except ToolServerFailure as failure:
            if not sent:
                raise self._rejected(server_failed(failure, resolved)) from None
            raise self._failed(sent[0], server, resolved, call_id, failure) from None
        except Problem as problem:
            if sent:  # pragma: no cover - before_call raises its problems before it writes
                raise
            raise self._rejected(problem) from None
        return self._answered(sent[0], server, resolved, call_id, answer, block, output_schema)

    # --- endings -----------------------------------------------------------------------------------

    def _failed(
        self,
        sent: _Sent,
        server: ToolServer,
        resolved: ResolvedServer,
        call_id: str,
        failure: ToolServerFailure,
    ) -> Problem:
        from parley.tools.recording import failed_data, refused_call, server_failed

        run = sent.run
        if refused_call(failure):
            problem = server_failed(failure, resolved)
            run = replace(run, called=None)  # the server refused the call: the tool did not run
        elif failure.arguments_refused:
            problem = unworkable(
                f"{resolved.scrub(failure.detail)} The tool {sent.tool.name!r} refused the arguments of "
                "call.with; check them against its input_schema (introspect)." + _again(sent.tool)
            )
        else:
            problem = _unfinished(sent.tool, server.name, resolved.scrub(failure.detail), "server_failed")
        data = failed_data(server, resolved, call_id, sent.tool.name, failure)
        return self._end(run, problem, [(events.TOOL_CALL_FAILED, data)])

    def _answered(
        self,
        sent: _Sent,
        server: ToolServer,
        resolved: ResolvedServer,
        call_id: str,
        answer: ToolAnswer,
        block: CallBlock,
        output_schema: Any,
    ) -> Run:
        from parley.documents.json_schema import json_bounds_errors, validate_instance
        from parley.documents.pointers import resolve_pointer
        from parley.tools.recording import answered_data

        answered = (events.TOOL_CALL_ANSWERED, answered_data(server, resolved, call_id, answer))
        tool = sent.tool
        if answer.is_error:
            words = resolved.scrub(answer.text or "")[:ERROR_TEXT_MAX_CHARS]
            said = f" It said: {words}" if words else ""
            detail = f"The tool {tool.name!r} of the tool server {server.name!r} returned an error.{said}"
            raise self._end(sent.run, _unfinished(tool, server.name, detail, "tool_error"), [answered])
        pointer = block.read or ""
        shown = f"at {pointer!r}" if pointer else "as a whole"
        if answer.answer is None:
            problem = unworkable(f"The answer of {tool.name!r} has nothing to read." + _again(tool))
            raise self._end(sent.run, problem, [answered])
        found, part = resolve_pointer(resolved.scrub(answer.answer), pointer)
        if not found:
            problem = unworkable(
                f"The answer of {tool.name!r} holds nothing where read points ({pointer!r}); call execute to "
                "see what the tool returns and point read at a part of it." + _again(tool)
            )
            raise self._end(sent.run, problem, [answered])
        place = "/answer" + pointer
        bounds = json_bounds_errors(
            part, place, max_bytes=READ_MAX_BYTES, max_depth=READ_MAX_DEPTH, what="The part read"
        )
        if bounds:
            problem = unworkable(
                f"The part of the answer {shown} is more than a run may record: {bounds[0].detail} (1 MiB "
                f"as JSON, {READ_MAX_DEPTH} levels)." + _again(tool),
                bounds,
            )
            raise self._end(sent.run, problem, [answered])
        errors = validate_instance(part, output_schema, place)
        if errors:
            problem = unworkable(
                f"The part of the answer {shown} does not match output.schema: {errors[0].pointer}: "
                f"{errors[0].detail}" + _again(tool),
                errors,
            )
            raise self._end(sent.run, problem, [answered])
        now = self._runtime.clock.now()
        done = replace(sent.run, status="succeeded", output=part, finished_at=format_time(now))
        succeeded = _event(events.RUN_SUCCEEDED, now, done.run_id, {"output": part})
        started_answered = _event(answered[0], now, done.run_id, answered[1])
        self._store.end_run(self._playbook, done, [started_answered, succeeded])
        return done

    def _end(self, run: Run, problem: Problem, ends: list[tuple[str, dict[str, Any]]]) -> Problem:
        """Write the call's end and the run's rejection; the problem to raise."""
        now = self._runtime.clock.now()
        rejection = Rejection.of(problem)
        ended = replace(run, status="rejected", rejection=rejection, finished_at=format_time(now))
        written = [_event(kind, now, run.run_id, data) for kind, data in ends]
        written.append(_event(events.RUN_REJECTED, now, run.run_id, {"rejection": rejection.as_json()}))
        self._store.end_run(self._playbook, ended, written)
        return problem


# --- helpers ---------------------------------------------------------------------------------------------


def _not_offered(because: str, detail: str) -> Problem:
    return Problem("unavailable", f"{detail} Nothing was sent.", kind="tool_not_offered", because=because)


def _unfinished(tool: ListedTool, server: str, detail: str, because: str) -> Problem:
    if tool.read_only:
        return Problem(
            "tools_unfinished",
            f"{detail} The call of {tool.name!r} on {server!r} was sent and did not finish; the server marks "
            "the tool read-only, so a new run under a new run id may call it again.",
            kind="tools_unfinished",
            because=because,
        )
    return Problem(
        "effect_unknown",
        f"{detail} The call of {tool.name!r} on {server!r} was sent and the tool is not marked read-only, "
        "so it may have changed something; check the run's history and the external system before "
        "running the function again under a new run id.",
        kind="effect_unknown",
        because=because,
    )


def _again(tool: ListedTool) -> str:
    if tool.read_only:
        return ""
    return (
        f" The tool {tool.name!r} is not marked read-only and was called: running the function again calls "
        "the tool again."
    )


def _event(event_type: str, moment: datetime, run_id: str, data: dict[str, Any]) -> Event:
    return Event(new_event_id(event_type, moment), event_type, format_time(moment), run_id, data)
