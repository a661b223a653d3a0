"""A reasoning run (``reasoning-format.md``, "How a run works"; ``http-api.md``, "Reasoning runs").

Where each part happens (``architecture.md``, "Reasoning runs on AWS"):

- ``run`` (the api function): the document checked again (once per version), the input's defaults and
  bounds, the prompt rendered, the model resolved and offered (``parley.reasoning.offer``) — each
  rejection recorded and answered at once, nothing sent. The run is then written ``started`` with its
  input, and the reasoner port starts its work (the ``reason`` function on AWS; a thread locally; in
  the call itself when the runtime has no reasoner). The call waits for the run's end up to the run
  wait (``PARLEY_RUN_WAIT_SECONDS``), then answers as the run stands: its output, its problem, or
  ``started`` while it goes on. A dropped connection interrupts nothing: the work is elsewhere.
- ``work`` (the ``reason`` function): the run read back, its prompt rendered again at the run's moment,
  the model called within its bound (60 s plus 25 ms a token of ``max_output_tokens``, retries
  included), the answer checked (``parley.reasoning.answer``), and the ending written with the record
  (``parley.reasoning.record``) while the run is still ``started``: a second invocation changes nothing.
"""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Final

from parley.clock import format_time, parse_time
from parley.definitions.model import PlaybookRef
from parley.dynamo import StoreConflict
from parley.errors import ErrorEntry, Problem
from parley.ports.waiting import RunKey
from parley.runs import events
from parley.runs.events import run_event
from parley.runs.kinds import RunStart
from parley.runs.model import Rejection, Request, Run
from parley.runs.versions import PerVersion

if TYPE_CHECKING:
    from parley.models import ModelAnswer
    from parley.reasoning.document import ReasoningDocument
    from parley.reasoning.offer import Offer
    from parley.reasoning.prompt import Prompt
    from parley.runs.service import RunService
    from parley.tools.servers import HeaderSecrets

#: The timer's work that ends a run whose work was lost.
BOUND_WORK: Final = "reason_bound"
#: ``REASONING_MAX_INPUT_TOKENS`` when the operator sets none.
DEFAULT_MAX_INPUT_TOKENS: Final = 2_000_000
#: A model call's bound: 60 seconds plus 25 ms for every token of ``max_output_tokens``.
CALL_BASE_SECONDS: Final = 60.0
CALL_SECONDS_PER_TOKEN: Final = 0.025
#: "The whole run: 10 minutes, or one model call's limit when that is longer."
RUN_BOUND_SECONDS: Final = 600.0
#: The backstop of a run whose work was lost (the reason function cut off): checked this long after
#: the run's bound.
BACKSTOP_SECONDS: Final = 60.0
#: How often the waiting call reads the run, at first and at most.
_POLL_FIRST: Final = 0.02
_POLL_MOST: Final = 0.25


def call_bound_seconds(max_output_tokens: int) -> float:
    return CALL_BASE_SECONDS + CALL_SECONDS_PER_TOKEN * max_output_tokens


def run_bound_seconds(max_output_tokens: int) -> float:
    return max(RUN_BOUND_SECONDS, call_bound_seconds(max_output_tokens))


def bound_name(key: RunKey) -> str:
    return f"reason-bound-{key.scoped_id}"


