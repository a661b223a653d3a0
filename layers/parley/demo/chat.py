"""The demo chat's memory: channels, messages with Slack-like ``ts`` ids, and threads.

It is the conversation the demo tool server (``parley.demo.server``) exposes through the tools of
``interaction-format.md``, "Sending through a tool": ``post_message`` and ``thread_replies``. Nothing is
kept across restarts; it is a demo.

Like Slack:

- a message's id is its ``ts``, seconds and microseconds of the moment it was posted as text
  (``1732960000.000100``); here each new ``ts`` is strictly greater than the one before, so a reader's
  cursor (``oldest``) never skips a message posted in the same microsecond;
- a thread is a top-level message and the replies that name it by ``thread_ts``; the thread's listing
  holds the parent too, first, with its own ``ts`` as ``thread_ts``;
- ``oldest`` is exclusive: the listing holds the messages *newer* than it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

from parley.errors import ParleyError

#: The user the tool server posts as: the messages Parley sends.
BOT_USER: Final = "parley"
#: Slack's own bounds for ``conversations.replies``' ``limit``.
MAX_LIMIT: Final = 1000
MAX_TEXT: Final = 40_000
MAX_NAME: Final = 80


class ChatError(ParleyError, ValueError):
    """A call the chat refuses, with words that say what to change (the tool error's message)."""


class NotInChat(ChatError):
    """The channel or message a call names does not exist."""


@dataclass(frozen=True)
class Message:
    channel: str
    ts: str
    user: str
    text: str
    thread_ts: str | None = None
    """The parent's ``ts`` for a reply in a thread; ``None`` for a top-level message."""

    def as_listed(self) -> dict[str, str]:
        """The message as a thread's listing shows it: a parent names itself as its thread."""
        return {"ts": self.ts, "user": self.user, "text": self.text, "thread_ts": self.thread_ts or self.ts}


@dataclass
class _Channel:
    name: str
    messages: list[Message] = field(default_factory=list)
    by_ts: dict[str, Message] = field(default_factory=dict)


def ts_key(ts: str) -> tuple[int, int]:
    """A ``ts`` (or a cursor such as ``"0"``) as a number to compare: ``(seconds, microseconds)``.

    Text comparison goes wrong across lengths (``"999.5"`` sorts after ``"1000.0"``); this is exact."""
    seconds, dot, fraction = ts.strip().partition(".")
    if not seconds.isdigit() or (dot and (not fraction.isdigit() or len(fraction) > 6)):
        raise ChatError(f"{ts!r} is not a message timestamp such as 1732960000.000100 (or 0)")
    return int(seconds), int(fraction.ljust(6, "0")) if dot else 0


def format_ts(micros: int) -> str:
    seconds, fraction = divmod(micros, 1_000_000)
    return f"{seconds}.{fraction:06d}"


class Chat:
    """Channels, messages and threads in memory, safe to share between threads.

    A channel comes into being with its first message (so posting to ``maria`` reaches Maria without
    setting anything up); ``now`` gives seconds since the epoch, for tests to pin."""

    def __init__(self, now: Callable[[], float] = time.time) -> None:
        self._now = now
        self._lock = threading.Lock()
        self._channels: dict[str, _Channel] = {}
        self._last_micros = 0

    def post(self, channel: str, user: str, text: str, thread_ts: str | None = None) -> Message:
        """Post ``text`` as ``user`` into ``channel``, into the thread of ``thread_ts`` if given.

        A ``thread_ts`` that names a reply posts into that reply's thread, as Slack does."""
        _check_name("channel", channel)
        _check_name("user", user)
        if not text.strip():
            raise ChatError("text is empty: a message needs some words")
        if len(text) > MAX_TEXT:
            raise ChatError(f"text is {len(text):,} characters; a message holds at most {MAX_TEXT:,}")
        with self._lock:
            if thread_ts is not None:
                room = self._channel(channel)
                parent = self._message(room, thread_ts)
                thread_ts = parent.thread_ts or parent.ts
            else:
                room = self._channels.setdefault(channel, _Channel(channel))
            message = Message(channel, self._next_ts(), user, text, thread_ts)
            room.messages.append(message)
            room.by_ts[message.ts] = message
            return message

    def thread(self, channel: str, ts: str, oldest: str = "0", limit: int = 15) -> tuple[list[Message], bool]:
        """The thread of ``ts`` (parent first, then its replies) newer than ``oldest``, oldest first,
        at most ``limit``; and whether more were left out."""
        after = ts_key(oldest)
        if not 1 <= limit <= MAX_LIMIT:
            raise ChatError(f"limit is {limit}; it is from 1 to {MAX_LIMIT}")
        with self._lock:
            room = self._channel(channel)
            parent = self._message(room, ts)
            root = parent.thread_ts or parent.ts
            newer = [
                message
                for message in room.messages
                if (message.ts == root or message.thread_ts == root) and ts_key(message.ts) > after
            ]
        return newer[:limit], len(newer) > limit

    def channel(self, channel: str, oldest: str = "0", limit: int = 15) -> tuple[list[Message], bool]:
        """Every message of ``channel`` newer than ``oldest`` (replies included), oldest first, at most
        ``limit``; and whether more were left out."""
        after = ts_key(oldest)
        if not 1 <= limit <= MAX_LIMIT:
            raise ChatError(f"limit is {limit}; it is from 1 to {MAX_LIMIT}")
        with self._lock:
            newer = [message for message in self._channel(channel).messages if ts_key(message.ts) > after]
        return newer[:limit], len(newer) > limit

    def channels(self) -> list[str]:
        with self._lock:
            return sorted(self._channels)

    def messages(self, channel: str) -> list[Message]:
        """Every message of ``channel`` in the order posted, replies included."""
        with self._lock:
            return list(self._channel(channel).messages)

    def _channel(self, name: str) -> _Channel:
        room = self._channels.get(name)
        if room is None:
            known = ", ".join(sorted(self._channels)) or "none yet"
            raise NotInChat(f"there is no channel {name!r} (channels: {known}); post_message creates one")
        return room

    @staticmethod
    def _message(room: _Channel, ts: str) -> Message:
        ts_key(ts)
        message = room.by_ts.get(ts.strip())
        if message is None:
            raise NotInChat(f"there is no message {ts} in channel {room.name!r}")
        return message

    def _next_ts(self) -> str:
        micros = max(int(self._now() * 1_000_000), self._last_micros + 1)
        self._last_micros = micros
        return format_ts(micros)


def _check_name(what: str, name: str) -> None:
    if not name.strip() or len(name) > MAX_NAME or any(c.isspace() for c in name):
        raise ChatError(f"{what} {name!r} is not a name: 1 to {MAX_NAME} characters, no spaces")
