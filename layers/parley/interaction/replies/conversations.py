"""Reading conversations on the cadence (``interaction-format.md``: "Answering by reply", "`replies`",
"`replies.read`", "`replies.tell`", "Bounds"; ``http-api.md``: "Events").

- **Joining.** Once a question is delivered and its ``sent`` is usable, its conversation key is
  rendered from ``replies.conversation`` over ``to``, ``sent.conversation`` and ``sent.id``. A key that
  renders empty, past 256 bytes or with a control character leaves the request to
  ``answer_interaction``. Open requests with the same reading tool and key share one conversation item
  (``sk = CONV#{id}``): one reading, one cursor ``since``, the ids the playbook sent there (``own``) and
  the reply ids already taken (``taken``). A conversation with no open request starts its cadence
  again when a request joins: the first read 5 seconds later. The join is one transaction that adds
  the request to the conversation's ``open_runs`` and names the conversation on the request
  (``conversation_id``) while it is open; every ending of the request (an answer, by reply or not, an
  expiry, a cancel) takes it out of ``open_runs`` in its own transaction (``parley.runs.store``), so
  ``open_runs`` is exactly the conversation's open requests (issue 26).
- **Reading.** Each read is the timer's work ``{"work": "read", "conversation", "read": n}``, claimed
  under its number by one conditional write that returns the conversation (two firings never make the
  same read; a read that finds nothing new writes nothing else). A read that fails before it acts on a
  reply, or cannot queue the next read, gives its number back, so that the queue's retry of its work
  makes it; an answer whose write is made takes its reply though what follows the write fails (ending
  the run's wait). A failure after another reply was acted on, or a crash that kills the process, still
  stops the reading: made again, the read would take that reply twice, and nothing gives the number
  back. It stops when no request is open, and otherwise calls the reading tool with ``replies.with``
  rendered over the ``to`` and ``sent`` of the oldest open request, the key and ``since``. What a read
  needs of that request is kept on the conversation (``reader``) by the read that last read the
  requests, and holds while nothing joins or ends (``changes``): a read that finds nothing new then
  reads no request; one that finds a message, or follows a join or an ending, reads them by key (and
  drops any a conversation item from before the exact ``open_runs`` still lists). A failed read (a tool
  error, a server failure, no list at ``read.list``, more than 64 KiB) is ``reading_failed``; the
  reading goes on. A read that found messages is ``replies_read``. The next read follows the cadence
  (``parley.interaction.replies.cadence``: 10, 20 and 40 seconds after the read before, then a minute, then 5
  minutes), never sooner than ``wait``, and a ``Retry-After`` (up to an hour).
- **Calling the tool.** A read or a telling is one call of the tool, the operator's allow-list checked
  first as for every call. It opens with the protocol version the server spoke to the process's last
  call, and takes the listing from the process's store while the server's ``ttlMs`` allows
  (``parley.tools.client.reusing_listings``, issue 26): two round trips, or one, where a delivery's
  attempt makes three. A tool the server no longer lists fails it as before (``tool_not_offered``).
- **Taking replies** (``parley.interaction.replies.taking``). An answer is recorded as any answer is
  (``request_answered``, with ``reply``, answered by ``playbook:<id>``) and the run takes it at once;
  an inbox answer racing it wins or loses on the store's condition. A refusal is ``reply_refused`` on
  the run, with the reply's identity and never its words (10 recorded at most); the party is told
  (three times at most) through ``tell``: ``telling_started``, then ``telling_succeeded`` or
  ``telling_failed``.
"""

from __future__ import annotations

import hashlib
import json
import logging
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Final

from parley.clock import format_time
from parley.dynamo import ItemCodec, StoreConflict, item_key, translated
from parley.infrastructure import keys
from parley.infrastructure.keys import playbook_key, request_key
from parley.ports.waiting import RunKey
from parley.runs import events
from parley.runs.events import new_event_id
from parley.runs.model import Event, Request
from parley.runs.store import CONVERSATION_ID
from parley.tools.calling import CallAnswer, CallFailure, call_for_playbook
from parley.tools.client import reusing_listings

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.type_defs import AttributeValueTypeDef, TransactWriteItemTypeDef

    from parley.definitions.model import PlaybookRef
    from parley.interaction.replies.taking import ReadResult, Refusal
    from parley.runs.service import RunService
    from parley.tools.servers import HeaderSecrets