class Reasoning:
    """The reasoning type over one lifecycle."""

    #: A run goes on in the reason function after the run wait: cancel_run may end it.
    works_elsewhere: Final = True
    #: An agent run's request that expires is told to the model, and the run goes on (agent-runs.md).
    requests_end_runs: Final = False

    def __init__(self, runs: RunService) -> None:
        self.runs = runs
        self._documents: PerVersion[ReasoningDocument] = PerVersion()

    # --- in the api function -----------------------------------------------------------------------

    def run(self, start: RunStart) -> Run:
        from parley.reasoning.input import apply_defaults_and_check_input
        from parley.reasoning.offer import offer_for
        from parley.reasoning.prompt import render_prompt

        runs, playbook, run = self.runs, start.playbook, start.run
        try:
            document = self._document(playbook, run.name, run.definition_version, start.definition.source)
            value = apply_defaults_and_check_input(document, start.input_value)
            render_prompt(document, value, start.moment)
            offer_for(document, runs.runtime.operator.models, self._environ())
        except Problem as problem:
            raise runs.rejected(playbook, run, problem, start.replacing) from None
        started = replace(run, input=value)
        runs.store.record_run(playbook, started, [], replacing=start.replacing)
        key = RunKey(playbook.org, playbook.playbook, run.run_id)
        segment = 0 if document.ask is not None else None
        self._schedule_backstop(
            key, start.moment, start.run.attempt, document.settings.max_output_tokens, segment
        )
        reasoner = runs.runtime.reasoner
        if reasoner is None:
            self.work(key)
        else:
            try:
                reasoner.start(key)
            except Exception as exc:
                lost = Problem(
                    "unavailable", "The run could not be started in the reason function; try again."
                )
                self._end(playbook, started, lost, None)
                raise lost from exc
        if run.parent is not None:
            # A workflow's call (workflow-format.md, "Calling a function"): the run's ending answers the
            # workflow's task token, so the workflow function does not wait (and bill) for the model.
            current = runs.store.get_run(playbook, run.run_id) or started
            return replace(current, record=None, input=None)
        return self._waited(playbook, run.run_id, asks=document.ask is not None)

    def _schedule_backstop(
        self,
        key: RunKey,
        moment: datetime,
        attempt: int,
        max_output_tokens: int,
        segment: int | None,
        seconds: float | None = None,
    ) -> None:
        """If the run's work is lost (its function cut off before it wrote an ending), the timer ends
        the run a minute after its bound (``seconds``, by default the whole run's), as ``unavailable``
        with ``because: run_bound``; a run that ended by then, or an agent run that waits or works in a
        later ``segment``, is left as it is. Without a scheduler (tests in process), there is no
        backstop."""
        scheduler = self.runs.runtime.scheduler
        if scheduler is None:
            return
        bound = run_bound_seconds(max_output_tokens) if seconds is None else seconds
        due = moment + timedelta(seconds=bound + BACKSTOP_SECONDS)
        work: dict[str, Any] = {"work": BOUND_WORK, "run": key.as_json(), "attempt": attempt}
        name = bound_name(key)
        if segment is not None:
            work["segment"] = segment
            name = f"{name}-{segment}"
        scheduler.schedule(name, due, work)

    def _waited(self, playbook: PlaybookRef, run_id: str, *, asks: bool) -> Run:
        """The run once it ended or (an agent run) waits for a person, or as it stands after the run
        wait."""
        from parley.runs.reading import waiting_of

        deadline = time.monotonic() + self.runs.runtime.run_wait_seconds
        pause = _POLL_FIRST
        waiting = None
        while True:
            current = self.runs.store.get_run(playbook, run_id, record=False)  # not shown here
            assert current is not None
            if current.status != "started" or time.monotonic() >= deadline:
                break
            if asks:
                # Waiting once the request is open: an answer sent at once is taken (the answer has the
                # next step taken, whether or not the wait's execution has parked yet).
                request = self.runs.store.get_request(playbook, run_id)
                if request is not None:
                    waiting = waiting_of(request)
                    if waiting is not None:
                        break
            self.runs.runtime.pause(min(pause, max(0.0, deadline - time.monotonic())))
            pause = min(pause * 2, _POLL_MOST)
        if current.status == "rejected" and current.rejection is not None:
            raise current.rejection.problem()
        if current.status == "started" and asks and waiting is None:
            waiting = waiting_of(self.runs.store.get_request(playbook, run_id))
        return replace(current, input=None, record=None, waiting=waiting)  # get_run shows the record

    # --- in the reason function --------------------------------------------------------------------

    def work(self, key: RunKey) -> str:
        """Do the run's work: ``succeeded``, ``rejected``, ``waiting`` (an agent run asked a person), or
        ``unchanged`` (not a started reasoning run: it ended already, or the invocation came twice)."""
        return self.take_up(key, resume=False)[0]

    def take_up(self, key: RunKey, *, resume: bool) -> tuple[str, int | None]:
        """Do the run's work from its start, or (``resume``) from where an agent run waited, once its
        request was answered or expired; the outcome, and the new wait's bound in seconds when the run
        asked again (``waiting``)."""
        from parley.models import ModelCallFailed, call_model
        from parley.reasoning.agent_runs.endings import RunWorkEnded
        from parley.reasoning.agent_runs.requests import RunWaits

        runs = self.runs
        playbook = PlaybookRef(key.org, key.playbook)
        run = runs.store.get_run(playbook, key.run_id)
        if run is None or run.status != "started" or run.type != "reasoning":
            return "unchanged", None
        offer: Offer | None = None
        answer: ModelAnswer | None = None
        duration_ms = 0
        warnings: list[str] = []
        try:
            document, prompt, offer = self._prepared(playbook, run)
            request = self._request(document, prompt, offer)
            if document.ask is not None:
                taken = self._claimed(playbook, run, resume)
                if taken is None:
                    return "unchanged", None
                try:
                    answer, duration_ms, warnings = self._steps(
                        playbook, run, document, offer, request, taken
                    )
                except RunWaits as waits:
                    return "waiting", waits.timeout_seconds
                except RunWorkEnded:
                    return "unchanged", None
            elif resume:
                return "unchanged", None
            elif document.tools:
                try:
                    answer, duration_ms, warnings = self._steps(playbook, run, document, offer, request, None)
                except RunWorkEnded:
                    return "unchanged", None
            else:
                began = time.monotonic()
                try:
                    answer = call_model(offer.provider, request, resolve=self._resolver())
                except ModelCallFailed as failure:
                    from parley.reasoning.failures import failure_problem

                    raise failure_problem(failure) from None
                finally:
                    duration_ms = round((time.monotonic() - began) * 1000)
            output, record = self._checked(document, offer, prompt, answer, duration_ms, warnings)
        except Problem as problem:
            return self._end(playbook, run, problem, _answered_record(answer, duration_ms)), None
        return self._succeed(playbook, run, output, record), None

    def _claimed(self, playbook: PlaybookRef, run: Run, resume: bool) -> _Segment | None:
        """Take the agent run's next segment of work, once: its start, or (``resume``) the work after
        its latest request ended; ``None`` when there is none to take (another invocation took it, or
        the request is still open)."""
        store = self.runs.store
        if not resume:
            segment = _Segment(0, None, None)
        else:
            work = store.get_work(playbook, run.run_id)
            request = store.get_request(playbook, run.run_id)
            if work is None or work.state is None or request is None or request.state not in ENDED_REQUESTS:
                return None
            segment = _Segment(int(work.state["requests"]), work.state, request)
        try:
            store.claim_work(playbook, run.run_id, segment.number)
        except StoreConflict:
            return None
        return segment

    def _steps(
        self,
        playbook: PlaybookRef,
        run: Run,
        document: ReasoningDocument,
        offer: Offer,
        request: Any,
        segment: _Segment | None,
    ) -> tuple[ModelAnswer, int, list[str]]:
        """A run of a function with ``tools`` or ``ask`` (``parley.reasoning.agent_runs``): its tools checked
        before the model is called, then the steps (of an agent run: from the ``segment`` it took up);
        the final answer (with the usage of every step), the model's time, and the warnings of the
        tools' input schemas. ``RunWaits`` once an agent run asks a person."""
        from parley.models import call_model
        from parley.reasoning.agent_runs.asking_a_person import AskingAPerson
        from parley.reasoning.agent_runs.before import tools_for_run
        from parley.reasoning.agent_runs.loop import ToolLoop
        from parley.reasoning.agent_runs.offered import ApprovalRule
        from parley.reasoning.agent_runs.requests import Asker

        runtime = self.runs.runtime
        offered, warnings = tools_for_run(
            runtime,
            self.header_secrets,
            playbook,
            document.tools,
            offer.provider.kind,
            approvals={
                str(entry): ApprovalRule(entry.confirmation, entry.preview) for entry in document.approve
            },
            asks=document.ask is not None,
        )
        models = runtime.operator.models
        window = next((entry.context_window for entry in models.catalog if entry.id == offer.resolved), None)
        resolve = self._resolver()
        max_tokens = document.settings.max_output_tokens
        worked = float(segment.state["worked_seconds"]) if segment is not None and segment.state else 0.0
        left = max(run_bound_seconds(max_tokens) - worked, call_bound_seconds(max_tokens))
        if segment is not None and segment.number > 0:
            key = RunKey(playbook.org, playbook.playbook, run.run_id)
            self._schedule_backstop(
                key, runtime.clock.now(), run.attempt, max_tokens, segment.number, seconds=left
            )
        loop = ToolLoop(
            runtime=runtime,
            store=self.runs.store,
            playbook=playbook,
            run=run,
            offered=offered,
            call=lambda step: call_model(offer.provider, step, resolve=resolve),
            deadline=time.monotonic() + left,
            max_input_tokens=models.reasoning_max_input_tokens or DEFAULT_MAX_INPUT_TOKENS,
            context_window=window,
            progress=document.ask is not None and document.ask.progress,
            activity=document.ask is not None,
            model_label=offer.resolved,
            called=list(run.calls or ()),
            asking=(
                None
                if segment is None
                else AskingAPerson(Asker(self.runs, playbook, run, document, segment.number))
            ),
            worked_before=worked,
        )
        if segment is not None and segment.state is not None and segment.request is not None:
            steps = loop.resume(request, segment.state, segment.request)
        else:
            steps = loop.steps(request)
        return replace(steps.answer, usage=steps.usage), steps.duration_ms, warnings

    def _prepared(self, playbook: PlaybookRef, run: Run) -> tuple[ReasoningDocument, Prompt, Offer]:
        from parley.reasoning.offer import offer_for
        from parley.reasoning.prompt import render_prompt

        version = self.runs.runtime.definitions.get_version(
            playbook, "reasoning", run.name, run.definition_version
        )
        if version is None:
            raise Problem("conflict", f"The version {run.definition_version} of {run.name!r} is gone.")
        document = self._document(playbook, run.name, run.definition_version, version.source)
        prompt = render_prompt(
            document, run.input if isinstance(run.input, dict) else {}, parse_time(run.started_at)
        )
        return document, prompt, offer_for(document, self.runs.runtime.operator.models, self._environ())

    def _request(self, document: ReasoningDocument, prompt: Prompt, offer: Offer) -> Any:
        from parley.models import ModelRequest

        settings = document.settings
        schema: Mapping[str, Any] | None = None
        if document.output_format == "json":
            if document.output_shape is not None:
                from parley.reasoning.shapes import shape_schema

                schema = shape_schema(document.output_shape)
            else:
                schema = document.output_schema
        return ModelRequest(
            model=offer.model_id,
            instructions=prompt.instructions,
            message=prompt.message,
            settings=settings,
            output_format=document.output_format,
            output_schema=schema,
            provider_options=offer.provider_options,
            timeout_seconds=call_bound_seconds(settings.max_output_tokens),
        )

    def _checked(
        self,
        document: ReasoningDocument,
        offer: Offer,
        prompt: Prompt,
        answer: ModelAnswer,
        duration_ms: int,
        warnings: list[str],
    ) -> tuple[Any, dict[str, Any]]:
        from parley.reasoning.answer import checked_output
        from parley.reasoning.record import full_record

        output = checked_output(document, answer)
        return output, full_record(document, offer, prompt, answer, output, duration_ms, warnings)

    @functools.cached_property
    def header_secrets(self) -> HeaderSecrets:
        """Tool servers' header values, read through the runtime's Secrets Manager client on first need."""
        from parley.tools.servers import HeaderSecrets

        return HeaderSecrets(lambda: self.runs.runtime.secretsmanager)

    def _succeed(self, playbook: PlaybookRef, run: Run, output: Any, record: dict[str, Any]) -> str:
        now = self.runs.runtime.clock.now()
        done = replace(
            run, status="succeeded", output=output, record=record, input=None, finished_at=format_time(now)
        )
        event = run_event(events.RUN_SUCCEEDED, now, run.run_id, {"output": output})
        try:
            self.runs.retrying(lambda: self.runs.store.end_run(playbook, done, event))
        except StoreConflict:
            return "unchanged"
        return "succeeded"

    def _end(self, playbook: PlaybookRef, run: Run, problem: Problem, record: dict[str, Any] | None) -> str:
        now = self.runs.runtime.clock.now()
        rejection = Rejection.of(problem)
        ended = replace(
            run,
            status="rejected",
            rejection=rejection,
            record=record,
            input=None,
            finished_at=format_time(now),
        )
        event = run_event(events.RUN_REJECTED, now, run.run_id, {"rejection": rejection.as_json()})
        try:
            self.runs.retrying(lambda: self.runs.store.end_run(playbook, ended, event))
        except StoreConflict:
            return "unchanged"
        return "rejected"

    # --- shared ----------------------------------------------------------------------------------

    def _document(self, playbook: PlaybookRef, name: str, version: int, source: str) -> ReasoningDocument:
        """The version's document, checked again (every run checks it; a version is checked once per
        lifecycle): ``conflict`` when it no longer passes."""

        def checked() -> ReasoningDocument:
            from parley.reasoning.document import check_reasoning_document

            try:
                return check_reasoning_document(source)
            except Problem:
                raise Problem(
                    "conflict",
                    f"The reasoning definition {name!r} no longer passes its checks (version {version}); "
                    "save it again with update_definition.",
                ) from None

        return self._documents.get((playbook.org, playbook.playbook, name, version), checked)

    def _environ(self) -> Mapping[str, str]:
        environ = self.runs.runtime.environ
        return os.environ if environ is None else environ

    def _resolver(self) -> Any:
        from parley.models import resolver_for

        return resolver_for(self.runs.runtime)

    # --- the lifecycle's other hooks: an agent run's requests ---------------------------------------

    def waiting(self, playbook: PlaybookRef, request: Request) -> None:
        return None

    def resume(self, key: RunKey, request: Request) -> str:
        """An agent run's request was answered or expired: the reason function takes the work up
        (:meth:`take_up`, claimed once), invoked asynchronously by whoever wrote the request's ending;
        without a reasoner (a runtime in one process), here and now."""
        reasoner = self.runs.runtime.reasoner
        if reasoner is None:
            self.take_up(key, resume=True)
        else:
            reasoner.start(key, resume=True)
        return "resumed"

    def forget(self, key: RunKey, request: Request) -> None:
        return None

    def answer_errors(self, request: Request, answer: Any) -> list[ErrorEntry]:
        """A question's answer rules, or an approval's (``agent-runs.md``), with pointers under
        ``/answer``."""
        from parley.reasoning.agent_runs.approvals import approval_answer_errors
        from parley.reasoning.agent_runs.questions import Question, answer_errors

        asked = request.asked or {}
        if "question" in asked:
            return answer_errors(Question.from_json(asked["question"]), answer)
        if "approval" in asked:
            return approval_answer_errors(answer)
        return []

    def timed(self, work: Mapping[str, Any]) -> dict[str, Any]:
        """The backstop (``reason_bound``): end the run if it is still ``started`` in the same attempt."""
        if work.get("work") != BOUND_WORK:
            raise ValueError(f"reasoning runs schedule no work such as {work.get('work')!r}")
        key = RunKey.from_json(work["run"])
        playbook = PlaybookRef(key.org, key.playbook)
        run = self.runs.store.get_run(playbook, key.run_id, record=False)  # ends only a started run
        outcome = "unchanged"
        if run is not None and run.status == "started" and run.attempt == work.get("attempt"):
            if "segment" in work and not self._segment_at_work(playbook, key.run_id, int(work["segment"])):
                return {"run": key.as_json(), "work": BOUND_WORK, "outcome": outcome}
            from parley.reasoning.agent_runs.endings import cannot_finish

            detail = (
                "The run did not finish within its bound (10 minutes, or its model call's limit when that is "
                "longer)."
            )
            # A run that called tools ends as tools_unfinished or effect_unknown; one that called none, as
            # plain unavailable (cannot_finish says which).
            problem = cannot_finish(list(run.calls or ()), "run_bound", detail)
            outcome = self._end(playbook, run, problem, None)
        return {"run": key.as_json(), "work": BOUND_WORK, "outcome": outcome}

    def _segment_at_work(self, playbook: PlaybookRef, run_id: str, segment: int) -> bool:
        """Whether an agent run still works in ``segment``: not waiting for a person, nor taken up in a
        later segment (each has its own bound)."""
        request = self.runs.store.get_request(playbook, run_id)
        if request is not None and request.state == "open":
            return False
        work = self.runs.store.get_work(playbook, run_id)
        return work is not None and work.claimed == segment

    def listed(self, request: Request) -> dict[str, Any]:
        return request.as_listed()


#: The ends of a request after which an agent run's work is taken up again.
ENDED_REQUESTS: Final = ("answered", "expired")


@dataclass(frozen=True)
class _Segment:
    """A segment of an agent run's work: its number (0 from the start, ``n`` after the ``n``-th
    request), and, when taken up after a request, the state kept then and the request as it ended."""

    number: int
    state: dict[str, Any] | None
    request: Request | None


def _answered_record(answer: ModelAnswer | None, duration_ms: int) -> dict[str, Any] | None:
    """A run rejected after its model answered keeps its usage and the call's duration; one rejected
    before keeps no record."""
    if answer is None:
        return None
    from parley.reasoning.record import answered_record

    return answered_record(answer, duration_ms)
