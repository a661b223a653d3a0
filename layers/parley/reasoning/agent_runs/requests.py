"""An agent run's requests (``agent-runs.md``, "A run that waits"): a question (``request_input``, or a
tool that asks) or an approval of a frozen call, opened in the playbook's inbox under the run's id.

:class:`Asker` opens one: ``to`` rendered from ``ask.to`` at the moment it asks, ``expires_at`` from
``ask.expires``, the request with its ``question`` or ``approval``, its event (``input_requested`` or
``approval_requested``) and the work's state kept in one transaction (``DynamoRunStore.ask``), then the
run's execution parked on it (``parley.runs.waiting``). The run's work then stops (:class:`RunWaits`);
the answer, the expiry or a cancel takes it up again in a new invocation.

:func:`open_request` is what each step that asks (a question, an approval, a tool that asks) does with
it: the request opened with the loop's state and the *pending* call (the run then waits), or the inbox
being full told to the model; :func:`over_the_limit` refuses a 21st request.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Final, NoReturn

from parley.clock import format_time
from parley.definitions.model import PlaybookRef
from parley.dynamo import StoreConflict
from parley.errors import ParleyError, Problem
from parley.models import ToolCall, ToolResult
from parley.reasoning.agent_runs.endings import RunWorkEnded
from parley.runs import events
from parley.runs.events import new_event_id, run_event
from parley.runs.model import Request

if TYPE_CHECKING:
    from parley.reasoning.agent_runs.asking import AskingLoop
    from parley.reasoning.document import ReasoningDocument
    from parley.runs.model import Run
    from parley.runs.service import RunService

#: "A run asks at most 20 times (questions and approvals together)."
MAX_REQUESTS: Final = 20
#: The wait task's own timeout is the request's expiry plus this (``parley.runs.waiting``).
BACKSTOP_SECONDS: Final = 60


class RunWaits(ParleyError):
    """The run opened a request and waits: its work stops; ``timeout_seconds`` is its wait's bound."""

    def __init__(self, timeout_seconds: int) -> None:
        super().__init__(f"the run waits (at most {timeout_seconds} s)")
        self.timeout_seconds = timeout_seconds


class AskRefused(ParleyError):
    """No request can be opened now (the playbook's inbox is full): the model is told why."""


@dataclass
class Asker:
    """Opens the requests of one segment of a run's work (the segment its invocation claimed)."""

    runs: RunService
    playbook: PlaybookRef
    run: Run
    document: ReasoningDocument
    segment: int

    def open(
        self,
        *,
        asked: dict[str, Any],
        message: str,
        answer_schema: Any,
        event_type: str,
        event_data: dict[str, Any],
        state: dict[str, Any],
    ) -> NoReturn:
        """Open the request, keep ``state`` beside it, park the run's execution; raise :class:`RunWaits`
        (or ``RunWorkEnded`` when the run ended meanwhile, :class:`AskRefused` when the inbox is full)."""
        from parley.runs.store import RequestsFull

        ask = self.document.ask
        assert ask is not None
        runs = self.runs
        now = runs.runtime.clock.now()
        expires_at = format_time(now + ask.expires)
        to = self._to(now)
        data = {**event_data, "to": to, "expires_at": expires_at, "number": self.segment + 1}
        event = run_event(event_type, now, self.run.run_id, data, step=events.WORK_STEP)
        request = Request(
            run_id=self.run.run_id,
            type=self.run.type,
            function=self.run.name,
            version=self.run.definition_version,
            to=to,
            answerer="",
            message=message,
            takes_answer=True,
            requested_at=format_time(now),
            expires_at=expires_at,
            answer_schema=answer_schema,
            asked=asked,
            number=self.segment + 1,
        )
        limit = runs.runtime.operator.limits.interaction_open_requests
        try:
            kept = {**state, "requests": self.segment + 1}
            runs.store.ask(self.playbook, self.run, self.segment, request, [event], kept, limit=limit)
        except RequestsFull:
            raise AskRefused(
                f"The playbook already has {limit:,} open requests, as many as this runtime allows; nothing "
                "was asked. Go on without asking, or answer with what you have."
            ) from None
        except StoreConflict:
            raise RunWorkEnded from None
        try:
            runs.start_waiting(self.playbook, request, execution=self.run.parent is None)
        except Exception as exc:
            runs.abandoned(self.playbook, self.run, exc)
            raise RunWorkEnded from exc
        raise RunWaits(round(ask.expires / timedelta(seconds=1)) + BACKSTOP_SECONDS)

    def _to(self, now: Any) -> str:
        """``ask.to`` rendered with ``input``, ``today`` and ``now`` at the moment the run asks."""
        from parley.parties import checked_party
        from parley.templates.render import RenderFailure, render_text

        ask = self.document.ask
        assert ask is not None
        value = self.run.input if isinstance(self.run.input, dict) else {}
        data = {"input": value, "today": now.strftime("%Y-%m-%d"), "now": format_time(now)}
        try:
            to = render_text(ask.to, data, refuse_structures=True)
        except RenderFailure as failure:
            raise Problem("conflict", f"ask.to could not be rendered: {failure}", kind="unworkable") from None
        return checked_party(to, "ask.to")


def open_request(
    loop: AskingLoop,
    asker: Asker,
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

    interaction_id = new_event_id(event_type, loop.runtime.clock.now(), events.WORK_STEP)
    pending = {**pending, "interaction_id": interaction_id}
    try:
        asker.open(
            asked=asked,
            message=message,
            answer_schema=answer_schema,
            event_type=event_type,
            event_data={"interaction_id": interaction_id, **event_data},
            state=loop.snapshot(pending),
        )
    except AskRefused as refused:
        return ToolResult(call.id, call.name, str(refused), True)


def over_the_limit(asker: Asker, call: ToolCall) -> ToolResult | None:
    """The tool error of a request past the run's 20th; ``None`` while the run may still ask."""
    if asker.segment < MAX_REQUESTS:
        return None
    return ToolResult(
        call.id,
        call.name,
        f"This run has asked {MAX_REQUESTS} times, as many as a run may (questions and approvals together); "
        "nothing was asked. Go on with what you have.",
        True,
    )
