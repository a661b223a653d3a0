"""The rules of interaction runs (``interaction-format.md``: "How a run ends", "Bounds", "The run's
history", "Answering a request", "Listing requests"; ``http-api.md``: "Runs", "Events").

Running (``run_definition``), for functions that ask through the inbox, and notifications:

- the active definition is re-checked (once per version: the prepared function is cached); a retired
  one is ``409``; one with ``deliver``, or a reasoning function, is ``409 unworkable``: this runtime
  does not send through tools nor ask models yet;
- a function with ``call`` asks its system at once, inside the request (``parley.runs.call``);
- the input is checked and the request rendered (``parley.runs.prepare``); every rejection is recorded
  on the run (``rejected``, with its ``rejection``) and answered with its problem;
- a notification without ``deliver`` succeeds at once with ``{}``; a question opens its request with
  its run, ``interaction_requested`` and the open-requests counter (``count < limit``, else ``503
  unavailable``, kind ``requests_full``), then schedules the expiry and starts the run's execution,
  which parks on a task token (``park_request``).

Retrying under a run id (same id, same definition and input): a ``started`` or ``succeeded`` run is
answered as recorded (a started one re-arms its expiry and execution, both idempotent, so a retry
repairs a start cut short); a rejection as ``invalid_input``, ``unanswered`` (``410``) or ``cancelled``
answers its recorded problem; after ``conflict``, ``unavailable`` or ``failed`` the definition runs
again (``reasoning-format.md``: "After unavailable, conflict or a failure, they run the definition
again"), replacing the recorded attempt under a condition. Same id, other definition or input: ``409``.
A run that called its tool (``called``) and did not succeed never runs again: ``409 tools_called``
(``because: only_read`` once ended, when the tool is read-only); one refused before sending runs again.

Endings: exactly one of an answer, the expiry and a cancel moves the request from ``open`` (the
store's condition); the losers are told ``409`` (the timer does nothing). The answer's execution then
settles the run ``succeeded`` (``settle_run``); an expiry or a cancel writes the run's ending in its own
transaction and ends the wait with ``fail``. Every handler is idempotent (at-least-once delivery).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import random
import re
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, Any, Final, TypeVar

from parley.clock import format_time, parse_time
from parley.definitions.cursor import decode_cursor, encode_cursor
from parley.definitions.model import DEFINITION_TYPES, Definition, PlaybookRef
from parley.definitions.service import require_type
from parley.dynamo import StoreConflict, StoreContention
from parley.errors import ErrorEntry, Problem
from parley.runs import events
from parley.runs.events import event_json, is_event_id, new_event_id
from parley.runs.model import RUN_STATUSES, AnswerFact, Event, Page, Rejection, Request, Run, invalid_input
from parley.runs.ports import CANCELLED_ERROR, EXPIRED_ERROR, RunKey, Scheduler, Waits
from parley.runs.store import DynamoRunStore, RequestsFull, RunTaken

if TYPE_CHECKING:
    from parley.replies.conversations import Conversations
    from parley.runs.delivery import Deliveries
    from parley.runs.prepare import PreparedFunction
    from parley.runtime import Runtime
    from parley.tools.servers import HeaderSecrets

DEFAULT_LIMIT: Final = 50
MAX_LIMIT: Final = 100
CLAIMED_FOR_MAX_BYTES: Final = 256
CANCEL_REASON_MAX_CHARS: Final = 1_024
#: How often a write that met a concurrent one (same run id, a busy counter) is tried again.
WRITE_ATTEMPTS: Final = 8
#: Step Functions' error when the wait task's own timeout (the backstop) ran out.
TIMEOUT_ERROR: Final = "States.Timeout"
#: The wait task's own timeout is the request's expiry plus this: the backstop of a lost expiry.
BACKSTOP_SECONDS: Final = 60
#: Prepared functions kept per service (one per definition version).
PREPARED_CACHE_SIZE: Final = 256

_UUID: Final = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
_TIME: Final = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")

Result = TypeVar("Result")


class RunService:
    """Run interaction functions, answer and end their requests, and read runs and events.

    The ports come from ``runtime`` when they are used, so a runtime completed after the service was
    built (the local server wires its executor last) is seen.
    """

    def __init__(self, runtime: Runtime, store: DynamoRunStore | None = None) -> None:
        self._runtime = runtime
        self._given_store = store
        self._prepared: OrderedDict[tuple[str, ...], PreparedFunction] = OrderedDict()
        self._prepared_lock = threading.Lock()

    @property
    def runtime(self) -> Runtime:
        return self._runtime

    @functools.cached_property
    def deliveries(self) -> Deliveries:
        """The attempts of requests sent through tools (``parley.runs.delivery``)."""
        from parley.runs.delivery import Deliveries

        return Deliveries(self)

    @functools.cached_property
    def conversations(self) -> Conversations:
        """The reading of conversations (``parley.replies.conversations``)."""
        from parley.replies.conversations import Conversations

        return Conversations(self)

    @property
    def header_secrets(self) -> HeaderSecrets:
        return self._header_secrets

    @functools.cached_property
    def _header_secrets(self) -> HeaderSecrets:
        """Tool servers' header values, read through the runtime's Secrets Manager client on first need."""
        from parley.tools.servers import HeaderSecrets

        return HeaderSecrets(lambda: self._runtime.secretsmanager)

    @functools.cached_property
    def store(self) -> DynamoRunStore:
        """The store: the one given, else one sharing the definitions' table (built on first use)."""
        return self._given_store or runs_store_for(self._runtime)

    # --- running ---------------------------------------------------------------------------------

    def run_definition(
        self,
        playbook: PlaybookRef,
        definition_type: str,
        name: str,
        *,
        input_value: Any,
        run_id: str | None,
        started_by: str,
    ) -> Run:
        """Run the function; the run (``started`` or ``succeeded``), or its rejection as a problem."""
        require_type(definition_type)
        supplied = run_id is not None
        run_id = normalized_run_id(run_id) if run_id is not None else str(uuid.uuid4())
        digest = _digest(input_value)
        for attempt in range(WRITE_ATTEMPTS):
            replacing: int | None = None
            existing = self.store.get_run(playbook, run_id) if supplied or attempt else None
            if existing is not None:
                recorded = self._retried(playbook, existing, definition_type, name, digest)
                if recorded is not None:
                    return recorded
                replacing = existing.attempt
            try:
                return self._start(
                    playbook, definition_type, name, input_value, run_id, started_by, digest, replacing
                )
            except RunTaken:
                continue  # another call under the same id wrote first: read what it wrote
            except StoreContention:
                _back_off(attempt)
        raise Problem(
            "unavailable", "Too many runs are starting at once in this playbook; try again shortly."
        )

    def _retried(
        self, playbook: PlaybookRef, run: Run, definition_type: str, name: str, digest: str
    ) -> Run | None:
        """The recorded answer to a retry under ``run``'s id; ``None`` when the definition runs again."""
        if (run.type, run.name) != (definition_type, name) or run.input_digest != digest:
            raise Problem(
                "conflict",
                f"The run id {run.run_id} is taken by a run of the {run.type} function {run.name!r} with "
                "other input; a run id names one run. Use a new run id for a new run.",
            )
        if run.called is not None and run.status != "succeeded":
            from parley.runs.call import tools_called

            raise tools_called(run)
        if run.status == "started":
            request = self.store.get_request(playbook, run.run_id)
            if request is not None and request.state == "open":
                self._start_waiting(playbook, request)
            return run
        if run.status == "succeeded":
            return run
        if run.rejection is not None and run.rejection.reason not in ("conflict", "unavailable"):
            raise run.rejection.problem()
        return None

    def _start(
        self,
        playbook: PlaybookRef,
        definition_type: str,
        name: str,
        input_value: Any,
        run_id: str,
        started_by: str,
        digest: str,
        replacing: int | None,
    ) -> Run:
        # The renderer and the schema checks load with the first run, not with the api module.
        from parley.runs.prepare import check_input, render_request

        definition = self._runtime.definitions.get(playbook, definition_type, name)
        if definition is None:
            raise Problem("not_found", f"This playbook has no {definition_type} definition named {name!r}.")
        moment = self._runtime.clock.now()
        at = format_time(moment)
        run = Run(
            run_id=run_id,
            type=definition_type,
            name=name,
            definition_version=definition.version,
            status="started",
            started_at=at,
            started_by=started_by,
            input_digest=digest,
            attempt=(replacing or 0) + 1,
        )
        try:
            if definition.status == "retired":
                raise Problem(
                    "conflict",
                    f"The {definition_type} definition {name!r} is retired; a retired definition does not "
                    "run.",
                )
            function = self._prepare(playbook, definition)
            if function.refusal is not None:
                raise function.refusal
            check_input(function, input_value)
            if function.call is not None:
                from parley.runs.call import render_arguments

                arguments, size = render_arguments(function.call, input_value, moment)
                rendered = None
            else:
                rendered = render_request(function, input_value, moment)
            waiting = (function.takes_answer or function.deliver is not None) and function.call is None
            if function.deliver is not None:
                self._check_tools_offered(playbook, function.deliver.server, function.deliver.tools)
            if waiting and (self._runtime.waits is None or self._runtime.scheduler is None):
                raise Problem("unavailable", "This runtime has no way to wait for answers: it cannot ask.")
        except Problem as problem:
            raise self._rejected(playbook, run, problem, replacing) from None
        if function.call is not None:
            from parley.runs.call import CallRun

            caller = CallRun(
                self._runtime,
                self.store,
                self._header_secrets,
                playbook,
                rejected=lambda problem: self._rejected(playbook, run, problem, replacing),
            )
            return caller.run(run, function.call, function.output_schema, arguments, size, replacing)
        assert rendered is not None
        expires_at = format_time(moment + function.expires)
        requested = _event(
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
            succeeded = _event(events.RUN_SUCCEEDED, moment, run_id, {"output": {}})
            self.store.record_run(playbook, done, [requested, succeeded], replacing=replacing)
            return done
        request = Request(
            run_id=run_id,
            type=definition_type,
            function=name,
            version=definition.version,
            to=rendered.to,
            answerer=rendered.answerer,
            message=rendered.message,
            takes_answer=function.takes_answer,
            requested_at=at,
            expires_at=expires_at,
            answer_schema=function.output_schema,
        )
        if function.deliver is not None:
            from parley.runs.delivery import DeliveryRefused, refused_data, render_delivery

            try:
                delivery = render_delivery(function.deliver, input_value, moment, request)
            except DeliveryRefused as refused:
                data = refused_data(refused, function.deliver.server, function.deliver.tool)
                refusal = _event(events.DELIVERY_REFUSED, moment, run_id, data)
                raise self._rejected(
                    playbook, run, refused.problem(), replacing, before=[requested, refusal]
                ) from None
            except Problem as problem:
                raise self._rejected(playbook, run, problem, replacing) from None
            request = replace(request, delivery=delivery, standing="to_deliver")
            requested.data["delivery"] = {"server": delivery.server, "tool": delivery.tool}
        run = replace(run, takes_answer=function.takes_answer)
        limit = self._runtime.operator.limits.interaction_open_requests
        try:
            self.store.open_request(playbook, run, request, requested, limit=limit, replacing=replacing)
        except RequestsFull:
            full = Problem(
                "unavailable",
                f"The playbook already has {limit:,} open requests, as many as this runtime allows "
                "(INTERACTION_OPEN_REQUESTS). Answer, cancel or let some expire, then try again.",
                kind="requests_full",
            )
            raise self._rejected(playbook, run, full, replacing) from None
        try:
            self._start_waiting(playbook, request)
        except Exception as exc:
            raise self._abandoned(playbook, run, exc) from exc
        return run

    def _rejected(
        self,
        playbook: PlaybookRef,
        run: Run,
        problem: Problem,
        replacing: int | None,
        *,
        before: list[Event] | None = None,
    ) -> Problem:
        """Record ``problem`` as the run's rejection (``before`` it: what the run did, then
        ``run_rejected``) and return it to raise."""
        rejection = Rejection.of(problem)
        rejected = replace(run, status="rejected", rejection=rejection, finished_at=run.started_at)
        event = _event(
            events.RUN_REJECTED, parse_time(run.started_at), run.run_id, {"rejection": rejection.as_json()}
        )
        self.store.record_run(playbook, rejected, [*(before or []), event], replacing=replacing)
        return problem

    def _check_tools_offered(self, playbook: PlaybookRef, server_name: str, tools: tuple[str, ...]) -> None:
        """ "A run checks every tool its function names before it sends anything": the server must serve
        the playbook and the operator allow each tool; else ``503 unavailable``, ``tool_not_offered``."""
        from parley.tools.client import ToolNotOffered
        from parley.tools.servers import check_allowed, server_serving

        try:
            server = server_serving(self._runtime.operator, playbook, server_name)
            for tool in tools:
                check_allowed(server, tool)
        except ToolNotOffered as not_offered:
            raise Problem(
                "unavailable",
                f"{not_offered.detail} Nothing was sent.",
                kind="tool_not_offered",
                because=not_offered.because,
            ) from None

    def _abandoned(self, playbook: PlaybookRef, run: Run, cause: Exception) -> Problem:
        """A request whose expiry or execution could not be started would hold its place with nothing to
        end it: end it at once, the run rejected as ``unavailable`` (which may run again under its id)."""
        problem = Problem(
            "unavailable",
            "The run could not start waiting for its answer (the runtime's scheduler or executions failed); "
            "try again shortly.",
        )
        now = self._runtime.clock.now()
        rejection = Rejection.of(problem)
        ended = replace(run, status="rejected", rejection=rejection, finished_at=format_time(now))
        event = _event(events.RUN_REJECTED, now, run.run_id, {"rejection": rejection.as_json()})
        with contextlib.suppress(StoreConflict, StoreContention):  # else it ended meanwhile, by itself
            self.store.end_request(playbook, ended, "cancelled", event)
        return problem

    def _start_waiting(self, playbook: PlaybookRef, request: Request) -> None:
        """Schedule the expiry and start the run's execution (both idempotent by name)."""
        waits, scheduler = self._ports()
        key = RunKey(playbook.org, playbook.playbook, request.run_id)
        expires_at = parse_time(request.expires_at)
        scheduler.schedule(_expiry_name(key), expires_at, {"work": "expire", "run": key.as_json()})
        seconds = max(1, round((expires_at - parse_time(request.requested_at)).total_seconds()))
        waits.start(key, timeout_seconds=seconds + BACKSTOP_SECONDS)
        if request.delivery is not None and request.attempts == 0:
            from parley.runs.delivery import attempt_name, attempt_work

            # "Attempted at once": due now (on AWS the scheduler port invokes the timer directly).
            scheduler.schedule(attempt_name(key, 1), self._runtime.clock.now(), attempt_work(key, 1))

    def _prepare(self, playbook: PlaybookRef, definition: Definition) -> PreparedFunction:
        from parley.runs.prepare import prepare_function

        key = (playbook.org, playbook.playbook, definition.type, definition.name, str(definition.version))
        with self._prepared_lock:
            found = self._prepared.get(key)
            if found is not None:
                self._prepared.move_to_end(key)
                return found
        checked = self._runtime.check_document(definition.type, definition.source)
        prepared = prepare_function(definition, checked)
        with self._prepared_lock:
            self._prepared[key] = prepared
            while len(self._prepared) > PREPARED_CACHE_SIZE:
                self._prepared.popitem(last=False)
        return prepared

    # --- answering -------------------------------------------------------------------------------

    def answer_interaction(
        self,
        playbook: PlaybookRef,
        run_id: str,
        answer: Any,
        *,
        claimed_for: str | None,
        answered_by: str,
    ) -> AnswerFact:
        """Answer the run's request; the fact (``request_answered``) the run takes."""
        from parley.documents.json_schema import json_bounds_errors, validate_instance

        errors = json_bounds_errors(answer, "/answer")
        if claimed_for is not None:
            size = len(claimed_for.encode("utf-8", "surrogatepass"))
            if size > CLAIMED_FOR_MAX_BYTES:
                errors.append(
                    ErrorEntry(
                        "/claimed_for",
                        f"claimed_for is at most {CLAIMED_FOR_MAX_BYTES} bytes; this one is {size:,}.",
                    )
                )
        if errors:
            raise invalid_input(errors)
        request = self._request_of(playbook, run_id)
        for attempt in range(WRITE_ATTEMPTS):
            fact = self._answered(request, answer)
            if fact is not None:
                self._wake(request)
                return fact
            now = self._runtime.clock.now()
            if now >= parse_time(request.expires_at):
                raise _ended(request.run_id, f"Its request expired at {request.expires_at}.")
            errors = validate_instance(answer, request.answer_schema, "/answer")
            if errors:
                raise invalid_input(errors)
            fact, event = _answer_fact(now, request.run_id, answer, claimed_for, answered_by)
            try:
                self.store.answer_request(playbook, fact, event)
            except StoreConflict:
                request = self._request_of(playbook, run_id)  # it ended meanwhile: say how
                continue
            except StoreContention:
                _back_off(attempt)
                continue
            self._after_answer(playbook, run_id)
            return fact
        raise Problem("unavailable", "The request kept changing while it was answered; try again.")

    def answer_by_reply(
        self, playbook: PlaybookRef, run_id: str, answer: Any, reply: Mapping[str, str]
    ) -> AnswerFact | None:
        """Record an answer read from a reply ("Answering by reply"): ``request_answered`` with
        ``reply`` (the message's identity), answered by ``playbook:<id>``; the run takes it at once.
        ``None`` when the request no longer takes an answer (answered, expired or cancelled first)."""
        for attempt in range(WRITE_ATTEMPTS):
            request = self.store.get_request(playbook, run_id)
            now = self._runtime.clock.now()
            if request is None or request.state != "open" or now >= parse_time(request.expires_at):
                return None
            answered_by = f"playbook:{playbook.playbook}"
            fact, event = _answer_fact(now, run_id, answer, None, answered_by, reply=dict(reply))
            try:
                self.store.answer_request(playbook, fact, event)
            except StoreConflict:
                return None  # another answer, the expiry or a cancel came first
            except StoreContention:
                _back_off(attempt)
                continue
            self._after_answer(playbook, run_id)
            return fact
        return None

    def _after_answer(self, playbook: PlaybookRef, run_id: str) -> None:
        """The run takes the answer at once (its wait ends, if it has parked) and the expiry is forgotten."""
        current = self.store.get_request(playbook, run_id)
        if current is not None:
            self._wake(current)
        self._ports()[1].cancel(_expiry_name(RunKey(playbook.org, playbook.playbook, run_id)))

    def _request_of(self, playbook: PlaybookRef, run_id: str) -> Request:
        """The run's request: ``404`` for no run, ``409`` for a run that asks nothing."""
        found = self.store.get_request(playbook, run_id) if is_run_id(run_id) else None
        if found is not None:
            return found
        run = self.store.get_run(playbook, run_id) if is_run_id(run_id) else None
        if run is None:
            raise _no_run(run_id)
        if run.status == "rejected":
            raise _ended(run_id, "It was rejected before it asked anything.")
        raise Problem("conflict", f"The run {run_id} sent a notification, which takes no answer.")

    def _answered(self, request: Request, answer: Any) -> AnswerFact | None:
        """The recorded fact when the same answer is sent again; ``409`` when the request ended in any
        other way; ``None`` while it is open."""
        from parley.documents.json_schema import canonical_json

        if not request.takes_answer:
            raise Problem("conflict", f"The run {request.run_id} sent a notification, which takes no answer.")
        if request.state == "answered" and request.fact is not None:
            if canonical_json(request.fact.answer) == canonical_json(answer):
                return request.fact
            raise _ended(
                request.run_id,
                f"Its request was answered at {request.fact.answered_at} with another answer; a run takes "
                "one answer.",
            )
        if request.state == "expired":
            raise _ended(request.run_id, f"Its request expired at {request.expires_at}.")
        if request.state == "cancelled":
            raise _ended(request.run_id, "It was cancelled.")
        return None

    def _wake(self, request: Request) -> None:
        """End the execution's wait with the answer, if it has parked (else parking does it)."""
        if request.token is not None and request.fact is not None:
            self._ports()[0].succeed(request.token, {"answer_id": request.fact.answer_id})

    # --- endings ---------------------------------------------------------------------------------

    def cancel_run(self, playbook: PlaybookRef, run_id: str, *, reason: str | None, cancelled_by: str) -> Run:
        """Cancel a waiting run: its request ends ``cancelled`` and the run ``rejected`` as cancelled."""
        if reason is not None and not 1 <= len(reason) <= CANCEL_REASON_MAX_CHARS:
            raise invalid_input(
                [ErrorEntry("/reason", f"A reason is 1 to {CANCEL_REASON_MAX_CHARS:,} characters.")]
            )
        for attempt in range(WRITE_ATTEMPTS):
            run = self.get_run(playbook, run_id)
            if run.status != "started":
                raise Problem(
                    "conflict",
                    f"The run {run_id} has ended ({run.status}); only a waiting run can be cancelled.",
                )
            request = self.store.get_request(playbook, run_id)
            if request is None or request.state != "open":
                state = request.state if request is not None else "ended"
                raise Problem(
                    "conflict",
                    f"The run {run_id} is no longer waiting: its request was {state}, and the run is taking "
                    "that ending.",
                )
            now = self._runtime.clock.now()
            detail = reason if reason is not None else f"cancel_run cancelled the run (by {cancelled_by})."
            rejection = Rejection("cancelled", detail)
            ended = replace(run, status="rejected", rejection=rejection, finished_at=format_time(now))
            event = _event(
                events.RUN_REJECTED,
                now,
                run_id,
                {"rejection": rejection.as_json(), "cancelled_by": cancelled_by},
            )
            try:
                self.store.end_request(playbook, ended, "cancelled", event)
            except StoreConflict:
                continue  # answered, expired or cancelled meanwhile: read again and say so
            except StoreContention:
                _back_off(attempt)
                continue
            self.after_ending(
                playbook, RunKey(playbook.org, playbook.playbook, run_id), CANCELLED_ERROR, detail
            )
            return ended
        raise Problem("unavailable", "The run kept changing while it was cancelled; try again.")

    def expire_request(self, key: RunKey) -> str:
        """The timer's work: end the request as expired once it is due and still open. What happened:
        ``expired``, or ``unchanged`` (already ended, or not yet due: the backstop covers that)."""
        return self.retrying(lambda: self._expire(key, due=True))

    def _expire(self, key: RunKey, *, due: bool, end_wait: bool = True) -> str:
        """End an open request as expired. ``end_wait`` is false for the settle step's backstop: the
        wait is over already, and settle may not call SendTask* (least privilege)."""
        playbook = PlaybookRef(key.org, key.playbook)
        request = self.store.get_request(playbook, key.run_id)
        run = self.store.get_run(playbook, key.run_id)
        if request is None or request.state != "open" or run is None or run.status != "started":
            return "unchanged"
        now = self._runtime.clock.now()
        if due and now < parse_time(request.expires_at):
            return "unchanged"
        detail = f"Nobody answered the request before it expired at {request.expires_at}."
        rejection = Rejection("unanswered", detail, kind="expired")
        ended = replace(run, status="rejected", rejection=rejection, finished_at=format_time(now))
        event = _event(events.RUN_REJECTED, now, key.run_id, {"rejection": rejection.as_json()})
        try:
            self.store.end_request(
                playbook, ended, "expired", event, due_by=format_time(now) if due else None
            )
        except StoreConflict:
            return "unchanged"  # answered or cancelled first: the timer does nothing
        if end_wait:
            self.after_ending(playbook, key, EXPIRED_ERROR, detail)
        return "expired"

    def after_ending(self, playbook: PlaybookRef, key: RunKey, error: str | None, cause: str) -> None:
        """End the execution's wait (if it has parked; else parking does it): with ``error``, or as a
        success (a notification delivered); forget the expiry and any delivery attempt still pending."""
        waits, scheduler = self._ports()
        request = self.store.get_request(playbook, key.run_id)
        if request is not None and request.token is not None:
            if error is None:
                waits.succeed(request.token, {"delivered": True})
            else:
                waits.fail(request.token, error, cause)
        if error != EXPIRED_ERROR:
            scheduler.cancel(_expiry_name(key))
        if request is not None and request.delivery is not None:
            from parley.runs.delivery import ATTEMPTS, attempt_name

            if request.attempts < ATTEMPTS:
                scheduler.cancel(attempt_name(key, request.attempts + 1))

    def ports(self) -> tuple[Waits, Scheduler]:
        return self._ports()

    def park_request(self, key: RunKey, token: str) -> str:
        """The wait task: keep the token on the open request; if the request has already ended (its
        ending raced ahead of the token), end the wait now. Returns ``parked`` or the ending."""
        playbook = PlaybookRef(key.org, key.playbook)
        try:
            self.store.keep_token(playbook, key.run_id, token)
            return "parked"
        except StoreConflict:
            pass
        waits = self._ports()[0]
        request = self.store.get_request(playbook, key.run_id)
        if request is None:
            waits.fail(token, CANCELLED_ERROR, f"The run {key.run_id} has no request.")
            return "gone"
        if request.state == "answered" and request.fact is not None:
            waits.succeed(token, {"answer_id": request.fact.answer_id})
        elif request.state == "delivered":
            waits.succeed(token, {"delivered": True})
        elif request.state == "undelivered":
            from parley.runs.delivery import UNDELIVERED_ERROR

            waits.fail(token, UNDELIVERED_ERROR, "Every attempt to deliver the notification failed.")
        elif request.state == "expired":
            waits.fail(token, EXPIRED_ERROR, f"The request expired at {request.expires_at}.")
        else:
            waits.fail(token, CANCELLED_ERROR, "The run was cancelled.")
        return request.state

    def settle_run(self, key: RunKey, error: str | None) -> str:
        """The settle step: write the run's ending from what the store says (idempotent). Returns
        ``succeeded``, ``expired`` (the backstop expired it), or ``unchanged``."""
        return self.retrying(lambda: self._settle(key, error))

    def _settle(self, key: RunKey, error: str | None) -> str:
        playbook = PlaybookRef(key.org, key.playbook)
        run = self.store.get_run(playbook, key.run_id)
        request = self.store.get_request(playbook, key.run_id)
        if run is None or run.status != "started" or request is None:
            return "unchanged"
        if request.state == "answered" and request.fact is not None:
            now = self._runtime.clock.now()
            fact = request.fact
            done = replace(run, status="succeeded", output=fact.answer, finished_at=format_time(now))
            event = _event(
                events.RUN_SUCCEEDED,
                now,
                key.run_id,
                {"output": fact.answer, "answered_by": fact.answered_by},
            )
            try:
                self.store.end_run(playbook, done, event)
            except StoreConflict:
                return "unchanged"
            return "succeeded"
        if request.state == "open" and error == TIMEOUT_ERROR:
            # The backstop: the expiry's schedule was lost, and the wait ran out a minute after it.
            return self._expire(key, due=False, end_wait=False)
        return "unchanged"

    def retrying(self, work: Callable[[], Result]) -> Result:
        """``work``, tried again (with jittered back-off) while another transaction holds its items."""
        for attempt in range(WRITE_ATTEMPTS - 1):
            try:
                return work()
            except StoreContention:
                _back_off(attempt)
        return work()

    def _ports(self) -> tuple[Waits, Scheduler]:
        waits, scheduler = self._runtime.waits, self._runtime.scheduler
        if waits is None or scheduler is None:
            raise Problem("unavailable", "This runtime has no way to wait for answers.")
        return waits, scheduler

    # --- reads -----------------------------------------------------------------------------------

    def get_run(self, playbook: PlaybookRef, run_id: str) -> Run:
        run = self.store.get_run(playbook, run_id) if is_run_id(run_id) else None
        if run is None:
            raise _no_run(run_id)
        return run

    def list_runs(
        self,
        playbook: PlaybookRef,
        *,
        definition_type: str | None = None,
        name: str | None = None,
        status: str | None = None,
        limit: int = DEFAULT_LIMIT,
        cursor: str | None = None,
    ) -> Page:
        filters = {"type": definition_type, "name": name, "status": status}
        chosen, scope, after = _listing("runs", playbook, filters, limit, cursor, statuses=RUN_STATUSES)
        found = self.store.list_runs(playbook, filters=chosen, limit=limit, after=after)
        runs: list[Run] = found.items
        next_cursor = None
        if found.more and runs:
            next_cursor = encode_cursor(scope, [runs[-1].started_at, runs[-1].run_id])
        return Page("runs", tuple(run.as_json() for run in runs), next_cursor, found.scanned)

    def list_interactions(
        self,
        playbook: PlaybookRef,
        *,
        to: str | None = None,
        definition_type: str | None = None,
        function: str | None = None,
        limit: int = DEFAULT_LIMIT,
        cursor: str | None = None,
    ) -> Page:
        """The playbook's open requests, newest first (those past their expiry are left out)."""
        filters = {"to": to, "type": definition_type, "function": function}
        chosen, scope, after = _listing("interactions", playbook, filters, limit, cursor)
        now = format_time(self._runtime.clock.now())
        found = self.store.list_open_requests(
            playbook, filters=chosen, expiring_after=now, limit=limit, after=after
        )
        requests: list[Request] = found.items
        next_cursor = None
        if found.more and requests:
            next_cursor = encode_cursor(scope, [requests[-1].requested_at, requests[-1].run_id])
        return Page("interactions", tuple(r.as_listed() for r in requests), next_cursor, found.scanned)

    def get_run_history(
        self, playbook: PlaybookRef, run_id: str, *, limit: int = DEFAULT_LIMIT, cursor: str | None = None
    ) -> Page:
        """The run's events in order (content over 2 KiB shown as its size)."""
        self.get_run(playbook, run_id)
        return self._events(
            playbook, run_id=run_id, event_type=None, since=None, descending=False, limit=limit, cursor=cursor
        )

    def list_playbook_events(
        self,
        playbook: PlaybookRef,
        *,
        event_type: str | None = None,
        since: str | None = None,
        run_id: str | None = None,
        order: str = "desc",
        limit: int = DEFAULT_LIMIT,
        cursor: str | None = None,
    ) -> Page:
        """The playbook's events, newest first unless ``order`` is ``asc``; ``since`` is a time
        (ISO 8601 with its offset, such as ``2026-10-17T10:18:42Z``): events at or after it."""
        if order not in ("asc", "desc"):
            raise Problem("bad_request", "order is asc or desc (desc, newest first, when left out).")
        if run_id is not None and not is_run_id(run_id):
            raise Problem("bad_request", "run_id is a run's id, a UUID.")
        floor = events.event_id_floor(_since(since)) if since is not None else None
        return self._events(
            playbook,
            run_id=run_id,
            event_type=event_type,
            since=floor,
            descending=order == "desc",
            limit=limit,
            cursor=cursor,
        )

    def _events(
        self,
        playbook: PlaybookRef,
        *,
        run_id: str | None,
        event_type: str | None,
        since: str | None,
        descending: bool,
        limit: int,
        cursor: str | None,
    ) -> Page:
        _check_limit(limit)
        filters = {
            "run_id": run_id,
            "type": event_type,
            "since": since,
            "order": "desc" if descending else "asc",
        }
        scope = _scope(
            "events", playbook, {key: value for key, value in filters.items() if value is not None}
        )
        after = None
        if cursor is not None:
            parts = decode_cursor(scope, cursor)
            if len(parts) != 1 or not is_event_id(parts[0]):
                raise _foreign_cursor()
            after = parts[0]
        found = self.store.list_events(
            playbook,
            run_id=run_id,
            event_type=event_type,
            since=since,
            descending=descending,
            limit=limit,
            after=after,
        )
        shown: list[Event] = found.items
        next_cursor = encode_cursor(scope, [shown[-1].id]) if found.more and shown else None
        return Page("events", tuple(event_json(e, listed=True) for e in shown), next_cursor, found.scanned)

    def get_event(self, playbook: PlaybookRef, event_id: str) -> dict[str, Any]:
        """One event with its content whole."""
        event = self.store.get_event(playbook, event_id) if is_event_id(event_id) else None
        if event is None:
            raise Problem("not_found", f"This playbook has no event {event_id!r}.")
        return event_json(event, listed=False)


def run_service(runtime: Runtime) -> RunService:
    """The service over ``runtime``; its store is built on first use (see :func:`runs_store_for`)."""
    return RunService(runtime)


def runs_store_for(runtime: Runtime) -> DynamoRunStore:
    """Runs live in the definitions' table, so their store shares its client and table (a runtime whose
    definitions are not kept in DynamoDB cannot run functions)."""
    from parley.definitions.store import DynamoDefinitionStore

    definitions = runtime.definitions
    if not isinstance(definitions, DynamoDefinitionStore):
        raise TypeError("runs are kept in the table of a DynamoDefinitionStore")
    return DynamoRunStore(definitions.client, definitions.table_name, runtime.content)


def is_run_id(text: str) -> bool:
    return _UUID.match(text) is not None


def normalized_run_id(text: str) -> str:
    """A caller's run id in its canonical form (lowercase); ``422`` at ``/run_id`` unless a UUID."""
    if not is_run_id(text):
        raise invalid_input(
            [ErrorEntry("/run_id", "A run id is a UUID, such as 0f5e8c1a-4d3b-4f6e-9a2c-7b1d3e5f7a9c.")]
        )
    return text.lower()


# --- helpers ---------------------------------------------------------------------------------------------


def _digest(input_value: Any) -> str:
    from parley.documents.json_schema import canonical_json

    return hashlib.sha256(canonical_json(input_value).encode("utf-8", "surrogatepass")).hexdigest()


def _event(event_type: str, moment: datetime, run_id: str, data: dict[str, Any]) -> Event:
    return Event(new_event_id(event_type, moment), event_type, format_time(moment), run_id, data)


def _answer_fact(
    moment: datetime,
    run_id: str,
    answer: Any,
    claimed_for: str | None,
    answered_by: str,
    **more: Any,
) -> tuple[AnswerFact, Event]:
    """The answer fact and its ``request_answered`` (``more``: such as the ``reply`` it was read from)."""
    at = format_time(moment)
    answer_id = new_event_id(events.REQUEST_ANSWERED, moment)
    data = {"answer": answer, "claimed_for": claimed_for, "answered_by": answered_by, **more}
    fact = AnswerFact(run_id, answer_id, answer, claimed_for, answered_by, at)
    return fact, Event(answer_id, events.REQUEST_ANSWERED, at, run_id, data)


def _expiry_name(key: RunKey) -> str:
    return f"expire-{key.scoped_id}"


def _back_off(attempt: int) -> None:
    time.sleep(random.uniform(0, 0.01 * 2**attempt))  # jitter, not a secret


def _no_run(run_id: str) -> Problem:
    return Problem("not_found", f"This playbook has no run {run_id!r}.")


def _ended(run_id: str, how: str) -> Problem:
    return Problem("conflict", f"The run {run_id} takes no answer now. {how}")


def _check_limit(limit: int) -> None:
    if not 1 <= limit <= MAX_LIMIT:
        raise Problem("bad_request", f"limit is 1 to {MAX_LIMIT}, {DEFAULT_LIMIT} when left out.")


def _listing(
    kind: str,
    playbook: PlaybookRef,
    filters: Mapping[str, str | None],
    limit: int,
    cursor: str | None,
    *,
    statuses: tuple[str, ...] = (),
) -> tuple[dict[str, str], str, tuple[str, str] | None]:
    """A newest-first list's checks, in order: the limit, the ``type`` and ``status`` filters, then
    where the cursor (bound to the list and its filters) resumes."""
    _check_limit(limit)
    kind_filter, status = filters.get("type"), filters.get("status")
    if kind_filter is not None and kind_filter not in DEFINITION_TYPES:
        raise Problem("bad_request", "type is interaction or reasoning.")
    if status is not None and status not in statuses:
        raise Problem("bad_request", f"status is one of {', '.join(statuses)}.")
    chosen = {key: value for key, value in filters.items() if value is not None}
    scope = _scope(kind, playbook, chosen)
    after = _time_position(decode_cursor(scope, cursor)) if cursor is not None else None
    return chosen, scope, after


def _scope(kind: str, playbook: PlaybookRef, filters: Mapping[str, str]) -> str:
    shown = "&".join(f"{key}={value}" for key, value in sorted(filters.items()))
    return f"{kind}/{playbook.org}/{playbook.playbook}?{shown}"


def _time_position(parts: list[str]) -> tuple[str, str]:
    if len(parts) != 2 or not _TIME.match(parts[0]) or not is_run_id(parts[1]):
        raise _foreign_cursor()
    return parts[0], parts[1]


def _foreign_cursor() -> Problem:
    return Problem("bad_request", "The cursor is not one this list gave out; start without a cursor.")


def _since(text: str) -> datetime:
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        moment = None
    if moment is None or moment.tzinfo is None:
        raise Problem(
            "bad_request",
            f"since is a time in ISO 8601 with its offset, such as 2026-10-17T10:18:42Z; not {text!r}.",
        )
    return moment
