"""Sending a request through a tool (``interaction-format.md``: "Sending through a tool", "Attempts",
"`deliver`", "`deliver.sent`", "The run's history", "Bounds").

When a run asks (``parley.runs.service``), ``deliver.with`` is rendered once, typed, over ``input``,
``today`` and ``now`` (the request's own moment) and the request's ``to``, ``message``, ``run_id``,
``function``, ``expires_at`` and ``answer_schema`` (:func:`render_delivery`): every attempt sends the
same arguments. Past 16 KiB, or with a text that renders nothing, the delivery is refused
(``delivery_refused``, ``too_large`` or ``unworkable``) and the run ends ``conflict``, ``unworkable``.

Attempts (:class:`Deliveries`, called by the ``timer`` function as the scheduler's work):

- attempt 1 is due at once; after a failed attempt ``n`` the next is due ``BACKOFF[n]`` after attempt
  ``n`` started (1, 2, 4, 8 minutes), and no sooner than a ``Retry-After`` the server gave (up to 8
  minutes) after the failure: five attempts in all;
- an attempt is claimed under its number with ``delivery_started`` before anything is sent (the
  store's condition: the request open and attempt ``n - 1`` ended), so a schedule that fires twice, or
  two workers, never make the same attempt;
- a check is scheduled a minute after the attempt starts (before the claim, and cancelled only once
  the attempt's end is recorded): an attempt still ``delivering`` then was cut off (a crash, a timeout
  of the function, an end that could not be written) and counts as failed, ``lost``; the next follows;
- failed attempts: a tool error, a server failure, no response within 30 s or no connection within
  10 s (the tool client's bounds), arguments the tool refused, a tool the server no longer offers to
  the playbook;
- a question whose attempts are spent stays open (``undelivered``), answerable through the inbox; a
  notification succeeds with ``{}`` once delivered, and ends ``rejected`` as ``unanswered``, kind
  ``undelivered``, once its attempts are spent.

Whatever happened meanwhile (an answer, a cancel, the expiry), an attempt's end is recorded; only an
attempt that still stands changes the request.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Final

from parley.clock import format_time, parse_time
from parley.dynamo import StoreConflict
from parley.errors import ErrorEntry, ParleyError, Problem
from parley.interaction.sent import sent_values
from parley.ports.waiting import RunKey
from parley.runs import events
from parley.runs.events import new_event_id
from parley.runs.model import Delivery, Event, Rejection, Request, Run, invalid_input
from parley.tools.calling import CallAnswer, CallFailure, call_for_playbook

if TYPE_CHECKING:
    from parley.config import ToolServer
    from parley.definitions.model import PlaybookRef
    from parley.interaction.prepare import DeliverBlock
    from parley.interaction.replies.conversations import Conversations
    from parley.runs.service import RunService
    from parley.tools.servers import HeaderSecrets

#: "Attempts": five in all.
ATTEMPTS: Final = 5
#: After a failed attempt ``n`` (1 to 4), the next is due this long after attempt ``n`` started.
BACKOFF: Final = {
    1: timedelta(minutes=1),
    2: timedelta(minutes=2),
    3: timedelta(minutes=4),
    4: timedelta(minutes=8),
}
#: "A server that responds with Retry-After is waited for as long as it asks, up to 8 minutes."
RETRY_AFTER_MAX: Final = timedelta(minutes=8)
#: "An attempt cut off by a restart counts as failed a minute after it started."
LOST_AFTER: Final = timedelta(minutes=1)
#: "Bounds": the arguments of a call, as JSON.
ARGUMENTS_MAX_BYTES: Final = 16 * 1024


class DeliveryRefused(ParleyError):
    """``deliver.with`` cannot be sent at all: ``because`` is ``too_large`` or ``unworkable``."""

    def __init__(self, because: str, detail: str, size: int | None = None) -> None:
        super().__init__(detail)
        self.because = because
        self.detail = detail
        self.size = size

    def problem(self) -> Problem:
        return Problem("conflict", self.detail, kind="unworkable")


def render_delivery(
    block: DeliverBlock, input_value: dict[str, Any], moment: datetime, request: Request
) -> Delivery:
    """``deliver.with`` rendered typed for ``request``; ``invalid_input`` for a value the input lacks,
    :class:`DeliveryRefused` for a structure among text, a text that renders nothing, or 16 KiB."""
    from parley.documents.json_schema import json_size
    from parley.templates.render import RenderFailure, render_typed

    data = {
        "input": input_value,
        "today": moment.strftime("%Y-%m-%d"),
        "now": format_time(moment),
        "to": request.to,
        "message": request.message,
        "run_id": request.run_id,
        "function": request.function,
        "expires_at": request.expires_at,
        "answer_schema": request.answer_schema,
    }
    try:
        arguments = render_typed(block.arguments, data, first_line=block.first_line)
    except RenderFailure as failure:
        if failure.structure_among_text:
            raise DeliveryRefused(
                "unworkable",
                f"{failure}: an argument of deliver.with renders a list or an object among text. Write the "
                "argument as one {{ }} to send the value itself, or use | json.",
            ) from None
        raise invalid_input([ErrorEntry(failure.pointer or "/input", str(failure))]) from None
    empty = _first_empty_text(block.arguments, arguments, "")
    if empty is not None:
        raise DeliveryRefused(
            "unworkable",
            f"The argument deliver.with{empty or '/'} renders no text, so the request cannot be sent.",
        )
    size = json_size(arguments)
    if size > ARGUMENTS_MAX_BYTES:
        raise DeliveryRefused(
            "too_large",
            f"The arguments of deliver.with render {size:,} bytes as JSON; a delivery sends at most "
            f"{ARGUMENTS_MAX_BYTES:,} bytes (16 KiB). Nothing was sent.",
            size,
        )
    return Delivery(block.server, block.tool, arguments, size, block.sent, block.replies, block.reply)


def _first_empty_text(written: Any, rendered: Any, at: str) -> str | None:
    """The pointer of the first text of ``with`` (not written empty) that rendered empty text."""
    if isinstance(written, str):
        return at if written and rendered == "" else None
    if isinstance(written, dict) and isinstance(rendered, dict):
        for key, value in written.items():
            found = _first_empty_text(value, rendered.get(key), f"{at}/{_escaped(key)}")
            if found is not None:
                return found
    if isinstance(written, list) and isinstance(rendered, list):
        for index, (value, item) in enumerate(zip(written, rendered, strict=False)):
            found = _first_empty_text(value, item, f"{at}/{index}")
            if found is not None:
                return found
    return None


def _escaped(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def attempt_name(key: RunKey, number: int) -> str:
    return f"deliver-{key.scoped_id}-{number}"


def lost_name(key: RunKey, number: int) -> str:
    return f"lost-{key.scoped_id}-{number}"


def attempt_work(key: RunKey, number: int) -> dict[str, Any]:
    return {"work": "deliver", "run": key.as_json(), "attempt": number}


def lost_work(key: RunKey, number: int) -> dict[str, Any]:
    return {"work": "lost", "run": key.as_json(), "attempt": number}


class Deliveries:
    """The attempts of requests sent through tools, on the service's store and ports."""

    def __init__(self, service: RunService, secrets: HeaderSecrets, conversations: Conversations) -> None:
        self._service = service
        self._secrets = secrets
        self._conversations = conversations

    # --- the timer's work ----------------------------------------------------------------------------

    def attempt(self, key: RunKey, number: int) -> str:
        """Make attempt ``number`` if it is the one due. What happened: ``delivered``, ``failed``,
        ``undelivered`` (the last failed), or ``unchanged`` (not due, taken, or the request ended)."""
        service = self._service
        playbook = _playbook(key)
        request = service.store.get_request(playbook, key.run_id)
        if not _may_attempt(request, number):
            return "unchanged"
        assert request is not None and request.delivery is not None
        delivery = request.delivery
        now = service.runtime.clock.now()
        server = self._configured(playbook, delivery.server)
        started = _event(
            events.DELIVERY_STARTED, now, key.run_id, self._started_data(server, delivery, number)
        )
        scheduler = service.ports()[1]
        # The check goes first: a worker cut off right after its claim still has its attempt counted
        # lost. A check left by a claim that failed finds nothing to do (and is never cancelled here: it
        # bears the name of the check of the worker that did claim the attempt).
        scheduler.schedule(lost_name(key, number), now + LOST_AFTER, lost_work(key, number))
        try:
            service.store.claim_attempt(playbook, key.run_id, number, format_time(now), started)
        except StoreConflict:
            return "unchanged"  # another worker took it, or the request ended meanwhile
        outcome = call_for_playbook(
            service.runtime,
            self._secrets,
            playbook,
            delivery.server,
            delivery.tool,
            delivery.arguments,
        )
        at = service.runtime.clock.now()
        if isinstance(outcome, CallFailure):
            if outcome.because == "tool_not_offered":
                words = f"{outcome.words} The request stays open, to be answered through the inbox."
                outcome = replace(outcome, words=words)
            happened = self._failed(key, request, number, now, at, outcome)
        else:
            happened = self._delivered(key, request, number, at, outcome)
        # Only once the end is recorded: an end that could not be written leaves the attempt to the check.
        scheduler.cancel(lost_name(key, number))
        return happened

    def lost(self, key: RunKey, number: int) -> str:
        """The check a minute after attempt ``number`` started: still ``delivering``, it was cut off."""
        service = self._service
        request = service.store.get_request(_playbook(key), key.run_id)
        if (
            request is None
            or request.state != "open"
            or request.attempts != number
            or request.standing != "delivering"
            or request.attempt_started_at is None
        ):
            return "unchanged"
        started = parse_time(request.attempt_started_at)
        now = service.runtime.clock.now()
        if now < started + LOST_AFTER:
            return "unchanged"
        words = (
            f"Attempt {number} started at {request.attempt_started_at} and recorded no end within a minute: "
            "it was cut off (a restart), and counts as failed."
        )
        return self._failed(key, request, number, started, now, CallFailure("lost", words))

    # --- one attempt's end ---------------------------------------------------------------------------

    def _delivered(
        self,
        key: RunKey,
        request: Request,
        number: int,
        at: datetime,
        called: CallAnswer,
    ) -> str:
        from parley.documents.json_schema import json_size
        from parley.tools.recording import content_digest

        answer, resolved = called.answer, called.resolved
        playbook = _playbook(key)
        assert request.delivery is not None
        kept = resolved.scrub(answer.result)
        data: dict[str, Any] = {
            "attempt": number,
            "server": request.delivery.server,
            "tool": request.delivery.tool,
            "result_size": json_size(answer.result),
            "result_digest": content_digest(kept),
            "duration_ms": answer.duration_ms,
        }
        if called.server.record_content:
            data["result"] = kept
        sent = None
        if request.delivery.sent_pointers is not None:
            # Read from the answer as kept: a tool that echoes a header's secret never puts it in `sent`.
            sent, problem = sent_values(resolved.scrub(answer.answer), request.delivery.sent_pointers)
            if sent is not None:
                data["sent"] = sent
            else:
                data["sent_unusable"] = problem
        conversation = None
        if sent is not None and request.delivery.replies is not None and request.takes_answer:
            from parley.interaction.replies.conversations import conversation_key

            # "where its replies are read": the conversation's key, or why the request takes no reply
            conversation, unusable = conversation_key(request.delivery.replies, request.to, sent)
            if conversation is not None:
                data["conversation"] = conversation
            else:
                data["conversation_unusable"] = unusable
        succeeded = _event(events.DELIVERY_SUCCEEDED, at, key.run_id, data)
        if request.takes_answer:
            if (
                self._end_attempt(
                    playbook,
                    key.run_id,
                    number,
                    "delivered",
                    [succeeded],
                    sent=sent,
                    conversation=conversation,
                )
                and conversation is not None
                and sent is not None
            ):
                self._conversations.join(key, request, conversation, sent)
            return "delivered"

        def succeeded_run(run: Run) -> tuple[Run, Event]:
            done = replace(run, status="succeeded", output={}, finished_at=format_time(at))
            return done, _event(events.RUN_SUCCEEDED, at, key.run_id, {"output": {}})

        self._end_notification(key, number, "delivered", succeeded, succeeded_run, sent=sent)
        return "delivered"

    def _failed(
        self,
        key: RunKey,
        request: Request,
        number: int,
        started: datetime,
        at: datetime,
        failure: CallFailure,
    ) -> str:
        service = self._service
        playbook = _playbook(key)
        assert request.delivery is not None
        data: dict[str, Any] = {
            "attempt": number,
            "server": request.delivery.server,
            "tool": request.delivery.tool,
            "because": failure.because,
            "message": failure.words,
        }
        if failure.retry_after_seconds is not None:
            data["retry_after_ms"] = round(failure.retry_after_seconds * 1000)
        if failure.duration_ms is not None:
            data["duration_ms"] = failure.duration_ms
        failed = _event(events.DELIVERY_FAILED, at, key.run_id, data)
        if number < ATTEMPTS:
            due = max(started + BACKOFF[number], at)
            if failure.retry_after_seconds is not None:
                asked = timedelta(seconds=max(0.0, failure.retry_after_seconds))
                due = max(due, at + min(asked, RETRY_AFTER_MAX))
            # The next attempt is scheduled before the failure is written: a crash between the two then
            # leaves a schedule that finds nothing to do (its claim needs this attempt ended), never a
            # request `retrying` with nothing to try it again.
            scheduler = service.ports()[1]
            scheduler.schedule(attempt_name(key, number + 1), due, attempt_work(key, number + 1))
            if not self._end_attempt(playbook, key.run_id, number, "retrying", [failed]):
                scheduler.cancel(attempt_name(key, number + 1))
            return "failed"
        if request.takes_answer:
            self._end_attempt(playbook, key.run_id, number, "undelivered", [failed])
            return "undelivered"
        detail = f"All {ATTEMPTS} attempts to deliver the notification failed; the last: {failure.words}"
        rejection = Rejection("unanswered", detail, kind="undelivered")

        def rejected_run(run: Run) -> tuple[Run, Event]:
            ended = replace(run, status="rejected", rejection=rejection, finished_at=format_time(at))
            return ended, _event(events.RUN_REJECTED, at, key.run_id, {"rejection": rejection.as_json()})

        self._end_notification(key, number, "undelivered", failed, rejected_run)
        return "undelivered"

    # --- helpers -------------------------------------------------------------------------------------

    def _end_notification(
        self,
        key: RunKey,
        number: int,
        standing: str,
        attempt_end: Event,
        ending: Callable[[Run], tuple[Run, Event]],
        *,
        sent: dict[str, str] | None = None,
    ) -> None:
        """A notification's last attempt ends its run too (``ending`` makes the run's end from the run
        as it stands), in the attempt's write; then its wait, told the ending (``standing``). A run that
        ended meanwhile keeps its ending; the attempt's end is still recorded."""
        service = self._service
        playbook = _playbook(key)
        run = service.store.get_run(playbook, key.run_id)
        if run is None or run.status != "started":
            service.store.record_events(playbook, [attempt_end])
            return
        ended, event = ending(run)
        if self._end_attempt(
            playbook, key.run_id, number, standing, [attempt_end, event], sent=sent, ending=ended
        ):
            service.after_ending(playbook, key, standing)

    def _end_attempt(
        self,
        playbook: PlaybookRef,
        run_id: str,
        number: int,
        standing: str,
        ended: list[Event],
        *,
        sent: dict[str, str] | None = None,
        conversation: str | None = None,
        ending: Run | None = None,
    ) -> bool:
        """The store's ``end_attempt``, tried again while another transaction holds the same items (the
        playbook's counter is shared by all its requests): an end given up on would leave the attempt
        to the lost check, and the message would be sent twice."""
        store = self._service.store
        return self._service.retrying(
            lambda: store.end_attempt(
                playbook, run_id, number, standing, ended, sent=sent, conversation=conversation, ending=ending
            )
        )

    def _configured(self, playbook: PlaybookRef, name: str) -> ToolServer | None:
        from parley.ports.tools import ToolNotOffered
        from parley.tools.servers import server_serving

        try:
            return server_serving(self._service.runtime.operator, playbook, name)
        except ToolNotOffered:
            return None

    def _started_data(self, server: ToolServer | None, delivery: Delivery, number: int) -> dict[str, Any]:
        from parley.tools.recording import content_digest

        data: dict[str, Any] = {
            "attempt": number,
            "server": delivery.server,
            "tool": delivery.tool,
            "arguments_size": delivery.arguments_size,
        }
        if server is None:
            data["arguments_digest"] = content_digest(delivery.arguments)
            return data
        from parley.tools.servers import SecretUnavailable

        try:
            kept = self._secrets.resolve(server).scrub(delivery.arguments)
        except SecretUnavailable:  # the attempt fails on it; the arguments hold no secret it could scrub
            kept = delivery.arguments
        data["arguments_digest"] = content_digest(kept)
        if server.record_content:
            data["arguments"] = kept
        return data


