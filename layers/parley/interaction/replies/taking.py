"""What each message of one read of a conversation is (``interaction-format.md``, "Answering by reply",
``replies.read``, ``replies.read.each``).

:func:`take_replies` gets the reading tool's answer and the conversation's open requests, and returns
a :class:`ReadResult`: the new cursor ``since``, how many messages the read ``seen``, and a decision
for each reply that is one: an :class:`Answer` or a :class:`Refusal`. Everything else is passed over
and kept nowhere. The rules, in the page's words:

- An answer with no list at ``read.list``, or larger than 64 KiB as JSON, is a failed read.
- The newest message's ``id`` (by ``read.order``) becomes ``since``; messages are handled oldest first
  whatever the order.
- A message whose ``id`` or ``sender`` is not a text or a whole number of at most 256 bytes without a
  control character is passed over. A whole number is compared as its decimal text.
- A message whose ``id`` the playbook sent in the conversation is its own: passed over, not counted.
- Only a message from the request's answerer counts.
- With ``each.to``, a message answers the open request whose ``sent.id`` it names, and is passed over
  when it names none. A message with nothing at ``to``, or any message when ``each`` has no ``to``,
  answers the conversation's one open request, and is refused (``several_open``) when several are open.
- A reply taken once is never taken twice; a request answered takes no further reply.

Choices where the page leaves room, each for a reason:

- A message with nothing at ``to`` from someone who answers none of the open requests is passed over
  ("Only a message from the answerer counts"); from the answerer of one of them, it is refused as soon
  as several requests are open in the conversation, whoever they are for ("is refused when several are
  open"), and the refusal is told to the sender's oldest request.
- A message whose ``to`` names its own ``id`` (a chat marks a message that starts a thread so) replies
  to nothing, as a message with nothing at ``to``.
- The message whose ``id`` is the cursor the read started from was listed by an earlier read (a tool
  may list "since" inclusively): it is neither counted nor taken again.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from parley.documents.json_schema import json_size
from parley.documents.pointers import identity_text, resolve_pointer
from parley.errors import ErrorEntry
from parley.interaction.replies.rule import read_reply
from parley.interaction.reply_rule import ReplyRule

#: "Bounds": a read's result.
READ_MAX_BYTES: Final = 64 * 1024

Order = Literal["oldest_first", "newest_first"]
ORDERS: Final[tuple[Order, ...]] = ("oldest_first", "newest_first")
RefusalWhy = Literal["unreadable", "too_long", "several_open"]


@dataclass(frozen=True)
class EachPointers:
    """``replies.read.each``: JSON Pointers within each message."""

    id: str
    sender: str
    text: str
    to: str | None = None


@dataclass(frozen=True)
class ReadBlock:
    """``replies.read``: where the messages are in the reading tool's answer, and their order."""

    list_at: str
    order: Order
    each: EachPointers

    @classmethod
    def from_document(cls, read: Mapping[str, Any]) -> ReadBlock:
        """From the ``replies.read`` mapping of a checked document."""
        each = read["each"]
        order = read["order"]
        if order not in ORDERS:
            raise ValueError(f"read.order is oldest_first or newest_first, not {order!r}")
        return cls(
            list_at=str(read["list"]),
            order=order,
            each=EachPointers(
                id=str(each["id"]),
                sender=str(each["sender"]),
                text=str(each["text"]),
                to=str(each["to"]) if each.get("to") is not None else None,
            ),
        )


@dataclass(frozen=True)
class OpenRequest:
    """A request of the conversation, as the read needs it. ``sent_id`` is the text of ``sent.id``;
    ``answerer`` is the rendered ``from``, else ``to``. Pass them oldest first. A request ``answered``
    already (by ``answer_interaction``, say) takes no reply."""

    run_id: str
    sent_id: str
    answerer: str
    rule: ReplyRule
    answer_schema: Any
    answered: bool = False


@dataclass(frozen=True)
class Answer:
    """A reply that answers the request of ``run_id``: record ``request_answered`` with ``reply_id``."""

    run_id: str
    reply_id: str
    answer: dict[str, Any]


@dataclass(frozen=True)
class Refusal:
    """A reply that is not an answer. ``run_id`` is the request it was meant for, ``None`` when it
    answers no single one (``several_open``); then ``candidates`` are the open requests of its sender,
    oldest first. ``problems`` never repeat the reply's words."""

    run_id: str | None
    reply_id: str
    why: RefusalWhy
    problems: tuple[ErrorEntry, ...] = ()
    candidates: tuple[str, ...] = ()


