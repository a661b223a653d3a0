"""The steps of an agent run that ask a person (``agent-runs.md``): a question the model asks
(``request_input``), an approval of a frozen call, a tool that asks before it goes on; and, when the
run is taken up again, the asked call's result from the answer or the expiry.

Each request is opened by the loop's :class:`~parley.reasoning.agent_runs.requests.Asker` with the loop's
state (``ToolLoop.snapshot``) and the *pending* call, as JSON:

- ``{"kind": "question", "call", "question", "interaction_id"}``;
- ``{"kind": "approval", "call", "tool", "server", "arguments", "interaction_id"}`` — the call frozen:
  its tool, its checked arguments and the model's call id; nothing the model writes after can change it;
- ``{"kind": "continuation", "call", "tool", "server", "continuation": {tool, arguments}, "question",
  "interaction_id"}`` — the model's original call, and the continuation its tool asked for.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from parley.models import ToolCall, ToolResult
from parley.runs import events

if TYPE_CHECKING:
    from parley.ports.tools import ToolAnswer
    from parley.reasoning.agent_runs.before import OfferedTool
    from parley.reasoning.agent_runs.loop import ToolLoop
    from parley.reasoning.agent_runs.questions import Question
    from parley.runs.model import Request


def ask_question(loop: ToolLoop, call: ToolCall) -> ToolResult:
    """``request_input``: a call that breaks a rule is a tool error; a valid one is a request (the run
    waits: ``RunWaits``). Not one of the run's 25 calls."""
    from parley.reasoning.agent_runs.questions import check_question

    question = check_question(call.arguments)
    if isinstance(question, str):
        return ToolResult(call.id, call.name, question, True)
    refused = _over_the_limit(loop, call)
    if refused is not None:
        return refused
    pending = {"kind": "question", "call": _call_json(call), "question": question.as_json()}
    return _open_question(loop, call, question, pending, {})


def ask_approval(loop: ToolLoop, call: ToolCall, tool: OfferedTool) -> ToolResult:
    """A call of a tool that waits for approval: its arguments checked and its confirmation made, else
    ``tool_call_failed`` told to the model; then the call frozen and the request opened."""
    from parley.documents.json_schema import json_size
    from parley.reasoning.agent_runs.approvals import ApprovalFailed, check_arguments, confirmation_text
    from parley.reasoning.agent_runs.limits import canonical_arguments
    from parley.reasoning.agent_runs.questions import APPROVAL_ANSWER_SCHEMA
    from parley.tools.recording import content_digest

    assert tool.approval is not None and loop.asker is not None
    arguments = dict(call.arguments or {})
    try:
        check_arguments(tool.tool.input_schema, arguments)
        confirmation = confirmation_text(
            tool.approval, arguments, lambda name: _preview(loop, tool, name, arguments)
        )
    except ApprovalFailed as failed:
        data: dict[str, Any] = {
            "server": tool.server.name,
            "tool": tool.tool.name,
            "model_call_id": call.id,
            "because": failed.because,
            "detail": failed.detail,
        }
        loop.record(events.TOOL_CALL_FAILED, data)
        return ToolResult(call.id, call.name, f"This call was not made: {failed.detail}", True)
    refused = _over_the_limit(loop, call)
    if refused is not None:
        return refused
    frozen = json.loads(canonical_arguments(arguments))
    pending = {
        "kind": "approval",
        "call": _call_json(call),
        "server": tool.server.name,
        "tool": tool.tool.name,
        "arguments": frozen,
    }
    requested: dict[str, Any] = {
        "server": tool.server.name,
        "tool": tool.tool.name,
        "model_call_id": call.id,
        "confirmation": confirmation,
        "arguments_size": json_size(frozen),
        "arguments_digest": content_digest(frozen),
    }
    return _open(
        loop,
        call,
        pending,
        asked={"approval": {"server": tool.server.name, "tool": tool.tool.name, "arguments": frozen}},
        message=confirmation,
        answer_schema=APPROVAL_ANSWER_SCHEMA,
        event_type=events.APPROVAL_REQUESTED,
        event_data=requested,
    )


