"""Where runs, requests and events are kept: the one table (``parley.infrastructure.table``).

Items, all under the playbook's partition ``pk = PB#{org}#{playbook}``:

- run: ``sk = RUN#{run_id}``; ``gsi1pk = PB#{org}#{playbook}#RUN``, ``gsi1sk = {started_at}#{run_id}``
  (``list_runs``, newest first). ``status``, ``output`` and ``rejection`` (JSON text), ``input_digest``,
  ``attempt`` and ``called`` (JSON text; the rules of retrying under a run id). A run ended by
  :meth:`DynamoRunStore.end_run` keeps its ``record`` on the item of its ending event, packed
  (``record_z``, ``parley.runs.packed``), and names that event in ``record_event``: the run's item, and
  its entry in ``gsi1`` (which projects every attribute, rewritten by the ending's write), stay under
  1 KB, and lists never show the record; ``get_run`` reads the event too. A run ended otherwise, or
  written before, holds ``record`` itself (JSON text, or ``record_ref`` in the content store).
- request: ``sk = REQ#{run_id}``; while it is open, ``gsi1pk = PB#{org}#{playbook}#REQ``,
  ``gsi1sk = {requested_at}#{run_id}`` (``list_interactions``, newest first: a page reads about a
  page of items however many are open); the keys are removed when it leaves the list. ``state``
  (``open``, ``answered``, ``expired``, ``cancelled``), the rendered ``to``/``answerer``/``message``,
  ``answer_schema`` as it stood when asked, the execution's task ``token`` once parked, and the
  answer fact once answered.
- event: ``sk = EVT#{event_id}`` (``list_playbook_events``: ids sort in time order, see
  ``parley.runs.events``); ``gsi2pk = RUN#{org}#{playbook}#{run_id}``, ``gsi2sk = {event_id}`` (a
  run's history, in order). ``data`` is JSON text.
- the open-requests counter: ``sk = COUNTER#open_requests``, ``count``.
- the filter slots (issue 31; ``gsi3pk``/``gsi3sk`` to ``gsi5pk``/``gsi5sk``, ``parley.runs.items``): a
  run holds one entry for each of ``name``, ``status`` and ``type`` (the ``status`` one moves in the
  write that ends it); an open request one for ``to`` (removed with its ``gsi1`` keys when it leaves
  the list); an event one for ``type``. The slots hold keys and ``expires_at`` only: a filtered page
  reads its keys, then its items by key (``BatchGetItem``, consistent), checked against every filter.
- a run's work that waits (an agent run, ``agent-runs.md``): ``sk = WORK#{run_id}``; ``claimed``, the
  last segment of work an invocation took (0 at the start, ``n`` after the run's ``n``-th request), and
  ``state_z``, the type's state of the work packed (``parley.runs.packed``: it is rewritten at each
  request and its item claimed at each resumption, each write metered by the item's size); or, past
  64 KiB packed, ``state_ref`` in the content store. Items written before hold ``state`` as JSON text.
  The request item is reused: one request a run is open at a time.

JSON values (answers, outputs, schemas, event data) are stored as JSON text: DynamoDB maps nest at
most 32 levels and refuse floats, and an answer may nest 512 levels. A run's ``output`` or an event's
``data`` over 64 KiB (``parley.ports.content``) is kept in the content store: the item holds ``output_ref``
and ``output_size`` instead (lists show such an output as its size), or ``data_ref`` with
``data_listed``, the data as a list shows it, and ``omitted``.

Every fact is written once, under a condition, in one transaction with what follows from it: a request
opens with its run, its event and the counter's increment (``count < limit``); an answer, an expiry or
a cancel moves the request from ``open`` (so exactly one of them wins), out of the list, with its
event and the counter's decrement; the run's end is written only while the run is ``started``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, TypeVar, cast

from parley.definitions.model import PlaybookRef
from parley.dynamo import ItemCodec, StoreConflict, item_key, translated
from parley.errors import ParleyError
from parley.infrastructure.keys import (
    COUNTER_KEY,
    conversation_key,
    event_id_of,
    event_key,
    events_list_key,
    filter_key,
    history_key,
    list_position,
    playbook_key,
    position_run_id,
    request_key,
    requests_list_key,
    run_key,
    runs_list_key,
    work_key,
)
from parley.infrastructure.table import TABLE
from parley.ports.content import ITEM_CONTENT_MAX, ContentMissing, ContentStore
from parley.runs.events import RUN_REJECTED, RUN_SUCCEEDED
from parley.runs.items import (
    EVENT_SLOTS,
    REQUEST_SLOTS,
    RUN_SLOTS,
    chosen_slot,
    event_from,
    event_slots,
    kept_value,
    request_from,
    request_slot_names,
    request_slots,
    run_from,
    run_slots,
    slot_index,
)
from parley.runs.model import AnswerFact, CalledTool, Event, Parent, Request, Run
from parley.runs.packed import pack, unpack

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.client import DynamoDBClient
    from mypy_boto3_dynamodb.type_defs import (
        AttributeValueTypeDef,
        QueryInputTypeDef,
        TransactWriteItemTypeDef,
    )

_LIST = TABLE.indexes[0]
_HISTORY = TABLE.indexes[1]
#: The items a listing's page reads at most, as a multiple of the page and its one more item (DynamoDB's
#: ``ScannedCount`` and the items it fetches by key): a page through a slot reads its keys, then their
#: items, so twice. A filter checked after the read (a combination the slots leave to the items, an open
#: request past its expiry) can skip many items; the page is then what was found, possibly short or
#: empty, with a ``next_cursor`` from where the read stopped, as DynamoDB itself pages: a listing reads
#: in proportion to what it returns, never the playbook's history (issue 31).
READ_BOUND_PAGES: Final = 2
#: A request's attribute naming the conversation it has joined (``parley.interaction.replies``).
CONVERSATION_ID: Final = "conversation_id"

Item = TypeVar("Item")

#: An open request's slot attributes (``list_interactions``' filters), removed with the list's keys when
#: it leaves the list: as expression names, and as the ``REMOVE`` clause's list.
_SLOT_NAMES: Final = {f"#slot{number}": name for number, name in enumerate(request_slot_names())}
_SLOTS_REMOVED: Final = ", ".join(_SLOT_NAMES)


#: A run's attribute naming the event whose item keeps the run's record (an ended run's, written by
#: :meth:`DynamoRunStore.end_run`), and that event's attribute holding it, packed.
RECORD_EVENT: Final = "record_event"
RECORD_PACKED: Final = "record_z"
#: A waiting run's work item's attribute holding its state, packed (``parley.runs.packed``).
STATE_PACKED: Final = "state_z"


class RequestsFull(ParleyError):
    """The playbook already has as many open requests as the runtime allows."""


class RunTaken(ParleyError):
    """A run under this id was written since it was read (another call with the same id)."""


@dataclass(frozen=True)
class WorkState:
    """A run's work that waits: the segment last claimed, and the type's state (``None`` before the
    first request)."""

    claimed: int
    state: dict[str, Any] | None


@dataclass(frozen=True)
class Found:
    """Items of one page; whether more follow; the items read (DynamoDB's ``ScannedCount`` over the
    page's queries, and the items fetched by key); and where the next page starts (the sort key, in the
    index read, of the last item the page considered: its last item's, or where a bounded read stopped),
    ``None`` on the last page."""

    items: list[Any]
    more: bool
    scanned: int
    resume: str | None = None


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _size(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


class DynamoRunStore:
    """Runs, requests and events on the one table, through an injected low-level boto3 client."""

    def __init__(self, client: DynamoDBClient, table_name: str, content: ContentStore | None = None) -> None:
        self.client = client
        self.table_name = table_name
        self._client = client
        self._table = table_name
        self._codec = ItemCodec()
        self._content = content
        #: The items a listing's page reads at most; ``None``: :data:`READ_BOUND_PAGES` pages (tests set a
        #: number).
        self.read_bound: int | None = None
        #: Told of every run ending this store has written (after the write): a run a workflow called
        #: answers the workflow's task token (``parley.runs.service``).
        self.ended: Callable[[PlaybookRef, Run], None] | None = None

    def _told(self, playbook: PlaybookRef, run: Run) -> None:
        if self.ended is not None and run.parent is not None and run.status != "started":
            self.ended(playbook, run)

    # --- reads ---------------------------------------------------------------------------------

    def get_run(self, playbook: PlaybookRef, run_id: str, *, record: bool = True) -> Run | None:
        """The run; with ``record=False``, without the record of an ended run whose record is kept on
        its ending event (one read, not two, for a caller that only looks at the status)."""
        item = self._get(playbook_key(playbook), run_key(run_id))
        if item is None:
            return None
        if record and RECORD_EVENT in item:  # the record is kept on the event of the run's ending (see above)
            holder = self._get(playbook_key(playbook), event_key(item[RECORD_EVENT]))
            if holder is not None and RECORD_PACKED in holder:
                item["record"] = unpack(holder[RECORD_PACKED])
        return run_from(item, self._load)

    def get_request(self, playbook: PlaybookRef, run_id: str) -> Request | None:
        item = self._get(playbook_key(playbook), request_key(run_id))
        return request_from(item) if item else None

    def get_requests(self, playbook: PlaybookRef, run_ids: list[str]) -> list[Request]:
        """The requests of ``run_ids`` that exist, read 100 at a time (``BatchGetItem``, consistent)."""
        found: list[Request] = []
        for start in range(0, len(run_ids), 100):
            keys = [
                item_key(playbook_key(playbook), request_key(run_id))
                for run_id in run_ids[start : start + 100]
            ]
            pending: dict[str, Any] = {self._table: {"Keys": keys, "ConsistentRead": True}}
            while pending:
                with translated():
                    response = self._client.batch_get_item(RequestItems=pending)
                found.extend(
                    request_from(self._plain(item)) for item in response["Responses"].get(self._table, [])
                )
                pending = dict(response.get("UnprocessedKeys") or {})
        return found

    def get_event(self, playbook: PlaybookRef, event_id: str) -> Event | None:
        item = self._get(playbook_key(playbook), event_key(event_id))
        return event_from(item, self._load) if item else None

    def open_requests(self, playbook: PlaybookRef) -> int:
        """The counter of open requests (for tests and operators: the service never needs to read it)."""
        item = self._get(playbook_key(playbook), COUNTER_KEY)
        return int(item["count"]) if item else 0

    def list_runs(
        self,
        playbook: PlaybookRef,
        *,
        filters: Mapping[str, str],
        limit: int,
        after: str | None,
    ) -> Found:
        """Runs newest first whose ``type``/``name``/``status`` equal ``filters``' values: unfiltered
        through ``gsi1``, filtered through the slot of the filter preferred (``parley.runs.items``), in
        order, checking the others, stopping at ``limit`` or the bounded read. ``after`` is the position
        (``{started_at}#{run_id}``) of the last run shown."""
        return self._listing(
            playbook,
            runs_list_key(playbook),
            RUN_SLOTS,
            filters,
            limit,
            after,
            base_key=lambda position: run_key(position_run_id(position)),
            read=lambda item: run_from(item, None),
            keep=lambda item: all(item.get(name) == value for name, value in filters.items()),
        )

    def list_open_requests(
        self,
        playbook: PlaybookRef,
        *,
        filters: Mapping[str, str],
        expiring_after: str,
        limit: int,
        after: str | None,
    ) -> Found:
        """Open requests newest first, leaving out those whose expiry (``expires_at``) is not after
        ``expiring_after`` (past their time, waiting for the timer); filters and ``after`` as for
        runs."""

        def keep(item: Mapping[str, Any]) -> bool:
            return (
                item.get("state") == "open"
                and str(item.get("expires_at", "")) > expiring_after
                and all(item.get(name) == value for name, value in filters.items())
            )

        return self._listing(
            playbook,
            requests_list_key(playbook),
            REQUEST_SLOTS,
            filters,
            limit,
            after,
            base_key=lambda position: request_key(position_run_id(position)),
            read=request_from,
            keep=keep,
            expiring_after=expiring_after,
        )

    def list_events(
        self,
        playbook: PlaybookRef,
        *,
        run_id: str | None,
        event_type: str | None,
        since: str | None,
        descending: bool,
        limit: int,
        after: str | None,
    ) -> Found:
        """Events in id order (time order), or the reverse; only those of one run (its history,
        ``gsi2``, checking the type if one is given: a run's history is its own size, not the
        playbook's), of one type (its slot), or from the id prefix ``since`` on (the sort key's range,
        in whichever index is read); ``after`` is the id of the last event shown."""
        names: dict[str, str] = {}
        values: dict[str, AttributeValueTypeDef] = {}
        query: QueryInputTypeDef = {"TableName": self._table, "ScanIndexForward": not descending}
        start: dict[str, AttributeValueTypeDef] | None = None
        fetch = False
        if run_id is None and event_type is None:
            names.update({"#pk": TABLE.partition_key, "#sk": TABLE.sort_key})
            values.update(
                {
                    ":pk": {"S": playbook_key(playbook)},
                    ":low": {"S": event_key(since or "")},
                    ":high": {"S": event_key("~")},
                }
            )
            condition = "#pk = :pk AND #sk BETWEEN :low AND :high"
            if after is not None:
                start = item_key(playbook_key(playbook), event_key(after))

            def position(item: Mapping[str, Any]) -> str:
                return event_id_of(str(item[TABLE.sort_key]["S"]))
        else:
            if run_id is not None:
                index, key = _HISTORY, history_key(playbook, run_id)
            else:
                assert event_type is not None
                index = slot_index(EVENT_SLOTS, "type")
                key = filter_key(events_list_key(playbook), [event_type])
                fetch = True
            query["IndexName"] = index.name
            names["#pk"] = index.partition_key
            values[":pk"] = {"S": key}
            condition = "#pk = :pk"
            if since is not None:
                condition += " AND #sk >= :low"
                names["#sk"] = index.sort_key
                values[":low"] = {"S": since}
            if after is not None:
                start = {
                    **item_key(playbook_key(playbook), event_key(after)),
                    index.partition_key: {"S": key},
                    index.sort_key: {"S": after},
                }
            sort_name = index.sort_key

            def position(item: Mapping[str, Any]) -> str:
                return str(item[sort_name]["S"])

        query["KeyConditionExpression"] = condition
        query["ExpressionAttributeNames"] = names
        query["ExpressionAttributeValues"] = values

        def keep(item: Mapping[str, Any]) -> bool:
            return (event_type is None or item.get("type") == event_type) and (
                run_id is None or item.get("run_id") == run_id
            )

        return self._page(
            query,
            start,
            limit,
            lambda item: event_from(item, None),
            position=position,
            fetch=fetch,
            keep=keep,
        )

    # --- writes --------------------------------------------------------------------------------

    def record_run(
        self, playbook: PlaybookRef, run: Run, events: list[Event], *, replacing: int | None
    ) -> None:
        """Write a run that ended where it started (a rejection, a notification) with its events.

        ``replacing`` is the ``attempt`` of a rejected run this one runs again, else ``None`` (a new
        id). :class:`RunTaken` when that no longer holds."""
        items: list[TransactWriteItemTypeDef] = [self._put_run(playbook, run, replacing)]
        items.extend(self._put_event(playbook, event) for event in events)
        try:
            if len(items) == 1:  # one conditional write: a transaction of one item only costs twice
                with translated():
                    self._client.put_item(**items[0]["Put"])
            else:
                self._transact(items)
        except StoreConflict as conflict:
            raise RunTaken from conflict
        self._told(playbook, run)

    def open_request(
        self,
        playbook: PlaybookRef,
        run: Run,
        request: Request,
        event: Event,
        *,
        limit: int,
        replacing: int | None,
    ) -> None:
        """Start a run that asks: the run, its open request, ``interaction_requested`` and the counter's
        increment, in one transaction. :class:`RunTaken` or :class:`RequestsFull` when their condition
        did not hold."""
        items: list[TransactWriteItemTypeDef] = [
            self._put_run(playbook, run, replacing),
            self._put_request(playbook, request),
            self._put_event(playbook, event),
            self._increment(playbook, limit),
        ]
        try:
            self._transact(items)
        except StoreConflict as conflict:
            if conflict.failed(0) or conflict.failed(1):
                raise RunTaken from conflict
            raise RequestsFull from conflict

    def keep_token(self, playbook: PlaybookRef, run_id: str, token: str) -> None:
        """Keep the task token on the request while it is open; :class:`StoreConflict` once it is not."""
        with translated():
            self._client.update_item(
                TableName=self._table,
                Key=item_key(playbook_key(playbook), request_key(run_id)),
                UpdateExpression="SET #token = :token",
                ConditionExpression="#state = :open",
                ExpressionAttributeNames={"#token": "token", "#state": "state"},
                ExpressionAttributeValues={":token": {"S": token}, ":open": {"S": "open"}},
            )

    def answer_request(
        self,
        playbook: PlaybookRef,
        fact: AnswerFact,
        event: Event,
        *,
        ending: tuple[Run, Event] | None = None,
    ) -> None:
        """Record the answer: the request from ``open`` (and not yet expired at ``answered_at``) to
        ``answered``, out of the list, ``request_answered``, the counter's decrement — and, with
        ``ending`` (a run the answer ends: ``succeeded``, and its ``run_succeeded``), the run's ending
        while it is ``started``, all in one transaction: the fact and the ending it decides are never
        apart. :class:`StoreConflict` when the request is no longer open (or the run has ended)."""
        update: TransactWriteItemTypeDef = {
            "Update": {
                "TableName": self._table,
                "Key": item_key(playbook_key(playbook), request_key(fact.run_id)),
                "UpdateExpression": (
                    "SET #state = :answered, #answer_id = :answer_id, #answer = :answer, "
                    "#claimed_for = :claimed_for, #answered_by = :answered_by, #answered_at = :at, "
                    f"#ended_at = :at REMOVE #gpk, #gsk, {_SLOTS_REMOVED}"
                ),
                "ConditionExpression": "#state = :open AND #expires_at > :at",
                "ExpressionAttributeNames": {
                    "#state": "state",
                    "#answer_id": "answer_id",
                    "#answer": "answer",
                    "#claimed_for": "claimed_for",
                    "#answered_by": "answered_by",
                    "#answered_at": "answered_at",
                    "#ended_at": "ended_at",
                    "#expires_at": "expires_at",
                    "#gpk": _LIST.partition_key,
                    "#gsk": _LIST.sort_key,
                    **_SLOT_NAMES,
                },
                "ExpressionAttributeValues": {
                    ":answered": {"S": "answered"},
                    ":open": {"S": "open"},
                    ":answer_id": {"S": fact.answer_id},
                    ":answer": {"S": _json(fact.answer)},
                    ":claimed_for": self._codec.value(fact.claimed_for),
                    ":answered_by": {"S": fact.answered_by},
                    ":at": {"S": fact.answered_at},
                },
            }
        }
        items = [update, self._put_event(playbook, event), self._decrement(playbook)]
        if ending is not None:
            items += [self._end_run(playbook, ending[0]), self._put_event(playbook, ending[1])]
        self._ending(playbook, fact.run_id, items)
        if ending is not None:
            self._told(playbook, ending[0])

    def end_request(
        self,
        playbook: PlaybookRef,
        run: Run,
        state: str,
        event: Event,
        *,
        due_by: str | None = None,
    ) -> None:
        """End an open request as ``expired`` or ``cancelled`` with its run's ending (``run``, rejected),
        its event and the counter's decrement. With ``due_by``, only a request whose expiry is not after
        it. :class:`StoreConflict` when the request is no longer open (or not yet due)."""
        assert run.finished_at is not None
        request = self._leave_open(playbook, run.run_id, state, run.finished_at, due_by)
        self._ending(
            playbook,
            run.run_id,
            [
                request,
                self._end_run(playbook, run),
                self._put_event(playbook, event),
                self._decrement(playbook),
            ],
        )
        self._told(playbook, run)

    def end_run(self, playbook: PlaybookRef, run: Run, event: Event | list[Event]) -> None:
        """Write the run's ending (``run``, succeeded or rejected) and its events (such as a tool call's
        end and the run's), while it is still ``started``; :class:`StoreConflict` once it has ended."""
        events = event if isinstance(event, list) else [event]
        # The record goes on the run's own ending event (the last), written in this same transaction: the
        # run item stays small, and so does its entry in the runs' list, which never shows the record.
        packed = self._packed_record(run)
        holder = events[-1] if packed is not None and events else None
        items = [self._end_run(playbook, run, record_event=holder)]
        items += [self._put_event(playbook, e, record=packed if e is holder else None) for e in events]
        self._transact(items)
        self._told(playbook, run)

    def keep_parent_token(self, playbook: PlaybookRef, run_id: str, parent: Parent) -> None:
        """Keep the task token a workflow's call waits on (a call the engine performed again brings a new
        one) while the run is started; :class:`StoreConflict` once it has ended."""
        self._transact(
            [
                {
                    "Update": {
                        "TableName": self._table,
                        "Key": item_key(playbook_key(playbook), run_key(run_id)),
                        "UpdateExpression": "SET #parent = :parent",
                        "ConditionExpression": "#status = :started",
                        "ExpressionAttributeNames": {"#parent": "parent", "#status": "status"},
                        "ExpressionAttributeValues": {
                            ":parent": {"S": _json(parent.kept())},
                            ":started": {"S": "started"},
                        },
                    }
                }
            ]
        )

    # --- deliveries (``parley.interaction.delivery``) ---------------------------------------------------

    def claim_attempt(self, playbook: PlaybookRef, run_id: str, number: int, at: str, event: Event) -> None:
        """Start attempt ``number``: only while the request is open and the attempt before it has ended
        (``to_deliver`` or ``retrying``), so two workers never make the same attempt; with its
        ``delivery_started``. :class:`StoreConflict` when that does not hold."""
        update: TransactWriteItemTypeDef = {
            "Update": {
                "TableName": self._table,
                "Key": item_key(playbook_key(playbook), request_key(run_id)),
                "UpdateExpression": "SET #attempts = :number, #standing = :delivering, #started = :at",
                "ConditionExpression": (
                    "#state = :open AND #attempts = :previous AND #standing IN (:to_deliver, :retrying)"
                ),
                "ExpressionAttributeNames": {
                    "#attempts": "attempts",
                    "#standing": "standing",
                    "#started": "attempt_started_at",
                    "#state": "state",
                },
                "ExpressionAttributeValues": {
                    ":number": {"N": str(number)},
                    ":previous": {"N": str(number - 1)},
                    ":delivering": {"S": "delivering"},
                    ":to_deliver": {"S": "to_deliver"},
                    ":retrying": {"S": "retrying"},
                    ":at": {"S": at},
                    ":open": {"S": "open"},
                },
            }
        }
        self._transact([update, self._put_event(playbook, event)])

    def end_attempt(
        self,
        playbook: PlaybookRef,
        run_id: str,
        number: int,
        standing: str,
        events: list[Event],
        *,
        sent: Mapping[str, str] | None = None,
        conversation: str | None = None,
        ending: Run | None = None,
    ) -> bool:
        """End attempt ``number`` (still ``delivering`` on an open request) as ``standing`` with its
        events; ``sent`` is what the message was delivered as. With ``ending`` (a notification delivered,
        or out of attempts) the request ends as ``standing`` with the run's ending and the counter's
        decrement. When the attempt no longer stands so (cancelled, expired, answered or counted lost
        meanwhile), only the events are written, and the answer is ``False``."""
        names = {"#attempts": "attempts", "#standing": "standing", "#state": "state"}
        values: dict[str, AttributeValueTypeDef] = {
            ":number": {"N": str(number)},
            ":delivering": {"S": "delivering"},
            ":standing": {"S": standing},
            ":open": {"S": "open"},
        }
        update = "SET #standing = :standing"
        if sent is not None:
            update += ", #sent = :sent"
            names["#sent"] = "sent"
            values[":sent"] = {"S": _json(dict(sent))}
        if conversation is not None:
            update += ", #conversation = :conversation"
            names["#conversation"] = "conversation"
            values[":conversation"] = {"S": conversation}
        items: list[TransactWriteItemTypeDef] = []
        if ending is not None:
            assert ending.finished_at is not None
            update += f", #state = :standing, #ended_at = :ended_at REMOVE #gpk, #gsk, {_SLOTS_REMOVED}"
            names.update({"#ended_at": "ended_at", "#gpk": _LIST.partition_key, "#gsk": _LIST.sort_key})
            names.update(_SLOT_NAMES)
            values[":ended_at"] = {"S": ending.finished_at}
            items.extend([self._end_run(playbook, ending), self._decrement(playbook)])
        request: TransactWriteItemTypeDef = {
            "Update": {
                "TableName": self._table,
                "Key": item_key(playbook_key(playbook), request_key(run_id)),
                "UpdateExpression": update,
                "ConditionExpression": "#state = :open AND #attempts = :number AND #standing = :delivering",
                "ExpressionAttributeNames": names,
                "ExpressionAttributeValues": values,
            }
        }
        try:
            self._transact([request, *items, *(self._put_event(playbook, event) for event in events)])
        except StoreConflict as conflict:
            if not conflict.failed(0):
                raise
            # The attempt's own end is still history; the run's ending is not (the run ended otherwise).
            own = [event for event in events if event.type not in (RUN_SUCCEEDED, RUN_REJECTED)]
            if own:
                self.record_events(playbook, own)
            return False
        if ending is not None:
            self._told(playbook, ending)
        return True

    # --- items ---------------------------------------------------------------------------------

    def record_call(self, playbook: PlaybookRef, run_id: str, called: CalledTool, event: Event) -> None:
        """Add ``called`` to a started run's ``calls`` with its ``tool_call_started``, before the call is
        sent; :class:`StoreConflict` once the run has ended (cancelled, or its bound ran out)."""
        update: TransactWriteItemTypeDef = {
            "Update": {
                "TableName": self._table,
                "Key": item_key(playbook_key(playbook), run_key(run_id)),
                "UpdateExpression": "SET #calls = list_append(if_not_exists(#calls, :none), :called)",
                "ConditionExpression": "#status = :started",
                "ExpressionAttributeNames": {"#calls": "calls", "#status": "status"},
                "ExpressionAttributeValues": {
                    ":none": {"L": []},
                    ":called": {"L": [{"S": _json(called.as_json())}]},
                    ":started": {"S": "started"},
                },
            }
        }
        self._transact([update, self._put_event(playbook, event)])

    def record_events(self, playbook: PlaybookRef, events: list[Event]) -> None:
        """Write events that no other item depends on (such as ``execute``'s tool calls), at once."""
        self._transact([self._put_event(playbook, event) for event in events])

    # --- a run's work that waits (an agent run: ``agent-runs.md``, "A run that waits") --------------

    def get_work(self, playbook: PlaybookRef, run_id: str) -> WorkState | None:
        item = self._get(playbook_key(playbook), work_key(run_id))
        if item is None:
            return None
        if STATE_PACKED in item:
            return WorkState(int(item["claimed"]), json.loads(unpack(item[STATE_PACKED])))
        return WorkState(int(item["claimed"]), kept_value(item, "state", self._load))

    def claim_work(self, playbook: PlaybookRef, run_id: str, segment: int) -> None:
        """Take segment ``segment`` of the run's work (0: its start; ``n``: after its ``n``-th request),
        once: an invocation that comes twice finds :class:`StoreConflict` and does nothing."""
        with translated():
            self._client.update_item(
                TableName=self._table,
                Key=item_key(playbook_key(playbook), work_key(run_id)),
                UpdateExpression="SET #claimed = :segment, #kind = :kind",
                ConditionExpression="attribute_not_exists(#claimed) OR #claimed < :segment",
                ExpressionAttributeNames={"#claimed": "claimed", "#kind": "kind"},
                ExpressionAttributeValues={":segment": {"N": str(segment)}, ":kind": {"S": "work"}},
            )

    def ask(
        self,
        playbook: PlaybookRef,
        run: Run,
        segment: int,
        request: Request,
        events: list[Event],
        state: dict[str, Any],
        *,
        limit: int,
    ) -> None:
        """Open the run's next request with its events and the work's state, in one transaction: only
        while the run is ``started``, its previous request has ended, and this invocation still holds
        the work's ``segment``. :class:`StoreConflict` when one of those does not hold (the run ended or
        another invocation took the work); :class:`RequestsFull` at the playbook's limit."""
        names = {
            "#claimed": "claimed",
            "#state": "state",
            "#ref": "state_ref",
            "#size": "state_size",
            "#packed": STATE_PACKED,
        }
        values: dict[str, AttributeValueTypeDef] = {":segment": {"N": str(segment)}}
        text = _json(state)
        packed = pack(text)
        if _size(packed) < _size(text) and _size(packed) <= ITEM_CONTENT_MAX:
            update = "SET #packed = :packed REMOVE #state, #ref, #size"
            values[":packed"] = {"S": packed}
        else:
            kept = self._kept(playbook, run, "state", state, file=f"work-{segment}")
            if "state" in kept:
                update = "SET #state = :state REMOVE #ref, #size, #packed"
                values[":state"] = {"S": kept["state"]}
            else:
                update = "SET #ref = :ref, #size = :size REMOVE #state, #packed"
                values[":ref"] = {"S": kept["state_ref"]}
                values[":size"] = {"N": str(kept["state_size"])}
        items: list[TransactWriteItemTypeDef] = [
            self._put_request(playbook, request),
            {
                "Update": {
                    "TableName": self._table,
                    "Key": item_key(playbook_key(playbook), work_key(run.run_id)),
                    "UpdateExpression": update,
                    "ConditionExpression": "#claimed = :segment",
                    "ExpressionAttributeNames": names,
                    "ExpressionAttributeValues": values,
                }
            },
            {
                "ConditionCheck": {
                    "TableName": self._table,
                    "Key": item_key(playbook_key(playbook), run_key(run.run_id)),
                    "ConditionExpression": "#status = :started",
                    "ExpressionAttributeNames": {"#status": "status"},
                    "ExpressionAttributeValues": {":started": {"S": "started"}},
                }
            },
            *(self._put_event(playbook, event) for event in events),
            self._increment(playbook, limit),
        ]
        try:
            self._transact(items)
        except StoreConflict as conflict:
            if conflict.failed(len(items) - 1) and not any(conflict.failed(n) for n in range(3)):
                raise RequestsFull from conflict
            raise

    def expire_open_request(
        self, playbook: PlaybookRef, run_id: str, event: Event, *, due_by: str | None
    ) -> None:
        """End an open request as ``expired`` without ending its run (an agent run goes on: the model is
        told), with ``request_expired`` and the counter's decrement. With ``due_by``, only a request whose
        expiry is not after it. :class:`StoreConflict` when it is no longer open (or not yet due)."""
        request = self._leave_open(playbook, run_id, "expired", event.at, due_by)
        self._ending(playbook, run_id, [request, self._put_event(playbook, event), self._decrement(playbook)])

    def _put_run(self, playbook: PlaybookRef, run: Run, replacing: int | None) -> TransactWriteItemTypeDef:
        values: dict[str, Any] = {
            TABLE.partition_key: playbook_key(playbook),
            TABLE.sort_key: run_key(run.run_id),
            _LIST.partition_key: runs_list_key(playbook),
            _LIST.sort_key: list_position(run.started_at, run.run_id),
            "kind": "run",
            "run_id": run.run_id,
            "type": run.type,
            "name": run.name,
            "definition_version": run.definition_version,
            "status": run.status,
            "started_at": run.started_at,
            "started_by": run.started_by,
            "input_digest": run.input_digest,
            "attempt": run.attempt,
            "takes_answer": run.takes_answer,
            **run_slots(playbook, run.type, run.name, run.status, run.started_at, run.run_id),
        }
        if run.status == "succeeded":
            values.update(self._output_values(playbook, run))
        if run.input is not None:
            values.update(self._kept(playbook, run, "input", run.input))
        if run.record is not None:
            values.update(self._kept(playbook, run, "record", run.record))
        if run.rejection is not None:
            values["rejection"] = _json(run.rejection.as_json())
        if run.finished_at is not None:
            values["finished_at"] = run.finished_at
        if run.called is not None:
            values["called"] = _json(run.called.as_json())
        if run.calls is not None:
            values["calls"] = [_json(called.as_json()) for called in run.calls]
        if run.parent is not None:
            values["parent"] = _json(run.parent.kept())
        if run.execution is not None:
            values["execution"] = run.execution
        put: dict[str, Any] = {"TableName": self._table, "Item": self._codec.serialize(values)}
        if replacing is None:
            put["ConditionExpression"] = "attribute_not_exists(#pk)"
            put["ExpressionAttributeNames"] = {"#pk": TABLE.partition_key}
        else:
            put["ConditionExpression"] = "#attempt = :attempt AND #status IN (:rejected, :failed)"
            put["ExpressionAttributeNames"] = {"#attempt": "attempt", "#status": "status"}
            put["ExpressionAttributeValues"] = {
                ":attempt": {"N": str(replacing)},
                ":rejected": {"S": "rejected"},
                ":failed": {"S": "failed"},
            }
        return {"Put": put}  # type: ignore[typeddict-item]

    def _put_request(self, playbook: PlaybookRef, request: Request) -> TransactWriteItemTypeDef:
        values: dict[str, Any] = {
            TABLE.partition_key: playbook_key(playbook),
            TABLE.sort_key: request_key(request.run_id),
            _LIST.partition_key: requests_list_key(playbook),
            _LIST.sort_key: list_position(request.requested_at, request.run_id),
            "kind": "request",
            "run_id": request.run_id,
            "type": request.type,
            "function": request.function,
            "version": request.version,
            "to": request.to,
            "answerer": request.answerer,
            "message": request.message,
            "takes_answer": request.takes_answer,
            "requested_at": request.requested_at,
            "expires_at": request.expires_at,
            "answer_schema": _json(request.answer_schema),
            "state": request.state,
            "standing": request.standing,
            "attempts": request.attempts,
            **request_slots(playbook, request.to, request.requested_at, request.run_id),
        }
        if request.delivery is not None:
            values["delivery"] = _json(request.delivery.as_json())
        if request.asked is not None:
            values["asked"] = _json(request.asked)
        if request.number != 1:
            values["number"] = request.number
        return {
            "Put": {
                "TableName": self._table,
                "Item": self._codec.serialize(values),
                # A run that runs again under its id may replace the request of an attempt that ended.
                "ConditionExpression": "attribute_not_exists(#pk) OR #state <> :open",
                "ExpressionAttributeNames": {"#pk": TABLE.partition_key, "#state": "state"},
                "ExpressionAttributeValues": {":open": {"S": "open"}},
            }
        }

    def _put_event(
        self, playbook: PlaybookRef, event: Event, *, record: str | None = None
    ) -> TransactWriteItemTypeDef:
        """An event's put; with ``record``, the packed record of the run it ends (see above)."""
        values: dict[str, Any] = {
            TABLE.partition_key: playbook_key(playbook),
            TABLE.sort_key: event_key(event.id),
            "kind": "event",
            "event_id": event.id,
            "type": event.type,
            "at": event.at,
        }
        text = _json(event.data)
        if _size(text) <= ITEM_CONTENT_MAX:
            values["data"] = text
        else:
            from parley.runs.events import listed_data

            key = f"{playbook.org}/{playbook.playbook}/events/{event.id}.json"
            self._keep(key, text)
            shown, omitted = listed_data(event.type, event.data)
            values.update({"data_ref": key, "data_listed": _json(shown), "omitted": omitted})
        if event.run_id is not None:
            values["run_id"] = event.run_id
            values[_HISTORY.partition_key] = history_key(playbook, event.run_id)
            values[_HISTORY.sort_key] = event.id
        values.update(event_slots(playbook, event.type, event.id))
        if record is not None:
            values[RECORD_PACKED] = record
        return {
            "Put": {
                "TableName": self._table,
                "Item": self._codec.serialize(values),
                "ConditionExpression": "attribute_not_exists(#pk)",
                "ExpressionAttributeNames": {"#pk": TABLE.partition_key},
            }
        }

    def _end_run(
        self, playbook: PlaybookRef, run: Run, *, record_event: Event | None = None
    ) -> TransactWriteItemTypeDef:
        """The run's ending; with ``record_event``, its record is kept on that event (packed: see
        :meth:`_packed_record`) and the run names it."""
        assert run.finished_at is not None
        names = {"#status": "status", "#finished_at": "finished_at"}
        values: dict[str, AttributeValueTypeDef] = {
            ":status": {"S": run.status},
            ":started": {"S": "started"},
            ":finished_at": {"S": run.finished_at},
        }
        update = "SET #status = :status, #finished_at = :finished_at"
        # The run's entries in the slots that hold its status move with it, in this same write.
        moved = run_slots(playbook, run.type, run.name, run.status, run.started_at, run.run_id, only="status")
        for number, (name, value) in enumerate(sorted(moved.items())):
            update += f", #s{number} = :s{number}"
            names[f"#s{number}"] = name
            values[f":s{number}"] = {"S": value}
        removed = []
        if run.status == "succeeded":  # a started run holds no output yet: only the new one is set
            for number, (name, value) in enumerate(self._output_values(playbook, run).items()):
                update += f", #o{number} = :o{number}"
                names[f"#o{number}"] = name
                values[f":o{number}"] = self._codec.value(value)
        if record_event is not None:
            update += ", #record_event = :record_event"
            names["#record_event"] = RECORD_EVENT
            values[":record_event"] = {"S": record_event.id}
            for number, name in enumerate(("record", "record_ref", "record_size")):
                names[f"#rec{number}"] = name
                removed.append(f"#rec{number}")
        elif run.record is not None:
            for number, (name, value) in enumerate(self._kept(playbook, run, "record", run.record).items()):
                update += f", #r{number} = :r{number}"
                names[f"#r{number}"] = name
                values[f":r{number}"] = self._codec.value(value)
        if run.rejection is not None:
            update += ", #rejection = :rejection"
            names["#rejection"] = "rejection"
            values[":rejection"] = {"S": _json(run.rejection.as_json())}
        names["#called"] = "called"
        if run.called is not None:
            update += ", #called = :called"
            values[":called"] = {"S": _json(run.called.as_json())}
        else:
            removed.append("#called")
        # The input was kept for the run's work only (a reasoning run's); an ended run keeps none.
        for number, name in enumerate(("input", "input_ref", "input_size")):
            names[f"#in{number}"] = name
            removed.append(f"#in{number}")
        if removed:
            update += " REMOVE " + ", ".join(removed)
        return {
            "Update": {
                "TableName": self._table,
                "Key": item_key(playbook_key(playbook), run_key(run.run_id)),
                "UpdateExpression": update,
                "ConditionExpression": "#status = :started",
                "ExpressionAttributeNames": names,
                "ExpressionAttributeValues": values,
            }
        }

    def _leave_open(
        self, playbook: PlaybookRef, run_id: str, state: str, at: str, due_by: str | None
    ) -> TransactWriteItemTypeDef:
        """The request from ``open`` to ``state`` at ``at``, out of the list; with ``due_by``, only a
        request whose expiry is not after it."""
        condition = "#state = :open"
        names = {
            "#state": "state",
            "#ended_at": "ended_at",
            "#gpk": _LIST.partition_key,
            "#gsk": _LIST.sort_key,
            **_SLOT_NAMES,
        }
        values: dict[str, AttributeValueTypeDef] = {
            ":open": {"S": "open"},
            ":state": {"S": state},
            ":at": {"S": at},
        }
        if due_by is not None:
            condition += " AND #expires_at <= :due_by"
            names["#expires_at"] = "expires_at"
            values[":due_by"] = {"S": due_by}
        return {
            "Update": {
                "TableName": self._table,
                "Key": item_key(playbook_key(playbook), request_key(run_id)),
                "UpdateExpression": (
                    f"SET #state = :state, #ended_at = :at REMOVE #gpk, #gsk, {_SLOTS_REMOVED}"
                ),
                "ConditionExpression": condition,
                "ExpressionAttributeNames": names,
                "ExpressionAttributeValues": values,
            }
        }

    def _increment(self, playbook: PlaybookRef, limit: int) -> TransactWriteItemTypeDef:
        """The open-requests counter's increment, while it is under ``limit``."""
        return {
            "Update": {
                "TableName": self._table,
                "Key": item_key(playbook_key(playbook), COUNTER_KEY),
                "UpdateExpression": "SET #count = if_not_exists(#count, :zero) + :one, #kind = :kind",
                "ConditionExpression": "attribute_not_exists(#count) OR #count < :limit",
                "ExpressionAttributeNames": {"#count": "count", "#kind": "kind"},
                "ExpressionAttributeValues": {
                    ":zero": {"N": "0"},
                    ":one": {"N": "1"},
                    ":limit": {"N": str(limit)},
                    ":kind": {"S": "counter"},
                },
            }
        }

    def _decrement(self, playbook: PlaybookRef) -> TransactWriteItemTypeDef:
        return {
            "Update": {
                "TableName": self._table,
                "Key": item_key(playbook_key(playbook), COUNTER_KEY),
                "UpdateExpression": "ADD #count :minus_one",
                "ExpressionAttributeNames": {"#count": "count"},
                "ExpressionAttributeValues": {":minus_one": {"N": "-1"}},
            }
        }

    def _output_values(self, playbook: PlaybookRef, run: Run) -> dict[str, Any]:
        """A succeeded run's output: as ``output`` on the item, or in the content store (see above)."""
        return self._kept(playbook, run, "output", run.output)

    def _packed_record(self, run: Run) -> str | None:
        """The run's record packed (``parley.runs.packed``) to be kept on the event of its ending, or
        ``None``: no record, or one too big for an item (kept in the content store, as before)."""
        if run.record is None:
            return None
        packed = pack(_json(run.record))
        return packed if _size(packed) <= ITEM_CONTENT_MAX else None

    def _kept(
        self, playbook: PlaybookRef, run: Run, name: str, value: Any, *, file: str | None = None
    ) -> dict[str, Any]:
        """A JSON value of the run (its output, record or input): on the item as ``name``, or past
        64 KiB in the content store (as ``file``, by default ``name``) as ``{name}_ref`` and
        ``{name}_size``."""
        text = _json(value)
        size = _size(text)
        if size <= ITEM_CONTENT_MAX:
            return {name: text}
        key = f"{playbook.org}/{playbook.playbook}/runs/{run.run_id}/{run.attempt}/{file or name}.json"
        self._keep(key, text)
        return {f"{name}_ref": key, f"{name}_size": size}

    def _keep(self, key: str, text: str) -> None:
        if self._content is None:
            raise ContentMissing(
                f"{_size(text):,} bytes of content do not fit in a table item, and this runtime has no "
                "content store (PARLEY_CONTENT_BUCKET)."
            )
        self._content.put(key, text)

    def _load(self, key: str) -> str:
        if self._content is None:
            raise ContentMissing(
                f"The content {key!r} is kept in a content store this runtime does not have."
            )
        return self._content.get(key)

    # --- a request that has joined a conversation (``parley.interaction.replies``) -------------------

    def _ending(self, playbook: PlaybookRef, run_id: str, items: list[TransactWriteItemTypeDef]) -> None:
        """Write a request's ending (``items``, the request's own update first) and, when the request has
        joined a conversation (its ``conversation_id``, set by the join's own transaction), the
        conversation's loss of it, in one transaction: the conversation's ``open_runs`` stays exact, so
        that a read finding nothing new reads no request (issue 26). The ending is written first for a
        request that has joined none (its condition says so: nothing is read before an inbox answer);
        when the request has joined one, it is read for it and the ending written again with it."""
        try:
            self._transact(_joined_ending(playbook, run_id, items, None))
            return
        except StoreConflict as conflict:
            if not conflict.failed(0):
                raise
            joined = self._joined(playbook, run_id)
            if joined is None:
                raise
        self._transact(_joined_ending(playbook, run_id, items, joined))

    def _joined(self, playbook: PlaybookRef, run_id: str) -> str | None:
        """The conversation an open request has joined; ``None`` when it is not open or joined none."""
        item = self._get(playbook_key(playbook), request_key(run_id))
        if item is None or item.get("state") != "open":
            return None
        joined = item.get(CONVERSATION_ID)
        return str(joined) if joined else None

    # --- plumbing ------------------------------------------------------------------------------

    def _transact(self, items: list[TransactWriteItemTypeDef]) -> None:
        with translated():
            self._client.transact_write_items(TransactItems=items)

    def _get(self, pk: str, sk: str) -> dict[str, Any] | None:
        with translated():
            response = self._client.get_item(TableName=self._table, Key=item_key(pk, sk), ConsistentRead=True)
        item = response.get("Item")
        return self._plain(item) if item else None

    def _plain(self, item: Mapping[str, Any]) -> dict[str, Any]:
        return self._codec.plain(item)

    def _listing(
        self,
        playbook: PlaybookRef,
        list_key: str,
        slots: tuple[str, ...],
        filters: Mapping[str, str],
        limit: int,
        after: str | None,
        *,
        base_key: Callable[[str], str],
        read: Callable[[Mapping[str, Any]], Item],
        keep: Callable[[Mapping[str, Any]], bool],
        expiring_after: str | None = None,
    ) -> Found:
        """A newest-first list: the slot (of ``slots``) of the filter preferred under the key of its value,
        else ``gsi1`` under ``list_key``; the other filters are checked on the items read (``keep``).
        ``after`` is a position (the index's sort key) to go on after."""
        slot = chosen_slot(slots, filters)
        if slot is not None:
            index = slot_index(slots, slot)
            key = filter_key(list_key, [filters[slot]])
        else:
            index, key = _LIST, list_key
        attribute_names = {"#gpk": index.partition_key}
        values: dict[str, AttributeValueTypeDef] = {":gpk": {"S": key}}
        query: QueryInputTypeDef = {
            "TableName": self._table,
            "IndexName": index.name,
            "KeyConditionExpression": "#gpk = :gpk",
            "ScanIndexForward": False,
        }
        if expiring_after is not None:
            query["FilterExpression"] = "#expires_at > :expiring_after"
            attribute_names["#expires_at"] = "expires_at"
            values[":expiring_after"] = {"S": expiring_after}
        query["ExpressionAttributeNames"] = attribute_names
        query["ExpressionAttributeValues"] = values
        start: dict[str, AttributeValueTypeDef] | None = None
        if after is not None:
            start = {
                **item_key(playbook_key(playbook), base_key(after)),
                index.partition_key: {"S": key},
                index.sort_key: {"S": after},
            }
        sort_name = index.sort_key
        return self._page(
            query,
            start,
            limit,
            read,
            position=lambda item: str(item[sort_name]["S"]),
            fetch=index is not _LIST,
            keep=keep,
        )

    def _page(
        self,
        query: QueryInputTypeDef,
        start: Mapping[str, AttributeValueTypeDef] | None,
        limit: int,
        read: Callable[[Mapping[str, Any]], Item],
        *,
        position: Callable[[Mapping[str, Any]], str],
        fetch: bool,
        keep: Callable[[Mapping[str, Any]], bool],
    ) -> Found:
        """One page of ``query``, in the index's order: one more item than the page, so that "more
        follow" is known without an empty last page. A slot holds keys only (``fetch``): the items are
        read by key, consistently, and checked again (``keep``: an index may lag a write). A filter
        applies after DynamoDB's own Limit, so the read goes on until the page is full, the index ends, or
        :attr:`read_bound` items were read: then the page is what it has, with where it stopped."""
        wanted = limit + 1
        bound = self.read_bound if self.read_bound is not None else READ_BOUND_PAGES * wanted
        found: list[tuple[str, Item]] = []
        scanned = 0
        last: Mapping[str, Any] | None = None
        while len(found) < wanted:
            page_query: QueryInputTypeDef = {**query, "Limit": wanted - len(found)}
            if start is not None:
                page_query["ExclusiveStartKey"] = start
            with translated():
                response = self._client.query(**page_query)
            scanned += int(response.get("ScannedCount", 0))
            raw = list(response.get("Items", []))
            if fetch:
                whole = self._fetch(raw)
                scanned += len(raw)
                pairs = [(position(item), whole.get(_key_of(item))) for item in raw]
            else:
                pairs = [(position(item), self._plain(item)) for item in raw]
            found.extend((at, read(item)) for at, item in pairs if item is not None and keep(item))
            last = response.get("LastEvaluatedKey")
            start = last
            if not last or scanned >= bound:
                break
        if len(found) > limit:
            return Found([item for _, item in found[:limit]], True, scanned, found[limit - 1][0])
        resume = position(last) if last else None
        return Found([item for _, item in found], resume is not None, scanned, resume)

    def _fetch(self, keys: Sequence[Mapping[str, Any]]) -> dict[tuple[str, str], dict[str, Any]]:
        """The items at ``keys`` (those that exist), read by key 100 at a time, consistently."""
        found: dict[tuple[str, str], dict[str, Any]] = {}
        for begin in range(0, len(keys), 100):
            wanted = [
                {TABLE.partition_key: key[TABLE.partition_key], TABLE.sort_key: key[TABLE.sort_key]}
                for key in keys[begin : begin + 100]
            ]
            pending: dict[str, Any] = {self._table: {"Keys": wanted, "ConsistentRead": True}}
            while pending:
                with translated():
                    response = self._client.batch_get_item(RequestItems=pending)
                for item in response["Responses"].get(self._table, []):
                    found[_key_of(item)] = self._plain(item)
                pending = dict(response.get("UnprocessedKeys") or {})
        return found


def _joined_ending(
    playbook: PlaybookRef, run_id: str, items: list[TransactWriteItemTypeDef], conversation: str | None
) -> list[TransactWriteItemTypeDef]:
    """``items`` (a request's ending, its update first), the request's condition extended to the
    conversation it has joined (``None``: none); with one, the conversation's update: the run out of its
    ``open_runs``, and one more to its ``changes`` (what a read's kept ``reader`` is checked against)."""
    update: dict[str, Any] = dict(cast("Mapping[str, Any]", items[0]["Update"]))
    names = {**update.get("ExpressionAttributeNames", {}), "#conversation_id": CONVERSATION_ID}
    values = dict(update.get("ExpressionAttributeValues", {}))
    if conversation is None:
        condition = "attribute_not_exists(#conversation_id)"
    else:
        condition = "#conversation_id = :conversation_id"
        values[":conversation_id"] = {"S": conversation}
    update["ConditionExpression"] = f"({update['ConditionExpression']}) AND {condition}"
    update["ExpressionAttributeNames"] = names
    update["ExpressionAttributeValues"] = values
    written = [cast("TransactWriteItemTypeDef", {"Update": update}), *items[1:]]
    if conversation is not None:
        written.append(
            {
                "Update": {
                    "TableName": update["TableName"],
                    "Key": item_key(playbook_key(playbook), conversation_key(conversation)),
                    "UpdateExpression": "DELETE #open :run ADD #changes :one",
                    "ExpressionAttributeNames": {"#open": "open_runs", "#changes": "changes"},
                    "ExpressionAttributeValues": {":run": {"SS": [run_id]}, ":one": {"N": "1"}},
                }
            }
        )
    return written


def _key_of(item: Mapping[str, Any]) -> tuple[str, str]:
    return str(item[TABLE.partition_key]["S"]), str(item[TABLE.sort_key]["S"])


# --- items to values ---------------------------------------------------------------------------------
