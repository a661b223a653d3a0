"""Interaction functions as the run lifecycle sees them (``parley.runs.kinds``): check a document,
run a definition, take an answer after the wait, the timed work (attempts, reads) and how a request is
listed.

Running (``interaction-format.md``, "How a run ends", "Bounds"):

- the active definition is re-checked (once per version: the prepared function is cached);
- a function with ``call`` asks its system at once, inside the request (``parley.interaction.call``);
- the input is checked and the request rendered (``parley.interaction.prepare``); every rejection is
  recorded on the run and answered with its problem;
- a notification without ``deliver`` succeeds at once with ``{}``; a question (or a notification sent
  through a tool) opens its request with its run, ``interaction_requested`` and the open-requests
  counter (``count < limit``, else ``503 unavailable``, kind ``requests_full``), then waits
  (``parley.runs.waiting``); a request sent through a tool makes its first attempt at once.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Final

from parley.clock import format_time
from parley.dynamo import StoreConflict
from parley.errors import ErrorEntry, Problem
from parley.ports.waiting import RunKey
from parley.runs import events
from parley.runs.events import run_event
from parley.runs.kinds import RunStart
from parley.runs.model import Request, Run
from parley.runs.store import RequestsFull
from parley.runs.versions import PerVersion

if TYPE_CHECKING:
    from parley.definitions.model import Definition, PlaybookRef
    from parley.documents.definition import CheckedDocument
    from parley.interaction.delivery import Deliveries
    from parley.interaction.prepare import PreparedFunction
    from parley.interaction.replies.conversations import Conversations
    from parley.runs.service import RunService
    from parley.tools.servers import HeaderSecrets


def check(source: str) -> CheckedDocument:
    """Check an interaction document when it is saved, and write its overview."""
    from parley.interaction.document import check_interaction_source

    return check_interaction_source(source)


def bind(runs: RunService) -> Interaction:
    return Interaction(runs)


class Interaction:
    """The interaction type over one lifecycle."""

    #: A started interaction run waits on its request, or is within the call that started it.
    works_elsewhere: Final = False
    #: An unanswered request ends the run ``unanswered`` (``interaction-format.md``, "How a run ends").
    requests_end_runs: Final = True

    def __init__(self, runs: RunService) -> None:
        self.runs = runs
        self._prepared: PerVersion[PreparedFunction] = PerVersion()

    @functools.cached_property
    def header_secrets(self) -> HeaderSecrets:
        """Tool servers' header values, read through the runtime's Secrets Manager client on first need."""
        from parley.tools.servers import HeaderSecrets

        return HeaderSecrets(lambda: self.runs.runtime.secretsmanager)

    @functools.cached_property
    def conversations(self) -> Conversations:
        """The reading of conversations ("Answering by reply")."""
        from parley.interaction.replies.conversations import Conversations

        return Conversations(self.runs, self.header_secrets)

    @functools.cached_property
    def deliveries(self) -> Deliveries:
        """The attempts of requests sent through tools ("Attempts")."""
        from parley.interaction.delivery import Deliveries

        return Deliveries(self.runs, self.header_secrets, self.conversations)

    # --- running ---------------------------------------------------------------------------------

    def run(self, start: RunStart) -> Run:
        # The renderer and the schema checks load with the first run, not with the api module.
        from parley.interaction.prepare import check_input, render_request

        runs, playbook, run, replacing = self.runs, start.playbook, start.run, start.replacing
        input_value, moment = start.input_value, start.moment
        try:
            function = self._prepare(playbook, start.definition)
            if function.refusal is not None:
                raise function.refusal
            check_input(function, input_value)
            if function.call is not None:
                from parley.interaction.call import render_arguments

                arguments, size = render_arguments(function.call, input_value, moment)
                rendered = None
            else:
                rendered = render_request(function, input_value, moment)
            waiting = (function.takes_answer or function.deliver is not None) and function.call is None
            if function.deliver is not None:
                self._check_tools_offered(playbook, function.deliver.server, function.deliver.tools)
            if waiting and (runs.runtime.waits is None or runs.runtime.scheduler is None):
                raise Problem("unavailable", "This runtime has no way to wait for answers: it cannot ask.")
        except Problem as problem:
            raise runs.rejected(playbook, run, problem, replacing) from None
        if function.call is not None:
            from parley.interaction.call import CallRun

            caller = CallRun(
                runs.runtime,
                runs.store,
                self.header_secrets,
                playbook,
                rejected=lambda problem: runs.rejected(playbook, run, problem, replacing),
            )
            return caller.run(run, function.call, function.output_schema, arguments, size, replacing)
        assert rendered is not None
        run_id, at = run.run_id, run.started_at
        expires_at = format_time(moment + function.expires)
        requested = run_event(
            events.INTERACTION_REQUESTED,
            moment,
            run_id,
            {
                "delivery": None,
                "to": rendered.to,
                "from": rendered.answerer,
                "message_size": len(rendered.message.encode("utf-8", "surrogatepass")),
                "takes_answer": function.takes_answer,
                "expires_at": expires_at,
            },
        )
        if not function.takes_answer and function.deliver is None:
            # A notification without `deliver` is delivered by being recorded: it succeeds at once.
            done = replace(run, status="succeeded", output={}, finished_at=at)
            succeeded = run_event(events.RUN_SUCCEEDED, moment, run_id, {"output": {}})
            runs.store.record_run(playbook, done, [requested, succeeded], replacing=replacing)
            return done
        request = Request(
            run_id=run_id,
            type=run.type,
            function=run.name,
            version=start.definition.version,
            to=rendered.to,
            answerer=rendered.answerer,
            message=rendered.message,
            takes_answer=function.takes_answer,
            requested_at=at,
            expires_at=expires_at,
            answer_schema=function.output_schema,
        )
        if function.deliver is not None:
            from parley.interaction.delivery import DeliveryRefused, refused_data, render_delivery

            try:
                delivery = render_delivery(function.deliver, input_value, moment, request)
            except DeliveryRefused as refused:
                data = refused_data(refused, function.deliver.server, function.deliver.tool)
                refusal = run_event(events.DELIVERY_REFUSED, moment, run_id, data)
                raise runs.rejected(
                    playbook, run, refused.problem(), replacing, before=[requested, refusal]
                ) from None
            except Problem as problem:
                raise runs.rejected(playbook, run, problem, replacing) from None
            request = replace(request, delivery=delivery, standing="to_deliver")
            requested.data["delivery"] = {"server": delivery.server, "tool": delivery.tool}
        run = replace(run, takes_answer=function.takes_answer)
        limit = runs.runtime.operator.limits.interaction_open_requests
        try:
            runs.store.open_request(playbook, run, request, requested, limit=limit, replacing=replacing)
        except RequestsFull:
            full = Problem(
                "unavailable",
                f"The playbook already has {limit:,} open requests, as many as this runtime allows "
                "(INTERACTION_OPEN_REQUESTS). Answer, cancel or let some expire, then try again.",
                kind="requests_full",
            )
            raise runs.rejected(playbook, run, full, replacing) from None
        try:
            runs.start_waiting(playbook, request, execution=run.parent is None)
        except Exception as exc:
            raise runs.abandoned(playbook, run, exc) from exc
        return run

    def _check_tools_offered(self, playbook: PlaybookRef, server_name: str, tools: tuple[str, ...]) -> None:
        """ "A run checks every tool its function names before it sends anything": the server must serve
        the playbook and the operator allow each tool; else ``503 unavailable``, ``tool_not_offered``."""
        from parley.ports.tools import ToolNotOffered
        from parley.tools.servers import check_allowed, server_serving

        try:
            server = server_serving(self.runs.runtime.operator, playbook, server_name)
            for tool in tools:
                check_allowed(server, tool)
        except ToolNotOffered as not_offered:
            raise Problem(
                "unavailable",
                f"{not_offered.detail} Nothing was sent.",
                kind="tool_not_offered",
                because=not_offered.because,
            ) from None

    def _prepare(self, playbook: PlaybookRef, definition: Definition) -> PreparedFunction:
        def prepared() -> PreparedFunction:
            from parley.interaction.prepare import prepare_function

            checked = self.runs.runtime.check_document(definition.type, definition.source)
            return prepare_function(definition, checked)

        key = (playbook.org, playbook.playbook, definition.type, definition.name, definition.version)
        return self._prepared.get(key, prepared)

    # --- waiting ---------------------------------------------------------------------------------

    def waiting(self, playbook: PlaybookRef, request: Request) -> None:
        if request.delivery is not None and request.attempts == 0:
            from parley.interaction.delivery import attempt_name, attempt_work

            # "Attempted at once": due now (on AWS the scheduler port invokes the timer directly).
            key = RunKey(playbook.org, playbook.playbook, request.run_id)
            scheduler = self.runs.ports()[1]
            scheduler.schedule(attempt_name(key, 1), self.runs.runtime.clock.now(), attempt_work(key, 1))

    def resume(self, key: RunKey, request: Request) -> str:
        """An answered request whose run is still ``started`` (its ending was written apart from the
        answer by an older version, which a crash could cut in two): the run succeeds with the answer."""
        from parley.definitions.model import PlaybookRef
        from parley.runs.answering import answered_ending

        playbook = PlaybookRef(key.org, key.playbook)
        run = self.runs.store.get_run(playbook, key.run_id)
        if request.fact is None or run is None or run.status != "started":
            return "unchanged"
        done, event = answered_ending(run, request.fact, self.runs.runtime.clock.now())
        try:
            self.runs.store.end_run(playbook, done, event)
        except StoreConflict:
            return "unchanged"
        return "succeeded"

    def forget(self, key: RunKey, request: Request) -> None:
        """Forget a delivery attempt still pending."""
        if request.delivery is not None:
            from parley.interaction.delivery import ATTEMPTS, attempt_name

            if request.attempts < ATTEMPTS:
                self.runs.ports()[1].cancel(attempt_name(key, request.attempts + 1))

    def timed(self, work: Mapping[str, Any]) -> dict[str, Any]:
        """A delivery's attempt or the check that counts a cut-off attempt as ``lost`` (``deliver``,
        ``lost``: ``{"run", "attempt": n}``), or a read of a conversation (``read``:
        ``{"conversation", "read": n}``)."""
        kind = work.get("work")
        if kind == "read":
            from parley.interaction.replies.conversations import ConversationRef

            ref = ConversationRef.from_json(work["conversation"])
            number = work.get("read")
            if not isinstance(number, int) or isinstance(number, bool):
                raise ValueError("the timer's read work names its read as a number")
            return {
                "conversation": ref.as_json(),
                "work": kind,
                "outcome": self.conversations.read(ref, number),
            }
        run = RunKey.from_json(work["run"])
        number = work.get("attempt")
        if not isinstance(number, int) or isinstance(number, bool):
            raise ValueError(f"the timer's {kind} work names its attempt as a number")
        deliveries = self.deliveries
        outcome = deliveries.attempt(run, number) if kind == "deliver" else deliveries.lost(run, number)
        return {"run": run.as_json(), "work": kind, "outcome": outcome}

    def listed(self, request: Request) -> dict[str, Any]:
        return request.as_listed()

    def answer_errors(self, request: Request, answer: Any) -> list[ErrorEntry]:
        """An interaction request's answer is its ``answer_schema``'s instance: nothing more to check."""
        return []