LOG: Final = logging.getLogger("parley.interaction")

REPLIES_READ: Final = "replies_read"
READING_FAILED: Final = "reading_failed"
REPLY_REFUSED: Final = events.REPLY_REFUSED
TELLING_STARTED: Final = "telling_started"
TELLING_SUCCEEDED: Final = "telling_succeeded"
TELLING_FAILED: Final = "telling_failed"

#: "Bounds": the conversation key, 256 bytes of text, no control character.
KEY_MAX_BYTES: Final = 256
#: "Bounds": the arguments of a call (a read or telling past it is not sent).
ARGUMENTS_MAX_BYTES: Final = 16 * 1024
#: ``replies.wait`` when left out.
DEFAULT_WAIT: Final = timedelta(seconds=5)


@dataclass(frozen=True)
class ConversationRef:
    """Where a conversation lives: its playbook and its id (a digest of the playbook, tool and key)."""

    org: str
    playbook: str
    id: str

    def as_json(self) -> dict[str, str]:
        return {"org": self.org, "playbook": self.playbook, "id": self.id}

    @classmethod
    def from_json(cls, data: Any) -> ConversationRef:
        return cls(str(data["org"]), str(data["playbook"]), str(data["id"]))

    @classmethod
    def of(cls, org: str, playbook: str, tool: str, key: str) -> ConversationRef:
        digest = hashlib.sha256(f"{org}/{playbook}\n{tool}\n{key}".encode()).hexdigest()[:32]
        return cls(org, playbook, digest)


