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
from parley.errors import ParleyError, Problem
from parley.ports.tools import ListedTool, ToolNotOffered, ToolServerFailure
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
    from parley.reasoning.asking.requests import Asker
    from parley.reasoning.tools.before import OfferedTool
    from parley.runs.model import Request, Run
    from parley.runs.store import DynamoRunStore

#: The key of the run id in each call's ``_meta``.
RUN_ID_META: Final = "auto.on/run_id"
#: A person's answer in each call's ``_meta`` after a question (``agent-runs.md``, "Questions").
RESPONSE_META: Final = "parley/interaction_response"
#: A tool's request in its result's ``_meta`` (``agent-runs.md``, "A tool that asks").
INTERACTION_META: Final = "parley/interaction"
#: The built-in tool of ``ask.progress`` (``agent-runs.md``, "Progress: report_progress").
REPORT_PROGRESS: Final = "report_progress"
PROGRESS_MAX_CHARS: Final = 280
#: Parley's own activity: after this long a silent model call is reported, then every so often.
SILENT_FIRST_SECONDS: Final = 3.0
SILENT_EVERY_SECONDS: Final = 5.0


class RunWorkEnded(ParleyError):
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
    #: An agent run (``ask``): opens its requests (``parley.reasoning.asking``); ``None`` otherwise.
    asker: Asker | None = None
    #: Seconds the run worked in its earlier segments (its bound counts working time only).
    worked_before: float = 0.0
    #: The answer that resumed this segment, sent in every call's ``_meta`` (``agent-runs.md``).
    response_meta: dict[str, Any] | None = None
    _usages: list[Usage] = field(default_factory=list)
    _duration_ms: int = 0
    _turns: list[Turn] = field(default_factory=list)
    _limits: CallLimits = field(default_factory=CallLimits)
    _budget: Any = None
    _last: bool = False
    #: The model step whose calls are being taken: ``(calls, results so far, room)``.
    _step: tuple[tuple[ToolCall, ...], list[ToolResult], int | None] | None = None
    _began: float = field(default_factory=time.monotonic)

    def steps(self, first: ModelRequest) -> Steps:
        """Run the steps from ``first`` (the rendered prompt, the tools offered); the final answer, or
        the problem that ends the run (raised), or ``RunWaits`` once the run asks a person."""
        from parley.reasoning.tools.budget import Budget

        self._budget = Budget(self.max_input_tokens)
        return self._go(first)

    def resume(self, first: ModelRequest, state: dict[str, Any], request: Request) -> Steps:
        """Go on from ``state`` (kept when the run asked) with the request's ending: the asked call's
        result from the answer (or the expiry), the step's other calls, then the steps."""
        from parley.reasoning.asking.state import call_from, result_from, turn_from, usage_from
        from parley.reasoning.tools.asking import settle_pending
        from parley.reasoning.tools.budget import Budget

        self._turns = [turn_from(turn) for turn in state["turns"]]
        self._limits = CallLimits.from_json(state["limits"])
        self._budget = Budget.from_json(state["budget"])
        self._last = bool(state["last"])
        self._usages = [usage_from(usage) for usage in state["usages"]]
        self._duration_ms = int(state["duration_ms"])
        self.tools_returned_bytes = int(state["tools_returned_bytes"])
        step = state["step"]
        calls = tuple(call_from(call) for call in step["calls"])
        self._step = (calls, [result_from(result) for result in step["results"]], step["room"])
        result = settle_pending(self, state["pending"], request)
        self._step[1].append(result)
        return self._go(first)

    def _go(self, first: ModelRequest) -> Steps:
        from parley.reasoning.tools.last_step import last_step_message

        budget = self._budget
        specs = tuple(tool.spec for tool in self.offered.values())
        if self.asker is not None:
            from parley.reasoning.asking.questions import request_input_spec

            specs = (*specs, request_input_spec())
        if self.progress:
            specs = (*specs, _progress_spec())
        while True:
            if self._step is None:
                if self._last:
                    message = last_step_message(first.message, self._turns)
                    request = replace(first, message=message, turns=(), tools=())
                else:
                    request = replace(first, turns=tuple(self._turns), tools=specs)
                answer = self._model(request)
                sent = _request_bytes(request)
                budget.after_step(input_tokens(answer.usage), sent)
                if not answer.tool_calls:
                    return Steps(answer, self._usage(), self._duration_ms)
                if self._last:
                    raise self._cannot_finish(
                        "no_answer",
                        "The model asked for a tool in the run's last step, which is made without tools, so "
                        "it gave no answer.",
                    )
                self._turns.append(
                    Turn(
                        "assistant",
                        text=answer.text,
                        tool_calls=answer.tool_calls,
                        provider_state=answer.provider_state,
                    )
                )
                room = self._room(answer, len(answer.tool_calls), sent)
                self._step = (answer.tool_calls, [], room)
            calls, results, room = self._step
            while len(results) < len(calls):
                results.append(self._result(calls[len(results)], self._limits, room))
            self._turns.append(Turn("tool", results=tuple(results)))
            self._step = None
            added = _turn_bytes(self._turns[-2]) + _turn_bytes(self._turns[-1])
            self._last = self._limits.spent() or budget.next_is_last(budget.estimate_next(added))

    def snapshot(self, pending: dict[str, Any]) -> dict[str, Any]:
        """The work's state while it waits for ``pending`` (the asked call): everything ``resume`` needs."""
        from parley.reasoning.asking.state import call_json, result_json, turn_json, usage_json

        assert self._step is not None
        calls, results, room = self._step
        return {
            "turns": [turn_json(turn) for turn in self._turns],
            "limits": self._limits.as_json(),
            "budget": self._budget.as_json(),
            "last": self._last,
            "usages": [usage_json(usage) for usage in self._usages],
            "duration_ms": self._duration_ms,
            "tools_returned_bytes": self.tools_returned_bytes,
            "worked_seconds": self.worked_seconds(),
            "step": {
                "calls": [call_json(call) for call in calls],
                "results": [result_json(result) for result in results],
                "room": room,
            },
            "pending": pending,
        }

    def send_after_answer(
        self,
        call: ToolCall,
        tool: OfferedTool,
        *,
        counted: bool,
        listed: ListedTool | None = None,
    ) -> ToolResult:
        """Send a call a person's answer let go — an approved frozen call (``counted`` among the run's 25)
        or a continuation (not counted) — within the room of the step in progress."""
        number = self._limits.record(call.name, call.arguments or {}) if counted else None
        room = self._step[2] if self._step is not None else None
        return self._send(call, tool, number, self._limits, room, listed=listed)

    def worked_seconds(self) -> float:
        return self.worked_before + (time.monotonic() - self._began)

    # --- the model ---------------------------------------------------------------------------------

    def _model(self, request: ModelRequest) -> ModelAnswer:

        left = self.deadline - time.monotonic()
        if left <= 1:
            raise self._bound()
        request = replace(request, timeout_seconds=min(request.timeout_seconds, left))
        began = time.monotonic()
        silent = self._watch_silence(len(self._usages) + 1) if self.activity else None
        try:
            answer = self.call(request)
        except ModelCallFailed as failure:
            if failure.kind == "too_long":
                from parley.reasoning.tools.endings import request_too_long

                last = input_tokens(self._usages[-1]) if self._usages else None
                raise request_too_long(failure.detail, self.tools_returned_bytes, last) from None
            if not self.called:
                from parley.reasoning.failures import failure_problem

                raise failure_problem(failure) from None
            raise self._cannot_finish("model_unavailable", failure.detail) from None
        finally:
            self._duration_ms += round((time.monotonic() - began) * 1000)
            if silent is not None:
                silent.set()
        self._usages.append(answer.usage)
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
            values = [getattr(usage, name) for usage in self._usages]
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
            self.max_input_tokens - sum(input_tokens(usage) or 0 for usage in self._usages),
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
        if self.asker is not None:
            from parley.reasoning.asking.questions import REQUEST_INPUT

            if call.name == REQUEST_INPUT:
                from parley.reasoning.tools.asking import ask_question

                return ask_question(self, call)
        tool = self.offered.get(call.name)
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
        if tool.approval is not None and self.asker is not None:
            from parley.reasoning.tools.asking import ask_approval

            return ask_approval(self, call, tool)
        number = limits.record(call.name, call.arguments)
        return self._send(call, tool, number, limits, room)

    def _send(
        self,
        call: ToolCall,
        tool: OfferedTool,
        number: int | None,
        limits: CallLimits,
        room: int | None,
        *,
        listed: ListedTool | None = None,
    ) -> ToolResult:
        """Record and send the call (to ``listed``, a continuation of the tool's server, when given), and
        give the model its result; ``number`` is the call's among the run's 25 (``None``: not one)."""
        from parley.documents.json_schema import json_size
        from parley.tools.recording import failed_data, started_data

        target = listed if listed is not None else tool.tool
        arguments = dict(call.arguments or {})
        call_id = str(uuid.uuid4())
        data = started_data(tool.server, tool.resolved, call_id, target, arguments, json_size(arguments))
        data.update({"model_call_id": call.id})
        if number is not None:
            data["number"] = number
        if listed is not None:
            data["continuation"] = True
        called = CalledTool(tool.server.name, target.name, target.read_only)
        started = run_event(
            events.TOOL_CALL_STARTED, self.runtime.clock.now(), self.run.run_id, data, step=events.WORK_STEP
        )
        try:
            self.store.record_call(self.playbook, self.run.run_id, called, started)
        except StoreConflict:
            raise RunWorkEnded from None
        self.called.append(called)
        meta: dict[str, Any] = {RUN_ID_META: self.run.run_id}
        if self.response_meta is not None:
            meta[RESPONSE_META] = self.response_meta
        while True:
            try:
                answer = self.runtime.tool_client.call_tool(
                    tool.resolved.address, target.name, arguments, meta=meta
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
            ended = failed_data(tool.server, tool.resolved, call_id, target.name, failure)
            self.record(events.TOOL_CALL_FAILED, ended)
            if limits.server_failed():
                raise self._cannot_finish(
                    "server_failed", f"Tool servers failed {limits.server_failures} times in this run."
                )
            words = tool.resolved.scrub(failure.detail)
            return ToolResult(call.id, call.name, f"The call failed: {words}", True)
        if self.asker is not None and answer.meta and INTERACTION_META in answer.meta:
            from parley.reasoning.tools.asking import tool_asks

            return tool_asks(self, call, tool, call_id, answer)
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
        self.record(events.TOOL_CALL_ANSWERED, data)
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
        self.record(events.ACTIVITY_UPDATED, data)

    def record(self, kind: str, data: dict[str, Any]) -> None:
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