def tool_asks(
    loop: ToolLoop, call: ToolCall, tool: OfferedTool, call_id: str, answer: ToolAnswer
) -> ToolResult:
    """A tool's result that carries a request (``_meta`` ``parley/interaction``): its answer recorded as
    any, then the request checked (its question, and a continuation its server lists as taking an
    answer, with arguments its schema takes) and opened. A request that fails a check is the original
    call's tool error."""
    from parley.reasoning.agent_runs.loop import INTERACTION_META
    from parley.tools.recording import answered_data

    loop.record(events.TOOL_CALL_ANSWERED, answered_data(tool.server, tool.resolved, call_id, answer))
    asked = (answer.meta or {}).get(INTERACTION_META)
    return _continue_or_ask(loop, call, tool, asked, original=call)


def settle_pending(loop: ToolLoop, pending: dict[str, Any], request: Request) -> ToolResult:
    """The asked call's result, from the request's answer or its expiry (the run resumed)."""
    from parley.reasoning.agent_runs.state import call_from

    call = call_from(pending["call"])
    answered = request.state == "answered" and request.fact is not None
    answer = request.fact.answer if answered and request.fact is not None else None
    kind = pending["kind"]
    if kind == "approval":
        return _approval_settled(loop, call, pending, answered, answer, request)
    if not answered:
        if kind == "question":
            prompt = pending["question"]["prompt"][:200]
            words = (
                f"Nobody answered the question ({prompt!r}) before it expired at {request.expires_at}. Go on "
                "without the answer."
            )
            return ToolResult(call.id, call.name, words)
        words = (
            "The tool asked the person a question, and nobody answered before it expired at "
            f"{request.expires_at}."
        )
        return ToolResult(call.id, call.name, words, True)
    response = {
        "interaction_id": pending["interaction_id"],
        "prompt": pending["question"]["prompt"],
        "kind": pending["question"]["kind"],
        "answer": answer,
    }
    loop.response_meta = response
    if kind == "question":
        shown = {"interaction_id": response["interaction_id"], "prompt": response["prompt"], "answer": answer}
        return ToolResult(call.id, call.name, json.dumps(shown, ensure_ascii=False))
    tool = loop.offered.get(call.name)
    if tool is None:
        return ToolResult(
            call.id, call.name, "The tool is no longer offered; its continuation was not called.", True
        )
    return _call_continuation(loop, call, tool, pending["continuation"])


# --- the pieces ----------------------------------------------------------------------------------------


def _approval_settled(
    loop: ToolLoop, call: ToolCall, pending: dict[str, Any], answered: bool, answer: Any, request: Request
) -> ToolResult:
    loop.response_meta = None  # "a step that follows an approval" carries no answer
    if not answered:
        note = f"Nobody answered the request for approval before it expired at {request.expires_at}."
        return ToolResult(call.id, call.name, json.dumps({"approved": False, "note": note}))
    if not (isinstance(answer, dict) and answer.get("approved") is True):
        refusal_note = answer.get("note") if isinstance(answer, dict) else None
        return ToolResult(
            call.id, call.name, json.dumps({"approved": False, "note": refusal_note}, ensure_ascii=False)
        )
    tool = loop.offered.get(call.name)
    if tool is None:
        return ToolResult(
            call.id, call.name, "The approved call was not made: its tool is no longer offered.", True
        )
    frozen = ToolCall(call.id, call.name, dict(pending["arguments"]))
    return loop.send_after_answer(frozen, tool, counted=True)


