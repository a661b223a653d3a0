"""Approvals of frozen calls (``agent-runs.md``, "Approvals"), all of it: which tools wait for a person's
approval (:func:`needing_approval`: the operator's rules and the function's ``approve``), the call checked
and its confirmation made, the call frozen and its request opened (:func:`ask_approval`), the answer an
approval takes (:data:`APPROVAL_ANSWER_SCHEMA`, :func:`approval_answer_errors`), and the frozen call sent
or refused once the run is taken up again (:func:`approval_settled`). The rule itself (a confirmation or
a preview) is plain data of the offered tool (``offered.ApprovalRule``).

Before any request, the call's arguments are checked against the tool's ``inputSchema`` and its
confirmation rendered (a Liquid template over ``arguments``) or previewed (a read-only tool of the same
server, called with the same arguments, whose text is the confirmation). Either failure is the call's
``tool_call_failed`` (``because: arguments_refused`` or ``confirmation_failed``), told to the model; no
request is made.

The request's pending call (kept with the loop's state) is ``{"kind": "approval", "call", "tool",
"server", "arguments", "interaction_id"}`` — the call frozen: its tool, its checked arguments and the
model's call id; nothing the model writes after can change it.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Final

from parley.documents.pointers import join_pointer
from parley.errors import ErrorEntry, ParleyError
from parley.models import ToolCall, ToolResult
from parley.reasoning.agent_runs.meta import RUN_ID_META
from parley.reasoning.agent_runs.offered import ApprovalRule
from parley.reasoning.agent_runs.requests import open_request, over_the_limit
from parley.reasoning.agent_runs.state import call_json
from parley.runs import events

if TYPE_CHECKING:
    from parley.config import ToolServer
    from parley.ports.tools import ListedTool
    from parley.reasoning.agent_runs.asking import AskingLoop
    from parley.reasoning.agent_runs.offered import OfferedTool
    from parley.reasoning.agent_runs.requests import Asker
    from parley.runs.model import Request
    from parley.tools.servers import ResolvedServer

#: The most of a confirmation a request shows (characters); a longer one is cut with an ellipsis.
CONFIRMATION_MAX_CHARS: Final = 8_000
#: Approvals: "``note?``: string of at most 2,000 characters".
NOTE_MAX_CHARS: Final = 2000

#: The answer schema of an approval: "``{approved: boolean, note?: string of at most 2,000 characters}``".
APPROVAL_ANSWER_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "approved": {"type": "boolean"},
        "note": {"type": "string", "maxLength": NOTE_MAX_CHARS},
    },
    "required": ["approved"],
    "additionalProperties": False,
}


class ApprovalFailed(ParleyError):
    """No request is made for the call: ``because`` is ``arguments_refused`` or ``confirmation_failed``."""

    def __init__(self, because: str, detail: str) -> None:
        super().__init__(detail)
        self.because = because
        self.detail = detail


def check_arguments(input_schema: Mapping[str, Any], arguments: Mapping[str, Any]) -> None:
    """The call's arguments against the tool's ``inputSchema``; :class:`ApprovalFailed` naming each
    problem."""
    from parley.documents.json_schema import validate_instance

    errors = validate_instance(dict(arguments), dict(input_schema), "/arguments")
    if errors:
        words = "; ".join(f"{entry.pointer}: {entry.detail}" for entry in errors[:5])
        raise ApprovalFailed(
            "arguments_refused", f"The arguments do not match the tool's input schema: {words}"
        )


def confirmation_text(rule: ApprovalRule, arguments: Mapping[str, Any], preview: Callable[[str], str]) -> str:
    """The text the person approves: the rendered confirmation, or what ``preview(tool)`` returns (the
    caller calls the preview tool, raising :class:`ApprovalFailed` when it fails)."""
    from parley.templates.render import RenderFailure, render_text

    if rule.preview is not None:
        text = preview(rule.preview)
    else:
        assert rule.confirmation is not None
        try:
            text = render_text(rule.confirmation, {"arguments": dict(arguments)})
        except RenderFailure as failure:
            raise ApprovalFailed(
                "confirmation_failed", f"The confirmation could not be rendered: {failure}"
            ) from None
    if not text.strip():
        raise ApprovalFailed(
            "confirmation_failed", "The confirmation is empty, so there is nothing to approve."
        )
    if len(text) > CONFIRMATION_MAX_CHARS:
        text = text[: CONFIRMATION_MAX_CHARS - 1] + "…"
    return text


def _shown(value: Any, limit: int = 60) -> str:
    """A value as JSON for a message, cut to ``limit`` characters."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def approval_answer_errors(answer: Any, pointer: str = "/answer") -> list[ErrorEntry]:
    """Every rule an approval's ``answer`` breaks (:data:`APPROVAL_ANSWER_SCHEMA`): ``approved`` true or
    false, an optional ``note`` of at most 2,000 characters, nothing else."""
    if not isinstance(answer, Mapping):
        return [
            ErrorEntry(
                pointer,
                'An approval is answered with {"approved": true or false, "note"?: text}, '
                f"not {_shown(answer)}.",
            )
        ]
    errors: list[ErrorEntry] = []
    for key in answer:
        if key not in ("approved", "note"):
            errors.append(
                ErrorEntry(
                    join_pointer(pointer, str(key)),
                    'Not a member of an approval\'s answer: it holds "approved" and, optionally, "note".',
                )
            )
    at = join_pointer(pointer, "approved")
    if "approved" not in answer:
        errors.append(ErrorEntry(at, "Missing: approved, true to make the call or false to refuse it."))
    elif not isinstance(answer["approved"], bool):
        errors.append(ErrorEntry(at, f"approved is true or false, not {_shown(answer['approved'])}."))
    if "note" in answer:
        note = answer["note"]
        at = join_pointer(pointer, "note")
        if not isinstance(note, str):
            errors.append(ErrorEntry(at, f"A note is text of at most 2,000 characters, not {_shown(note)}."))
        elif len(note) > NOTE_MAX_CHARS:
            errors.append(ErrorEntry(at, f"A note is at most 2,000 characters; this one has {len(note):,}."))
    return errors


