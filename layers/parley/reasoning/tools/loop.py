"""A run that calls tools (``reasoning-format.md``, "Tools"): steps of the model, each sending the whole
conversation and the tools offered, until the model answers without calling a tool.

Each call the model asks for is checked first ("Limits on calls": 25 a run, 16 KiB of arguments, no
third identical call; a refused call is not sent and not recorded, and the model is told why), then
recorded (``tool_call_started``, and the tool added to the run's ``calls``) before it is sent with the
run id in its ``_meta`` (``auto.on/run_id``), then recorded again as ``tool_call_answered`` or
``tool_call_failed`` ("The run's history"). The model reads each result as text, cut only to fit the room
of its step (``parley.reasoning.tools.results``).

Once the calls are spent or the input budget would not cover another step ("The budget and the last
step"), one last step is made without tools, with the calls so far given as fenced text. The bounds of
"Limits on time and failures" (the model call's limit, the run's ten minutes, five server failures, a
call in the last step) end a run that called tools as ``tools_unfinished`` or ``effect_unknown``
("When a tool-calling run cannot finish"); before its first call, as plain ``unavailable``.
"""

from __future__ import annotations

import threading
import time
import uuid
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Final

from parley.dynamo import StoreConflict
from parley.errors import Problem
from parley.ports.tools import ToolNotOffered, ToolServerFailure
from parley.reasoning.models.providers.base import (
    ModelAnswer,
    ModelCallFailed,
    ModelRequest,
    ToolCall,
    ToolResult,
    ToolSpec,
    Turn,
    Usage,
)
from parley.reasoning.tools.budget import input_tokens
from parley.reasoning.tools.limits import CallLimits, wait_for_rate_limit
from parley.runs import events
from parley.runs.events import run_event
from parley.runs.model import CalledTool

if TYPE_CHECKING:
    from collections.abc import Callable

    from parley.definitions.model import PlaybookRef
    from parley.ports.runtime import Runtime
    from parley.ports.tools import ToolAnswer
    from parley.reasoning.tools.before import OfferedTool
    from parley.runs.model import Run
    from parley.runs.store import DynamoRunStore

#: The key of the run id in each call's ``_meta``.
RUN_ID_META: Final = "auto.on/run_id"
#: The built-in tool of ``ask.progress`` (``agent-runs.md``, "Progress: report_progress").
REPORT_PROGRESS: Final = "report_progress"
PROGRESS_MAX_CHARS: Final = 280
#: Parley's own activity: after this long a silent model call is reported, then every so often.
SILENT_FIRST_SECONDS: Final = 3.0
SILENT_EVERY_SECONDS: Final = 5.0


class RunWorkEnded(Exception):
    """The run ended while it worked (cancelled, or ended by its backstop): nothing more is written."""


@dataclass
class Steps:
    """What the loop gives back: the final answer, the usage of every step added up, and the model's
    time."""

    answer: ModelAnswer
    usage: Usage
    duration_ms: int