def _continue_or_ask(
    loop: ToolLoop, call: ToolCall, tool: OfferedTool, asked: Any, *, original: ToolCall
) -> ToolResult:
    from parley.reasoning.agent_runs.questions import check_question

    question = check_question(asked if isinstance(asked, dict) else None, allow_continuation=True)
    if isinstance(question, str):
        return _refused(original, question)
    continuation = asked.get("continuation")
    problem = _continuation_problem(tool, continuation)
    if problem is not None:
        return _refused(original, problem)
    refused = _over_the_limit(loop, original)
    if refused is not None:
        return refused
    pending = {
        "kind": "continuation",
        "call": _call_json(original),
        "server": tool.server.name,
        "tool": tool.tool.name,
        "continuation": {"tool": continuation["tool"], "arguments": dict(continuation["arguments"])},
        "question": question.as_json(),
    }
    more = {"continuation": {"server": tool.server.name, "tool": continuation["tool"]}}
    return _open_question(loop, original, question, pending, more)


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
    loop: ToolLoop, original: ToolCall, tool: OfferedTool, continuation: dict[str, Any]
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


def _open_question(
    loop: ToolLoop, call: ToolCall, question: Question, pending: dict[str, Any], more: dict[str, Any]
) -> ToolResult:
    from parley.reasoning.agent_runs.questions import answer_schema

    return _open(
        loop,
        call,
        pending,
        asked={"question": question.as_json()},
        message=question.prompt,
        answer_schema=answer_schema(question),
        event_type=events.INPUT_REQUESTED,
        event_data={"kind": question.kind, "prompt": question.prompt, "model_call_id": call.id, **more},
    )


def _open(
    loop: ToolLoop,
    call: ToolCall,
    pending: dict[str, Any],
    *,
    asked: dict[str, Any],
    message: str,
    answer_schema: Any,
    event_type: str,
    event_data: dict[str, Any],
) -> ToolResult:
    """Open the request (the run then waits: ``RunWaits`` is raised); the inbox being full is told to
    the model instead."""
    from parley.reasoning.agent_runs.requests import AskRefused
    from parley.runs.events import new_event_id

    assert loop.asker is not None
    interaction_id = new_event_id(event_type, loop.runtime.clock.now(), events.WORK_STEP)
    pending = {**pending, "interaction_id": interaction_id}
    try:
        loop.asker.open(
            asked=asked,
            message=message,
            answer_schema=answer_schema,
            event_type=event_type,
            event_data={"interaction_id": interaction_id, **event_data},
            state=loop.snapshot(pending),
        )
    except AskRefused as refused:
        return ToolResult(call.id, call.name, str(refused), True)


def _over_the_limit(loop: ToolLoop, call: ToolCall) -> ToolResult | None:
    from parley.reasoning.agent_runs.requests import MAX_REQUESTS

    assert loop.asker is not None
    if loop.asker.segment < MAX_REQUESTS:
        return None
    return ToolResult(
        call.id,
        call.name,
        f"This run has asked {MAX_REQUESTS} times, as many as a run may (questions and approvals together); "
        "nothing was asked. Go on with what you have.",
        True,
    )


def _preview(loop: ToolLoop, tool: OfferedTool, name: str, arguments: dict[str, Any]) -> str:
    """Call the preview tool (read-only, of the same server) with the call's arguments; its text."""
    from parley.ports.tools import ToolNotOffered, ToolServerFailure
    from parley.reasoning.agent_runs.approvals import ApprovalFailed
    from parley.reasoning.agent_runs.loop import RUN_ID_META
    from parley.reasoning.agent_runs.results import model_text

    try:
        answer = loop.runtime.tool_client.call_tool(
            tool.resolved.address, name, arguments, meta={RUN_ID_META: loop.run.run_id}
        )
    except (ToolNotOffered, ToolServerFailure) as failure:
        words = tool.resolved.scrub(failure.detail)
        raise ApprovalFailed("confirmation_failed", f"The preview tool {name!r} failed: {words}") from None
    if answer.is_error:
        words = tool.resolved.scrub(model_text(answer.result))[:500]
        raise ApprovalFailed("confirmation_failed", f"The preview tool {name!r} answered an error: {words}")
    return str(tool.resolved.scrub(model_text(answer.result)))


def _refused(call: ToolCall, why: str) -> ToolResult:
    return ToolResult(
        call.id, call.name, f"The tool asked the person a question Parley could not ask: {why}", True
    )


def _call_json(call: ToolCall) -> dict[str, Any]:
    from parley.reasoning.agent_runs.state import call_json

    return call_json(call)
