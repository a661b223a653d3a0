"""Where a workflow run's events and listens are kept (``workflow-format.md``, "Events", "Bounds"): items
of the one table, beside the run lifecycle's (``parley.runs.store``), under the playbook's partition
``pk = PB#{org}#{playbook}``:

- the run's events over its life: ``sk = SENTCOUNT#{run_id}``, ``count`` (at most 1,024: the write
  that would pass it fails its condition);
- an event taken once per id: ``sk = SENT#{run_id}#{id}`` (the sender's ``id``, or an emitted event's
  derived one), ``event_id`` and ``received_at`` of the first;
- a kept event (sent, not yet taken by a ``listen``): ``sk = KEPT#{run_id}#{event_id}`` (ids sort in
  time order, so the earliest comes first), ``event`` (the envelope as JSON text, or past 64 KiB
  ``event_ref`` in the content store), ``size`` (bytes as JSON);
- a listen: ``sk = LISTEN#{run_id}#{listen_id}`` (``listen_id`` derived from the task and the
  attempt), ``state`` (``waiting``, then ``answered``), while waiting the task ``token``, ``to`` and
  ``read`` (JSON text), ``task``, ``since`` (an id that sorts in time order, ``parley.runs.events``);
  once answered the token is gone and ``output`` (JSON text, or ``output_ref`` past 64 KiB) stays, so
  a listen the engine delivers again is answered the same;
- where emitted events reach a listen: ``sk = LISTENTYPE#{type}#{run_id}#{listen_id}`` for each
  ``type`` its filters write out, while it waits (``runs_listening_for``: one query by prefix);
- an event an ``emit`` recorded: ``sk = EMITTED#{id}`` (once per run, task and attempt).

Every write is conditional: an id is taken once, a kept event is taken by one listen (its delete's
condition), a listen is answered once (``state = waiting``). A listen's answer deletes the events it
took and its type items in the same transaction (at most 100 items: a ``to.all`` of at most 90
filters).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Final

from parley.definitions.model import PlaybookRef
from parley.dynamo import StoreConflict, item_key, translated
from parley.errors import ParleyError
from parley.infrastructure.keys import (
    emitted_key,
    kept_key,
    kept_prefix,
    listen_key,
    listen_prefix,
    listened_key,
    playbook_key,
    sent_key,
)
from parley.infrastructure.keys import listen_type_key as type_key
from parley.infrastructure.keys import listen_type_prefix as type_prefix
from parley.infrastructure.keys import sent_count_key as count_key
from parley.infrastructure.table import TABLE
from parley.ports.content import ITEM_CONTENT_MAX
from parley.runs.model import Event

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.type_defs import AttributeValueTypeDef, TransactWriteItemTypeDef

    from parley.runs.store import DynamoRunStore

#: Events over a run's life (``workflow-format.md``, "Bounds").
MAX_EVENTS_PER_RUN: Final = 1024
#: The filters of a listen: its answer is one transaction (DynamoDB's 100 items) with the events it takes.
MAX_FILTERS: Final = 90
WAITING: Final = "waiting"
ANSWERED: Final = "answered"


class EventsFull(ParleyError):
    """The run has taken as many events as its life allows (:data:`MAX_EVENTS_PER_RUN`)."""


@dataclass(frozen=True)
class Receipt:
    """An event taken by a run: its ``event_id`` and ``received_at``; ``new`` unless its id was taken
    before (then these are the first's)."""

    event_id: str
    received_at: str
    new: bool


@dataclass(frozen=True)
class KeptEvent:
    event_id: str
    envelope: dict[str, Any]
    size: int


@dataclass(frozen=True)
class Listen:
    """A listen of a run: while ``waiting``, its token and filters; once ``answered``, its output."""

    run_id: str
    listen_id: str
    state: str
    token: str | None
    to: dict[str, Any]
    read: str
    task: str
    since: str
    types: tuple[str, ...]
    output: Any = None


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _bytes(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


class RunEventStore:
    """A workflow run's events and listens, on the run store's table (its client and content store)."""

    def __init__(self, store: DynamoRunStore) -> None:
        self.store = store

    # --- events sent to a run ------------------------------------------------------------------

    def receive(
        self,
        playbook: PlaybookRef,
        run_id: str,
        sent_id: str,
        envelope: dict[str, Any],
        history: Event,
        *,
        limit: int = MAX_EVENTS_PER_RUN,
    ) -> Receipt:
        """Take an event once per ``sent_id``: the id, the count's increment (below ``limit``), the kept
        event and ``history`` (its ``event_received``, whose id is the event's) in one transaction.
        :class:`EventsFull` past the limit."""
        pk = playbook_key(playbook)
        text = _json(envelope)
        kept: dict[str, Any] = {
            TABLE.partition_key: pk,
            TABLE.sort_key: kept_key(run_id, history.id),
            "kind": "kept_event",
            "run_id": run_id,
            "event_id": history.id,
            "size": _bytes(text),
        }
        if _bytes(text) <= ITEM_CONTENT_MAX:
            kept["event"] = text
        else:
            ref = f"{playbook.org}/{playbook.playbook}/runs/{run_id}/events/{history.id}.json"
            self.store._keep(ref, text)
            kept["event_ref"] = ref
        items: list[TransactWriteItemTypeDef] = [
            self._put_new(
                {
                    TABLE.partition_key: pk,
                    TABLE.sort_key: sent_key(run_id, sent_id),
                    "kind": "sent_event",
                    "run_id": run_id,
                    "event_id": history.id,
                    "received_at": history.at,
                }
            ),
            {
                "Update": {
                    "TableName": self.store._table,
                    "Key": item_key(pk, count_key(run_id)),
                    "UpdateExpression": "SET #count = if_not_exists(#count, :zero) + :one, #kind = :kind",
                    "ConditionExpression": "attribute_not_exists(#count) OR #count < :limit",
                    "ExpressionAttributeNames": {"#count": "count", "#kind": "kind"},
                    "ExpressionAttributeValues": {
                        ":zero": {"N": "0"},
                        ":one": {"N": "1"},
                        ":limit": {"N": str(limit)},
                        ":kind": {"S": "event_count"},
                    },
                }
            },
            self._put_new(kept),
            self.store._put_event(playbook, history),
        ]
        try:
            self.store._transact(items)
        except StoreConflict as conflict:
            if conflict.failed(0):
                first = self.store._get(pk, sent_key(run_id, sent_id))
                if first is not None:
                    return Receipt(str(first["event_id"]), str(first["received_at"]), False)
            if conflict.failed(1):
                raise EventsFull from conflict
            raise
        return Receipt(history.id, history.at, True)

    def kept(self, playbook: PlaybookRef, run_id: str) -> list[KeptEvent]:
        """The run's kept events, oldest first."""
        found: list[KeptEvent] = []
        for item in self._query(playbook, kept_prefix(run_id)):
            text = item["event"] if "event" in item else self.store._load(item["event_ref"])
            found.append(KeptEvent(str(item["event_id"]), json.loads(text), int(item["size"])))
        return found

    def kept_ids(self, playbook: PlaybookRef, run_id: str) -> list[str]:
        """The ids of the run's kept events, oldest first (their content not read)."""
        return [str(item["event_id"]) for item in self._query(playbook, kept_prefix(run_id))]

    def drop(self, playbook: PlaybookRef, run_id: str, event_ids: list[str]) -> list[str]:
        """Forget kept events (the oldest past the bounds); the ids of those this call removed."""
        dropped: list[str] = []
        for event_id in event_ids:
            try:
                with translated():
                    self.store._client.delete_item(
                        TableName=self.store._table,
                        Key=item_key(playbook_key(playbook), kept_key(run_id, event_id)),
                        ConditionExpression="attribute_exists(#pk)",
                        ExpressionAttributeNames={"#pk": TABLE.partition_key},
                    )
                dropped.append(event_id)
            except StoreConflict:
                continue  # taken or dropped meanwhile
        return dropped

    def has_events(self, playbook: PlaybookRef, run_id: str) -> bool:
        """Whether the run ever listened or got an event (two reads of single items)."""
        pk = playbook_key(playbook)
        return any(self.store._get(pk, key) for key in (listened_key(run_id), count_key(run_id)))

    def events_over_life(self, playbook: PlaybookRef, run_id: str) -> int:
        item = self.store._get(playbook_key(playbook), count_key(run_id))
        return int(item["count"]) if item else 0

    # --- listens -------------------------------------------------------------------------------

    def wait(self, playbook: PlaybookRef, listen: Listen) -> Listen:
        """Keep a listen (once: a listen delivered again finds the first, waiting or answered)."""
        pk = playbook_key(playbook)
        values: dict[str, Any] = {
            TABLE.partition_key: pk,
            TABLE.sort_key: listen_key(listen.run_id, listen.listen_id),
            "kind": "listen",
            "run_id": listen.run_id,
            "listen_id": listen.listen_id,
            "state": WAITING,
            "token": listen.token,
            "to": _json(listen.to),
            "read": listen.read,
            "task": listen.task,
            "since": listen.since,
            "types": list(listen.types),
        }
        marked = {TABLE.partition_key: pk, TABLE.sort_key: listened_key(listen.run_id), "kind": "listened"}
        items: list[TransactWriteItemTypeDef] = [
            self._put_new(values),
            {"Put": {"TableName": self.store._table, "Item": self.store._codec.serialize(marked)}},
        ]
        for event_type in listen.types:
            items.append(
                {
                    "Put": {
                        "TableName": self.store._table,
                        "Item": self.store._codec.serialize(
                            {
                                TABLE.partition_key: pk,
                                TABLE.sort_key: type_key(event_type, listen.run_id, listen.listen_id),
                                "kind": "listen_type",
                                "run_id": listen.run_id,
                                "listen_id": listen.listen_id,
                            }
                        ),
                    }
                }
            )
        try:
            self.store._transact(items)
        except StoreConflict:
            found = self.get_listen(playbook, listen.run_id, listen.listen_id)
            if found is None:  # pragma: no cover - the condition failed on an item that exists
                raise
            if found.state == WAITING and listen.token is not None and found.token != listen.token:
                return self._keep_token(playbook, found, listen.token)
            return found
        return listen

    def _keep_token(self, playbook: PlaybookRef, found: Listen, token: str) -> Listen:
        """The listen, waiting on the engine's new token for it (an execution revived after a restart
        runs its task again under another token); as it stands when it was answered meanwhile."""
        try:
            with translated():
                self.store._client.update_item(
                    TableName=self.store._table,
                    Key=item_key(playbook_key(playbook), listen_key(found.run_id, found.listen_id)),
                    UpdateExpression="SET #token = :token",
                    ConditionExpression="#state = :waiting",
                    ExpressionAttributeNames={"#token": "token", "#state": "state"},
                    ExpressionAttributeValues={":token": {"S": token}, ":waiting": {"S": WAITING}},
                )
        except StoreConflict:
            return self.get_listen(playbook, found.run_id, found.listen_id) or found
        return replace(found, token=token)

    def get_listen(self, playbook: PlaybookRef, run_id: str, listen_id: str) -> Listen | None:
        item = self.store._get(playbook_key(playbook), listen_key(run_id, listen_id))
        return self._listen(item) if item else None

    def waiting(self, playbook: PlaybookRef, run_id: str) -> list[Listen]:
        """The run's waiting listens, the latest to begin waiting first (``since`` sorts in time order)."""
        found = [self._listen(item) for item in self._query(playbook, listen_prefix(run_id))]
        return sorted(
            (one for one in found if one.state == WAITING),
            key=lambda one: (one.since, one.listen_id),
            reverse=True,
        )

    def runs_listening_for(self, playbook: PlaybookRef, event_type: str) -> list[str]:
        """The runs with a waiting listen whose filters write ``event_type`` out."""
        runs: list[str] = []
        for item in self._query(playbook, type_prefix(event_type)):
            if item["run_id"] not in runs:
                runs.append(str(item["run_id"]))
        return runs

    def answer(self, playbook: PlaybookRef, listen: Listen, event_ids: list[str], output: Any) -> None:
        """The listen answered with the events ``event_ids``: it from ``waiting`` to ``answered`` (its token
        forgotten, ``output`` kept), those kept events and its type items deleted, in one transaction.
        :class:`StoreConflict` when it was answered, or an event taken, meanwhile."""
        pk = playbook_key(playbook)
        names = {"#state": "state", "#token": "token", "#to": "to"}
        values: dict[str, AttributeValueTypeDef] = {":waiting": {"S": WAITING}, ":answered": {"S": ANSWERED}}
        text = _json(output)
        update = "SET #state = :answered, "
        if _bytes(text) <= ITEM_CONTENT_MAX:
            update += "#output = :output"
            names["#output"] = "output"
            values[":output"] = {"S": text}
        else:
            ref = f"{playbook.org}/{playbook.playbook}/runs/{listen.run_id}/listens/{listen.listen_id}.json"
            self.store._keep(ref, text)
            update += "#output_ref = :output_ref"
            names["#output_ref"] = "output_ref"
            values[":output_ref"] = {"S": ref}
        items: list[TransactWriteItemTypeDef] = [
            {
                "Update": {
                    "TableName": self.store._table,
                    "Key": item_key(pk, listen_key(listen.run_id, listen.listen_id)),
                    "UpdateExpression": update + " REMOVE #token, #to",
                    "ConditionExpression": "#state = :waiting",
                    "ExpressionAttributeNames": names,
                    "ExpressionAttributeValues": values,
                }
            }
        ]
        for event_id in event_ids:
            items.append(
                {
                    "Delete": {
                        "TableName": self.store._table,
                        "Key": item_key(pk, kept_key(listen.run_id, event_id)),
                        "ConditionExpression": "attribute_exists(#pk)",
                        "ExpressionAttributeNames": {"#pk": TABLE.partition_key},
                    }
                }
            )
        for event_type in listen.types:
            items.append(
                {
                    "Delete": {
                        "TableName": self.store._table,
                        "Key": item_key(pk, type_key(event_type, listen.run_id, listen.listen_id)),
                    }
                }
            )
        self.store._transact(items)

    def forget_listens(self, playbook: PlaybookRef, run_id: str) -> int:
        """Forget the run's waiting listens (a cancelled workflow): their tokens and type items. How many."""
        forgotten = 0
        for listen in self.waiting(playbook, run_id):
            self.forget_listen(playbook, listen)
            forgotten += 1
        return forgotten

    def forget_listen(self, playbook: PlaybookRef, listen: Listen) -> None:
        """Forget one listen (its item and its type items): it waits no more."""
        keys = [listen_key(listen.run_id, listen.listen_id)]
        keys.extend(type_key(event_type, listen.run_id, listen.listen_id) for event_type in listen.types)
        for sk in keys:
            with translated():
                self.store._client.delete_item(
                    TableName=self.store._table, Key=item_key(playbook_key(playbook), sk)
                )

    # --- emitted events ----------------------------------------------------------------------------

    def record_emitted(self, playbook: PlaybookRef, emitted_id: str, history: Event) -> bool:
        """``event_published`` once per ``emitted_id``; whether this call recorded it."""
        items: list[TransactWriteItemTypeDef] = [
            self._put_new(
                {
                    TABLE.partition_key: playbook_key(playbook),
                    TABLE.sort_key: emitted_key(emitted_id),
                    "kind": "emitted_event",
                    "event_id": history.id,
                }
            ),
            self.store._put_event(playbook, history),
        ]
        try:
            self.store._transact(items)
        except StoreConflict as conflict:
            if conflict.failed(0):
                return False
            raise
        return True

    # --- plumbing ------------------------------------------------------------------------------

    def _put_new(self, values: dict[str, Any]) -> TransactWriteItemTypeDef:
        return {
            "Put": {
                "TableName": self.store._table,
                "Item": self.store._codec.serialize(values),
                "ConditionExpression": "attribute_not_exists(#pk)",
                "ExpressionAttributeNames": {"#pk": TABLE.partition_key},
            }
        }

    def _query(self, playbook: PlaybookRef, prefix: str) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = []
        start: dict[str, AttributeValueTypeDef] | None = None
        while True:
            query: dict[str, Any] = {
                "TableName": self.store._table,
                "KeyConditionExpression": "#pk = :pk AND begins_with(#sk, :prefix)",
                "ExpressionAttributeNames": {"#pk": TABLE.partition_key, "#sk": TABLE.sort_key},
                "ExpressionAttributeValues": {":pk": {"S": playbook_key(playbook)}, ":prefix": {"S": prefix}},
                "ConsistentRead": True,
            }
            if start is not None:
                query["ExclusiveStartKey"] = start
            with translated():
                response = self.store._client.query(**query)
            found.extend(self.store._plain(item) for item in response.get("Items", []))
            start = response.get("LastEvaluatedKey")
            if not start:
                return found

    def _listen(self, item: dict[str, Any]) -> Listen:
        output: Any = None
        if "output" in item:
            output = json.loads(item["output"])
        elif "output_ref" in item:
            output = json.loads(self.store._load(item["output_ref"]))
        return Listen(
            run_id=str(item["run_id"]),
            listen_id=str(item["listen_id"]),
            state=str(item["state"]),
            token=item.get("token"),
            to=json.loads(item["to"]) if item.get("to") else {},
            read=str(item.get("read") or "data"),
            task=str(item.get("task") or ""),
            since=str(item.get("since") or ""),
            types=tuple(str(one) for one in item.get("types") or ()),
            output=output,
        )