def _may_attempt(request: Request | None, number: int) -> bool:
    return (
        request is not None
        and request.delivery is not None
        and request.state == "open"
        and 1 <= number <= ATTEMPTS
        and request.attempts == number - 1
        and request.standing in ("to_deliver", "retrying")
    )


def _playbook(key: RunKey) -> PlaybookRef:
    from parley.definitions.model import PlaybookRef

    return PlaybookRef(key.org, key.playbook)


def _event(event_type: str, moment: datetime, run_id: str, data: dict[str, Any]) -> Event:
    attempt = data.get("attempt") if event_type in _ATTEMPT_EVENTS else None
    if not isinstance(attempt, int):
        return Event(new_event_id(event_type, moment), event_type, format_time(moment), run_id, data)
    return Event(
        _attempt_event_id(event_type, moment, attempt), event_type, format_time(moment), run_id, data
    )


_ATTEMPT_EVENTS: Final = (events.DELIVERY_STARTED, events.DELIVERY_SUCCEEDED, events.DELIVERY_FAILED)


def _attempt_event_id(event_type: str, moment: datetime, attempt: int) -> str:
    """An event id (``parley.runs.events``: milliseconds, the step within the run, randomness) whose step
    follows the attempt: ``delivery_started`` of attempt ``n`` is step ``18 + 2n``, its end ``19 + 2n``
    (20 to 29, after ``interaction_requested``, before ``request_answered``). The end of an attempt
    counted ``lost`` and the start of the next happen in the same millisecond under a manual clock; the
    types' own steps (started 20, ended 30) would list the start first."""
    step = 18 + 2 * attempt + (0 if event_type == events.DELIVERY_STARTED else 1)
    return f"{events.event_id_floor(moment)}{step:02d}{secrets.token_hex(8)}"


def refused_data(refused: DeliveryRefused, server: str, tool: str) -> dict[str, Any]:
    """``delivery_refused``'s data."""
    data: dict[str, Any] = {
        "server": server,
        "tool": tool,
        "because": refused.because,
        "message": refused.detail,
    }
    if refused.size is not None:
        data["arguments_size"] = refused.size
    return data
