"""The demo chat's memory (``parley.demo.chat``): Slack-like ``ts`` ids, channels and threads."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from parley.demo.chat import BOT_USER, Chat, ChatError, NotInChat, format_ts, ts_key


def frozen(*moments: float) -> Callable[[], float]:
    """A clock that gives these moments, then stays at the last."""
    queue = list(moments)

    def now() -> float:
        return queue.pop(0) if len(queue) > 1 else queue[0]

    return now


def test_a_ts_is_seconds_and_microseconds_of_the_moment() -> None:
    chat = Chat(now=frozen(1732960000.0001))

    message = chat.post("maria", BOT_USER, "Here is the draft")

    assert message.ts == "1732960000.000100"
    assert (message.channel, message.user, message.thread_ts) == ("maria", "parley", None)


def test_ts_only_grows_even_when_the_clock_stands_still_or_goes_back() -> None:
    chat = Chat(now=frozen(1732960000.5, 1732960000.5, 1732959999.0))

    stamps = [chat.post("maria", "parley", f"message {n}").ts for n in range(3)]

    assert stamps == ["1732960000.500000", "1732960000.500001", "1732960000.500002"]


@given(st.integers(min_value=0, max_value=10**16), st.integers(min_value=0, max_value=10**16))
def test_ts_order_is_the_order_of_the_moments(a: int, b: int) -> None:
    assert (ts_key(format_ts(a)) < ts_key(format_ts(b))) == (a < b)


def test_ts_key_reads_cursors_and_refuses_what_is_not_a_timestamp() -> None:
    assert ts_key("0") == (0, 0)
    assert ts_key("999.5") < ts_key("1000.0")  # text order would say otherwise
    assert ts_key("1732960000.0001") == ts_key("1732960000.000100")
    for bad in ("", "abc", "1.2.3", "-1", "1.1234567", "1."):
        with pytest.raises(ChatError, match="is not a message timestamp"):
            ts_key(bad)


def test_the_spec_example_a_message_its_replies_and_a_tell_in_its_thread() -> None:
    chat = Chat()
    sent = chat.post("maria", BOT_USER, "Here is the draft: …")
    first = chat.post("maria", "maria", "lgtm", thread_ts=sent.ts)
    told = chat.post("maria", BOT_USER, "Reply approve, or revise with a note.", thread_ts=sent.ts)
    second = chat.post("maria", "maria", "approve, looks good", thread_ts=sent.ts)
    chat.post("maria", BOT_USER, "another top-level message")

    messages, has_more = chat.thread("maria", sent.ts, oldest="0", limit=15)

    assert [m.ts for m in messages] == [sent.ts, first.ts, told.ts, second.ts]
    assert not has_more
    assert messages[0].as_listed() == {
        "ts": sent.ts, "user": "parley", "text": "Here is the draft: …", "thread_ts": sent.ts
    }  # fmt: skip
    assert messages[3].as_listed() == {
        "ts": second.ts, "user": "maria", "text": "approve, looks good", "thread_ts": sent.ts
    }  # fmt: skip


def test_oldest_is_exclusive_and_limit_keeps_the_oldest_and_says_there_is_more() -> None:
    chat = Chat()
    sent = chat.post("maria", BOT_USER, "draft")
    replies = [chat.post("maria", "maria", f"reply {n}", thread_ts=sent.ts) for n in range(4)]

    since_parent, more_after_parent = chat.thread("maria", sent.ts, oldest=sent.ts)
    since_second, _ = chat.thread("maria", sent.ts, oldest=replies[1].ts)
    first_two, more = chat.thread("maria", sent.ts, oldest="0", limit=2)
    since_last, nothing_more = chat.thread("maria", sent.ts, oldest=replies[3].ts)

    assert [m.text for m in since_parent] == ["reply 0", "reply 1", "reply 2", "reply 3"]
    assert not more_after_parent
    assert [m.text for m in since_second] == ["reply 2", "reply 3"]
    assert [m.text for m in first_two] == ["draft", "reply 0"]
    assert more
    assert (since_last, nothing_more) == ([], False)


def test_a_thread_named_by_one_of_its_replies_is_the_parents_thread() -> None:
    chat = Chat()
    sent = chat.post("maria", BOT_USER, "draft")
    reply = chat.post("maria", "maria", "hm", thread_ts=sent.ts)

    nested = chat.post("maria", "maria", "approve", thread_ts=reply.ts)
    messages, _ = chat.thread("maria", reply.ts)

    assert nested.thread_ts == sent.ts
    assert [m.ts for m in messages] == [sent.ts, reply.ts, nested.ts]


def test_threads_and_channels_do_not_mix() -> None:
    chat = Chat()
    one = chat.post("maria", BOT_USER, "one")
    two = chat.post("maria", BOT_USER, "two")
    chat.post("maria", "maria", "to two", thread_ts=two.ts)
    chat.post("jon", BOT_USER, "for jon")

    messages, _ = chat.thread("maria", one.ts)

    assert [m.text for m in messages] == ["one"]
    assert chat.channels() == ["jon", "maria"]
    assert [m.text for m in chat.messages("maria")] == ["one", "two", "to two"]


def test_unknown_channels_and_messages_are_named_in_the_refusal() -> None:
    chat = Chat()
    sent = chat.post("maria", BOT_USER, "draft")

    with pytest.raises(NotInChat, match=r"there is no channel 'jon' \(channels: maria\)"):
        chat.thread("jon", sent.ts)
    with pytest.raises(NotInChat, match=r"there is no message 1\.000001 in channel 'maria'"):
        chat.thread("maria", "1.000001")
    with pytest.raises(NotInChat, match="there is no channel 'jon'"):
        chat.post("jon", "jon", "a reply", thread_ts=sent.ts)
    with pytest.raises(NotInChat, match="there is no message"):
        chat.post("maria", "maria", "a reply", thread_ts="1.000001")
    assert chat.channels() == ["maria"]


@pytest.mark.parametrize(
    ("call", "words"),
    [
        (lambda chat: chat.post("maria", "parley", "   "), "text is empty"),
        (lambda chat: chat.post("maria", "parley", "x" * 40_001), "at most 40,000"),
        (lambda chat: chat.post("two words", "parley", "hi"), "channel 'two words' is not a name"),
        (lambda chat: chat.post("maria", "", "hi"), "user '' is not a name"),
        (lambda chat: chat.thread("maria", "1.000000", oldest="yesterday"), "is not a message timestamp"),
        (lambda chat: chat.thread("maria", "1.000000", limit=0), "limit is 0; it is from 1 to 1000"),
        (lambda chat: chat.thread("maria", "1.000000", limit=1001), "limit is 1001"),
    ],
)
def test_bad_calls_say_what_to_change(call: Callable[[Chat], object], words: str) -> None:
    with pytest.raises(ChatError, match=words):
        call(Chat())
