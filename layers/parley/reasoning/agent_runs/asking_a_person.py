"""What a run with ``ask`` gives its loop (``agent-runs.md``, "Turning it on: ``ask``"): the
:class:`~parley.reasoning.agent_runs.asking.Asking` that offers ``request_input``, asks a question
(``questions``), an approval of a frozen call (``approvals``) or a tool's question (``tools_that_ask``),
each opened by the segment's :class:`~parley.reasoning.agent_runs.requests.Asker`; and, when the run is
taken up again, settles the asked call from the request's answer or its expiry, by the pending call's
``kind`` (``question``, ``approval`` or ``continuation``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from parley.reasoning.agent_runs import approvals, questions, tools_that_ask
from parley.reasoning.agent_runs.state import call_from

if TYPE_CHECKING:
    from parley.models import ToolCall, ToolResult, ToolSpec
    from parley.ports.tools import ToolAnswer
    from parley.reasoning.agent_runs.asking import AskingLoop
    from parley.reasoning.agent_runs.offered import OfferedTool
    from parley.reasoning.agent_runs.requests import Asker
    from parley.runs.model import Request


@dataclass
class AskingAPerson:
    """The asking of one segment of an agent run's work; ``asker`` opens its requests."""

    asker: Asker

    def specs(self) -> tuple[ToolSpec, ...]:
        return (questions.request_input_spec(),)

    def question(self, loop: AskingLoop, call: ToolCall) -> ToolResult | None:
        if call.name != questions.REQUEST_INPUT:
            return None
        return questions.ask_question(loop, self.asker, call)

    def approval(self, loop: AskingLoop, call: ToolCall, tool: OfferedTool) -> ToolResult:
        return approvals.ask_approval(loop, self.asker, call, tool)

    def tool_asks(
        self, loop: AskingLoop, call: ToolCall, tool: OfferedTool, call_id: str, answer: ToolAnswer
    ) -> ToolResult | None:
        return tools_that_ask.tool_asks(loop, self.asker, call, tool, call_id, answer)

    def settle(self, loop: AskingLoop, pending: dict[str, Any], request: Request) -> ToolResult:
        call = call_from(pending["call"])
        answered = request.state == "answered" and request.fact is not None
        answer = request.fact.answer if answered and request.fact is not None else None
        kind = pending["kind"]
        if kind == "approval":
            return approvals.approval_settled(loop, call, pending, answered, answer, request)
        if kind == "question":
            return questions.question_settled(loop, call, pending, answered, answer, request.expires_at)
        return tools_that_ask.continuation_settled(loop, call, pending, answered, answer, request.expires_at)
