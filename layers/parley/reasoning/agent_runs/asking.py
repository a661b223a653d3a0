"""What the tool loop and an agent run's asking know of each other (``agent-runs.md``): two interfaces, so
that the loop depends on the asking only through :class:`Asking`, and the steps that ask reach the loop
only through :class:`AskingLoop`, neither importing the other.

- :class:`Asking` is what a run with ``ask`` gives its loop (``asking_a_person.AskingAPerson``): the
  built-in ``request_input`` offered beside the tools, a question the model asks, an approval of a
  frozen call, a tool's result that asks, and, once the run is taken up again, the asked call's result
  from the answer or the expiry. A run without ``ask`` gives none.
- :class:`AskingLoop` is what those steps may do with the loop (``loop.ToolLoop``): record an event,
  keep the loop's state beside a request, send a call a person's answer let go, and set the answer every
  later call carries in its ``_meta``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from parley.models import ToolCall, ToolResult, ToolSpec
    from parley.ports.runtime import Runtime
    from parley.ports.tools import ListedTool, ToolAnswer
    from parley.reasoning.agent_runs.offered import OfferedTool
    from parley.runs.model import Request, Run


class AskingLoop(Protocol):
    """The loop, as the steps that ask see it."""

    runtime: Runtime
    run: Run
    offered: dict[str, OfferedTool]
    #: The answer that resumed this segment, sent in every call's ``_meta`` (``None``: none).
    response_meta: dict[str, Any] | None

    def record(self, kind: str, data: dict[str, Any]) -> None:
        """Write one event of the run's work."""
        ...

    def snapshot(self, pending: dict[str, Any]) -> dict[str, Any]:
        """The loop's state while it waits for ``pending`` (the asked call), kept beside the request."""
        ...

    def send_after_answer(
        self, call: ToolCall, tool: OfferedTool, *, counted: bool, listed: ListedTool | None = None
    ) -> ToolResult:
        """Send a call a person's answer let go (an approved frozen call, ``counted`` among the run's 25,
        or a continuation) within the room of the step in progress."""
        ...


class Asking(Protocol):
    """An agent run's asking, as the loop sees it. Each step may raise ``RunWaits`` (a request was
    opened: the run's work stops) or ``RunWorkEnded``."""

    def specs(self) -> tuple[ToolSpec, ...]:
        """The built-in tools offered beside the function's (``request_input``)."""
        ...

    def question(self, loop: AskingLoop, call: ToolCall) -> ToolResult | None:
        """The result of a call of a built-in tool of asking; ``None`` for a call of any other tool."""
        ...

    def approval(self, loop: AskingLoop, call: ToolCall, tool: OfferedTool) -> ToolResult:
        """A call of a tool that waits for a person's approval."""
        ...

    def tool_asks(
        self, loop: AskingLoop, call: ToolCall, tool: OfferedTool, call_id: str, answer: ToolAnswer
    ) -> ToolResult | None:
        """A tool's answer that asks the person (its ``_meta``); ``None`` when it asks nothing."""
        ...

    def settle(self, loop: AskingLoop, pending: dict[str, Any], request: Request) -> ToolResult:
        """The asked call's result, from the request's answer or its expiry (the run was taken up)."""
        ...