Decision = Answer | Refusal


@dataclass(frozen=True)
class ReadResult:
    """One read: ``failed`` (why, for ``reading_failed``) or what it found. ``since`` is the cursor
    after the read (unchanged when nothing listed has an id); ``seen`` counts the messages listed, but
    not the playbook's own, nor those taken before, nor the one at the cursor it started from: ``0``
    records no ``replies_read``. ``taken`` are the ids decided by this read, to add to the conversation's."""

    failed: str | None
    since: str | None
    seen: int = 0
    decisions: tuple[Decision, ...] = ()
    taken: frozenset[str] = field(default_factory=frozenset)


def reply_words(value: Any) -> str:
    """What ``each.text`` points at, as words: a text, or a number as written. Nothing there (or a
    structure) reads as empty, which the rule refuses."""
    if isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return identity_text(value) or str(value)
    return ""


def take_replies(
    answer: Any,
    read: ReadBlock,
    since: str | None,
    own_ids: Collection[str],
    requests: Sequence[OpenRequest],
    taken: Collection[str] = (),
) -> ReadResult:
    """Decide what each message of one read is.

    ``answer`` is the reading tool's answer; ``since`` the cursor the read started from (``None`` or
    empty text before any); ``own_ids`` the ids the playbook sent in this conversation; ``requests``
    the conversation's requests, oldest first; ``taken`` the ids of replies already decided in the
    conversation (answered or refused), which are never taken twice.
    """
    if json_size(answer) > READ_MAX_BYTES:
        return ReadResult(f"The reading tool's answer is larger than 64 KiB ({READ_MAX_BYTES} bytes)", since)
    found, listed = resolve_pointer(answer, read.list_at)
    if not found:
        return ReadResult(f"The reading tool's answer has nothing at {read.list_at}", since)
    if not isinstance(listed, list):
        return ReadResult(f"The reading tool's answer has no list at {read.list_at}", since)
    messages = listed if read.order == "oldest_first" else listed[::-1]
    own = set(own_ids)
    already = set(taken)
    answered = {request.run_id for request in requests if request.answered}
    newest = since
    seen = 0
    decisions: list[Decision] = []
    decided: set[str] = set()
    for message in messages:
        reply_id = identity_text(_at(message, read.each.id))
        if reply_id is not None:
            newest = reply_id
            if reply_id in own or reply_id in already or reply_id in decided or (since and reply_id == since):
                continue
        seen += 1
        sender = identity_text(_at(message, read.each.sender))
        if reply_id is None or sender is None:
            continue
        open_requests = [r for r in requests if r.run_id not in answered]
        decision = _decide(message, reply_id, sender, read.each, open_requests)
        if decision is None:
            continue
        decided.add(reply_id)
        decisions.append(decision)
        if isinstance(decision, Answer):
            answered.add(decision.run_id)
    return ReadResult(None, newest, seen, tuple(decisions), frozenset(decided))


def _at(message: Any, pointer: str) -> Any:
    return resolve_pointer(message, pointer)[1]


def _decide(
    message: Any, reply_id: str, sender: str, each: EachPointers, open_requests: list[OpenRequest]
) -> Decision | None:
    to = identity_text(_at(message, each.to)) if each.to is not None else None
    names_one = each.to is not None and _names_something(_at(message, each.to), reply_id)
    if names_one:
        request = next((r for r in open_requests if to is not None and r.sent_id == to), None)
        if request is None or request.answerer != sender:
            return None
    else:
        mine = [r for r in open_requests if r.answerer == sender]
        if not mine:
            return None
        if len(open_requests) > 1:  # "refused when several are open", whoever they are for
            return Refusal(None, reply_id, "several_open", candidates=tuple(r.run_id for r in mine))
        request = mine[0]
    reading = read_reply(request.rule, reply_words(_at(message, each.text)), request.answer_schema)
    if reading.answer is not None:
        return Answer(request.run_id, reply_id, reading.answer)
    return Refusal(request.run_id, reply_id, reading.refused or "unreadable", reading.problems)


def _names_something(value: Any, reply_id: str) -> bool:
    """Whether ``to`` holds something: not missing, ``null`` or empty text, nor the message's own id."""
    if value is None or value == "":
        return False
    return identity_text(value) != reply_id