@dataclass(frozen=True)
class Reader:
    """What a read needs of the oldest open request of its conversation, kept on the conversation (issue
    26: a read that finds nothing new then reads no request): its ``to`` and ``sent``, the server, and
    its ``replies.with``, ``replies.read`` and ``replies.wait``. It holds while the conversation's
    ``changes`` (one more at every join and every ending of one of its requests) are those it was kept
    at."""

    run_id: str
    to: str
    sent: dict[str, str]
    server: str
    arguments: Any
    read: dict[str, Any]
    wait: str | None
    changes: int

    @classmethod
    def of(cls, request: Request, changes: int) -> Reader:
        assert request.delivery is not None and request.delivery.replies is not None
        assert request.sent is not None
        replies = request.delivery.replies
        wait = replies.get("wait")
        return cls(
            run_id=request.run_id,
            to=request.to,
            sent=dict(request.sent),
            server=request.delivery.server,
            arguments=replies.get("with", {}),
            read=dict(replies["read"]),
            wait=str(wait) if wait else None,
            changes=changes,
        )

    def as_json(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "to": self.to,
            "sent": self.sent,
            "server": self.server,
            "with": self.arguments,
            "read": self.read,
            "wait": self.wait,
            "changes": self.changes,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Reader:
        return cls(
            run_id=str(data["run_id"]),
            to=str(data["to"]),
            sent={str(k): str(v) for k, v in dict(data["sent"]).items()},
            server=str(data["server"]),
            arguments=data.get("with", {}),
            read=dict(data["read"]),
            wait=data.get("wait"),
            changes=int(data["changes"]),
        )


@dataclass(frozen=True)
class Conversation:
    tool: str
    key: str
    reads: int
    since: str | None
    open_runs: frozenset[str]
    own: frozenset[str]
    taken: frozenset[str]
    #: Joins and endings of its requests so far (what :attr:`reader` is checked against).
    changes: int = 0
    reader: Reader | None = None

    def kept_reader(self) -> Reader | None:
        """The kept :class:`Reader`, when it still holds: nothing joined or ended since it was kept."""
        reader = self.reader
        if reader is None or reader.changes != self.changes or reader.run_id not in self.open_runs:
            return None
        return reader


def conversation_key(replies: dict[str, Any], to: str, sent: dict[str, str]) -> tuple[str | None, str | None]:
    """The rendered ``replies.conversation`` (``'{{ sent.conversation }}'`` when left out), or why it
    cannot be used."""
    from parley.templates.environment import compile_template
    from parley.templates.render import RenderFailure, render_text

    written = replies.get("conversation", "{{ sent.conversation }}")
    data = {"to": to, "sent": {"conversation": sent["conversation"], "id": sent["id"]}}
    try:
        key = render_text(compile_template(str(written)), data, refuse_structures=True)
    except RenderFailure as failure:
        return None, f"replies.conversation does not render: {failure}"
    if not key.strip():
        return None, "replies.conversation renders empty"
    if len(key.encode("utf-8", "surrogatepass")) > KEY_MAX_BYTES:
        return None, f"replies.conversation renders more than {KEY_MAX_BYTES} bytes"
    if any(unicodedata.category(char) == "Cc" for char in key):
        return None, "replies.conversation renders a control character"
    return key, None


def read_name(ref: ConversationRef, number: int) -> str:
    return f"read-{ref.id}-{number}"


def read_work(ref: ConversationRef, number: int) -> dict[str, Any]:
    return {"work": "read", "conversation": ref.as_json(), "read": number}


class ConversationStore:
    """The conversation items, on the runs' table."""

    def __init__(self, client: Any, table_name: str) -> None:
        self._client = client
        self._table = table_name
        self._codec = ItemCodec()

    def get(self, ref: ConversationRef) -> Conversation | None:
        with translated():
            response = self._client.get_item(TableName=self._table, Key=self._key(ref), ConsistentRead=True)
        item = response.get("Item")
        return self._conversation(item) if item else None

    def _conversation(self, item: Mapping[str, Any]) -> Conversation:
        data = self._codec.plain(dict(item))
        return Conversation(
            tool=data["tool"],
            key=data["key"],
            reads=int(data.get("reads", 0)),
            since=data.get("since"),
            open_runs=frozenset(data.get("open_runs") or ()),
            own=frozenset(data.get("own") or ()),
            taken=frozenset(data.get("taken") or ()),
            changes=int(data.get("changes", 0)),
            reader=Reader.from_json(json.loads(data["reader"])) if data.get("reader") else None,
        )

    def join(
        self,
        playbook: PlaybookRef,
        ref: ConversationRef,
        tool: str,
        key: str,
        run_id: str,
        sent_id: str,
        *,
        restart: bool,
    ) -> bool:
        """Add an open request (and the id of the message it sent) to the conversation, and name the
        conversation on the request, in one transaction while the request is open (its endings take it
        out again in theirs: ``open_runs`` stays exact); ``restart`` counts its reads from zero again
        (it had no open request). ``False`` when the request is no longer open."""
        update = "SET #tool = :tool, #key = :key, #kind = :kind ADD #open :run, #own :sent, #changes :one"
        values: dict[str, AttributeValueTypeDef] = {
            ":tool": {"S": tool},
            ":key": {"S": key},
            ":kind": {"S": "conversation"},
            ":run": {"SS": [run_id]},
            ":sent": {"SS": [sent_id]},
            ":one": {"N": "1"},
        }
        if restart:
            update = update.replace("#kind = :kind", "#kind = :kind, #reads = :zero")
            values[":zero"] = {"N": "0"}
        names = {
            "#tool": "tool",
            "#key": "key",
            "#kind": "kind",
            "#open": "open_runs",
            "#own": "own",
            "#changes": "changes",
        }
        if restart:
            names["#reads"] = "reads"
        items: list[TransactWriteItemTypeDef] = [
            {
                "Update": {
                    "TableName": self._table,
                    "Key": item_key(playbook_key(playbook), request_key(run_id)),
                    "UpdateExpression": "SET #conversation_id = :id",
                    "ConditionExpression": "#state = :open",
                    "ExpressionAttributeNames": {"#conversation_id": CONVERSATION_ID, "#state": "state"},
                    "ExpressionAttributeValues": {":id": {"S": ref.id}, ":open": {"S": "open"}},
                }
            },
            {
                "Update": {
                    "TableName": self._table,
                    "Key": self._key(ref),
                    "UpdateExpression": update,
                    "ExpressionAttributeNames": names,
                    "ExpressionAttributeValues": values,
                }
            },
        ]
        try:
            with translated():
                self._client.transact_write_items(TransactItems=items)
        except StoreConflict as conflict:
            if conflict.failed(0):
                return False
            raise
        return True

    def claim_read(self, ref: ConversationRef, number: int, at: str) -> Conversation:
        """Read ``number`` is the next one: the conversation as the claim leaves it. :class:`StoreConflict`
        when another made it, a join started the count again, or there is no such conversation.

        The claim is the read's one write, and it returns the item (``ReturnValues``), so a read reads
        nothing of the conversation before it (issue 26: one call and one read unit less a read). A
        second firing of the work is refused by the condition, as the read before the claim refused it;
        DynamoDB meters the refused write (one write unit instead of one read unit, for a rare event)."""
        with translated():
            response = self._client.update_item(
                TableName=self._table,
                Key=self._key(ref),
                UpdateExpression="SET #reads = :number, #read_at = :at",
                ConditionExpression="#reads = :previous",
                ExpressionAttributeNames={"#reads": "reads", "#read_at": "read_at"},
                ExpressionAttributeValues={
                    ":number": {"N": str(number)},
                    ":previous": {"N": str(number - 1)},
                    ":at": {"S": at},
                },
                ReturnValues="ALL_NEW",
            )
        return self._conversation(response["Attributes"])

    def release_read(self, ref: ConversationRef, number: int, claimed_at: str) -> None:
        """Give back read ``number``, claimed at ``claimed_at``, so that it can be claimed again;
        :class:`StoreConflict` when the count has moved on since (another claim, or a join)."""
        with translated():
            self._client.update_item(
                TableName=self._table,
                Key=self._key(ref),
                UpdateExpression="SET #reads = :previous",
                ConditionExpression="#reads = :number AND #read_at = :at",
                ExpressionAttributeNames={"#reads": "reads", "#read_at": "read_at"},
                ExpressionAttributeValues={
                    ":number": {"N": str(number)},
                    ":previous": {"N": str(number - 1)},
                    ":at": {"S": claimed_at},
                },
            )

    def after_read(
        self,
        ref: ConversationRef,
        *,
        since: str | None,
        taken: frozenset[str],
        ended: frozenset[str],
        reader: Reader | None = None,
    ) -> None:
        """Move the cursor, remember the replies taken, drop requests that are no longer open (of a
        conversation from before ``open_runs`` was kept exact), and keep ``reader``."""
        sets: list[str] = []
        adds: list[str] = []
        deletes: list[str] = []
        names: dict[str, str] = {}
        values: dict[str, AttributeValueTypeDef] = {}
        if since is not None:
            sets.append("#since = :since")
            names["#since"] = "since"
            values[":since"] = {"S": since}
        if reader is not None:
            sets.append("#reader = :reader")
            names["#reader"] = "reader"
            values[":reader"] = {"S": json.dumps(reader.as_json(), ensure_ascii=False, separators=(",", ":"))}
        if taken:
            adds.append("#taken :taken")
            names["#taken"] = "taken"
            values[":taken"] = {"SS": sorted(taken)}
        if ended:
            deletes.append("#open :ended")
            names["#open"] = "open_runs"
            values[":ended"] = {"SS": sorted(ended)}
        parts = []
        if sets:
            parts.append("SET " + ", ".join(sets))
        if adds:
            parts.append("ADD " + ", ".join(adds))
        if deletes:
            parts.append("DELETE " + ", ".join(deletes))
        if not parts:
            return
        with translated():
            self._client.update_item(
                TableName=self._table,
                Key=self._key(ref),
                UpdateExpression=" ".join(parts),
                ExpressionAttributeNames=names,
                ExpressionAttributeValues=values,
            )

    def add_own(self, ref: ConversationRef, message_id: str) -> None:
        """Remember a message the playbook sent in the conversation (a telling)."""
        with translated():
            self._client.update_item(
                TableName=self._table,
                Key=self._key(ref),
                UpdateExpression="ADD #own :id",
                ExpressionAttributeNames={"#own": "own"},
                ExpressionAttributeValues={":id": {"SS": [message_id]}},
            )

    def count_refusal(self, playbook: PlaybookRef, run_id: str, *, told: bool) -> None:
        """One more refused reply on the request (and one more telling when the party is told)."""
        update = "ADD #refusals :one" + (", #tellings :one" if told else "")
        names = {"#refusals": "reply_refusals"}
        if told:
            names["#tellings"] = "tellings"
        with translated():
            self._client.update_item(
                TableName=self._table,
                Key=item_key(playbook_key(playbook), request_key(run_id)),
                UpdateExpression=update,
                ExpressionAttributeNames=names,
                ExpressionAttributeValues={":one": {"N": "1"}},
            )

    def _key(self, ref: ConversationRef) -> dict[str, AttributeValueTypeDef]:
        return item_key(playbook_key(ref), keys.conversation_key(ref.id))


class Conversations:
    """Joining, reading and telling, on the run service's store and ports."""

    def __init__(self, service: RunService, secrets: HeaderSecrets) -> None:
        self._service = service
        self._secrets = secrets
        self.store = ConversationStore(service.store.client, service.store.table_name)

    # --- joining -------------------------------------------------------------------------------------

    def join(self, key: RunKey, request: Request, conversation: str, sent: dict[str, str]) -> None:
        """The delivered request joins its conversation; a conversation with no open request starts
        its reading again (read 1 five seconds from now, or ``wait`` when longer)."""
        from parley.definitions.model import PlaybookRef
        from parley.interaction.replies.cadence import delay_before_read

        assert request.delivery is not None and request.delivery.replies is not None
        replies = request.delivery.replies
        tool = str(replies["tool"])
        ref = ConversationRef.of(key.org, key.playbook, tool, conversation)
        found = self.store.get(ref)
        # The listed requests may all have ended since the last read (which drops them): then nothing
        # is being read for anyone, and the reading starts again for this one.
        playbook = PlaybookRef(key.org, key.playbook)
        restart = found is None or not any(
            listed.state == "open"
            for listed in self._service.store.get_requests(playbook, sorted(found.open_runs))
        )
        if not self.store.join(playbook, ref, tool, conversation, key.run_id, sent["id"], restart=restart):
            return  # it ended meanwhile: its ending left it out of the conversation
        if restart:
            now = self._service.runtime.clock.now()
            due = now + delay_before_read(1, _wait(replies))
            self._service.ports()[1].schedule(read_name(ref, 1), due, read_work(ref, 1))

    # --- reading -------------------------------------------------------------------------------------

    def read(self, ref: ConversationRef, number: int) -> str:
        """Make read ``number`` of the conversation. What happened: ``read``, ``failed``, ``idle`` (no
        open request: the reading stops), or ``unchanged`` (not the read due)."""
        from parley.definitions.model import PlaybookRef
        from parley.interaction.replies.cadence import delay_before_read, retry_after_delay

        service = self._service
        playbook = PlaybookRef(ref.org, ref.playbook)
        now = service.runtime.clock.now()
        claimed_at = format_time(now)
        try:
            conversation = self.store.claim_read(ref, number, claimed_at)
        except StoreConflict:
            return "unchanged"
        # Until a reply is acted on, a failure gives the read back: the queue's retry of this work makes it
        # (else the retry would find it made, and nothing would read the conversation again).
        try:
            if not conversation.open_runs:  # kept exact by the joins and endings: nothing to drop
                return "idle"
            # A read that finds nothing new reads no request: the oldest open one's reading is kept on
            # the conversation while nothing joins or ends. Else the requests are read, and it is kept.
            reader = conversation.kept_reader()
            open_requests: list[Request] | None = None
            ended: frozenset[str] = frozenset()
            keep: Reader | None = None
            if reader is None:
                open_requests, ended = self._open_requests(playbook, conversation)
                if not open_requests:
                    self.store.after_read(ref, since=None, taken=frozenset(), ended=ended)
                    return "idle"
                reader = keep = Reader.of(open_requests[0], conversation.changes)
            outcome = self._call_reader(playbook, reader, conversation)
            retry_after = None
            taken: _Taken | None
            if isinstance(outcome, CallFailure):
                self._failed_read(playbook, ref, conversation, number, now, outcome)
                self.store.after_read(ref, since=None, taken=frozenset(), ended=ended, reader=keep)
                retry_after = outcome.retry_after_seconds
                taken = None
            else:
                quiet = None if open_requests is not None else _quiet(outcome, reader, conversation)
                if quiet is not None:
                    taken = _Taken(quiet, {})
                else:
                    if open_requests is None:
                        open_requests, ended = self._open_requests(playbook, conversation)
                        if not open_requests:
                            self.store.after_read(ref, since=None, taken=frozenset(), ended=ended)
                            return "idle"
                    taken = self._decided(
                        playbook, ref, conversation, number, now, open_requests, outcome, ended, keep
                    )
        except Exception:
            self._give_back(ref, number, claimed_at)
            raise
        if taken is None:
            result = "failed"
        else:
            # Replies acted on are not given back on a failure: the retry would take them a second time.
            self._act(playbook, ref, conversation, now, taken, ended, keep)
            result = "read"
        normal = delay_before_read(number + 1, _wait_of(reader.wait))
        due = service.runtime.clock.now() + retry_after_delay(retry_after, normal)
        try:
            service.ports()[1].schedule(read_name(ref, number + 1), due, read_work(ref, number + 1))
        except Exception:
            # Everything this read took is recorded (its cursor and ids): made again, it takes nothing twice.
            self._give_back(ref, number, claimed_at)
            raise
        return result

    def _open_requests(
        self, playbook: PlaybookRef, conversation: Conversation
    ) -> tuple[list[Request], frozenset[str]]:
        """The conversation's open requests, read by key, oldest first; and the runs it lists that are
        no longer open (none, but in a conversation from before ``open_runs`` was kept exact)."""
        requests = self._service.store.get_requests(playbook, sorted(conversation.open_runs))
        open_requests = sorted(
            (r for r in requests if r.state == "open" and r.delivery is not None and r.sent),
            key=lambda r: (r.requested_at, r.run_id),
        )
        return open_requests, conversation.open_runs - {r.run_id for r in open_requests}

    def _give_back(self, ref: ConversationRef, number: int, claimed_at: str) -> None:
        """Give read ``number`` back after a failure; a failure to do so is logged (the reading then
        stops, as it would have without the attempt)."""
        try:
            self.store.release_read(ref, number, claimed_at)
        except Exception:
            LOG.exception("read %d of conversation %s could not be given back", number, ref.id)

    def _call_reader(
        self, playbook: PlaybookRef, reader: Reader, conversation: Conversation
    ) -> CallFailure | CallAnswer:
        data = {
            "to": reader.to,
            "sent": dict(reader.sent),
            "conversation": conversation.key,
            "since": conversation.since or "",
        }
        arguments = _rendered(reader.arguments, data)
        if isinstance(arguments, CallFailure):
            return arguments
        service = self._service
        with reusing_listings():
            return call_for_playbook(
                service.runtime, self._secrets, playbook, reader.server, conversation.tool, arguments
            )

    def _failed_read(
        self,
        playbook: PlaybookRef,
        ref: ConversationRef,
        conversation: Conversation,
        number: int,
        at: datetime,
        failure: CallFailure,
    ) -> None:
        data: dict[str, Any] = {
            "conversation": conversation.key,
            "tool": conversation.tool,
            "read": number,
            "because": failure.because,
            "message": failure.words,
        }
        if failure.retry_after_seconds is not None:
            data["retry_after_ms"] = round(failure.retry_after_seconds * 1000)
        self._service.store.record_events(playbook, [_event(READING_FAILED, at, None, data)])

    def _decided(
        self,
        playbook: PlaybookRef,
        ref: ConversationRef,
        conversation: Conversation,
        number: int,
        at: datetime,
        open_requests: list[Request],
        outcome: CallAnswer,
        ended: frozenset[str],
        keep: Reader | None = None,
    ) -> _Taken | None:
        """What the read's replies are (``None``: the answer could not be read, a failed read)."""
        from parley.interaction.replies.taking import OpenRequest, ReadBlock, take_replies
        from parley.interaction.reply_rule import resolve_reply_rule

        answer = outcome.answer
        oldest = open_requests[0]
        assert oldest.delivery is not None and oldest.delivery.replies is not None
        block = ReadBlock.from_document(oldest.delivery.replies["read"])
        candidates = []
        rules = {}
        for request in open_requests:
            assert request.delivery is not None and request.sent is not None
            rule = resolve_reply_rule(request.delivery.reply, request.answer_schema)
            if rule is None:
                continue
            rules[request.run_id] = (rule, request)
            candidates.append(
                OpenRequest(request.run_id, request.sent["id"], request.answerer, rule, request.answer_schema)
            )
        result = take_replies(
            answer.answer, block, conversation.since, conversation.own, candidates, conversation.taken
        )
        if result.failed is not None:
            self._failed_read(
                playbook, ref, conversation, number, at, CallFailure("unreadable", result.failed)
            )
            self.store.after_read(ref, since=None, taken=frozenset(), ended=ended, reader=keep)
            return None
        if result.seen:
            data = {
                "conversation": conversation.key,
                "tool": conversation.tool,
                "read": number,
                "messages": result.seen,
                "since": result.since,
            }
            self._service.store.record_events(playbook, [_event(REPLIES_READ, at, None, data)])
        return _Taken(result, rules)

    def _act(
        self,
        playbook: PlaybookRef,
        ref: ConversationRef,
        conversation: Conversation,
        at: datetime,
        taken: _Taken,
        ended: frozenset[str],
        keep: Reader | None = None,
    ) -> None:
        """Answer and refuse as the replies say, then record the cursor, the replies taken and the
        reader to keep."""
        from parley.interaction.replies.taking import Answer

        result, rules = taken.result, taken.rules
        for decision in result.decisions:
            reply = {"id": decision.reply_id, "conversation": conversation.key}
            if isinstance(decision, Answer):
                self._answer(playbook, decision.run_id, decision.answer, reply)
            else:
                run_id = decision.run_id or (decision.candidates[0] if decision.candidates else None)
                if run_id is not None and run_id in rules:
                    rule, request = rules[run_id]
                    self._refused(playbook, ref, request, decision, rule, reply, at)
        moved = result.since if result.since != conversation.since else None
        self.store.after_read(ref, since=moved, taken=result.taken, ended=ended, reader=keep)

    def _answer(self, playbook: PlaybookRef, run_id: str, answer: Any, reply: dict[str, str]) -> None:
        """Answer the request from a reply. A failure after the answer's write (ending the run's wait,
        forgetting its expiry: the wait's own timeout is then the backstop) leaves the request answered:
        the reply is taken, as when another ending came first, and the reading goes on."""
        try:
            self._service.answer_by_reply(playbook, run_id, answer, reply)
        except Exception:
            request = self._service.store.get_request(playbook, run_id)
            if request is None or request.state == "open":
                raise
            LOG.exception("the answer of run %s from a reply is recorded; what follows it failed", run_id)

    # --- refusals and telling ------------------------------------------------------------------------

    def _refused(
        self,
        playbook: PlaybookRef,
        ref: ConversationRef,
        request: Request,
        refusal: Refusal,
        rule: Any,
        reply: dict[str, str],
        at: datetime,
    ) -> None:
        from parley.interaction.replies.telling import refusal_fate, telling_text

        assert request.delivery is not None and request.delivery.replies is not None
        tell = request.delivery.replies.get("tell")
        current = self._service.store.get_request(playbook, request.run_id) or request
        fate = refusal_fate(current.reply_refusals, current.tellings, tells=isinstance(tell, dict))
        if not fate.recorded:
            return
        data: dict[str, Any] = {
            "reply": reply,
            "why": refusal.why,
            "problems": [problem.pointer for problem in refusal.problems],
        }
        self._service.store.record_events(playbook, [_event(REPLY_REFUSED, at, request.run_id, data)])
        self.store.count_refusal(playbook, request.run_id, told=fate.told)
        if fate.told and isinstance(tell, dict):
            text = telling_text(refusal, rule, request.answer_schema)
            self._tell(playbook, ref, request, tell, text, current.tellings + 1, at)

    def _tell(
        self,
        playbook: PlaybookRef,
        ref: ConversationRef,
        request: Request,
        tell: dict[str, Any],
        text: str,
        number: int,
        at: datetime,
    ) -> None:
        from parley.documents.json_schema import json_size
        from parley.tools.recording import content_digest

        assert request.delivery is not None and request.sent is not None
        tool = str(tell.get("tool") or request.delivery.tool)
        data = {"to": request.to, "sent": dict(request.sent), "message": text}
        arguments = _rendered(tell.get("with", {}), data)
        base: dict[str, Any] = {
            "run_id": request.run_id,
            "telling": number,
            "server": request.delivery.server,
            "tool": tool,
        }
        if isinstance(arguments, CallFailure):
            self._service.store.record_events(
                playbook,
                [
                    _event(
                        TELLING_FAILED,
                        at,
                        None,
                        {**base, "because": arguments.because, "message": arguments.words},
                    )
                ],
            )
            return
        started = {
            **base,
            "arguments_size": json_size(arguments),
            "arguments_digest": content_digest(arguments),
        }
        self._service.store.record_events(playbook, [_event(TELLING_STARTED, at, None, started)])
        service = self._service
        with reusing_listings():
            outcome = call_for_playbook(
                service.runtime, self._secrets, playbook, request.delivery.server, tool, arguments
            )
        now = self._service.runtime.clock.now()
        if isinstance(outcome, CallFailure):
            failed = {**base, "because": outcome.because, "message": outcome.words}
            self._service.store.record_events(playbook, [_event(TELLING_FAILED, now, None, failed)])
            return
        answer, resolved = outcome.answer, outcome.resolved
        if request.delivery.sent_pointers is not None:
            from parley.interaction.sent import sent_values

            # The telling is the playbook's own message: later reads pass it over and do not count it.
            told, _ = sent_values(resolved.scrub(answer.answer), request.delivery.sent_pointers)
            if told is not None:
                self.store.add_own(ref, told["id"])
        done = {**base, "result_size": json_size(answer.result), "duration_ms": answer.duration_ms}
        self._service.store.record_events(playbook, [_event(TELLING_SUCCEEDED, now, None, done)])


@dataclass(frozen=True)
class _Taken:
    """A read's decisions, with the rule and request of each open request that has a rule."""

    result: ReadResult
    rules: dict[str, tuple[Any, Request]]


def _rendered(written: Any, data: dict[str, Any]) -> Any:
    """Arguments rendered typed; a :class:`CallFailure` when they do not render or pass 16 KiB
    ("a read or telling is not sent")."""
    from parley.documents.json_schema import json_size
    from parley.templates.render import RenderFailure, render_typed

    try:
        arguments = render_typed(written, data)
    except RenderFailure as failure:
        return CallFailure("unworkable", f"The arguments do not render: {failure}")
    size = json_size(arguments)
    if size > ARGUMENTS_MAX_BYTES:
        return CallFailure(
            "too_large", f"The arguments render {size:,} bytes as JSON; a call sends at most 16 KiB."
        )
    return arguments


def _wait(replies: dict[str, Any]) -> timedelta:
    written = replies.get("wait")
    return _wait_of(str(written) if written else None)


def _wait_of(written: str | None) -> timedelta:
    from parley.documents.durations import parse_duration

    return parse_duration(written) if written else DEFAULT_WAIT


def _quiet(outcome: CallAnswer, reader: Reader, conversation: Conversation) -> ReadResult | None:
    """The read's result when it found nothing new (no message but the playbook's own, those taken, and
    the one at the cursor): it decides nothing, so no request is read. ``None`` otherwise."""
    from parley.interaction.replies.taking import ReadBlock, take_replies

    result = take_replies(
        outcome.answer.answer,
        ReadBlock.from_document(reader.read),
        conversation.since,
        conversation.own,
        [],
        conversation.taken,
    )
    return result if result.failed is None and result.seen == 0 else None


def _event(event_type: str, moment: datetime, run_id: str | None, data: dict[str, Any]) -> Event:
    return Event(new_event_id(event_type, moment), event_type, format_time(moment), run_id, data)