@dataclass
class ToolLoop:
    runtime: Runtime
    store: DynamoRunStore
    playbook: PlaybookRef
    run: Run
    offered: dict[str, OfferedTool]
    call: Callable[[ModelRequest], ModelAnswer]
    deadline: float
    max_input_tokens: int
    context_window: int | None
    sleep: Callable[[float], None] = time.sleep
    #: ``ask.progress``: the model is offered ``report_progress`` (``agent-runs.md``, "Progress").
    progress: bool = False
    #: ``ask``: Parley reports its own activity while a model call is silent.
    activity: bool = False
    #: The model, as the activity names it.
    model_label: str = ""
    #: The tools called, in order (server, tool, read-only).
    called: list[CalledTool] = field(default_factory=list)
    tools_returned_bytes: int = 0
    _answers: list[ModelAnswer] = field(default_factory=list)
    _duration_ms: int = 0

    def steps(self, first: ModelRequest) -> Steps:
        """Run the steps from ``first`` (the rendered prompt, the tools offered); the final answer, or
        the problem that ends the run (raised)."""
        from parley.reasoning.tools.budget import Budget
        from parley.reasoning.tools.last_step import last_step_message

        limits = CallLimits()
        budget = Budget(self.max_input_tokens)
        turns: list[Turn] = []
        specs = tuple(tool.spec for tool in self.offered.values())
        if self.progress:
            specs = (*specs, _progress_spec())
        last = False
        while True:
            if last:
                request = replace(first, message=last_step_message(first.message, turns), turns=(), tools=())
            else:
                request = replace(first, turns=tuple(turns), tools=specs)
            answer = self._model(request)
            sent = _request_bytes(request)
            budget.after_step(input_tokens(answer.usage), sent)
            if not answer.tool_calls:
                return Steps(answer, self._usage(), self._duration_ms)
            if last:
                raise self._cannot_finish(
                    "no_answer",
                    "The model asked for a tool in the run's last step, which is made without tools, so it "
                    "gave no answer.",
                )

            turns.append(
                Turn(
                    "assistant",
                    text=answer.text,
                    tool_calls=answer.tool_calls,
                    provider_state=answer.provider_state,
                )
            )
            room = self._room(answer, len(answer.tool_calls), sent)
            results = [self._result(call, limits, room) for call in answer.tool_calls]
            turns.append(Turn("tool", results=tuple(results)))
            added = _turn_bytes(turns[-2]) + _turn_bytes(turns[-1])
            last = limits.spent() or budget.next_is_last(budget.estimate_next(added))

    # --- the model ---------------------------------------------------------------------------------

    def _model(self, request: ModelRequest) -> ModelAnswer:

        left = self.deadline - time.monotonic()
        if left <= 1:
            raise self._bound()
        request = replace(request, timeout_seconds=min(request.timeout_seconds, left))
        began = time.monotonic()
        silent = self._watch_silence(len(self._answers) + 1) if self.activity else None
        try:
            answer = self.call(request)
        except ModelCallFailed as failure:
            if failure.kind == "too_long":
                from parley.reasoning.tools.endings import request_too_long

                last = input_tokens(self._answers[-1].usage) if self._answers else None
                raise request_too_long(failure.detail, self.tools_returned_bytes, last) from None
            if not self.called:
                from parley.reasoning.failures import failure_problem

                raise failure_problem(failure) from None
            raise self._cannot_finish("model_unavailable", failure.detail) from None
        finally:
            self._duration_ms += round((time.monotonic() - began) * 1000)
            if silent is not None:
                silent.set()
        self._answers.append(answer)
        return answer

    def _watch_silence(self, step: int) -> threading.Event:
        """Parley's own activity, from facts only: once a model call has been silent for 3 seconds,
        ``activity_updated`` names the model the run waits for, refreshed every 5 seconds until the call
        answers. The returned event stops it."""
        done = threading.Event()
        began = time.monotonic()

        def watch() -> None:
            wait = SILENT_FIRST_SECONDS
            while not done.wait(wait):
                seconds = round(time.monotonic() - began)
                try:
                    self._activity(
                        f"Waiting for {self.model_label} to answer step {step} ({seconds} s so far).",
                        "parley",
                    )
                except Exception:  # an activity that cannot be written never stops the run
                    return
                wait = SILENT_EVERY_SECONDS

        threading.Thread(target=watch, name=f"parley-activity-{self.run.run_id}", daemon=True).start()
        return done

    def _usage(self) -> Usage:

        def total(name: str) -> int | None:
            values = [getattr(answer.usage, name) for answer in self._answers]
            return None if any(value is None for value in values) else sum(values)

        return Usage(
            input_uncached=total("input_uncached"),
            input_cache_read=total("input_cache_read"),
            input_cache_write=total("input_cache_write"),
            output_text=total("output_text"),
            output_reasoning=total("output_reasoning"),
            total=total("total"),
        )

    def _room(self, answer: ModelAnswer, calls: int, sent: int) -> int | None:
        from parley.reasoning.tools.results import room_per_call

        return room_per_call(
            self.context_window,
            self.max_input_tokens - sum(input_tokens(a.usage) or 0 for a in self._answers),
            input_tokens(answer.usage),
            answer.usage.output_text,
            sent,
            calls,
        )

    # --- the calls ---------------------------------------------------------------------------------

    def _result(self, call: ToolCall, limits: CallLimits, room: int | None) -> ToolResult:
        """What the model reads for one of its calls; ``room`` is the bytes its result may take (``None``:
        whole)."""

        if self.progress and call.name == REPORT_PROGRESS:
            return self._report_progress(call)
        tool = self.offered.get(call.name)
        if tool is not None and tool.needs_approval:
            # A person approves each call of this tool first; this run cannot wait for one, so the call
            # is not made (never sent without approval), and the model is told.
            return ToolResult(
                call.id,
                call.name,
                f"This call was not made: {tool.server.name}/{tool.tool.name} waits for a person's approval "
                "before each call, which this run cannot get. Answer without it.",
                True,
            )
        if tool is None:
            return ToolResult(
                call.id,
                call.name,
                f"There is no tool named {call.name!r}; call one of the tools offered.",
                True,
            )
        if call.arguments is None:
            return ToolResult(
                call.id, call.name, "This call was not made: its arguments are not a JSON object.", True
            )
        refusal = limits.check(call.name, call.arguments)
        if refusal is not None:
            return refusal.result_for(call)
        number = limits.record(call.name, call.arguments)
        return self._send(call, tool, number, limits, room)

    def _send(
        self, call: ToolCall, tool: OfferedTool, number: int, limits: CallLimits, room: int | None
    ) -> ToolResult:
        from parley.documents.json_schema import json_size
        from parley.tools.recording import failed_data, started_data

        arguments = dict(call.arguments or {})
        call_id = str(uuid.uuid4())
        data = started_data(tool.server, tool.resolved, call_id, tool.tool, arguments, json_size(arguments))
        data.update({"number": number, "model_call_id": call.id})
        called = CalledTool(tool.server.name, tool.tool.name, tool.tool.read_only)
        started = run_event(
            events.TOOL_CALL_STARTED, self.runtime.clock.now(), self.run.run_id, data, step=events.WORK_STEP
        )
        try:
            self.store.record_call(self.playbook, self.run.run_id, called, started)
        except StoreConflict:
            raise RunWorkEnded from None
        self.called.append(called)
        meta = {RUN_ID_META: self.run.run_id}
        while True:
            try:
                answer = self.runtime.tool_client.call_tool(
                    tool.resolved.address, tool.tool.name, arguments, meta=meta
                )
                break
            except ToolNotOffered as not_offered:
                failure = ToolServerFailure("failing", not_offered.detail, stage="list")
            except ToolServerFailure as failed:
                failure = failed
            wait = (
                wait_for_rate_limit(failure.retry_after_seconds)
                if failure.because == "rate_limited"
                else None
            )
            if wait is not None and time.monotonic() + wait < self.deadline:
                self.sleep(wait)
                continue
            ended = failed_data(tool.server, tool.resolved, call_id, tool.tool.name, failure)
            self._record(events.TOOL_CALL_FAILED, ended)
            if limits.server_failed():
                raise self._cannot_finish(
                    "server_failed", f"Tool servers failed {limits.server_failures} times in this run."
                )
            words = tool.resolved.scrub(failure.detail)
            return ToolResult(call.id, call.name, f"The call failed: {words}", True)
        return self._answered(call, tool, call_id, answer, room)

    def _answered(
        self, call: ToolCall, tool: OfferedTool, call_id: str, answer: ToolAnswer, room: int | None
    ) -> ToolResult:
        from parley.reasoning.tools.results import cut_to_fit, model_text
        from parley.tools.recording import answered_data

        text = str(tool.resolved.scrub(model_text(answer.result)))
        self.tools_returned_bytes += len(text.encode("utf-8", "surrogatepass"))
        shown, shown_bytes = cut_to_fit(text, room)
        data = answered_data(tool.server, tool.resolved, call_id, answer)
        if shown_bytes < len(text.encode("utf-8", "surrogatepass")):
            data["shown_bytes"] = shown_bytes
        self._record(events.TOOL_CALL_ANSWERED, data)
        return ToolResult(call.id, call.name, shown, answer.is_error)

    def _report_progress(self, call: ToolCall) -> ToolResult:
        """``report_progress``: a ``message`` of 1 to 280 characters becomes ``activity_updated`` under
        the run's one activity id; anything else is a tool error. It changes nothing, and is not one of
        the run's 25 calls."""

        message = (call.arguments or {}).get("message")
        if not isinstance(message, str) or not 1 <= len(message) <= PROGRESS_MAX_CHARS:
            return ToolResult(
                call.id,
                call.name,
                f"report_progress takes a message of 1 to {PROGRESS_MAX_CHARS} characters.",
                True,
            )
        self._activity(message, "model")
        return ToolResult(call.id, call.name, "Reported.")

    def _activity(self, message: str, by: str) -> None:
        data = {"activity_id": f"activity-{self.run.run_id}", "message": message, "by": by}
        self._record(events.ACTIVITY_UPDATED, data)

    def _record(self, kind: str, data: dict[str, Any]) -> None:
        event = run_event(kind, self.runtime.clock.now(), self.run.run_id, data, step=events.WORK_STEP)
        self.store.record_events(self.playbook, [event])

    # --- endings -----------------------------------------------------------------------------------

    def _bound(self) -> Problem:
        detail = (
            "The run did not finish within its bound (10 minutes, or its model call's limit when longer)."
        )
        if self.called:
            return self._cannot_finish("run_bound", detail)
        return Problem("unavailable", f"{detail} Try again.", because="run_bound")

    def _cannot_finish(self, because: str, detail: str) -> Problem:
        from parley.reasoning.tools.endings import cannot_finish

        return cannot_finish([(c.server, c.tool, c.read_only) for c in self.called], because, detail)


def _request_bytes(request: ModelRequest) -> int:
    import json

    sent = [request.instructions or "", request.message]
    for turn in request.turns:
        sent.append(turn.text)
        sent.extend(json.dumps(call.arguments) for call in turn.tool_calls)
        sent.extend(result.content for result in turn.results)
    return sum(len(part.encode("utf-8", "surrogatepass")) for part in sent)


def _turn_bytes(turn: Turn) -> int:
    """The bytes a turn adds to the conversation: the model's text and calls, or the results."""
    import json

    parts = [turn.text, *(json.dumps(call.arguments) for call in turn.tool_calls)]
    parts.extend(result.content for result in turn.results)
    return sum(len(part.encode("utf-8", "surrogatepass")) for part in parts)


def _progress_spec() -> ToolSpec:

    return ToolSpec(
        REPORT_PROGRESS,
        "Report a short public update on what you are doing, for the person who started the run. It changes "
        "nothing; call it beside real work, not instead of it.",
        {
            "type": "object",
            "properties": {"message": {"type": "string", "minLength": 1, "maxLength": PROGRESS_MAX_CHARS}},
            "required": ["message"],
            "additionalProperties": False,
        },
    )
