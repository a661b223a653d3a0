"""Events of workflow runs (``workflow-format.md``, "Events", "Bounds"; ``parley.workflow.engine``, "A
listen", "An emit"):

- :meth:`RunEvents.send` (``send_run_event``): an event to a started workflow run, taken once per
  ``id``, ``event_received`` in its history, kept until a ``listen`` takes it (the oldest dropped past 64
  kept or 1 MiB, ``event_dropped`` saying so); a run's 1,025th event is ``409``.
- :meth:`RunEvents.listen` (the entry, ``listen``): the earliest kept events that complete the listen's
  filters answer its task token at once; else the listen is kept with its token, and the event that
  completes it answers it (``{"output": [...]}``: the events' ``data``, or with ``read: envelope`` the
  whole events; the latest listen of the run first, when several wait). A listen answered once is
  answered the same when the engine delivers it again.
- :meth:`RunEvents.emit` (the entry, ``emit``): ``event_published`` in the playbook's events once per
  run, task and attempt (the event's id derived from them), and the event handed to the runs of the
  playbook with a waiting listen whose filters write its ``type`` out.
- :meth:`RunEvents.forget` (a cancelled workflow): its waiting listens forgotten.

Every step is idempotent (Step Functions delivers at least once) and every write conditional
(``parley.workflow.event_store``).
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import uuid
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from parley.clock import format_time
from parley.definitions.model import PlaybookRef
from parley.dynamo import StoreConflict, StoreContention
from parley.errors import ErrorEntry, Problem
from parley.ports.waiting import RunKey
from parley.runs import events
from parley.runs.events import new_event_id, run_event
from parley.runs.ids import is_run_id
from parley.runs.model import Event, invalid_input
from parley.runs.reading import no_run
from parley.workflow import engine
from parley.workflow.errors import runtime_error
from parley.workflow.event_filters import filters_of, literal_types, output_of, taken
from parley.workflow.event_store import MAX_FILTERS, EventsFull, Listen, Receipt, RunEventStore

if TYPE_CHECKING:
    from parley.ports.workflows import WorkflowEngine
    from parley.runs.service import RunService

LOG: Final = logging.getLogger("parley.workflow")
#: An event, as JSON (``workflow-format.md``, "Bounds").
MAX_EVENT_BYTES: Final = 256 * 1024
#: Events kept for a listen to come, and their bytes as JSON.
MAX_KEPT: Final = 64
MAX_KEPT_BYTES: Final = 1024 * 1024
#: An event's type, in characters.
MAX_TYPE_CHARS: Final = 256
#: An event's id, and its source or subject, in characters.
MAX_ID_CHARS: Final = 256
MAX_SOURCE_CHARS: Final = 1024
#: Step Functions' payload: a listen's output (``{"output": [...]}``).
MAX_PAYLOAD_BYTES: Final = 256 * 1024
#: Where an emitted event's id is derived from (uuid5 of the run, the task and the attempt).
_EMIT_NAMESPACE: Final = uuid.UUID("0b7f6e5e-8f0c-4d3f-9a43-5f3b1d2c7e61")
#: How often a listen's answer that met a concurrent one is worked out again.
_ATTEMPTS: Final = 8


def _size(value: Any) -> int:
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8", "surrogatepass"))


def emitted_id(run_id: str, task: str, attempt: str) -> str:
    """The id of the event an ``emit`` records: the same run, task and attempt give the same id."""
    return str(uuid.uuid5(_EMIT_NAMESPACE, f"{run_id}\n{task}\n{attempt}"))


def listen_id(task: str, attempt: str) -> str:
    """A listen's id within its run: the same task and attempt give the same listen."""
    return hashlib.sha256(f"{task}\n{attempt}".encode()).hexdigest()[:24]