def approval_answer_schema() -> dict[str, Any]:
    """A copy of :data:`APPROVAL_ANSWER_SCHEMA`, to show with a request without sharing the constant."""
    return copy.deepcopy(APPROVAL_ANSWER_SCHEMA)


def needing_approval(
    chosen: dict[tuple[str, str], tuple[ToolServer, ResolvedServer, ListedTool]],
    approvals: Mapping[str, ApprovalRule],
) -> dict[str, ApprovalRule]:
    """The chosen tools (``server/tool``) that wait for approval, with their rule: the operator's (which
    a function cannot waive, and whose confirmation wins) and the function's own."""
    needing = {
        reference: rule for reference, rule in approvals.items() if tuple(reference.split("/", 1)) in chosen
    }
    for (server_name, tool_name), (server, _, _) in chosen.items():
        for entry in server.approve:
            if entry.tool == tool_name:
                needing[f"{server_name}/{tool_name}"] = ApprovalRule(entry.confirmation, entry.preview)
    return needing


# --- the steps that ask --------------------------------------------------------------------------------


def ask_approval(loop: AskingLoop, asker: Asker, call: ToolCall, tool: OfferedTool) -> ToolResult:
    """A call of a tool that waits for approval: its arguments checked and its confirmation made, else
    ``tool_call_failed`` told to the model; then the call frozen and the request opened."""
    from parley.documents.json_schema import json_size
    from parley.reasoning.agent_runs.limits import canonical_arguments
    from parley.tools.recording import content_digest

    assert tool.approval is not None
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
    refused = over_the_limit(asker, call)
    if refused is not None:
        return refused
    frozen = json.loads(canonical_arguments(arguments))
    pending = {
        "kind": "approval",
        "call": call_json(call),
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
    return open_request(
        loop,
        asker,
        call,
        pending,
        asked={"approval": {"server": tool.server.name, "tool": tool.tool.name, "arguments": frozen}},
        message=confirmation,
        answer_schema=APPROVAL_ANSWER_SCHEMA,
        event_type=events.APPROVAL_REQUESTED,
        event_data=requested,
    )


def approval_settled(
    loop: AskingLoop, call: ToolCall, pending: dict[str, Any], answered: bool, answer: Any, request: Request
) -> ToolResult:
    """The frozen call's result once the run is taken up: sent when approved, else the refusal's note or
    that nobody answered."""
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


def _preview(loop: AskingLoop, tool: OfferedTool, name: str, arguments: dict[str, Any]) -> str:
    """Call the preview tool (read-only, of the same server) with the call's arguments; its text."""
    from parley.ports.tools import ToolNotOffered, ToolServerFailure
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
