"""A tool that asks (``agent-runs.md``, "A tool that asks"): a tool's result that carries a request in
its ``_meta`` (``parley/interaction``) asks the person a question before the tool goes on, with a
continuation — a tool its server lists as taking the answer — called with the answer once the run is
taken up again.

The request's pending call (kept with the loop's state) is ``{"kind": "continuation", "call", "tool",
"server", "continuation": {tool, arguments}, "question", "interaction_id"}`` — the model's original call,
and the continuation its tool asked for. The steps reach the loop through ``asking.AskingLoop``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from parley.models import ToolCall, ToolResult
from parley.reasoning.agent_runs.meta import INTERACTION_META
from parley.reasoning.agent_runs.questions import check_question, open_question, response_meta
from parley.reasoning.agent_runs.requests import over_the_limit
from parley.reasoning.agent_runs.state import call_json
from parley.runs import events

if TYPE_CHECKING:
    from parley.ports.tools import ToolAnswer
    from parley.reasoning.agent_runs.asking import AskingLoop
    from parley.reasoning.agent_runs.offered import OfferedTool
    from parley.reasoning.agent_runs.requests import Asker


def tool_asks(
    loop: AskingLoop, asker: Asker, call: ToolCall, tool: OfferedTool, call_id: str, answer: ToolAnswer
) -> ToolResult | None:
    """A tool's result that carries a request (``_meta`` ``parley/interaction``): its answer recorded as
    any, then the request checked (its question, and a continuation its server lists as taking an
    answer, with arguments its schema takes) and opened. A request that fails a check is the original
    call's tool error. ``None`` when the result asks nothing."""
    from parley.tools.recording import answered_data

    if not (answer.meta and INTERACTION_META in answer.meta):
        return None
    loop.record(events.TOOL_CALL_ANSWERED, answered_data(tool.server, tool.resolved, call_id, answer))
    asked = (answer.meta or {}).get(INTERACTION_META)
    return _continue_or_ask(loop, asker, call, tool, asked, original=call)


def continuation_settled(
    loop: AskingLoop, call: ToolCall, pending: dict[str, Any], answered: bool, answer: Any, expires_at: str
) -> ToolResult:
    """The original call's result once the run is taken up: the continuation called with the answer, or
    the tool error that nobody answered."""
    if not answered:
        words = (
            f"The tool asked the person a question, and nobody answered before it expired at {expires_at}."
        )
        return ToolResult(call.id, call.name, words, True)
    loop.response_meta = response_meta(pending, answer)
    tool = loop.offered.get(call.name)
    if tool is None:
        return ToolResult(
            call.id, call.name, "The tool is no longer offered; its continuation was not called.", True
        )
    return _call_continuation(loop, call, tool, pending["continuation"])


# --- the pieces ----------------------------------------------------------------------------------------


def _continue_or_ask(
    loop: AskingLoop, asker: Asker, call: ToolCall, tool: OfferedTool, asked: Any, *, original: ToolCall
) -> ToolResult:
    question = check_question(asked if isinstance(asked, dict) else None, allow_continuation=True)
    if isinstance(question, str):
        return _refused(original, question)
    continuation = asked.get("continuation")
    problem = _continuation_problem(tool, continuation)
    if problem is not None:
        return _refused(original, problem)
    refused = over_the_limit(asker, original)
    if refused is not None:
        return refused
    pending = {
        "kind": "continuation",
        "call": call_json(original),
        "server": tool.server.name,
        "tool": tool.tool.name,
        "continuation": {"tool": continuation["tool"], "arguments": dict(continuation["arguments"])},
        "question": question.as_json(),
    }
    more = {"continuation": {"server": tool.server.name, "tool": continuation["tool"]}}
    return open_question(loop, asker, original, question, pending, more)


def _continuation_problem(tool: OfferedTool, continuation: Any) -> str | None:
    from parley.documents.json_schema import validate_instance

    if not isinstance(continuation, dict) or not isinstance(continuation.get("tool"), str):
        return "its continuation is not {tool, arguments}."
    arguments = continuation.get("arguments", {})
    if not isinstance(arguments, dict):
        return "its continuation's arguments are not a JSON object."
    listed = (tool.listing or {}).get(continuation["tool"])
    if listed is None:
        return f"its continuation {continuation['tool']!r} is not a tool its server lists."
    if not listed.requires_interaction_response:
        return (
            f"its continuation {listed.name!r} does not say parley/requires_interaction_response in its "
            "listing's _meta."
        )
    errors = validate_instance(arguments, listed.input_schema, "/arguments")
    if errors:
        return "its continuation's arguments do not match its input schema: " + "; ".join(
            f"{entry.pointer}: {entry.detail}" for entry in errors[:5]
        )
    continuation.setdefault("arguments", arguments)
    return None


def _call_continuation(
    loop: AskingLoop, original: ToolCall, tool: OfferedTool, continuation: dict[str, Any]
) -> ToolResult:
    """Call the continuation with the frozen arguments and the answer in ``_meta`` (the segment's
    ``response_meta``, which every call carries); its result is the original call's, unless it asks
    again."""
    listed = (tool.listing or {}).get(continuation["tool"])
    if listed is None:
        return _refused(original, f"its continuation {continuation['tool']!r} is no longer listed.")
    # Sent under the original call's id and name: a result that asks again makes the next request of
    # the same call, and the first that does not is the original call's result.
    sent = ToolCall(original.id, original.name, dict(continuation["arguments"]))
    return loop.send_after_answer(sent, tool, counted=False, listed=listed)


def _refused(call: ToolCall, why: str) -> ToolResult:
    return ToolResult(
        call.id, call.name, f"The tool asked the person a question Parley could not ask: {why}", True
    )