class RunEvents:
    """Events sent, emitted and listened for, over one run lifecycle."""

    def __init__(self, runs: RunService) -> None:
        self.runs = runs

    @functools.cached_property
    def store(self) -> RunEventStore:
        return RunEventStore(self.runs.store)

    def _engine(self) -> WorkflowEngine:
        workflows = self.runs.runtime.workflows
        if workflows is None:
            raise Problem("unavailable", "This runtime has no way to run workflows.")
        return workflows

    # --- send_run_event -------------------------------------------------------------------------

    def send(
        self,
        playbook: PlaybookRef,
        run_id: str,
        *,
        event_type: str,
        sent_id: str | None,
        source: str | None,
        subject: str | None,
        data: Any,
        principal: str,
    ) -> dict[str, Any]:
        """``send_run_event``: ``{run_id, event_id, received_at}``."""
        if not 1 <= len(event_type) <= MAX_TYPE_CHARS:
            raise invalid_input(
                [ErrorEntry("/type", f"An event's type is 1 to {MAX_TYPE_CHARS} characters.")]
            )
        problems = [
            ErrorEntry(pointer, f"{words} is {low} to {high:,} characters.")
            for pointer, words, value, low, high in (
                ("/id", "An event's id", sent_id, 1, MAX_ID_CHARS),
                ("/source", "An event's source", source, 1, MAX_SOURCE_CHARS),
                ("/subject", "An event's subject", subject, 0, MAX_SOURCE_CHARS),
            )
            if value is not None and not low <= len(value) <= high
        ]
        if problems:
            raise invalid_input(problems)
        run = self.runs.store.get_run(playbook, run_id) if is_run_id(run_id) else None
        if run is None:
            raise no_run(run_id)
        if run.type != "workflow":
            raise Problem(
                "conflict", f"The run {run_id} is a {run.type} run; only a workflow's run takes events."
            )
        if run.status != "started":
            raise Problem("conflict", f"The run {run_id} has ended ({run.status}); it takes no more events.")
        now = self.runs.runtime.clock.now()
        history = run_event(events.EVENT_RECEIVED, now, run_id, {})
        envelope = {
            "type": event_type,
            "id": sent_id if sent_id is not None else history.id,
            "time": history.at,
            "source": source if source is not None else f"/callers/{principal}",
            "subject": subject,
            "data": data,
        }
        size = _size(envelope)
        if size > MAX_EVENT_BYTES:
            raise invalid_input(
                [
                    ErrorEntry(
                        "",
                        f"The event is {size:,} bytes as JSON; an event is at most {MAX_EVENT_BYTES:,} "
                        "(256 KiB).",
                    )
                ]
            )
        try:
            receipt = self._receive(playbook, run_id, envelope, history)
        except EventsFull:
            raise Problem(
                "conflict",
                f"The run {run_id} has taken {self.store.events_over_life(playbook, run_id):,} events; a run "
                "takes at most 1,024 over its life.",
            ) from None
        if receipt.new:
            self.deliver(playbook, run_id)
        return {"run_id": run_id, "event_id": receipt.event_id, "received_at": receipt.received_at}

    def _receive(
        self,
        playbook: PlaybookRef,
        run_id: str,
        envelope: dict[str, Any],
        history: Event,
        *,
        emitted_by: str | None = None,
    ) -> Receipt:
        data = {key: value for key, value in envelope.items() if key != "time"}
        data["event_id"] = data.pop("id")
        if emitted_by is not None:
            data["emitted_by"] = emitted_by
        recorded = Event(history.id, events.EVENT_RECEIVED, history.at, run_id, data)
        key = str(envelope["id"])
        receipt = self.runs.retrying(lambda: self.store.receive(playbook, run_id, key, envelope, recorded))
        if receipt.new:
            self._keep_within_bounds(playbook, run_id)
        return receipt

    def _keep_within_bounds(self, playbook: PlaybookRef, run_id: str) -> None:
        kept = self.store.kept(playbook, run_id)
        total = sum(one.size for one in kept)
        over: list[str] = []
        for one in kept:
            if len(kept) - len(over) <= MAX_KEPT and total <= MAX_KEPT_BYTES:
                break
            over.append(one.event_id)
            total -= one.size
        if not over:
            return
        dropped = self.store.drop(playbook, run_id, over)
        if dropped:
            now = self.runs.runtime.clock.now()
            note = run_event(
                events.EVENT_DROPPED,
                now,
                run_id,
                {
                    "event_ids": dropped,
                    "reason": f"A run keeps at most {MAX_KEPT} events ({MAX_KEPT_BYTES // 1024 // 1024} MiB) "
                    "that no listen has taken; the oldest are dropped.",
                },
            )
            self.runs.store.record_events(playbook, [note])

    # --- listen ---------------------------------------------------------------------------------

    def listen(self, payload: Mapping[str, Any]) -> str:
        """The entry's ``listen``: ``answered`` (at once), ``waiting`` or ``refused``."""
        key = RunKey.from_json(payload["run"])
        playbook = PlaybookRef(key.org, key.playbook)
        token, task = str(payload["token"]), str(payload.get("task") or "")
        attempt = str(payload.get("attempt", "0"))
        to = payload.get("to")
        read = str(payload.get("read") or "data")
        run = self.runs.store.get_run(playbook, key.run_id)
        if run is None or run.status != "started":
            self._fail(token, runtime_error("The workflow run has ended.", instance=task))
            return "refused"
        try:
            if not isinstance(to, Mapping):
                raise ValueError("a listen's to is an object")
            _, found = filters_of(to)
            if not found or len(found) > MAX_FILTERS:
                raise ValueError(f"a listen has 1 to {MAX_FILTERS} filters, not {len(found)}")
            types = tuple(literal_types(to))
        except ValueError as exc:
            self._fail(token, runtime_error(f"The listen cannot be read: {exc}.", instance=task))
            return "refused"
        wanted = Listen(
            run_id=key.run_id,
            listen_id=listen_id(task, attempt),
            state="waiting",
            token=token,
            to=dict(to),
            read=read,
            task=task,
            since=new_event_id("listen", self.runs.runtime.clock.now()),
            types=types,
        )
        kept = self.store.wait(playbook, wanted)
        # The same task waiting again (a retry, a loop's next turn): its earlier attempt waits no more.
        for earlier in self.store.waiting(playbook, key.run_id):
            if earlier.task == task and earlier.listen_id != wanted.listen_id:
                self.store.forget_listen(playbook, earlier)
        if kept.state != "waiting":
            self._succeed(token, kept.output, task)  # delivered again: answered as the first time
            return "answered"
        self.deliver(playbook, key.run_id)
        now = self.store.get_listen(playbook, key.run_id, wanted.listen_id)
        return "answered" if now is not None and now.state != "waiting" else "waiting"

    def deliver(self, playbook: PlaybookRef, run_id: str) -> None:
        """Answer each waiting listen of the run that the kept events complete (earliest first)."""
        for _ in range(_ATTEMPTS):
            try:
                self._deliver_once(playbook, run_id)
                return
            except (StoreConflict, StoreContention):
                continue  # a listen answered or an event taken meanwhile: work it out again
        LOG.warning("the events of run %s met concurrent listens %d times", run_id, _ATTEMPTS)

    def _deliver_once(self, playbook: PlaybookRef, run_id: str) -> None:
        # The latest listen first: one whose task's timeout passed may still wait here when the engine
        # did not say so (its events are then lost with its token), and the run waits at the latest.
        listens = self.store.waiting(playbook, run_id)
        if not listens:
            return
        kept = self.store.kept(playbook, run_id)
        for listen in listens:
            if not kept:
                return
            chosen = taken(listen.to, [one.envelope for one in kept])
            if chosen is None:
                continue
            chosen_events = [kept[index] for index in chosen]
            output = output_of(listen.read, [one.envelope for one in chosen_events])
            self.store.answer(playbook, listen, [one.event_id for one in chosen_events], output)
            if listen.token is not None:
                self._succeed(listen.token, output, listen.task)
            taken_ids = {one.event_id for one in chosen_events}
            kept = [one for one in kept if one.event_id not in taken_ids]

    def _succeed(self, token: str, output: Any, task: str) -> None:
        if _size({"output": output}) > MAX_PAYLOAD_BYTES:
            error = runtime_error(
                f"The events the listen took are {_size(output):,} bytes as JSON; data between tasks is at "
                f"most {MAX_PAYLOAD_BYTES:,}.",
                instance=task,
            )
            self._fail(token, error)
            return
        self._engine().succeed(token, {"output": output})

    def _fail(self, token: str, error: Any) -> None:
        self._engine().fail(token, engine.ERROR_NAME, error.cause())

    # --- emit -----------------------------------------------------------------------------------

    def emit(self, payload: Mapping[str, Any]) -> str:
        """The entry's ``emit``: ``published``, or ``unchanged`` when this run, task and attempt had
        published it (it is handed to the listens again either way: that is idempotent)."""
        key = RunKey.from_json(payload["run"])
        playbook = PlaybookRef(key.org, key.playbook)
        task, attempt = str(payload.get("task") or ""), str(payload.get("attempt", "0"))
        given = payload.get("event") or {}
        if not isinstance(given, Mapping) or not isinstance(given.get("type"), str):
            raise ValueError("an emit's event has a type")
        the_id = emitted_id(key.run_id, task, attempt)
        now = self.runs.runtime.clock.now()
        envelope = {
            "type": str(given["type"]),
            "id": the_id,
            "time": format_time(now),
            "source": given.get("source"),
            "subject": given.get("subject"),
            "data": given.get("data"),
        }
        published = {
            "event_id": the_id,
            "type": envelope["type"],
            "source": envelope["source"],
            "subject": envelope["subject"],
            "data": envelope["data"],
            "task": task,
        }
        history = run_event(events.EVENT_PUBLISHED, now, key.run_id, published)
        recorded = self.runs.retrying(lambda: self.store.record_emitted(playbook, the_id, history))
        for run_id in self.store.runs_listening_for(playbook, str(given["type"])):
            self._hand(playbook, run_id, envelope, emitted_by=key.run_id)
        return "published" if recorded else "unchanged"

    def _hand(self, playbook: PlaybookRef, run_id: str, envelope: dict[str, Any], *, emitted_by: str) -> None:
        """An emitted event to a run with a listen for its type: received (once), then delivered."""
        run = self.runs.store.get_run(playbook, run_id)
        if run is None or run.status != "started":
            return
        history = run_event(events.EVENT_RECEIVED, self.runs.runtime.clock.now(), run_id, {})
        try:
            receipt = self._receive(playbook, run_id, envelope, history, emitted_by=emitted_by)
        except EventsFull:
            LOG.info("the run %s takes no more events: an emitted event does not reach it", run_id)
            return
        if receipt.new:
            self.deliver(playbook, run_id)

    def lapsed(self, payload: Mapping[str, Any]) -> str:
        """A task's ``timeout`` passed (the entry's ``deadline``): a listen of that task and attempt, or of
        a task within it (a ``do``, ``for``, ``fork`` or ``try`` timed as a whole), that still waits is
        forgotten, so that it takes no event meant for what comes next. ``forgotten`` or ``unchanged``."""
        if not isinstance(payload.get("run"), Mapping):
            return "unchanged"
        key = RunKey.from_json(payload["run"])
        playbook = PlaybookRef(key.org, key.playbook)
        task = str(payload.get("task") or "")
        the_id = listen_id(task, str(payload.get("attempt", "0")))
        forgotten = "unchanged"
        for found in self.store.waiting(playbook, key.run_id):
            if found.listen_id == the_id or found.task.startswith(task + "/"):
                self.store.forget_listen(playbook, found)
                forgotten = "forgotten"
        return forgotten

    def ended(self, payload: Mapping[str, Any]) -> None:
        """The run's execution ended (its end, or Step Functions ended it): listens still waiting (a
        branch's, when another ended the run) are forgotten."""
        if not isinstance(payload.get("run"), Mapping):
            return
        key = RunKey.from_json(payload["run"])
        self.forget(PlaybookRef(key.org, key.playbook), key.run_id)

    # --- cancelling -----------------------------------------------------------------------------

    def forget(self, playbook: PlaybookRef, run_id: str) -> int:
        """A workflow run that ended (cancelled, or its execution ended): its waiting listens forgotten
        (their tokens are never answered) and the events kept for them dropped. How many listens."""
        if not self.store.has_events(playbook, run_id):
            return 0  # most runs: no query of the playbook's items at their end
        forgotten = self.store.forget_listens(playbook, run_id)
        self.store.drop(playbook, run_id, self.store.kept_ids(playbook, run_id))
        return forgotten
