"""Taking replies from one read (``replies.read``, ``replies.read.each``, "Answering by reply").

The chat listings come from the demo chat (``parley.demo.chat``), which lists a thread as Slack does:
the parent first, naming itself as its thread, then the replies.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from parley.demo.chat import BOT_USER, Chat, Message
from parley.documents.pointers import identity_text
from parley.errors import ErrorEntry
from parley.interaction.replies.taking import (
    Answer,
    EachPointers,
    OpenRequest,
    ReadBlock,
    ReadResult,
    Refusal,
    take_replies,
)
from parley.interaction.reply_rule import ReplyRule, resolve_reply_rule
from parley.runs.kinds import check_source

ROOT = Path(__file__).resolve().parents[4]
EXAMPLE = check_source(
    "interaction",
    (ROOT / "examples" / "definitions" / "approve-draft-in-chat.md").read_text(encoding="utf-8"),
)
SCHEMA: Any = EXAMPLE.front_matter["output"]["schema"]


def example_rule() -> ReplyRule:
    resolved = resolve_reply_rule(EXAMPLE.front_matter["reply"], SCHEMA)
    assert resolved is not None
    return resolved


RULE = example_rule()
THREADS = ReadBlock.from_document(EXAMPLE.front_matter["replies"]["read"])
#: The same messages, read without ``each.to``: every reply answers the conversation's one open request.
UNTHREADED = ReadBlock("/messages", "oldest_first", EachPointers(id="/ts", sender="/user", text="/text"))


def request(
    sent: Message, run_id: str = "run-1", answerer: str = "maria", rule: ReplyRule = RULE
) -> OpenRequest:
    return OpenRequest(run_id=run_id, sent_id=sent.ts, answerer=answerer, rule=rule, answer_schema=SCHEMA)


def listing(messages: list[Message]) -> dict[str, Any]:
    return {"messages": [message.as_listed() for message in messages], "has_more": False}


def test_the_document_gives_the_read_block() -> None:
    each = EachPointers(id="/ts", sender="/user", text="/text", to="/thread_ts")
    assert (THREADS.list_at, THREADS.order, THREADS.each) == ("/messages", "oldest_first", each)
    with pytest.raises(ValueError, match="oldest_first or newest_first"):
        ReadBlock.from_document(
            {"list": "/m", "order": "sideways", "each": {"id": "/a", "sender": "/b", "text": "/c"}}
        )


def test_the_pages_example_a_refused_reply_then_an_answer_in_the_thread() -> None:
    chat = Chat()
    sent = chat.post("maria", BOT_USER, "Here is the draft: …")
    lgtm = chat.post("maria", "maria", "lgtm", thread_ts=sent.ts)
    told = chat.post("maria", BOT_USER, "To answer, reply with one of approve, revise.", thread_ts=sent.ts)
    good = chat.post("maria", "maria", "approve, looks good", thread_ts=sent.ts)
    messages, _ = chat.thread("maria", sent.ts)

    result = take_replies(listing(messages), THREADS, "", {sent.ts}, [request(sent)])

    assert result == ReadResult(
        failed=None,
        since=good.ts,
        seen=3,  # lgtm, the telling (from the playbook's user, passed over) and the answer
        decisions=(
            Refusal(
                "run-1",
                lgtm.ts,
                "unreadable",
                (ErrorEntry("/answer/verdict", "The first word is not one of approve, revise"),),
            ),
            Answer("run-1", good.ts, {"verdict": "approve", "note": "looks good"}),
        ),
        taken=frozenset({lgtm.ts, good.ts}),
    )
    assert told.ts not in result.taken


def test_the_playbooks_own_message_is_not_counted_so_a_read_of_it_alone_finds_nothing() -> None:
    chat = Chat()
    sent = chat.post("maria", BOT_USER, "Here is the draft")
    messages, _ = chat.thread("maria", sent.ts)

    result = take_replies(listing(messages), THREADS, "", {sent.ts}, [request(sent)])

    assert result == ReadResult(None, since=sent.ts, seen=0)


def test_the_playbooks_own_message_is_passed_over_even_from_the_answerer() -> None:
    own = {"ts": "5", "user": "maria", "text": "approve"}  # a bot posting as the party, say
    result = take_replies({"messages": [own]}, UNTHREADED, None, {"5"}, [request_for("5")])
    assert (result.seen, result.decisions, result.since) == (0, (), "5")


def request_for(sent_id: str, run_id: str = "run-1", answerer: str = "maria") -> OpenRequest:
    return OpenRequest(run_id=run_id, sent_id=sent_id, answerer=answerer, rule=RULE, answer_schema=SCHEMA)


def test_foreign_senders_are_passed_over_and_kept_nowhere_but_counted() -> None:
    chat = Chat()
    sent = chat.post("maria", BOT_USER, "draft")
    chat.post("maria", "jon", "approve", thread_ts=sent.ts)
    messages, _ = chat.thread("maria", sent.ts)

    result = take_replies(listing(messages), THREADS, "", {sent.ts}, [request(sent)])

    assert (result.seen, result.decisions, result.taken) == (1, (), frozenset())
    assert result.since == messages[-1].ts


def test_a_reply_taken_once_is_never_taken_twice() -> None:
    chat = Chat()
    sent = chat.post("maria", BOT_USER, "draft")
    reply = chat.post("maria", "maria", "nope", thread_ts=sent.ts)
    messages, _ = chat.thread("maria", sent.ts)

    first = take_replies(listing(messages), THREADS, "", {sent.ts}, [request(sent)])
    again = take_replies(listing(messages), THREADS, "", {sent.ts}, [request(sent)], taken=first.taken)

    assert [d.reply_id for d in first.decisions] == [reply.ts]
    assert (again.decisions, again.seen, again.since) == ((), 0, reply.ts)


def test_the_message_at_the_cursor_was_listed_before() -> None:
    messages = [
        {"ts": "7", "user": "maria", "text": "approve"},
        {"ts": "8", "user": "maria", "text": "revise"},
    ]
    result = take_replies({"messages": messages}, UNTHREADED, "7", (), [request_for("1")])
    assert result.seen == 1
    assert result.decisions == (Answer("run-1", "8", {"verdict": "revise"}),)


def test_a_request_answered_takes_no_further_reply_in_the_same_read_or_after() -> None:
    messages = [
        {"ts": "2", "user": "maria", "text": "approve"},
        {"ts": "3", "user": "maria", "text": "revise: actually, no"},
    ]
    result = take_replies({"messages": messages}, UNTHREADED, None, (), [request_for("1")])
    assert result.decisions == (Answer("run-1", "2", {"verdict": "approve"}),)
    assert (result.seen, result.since, result.taken) == (2, "3", frozenset({"2"}))

    answered = OpenRequest("run-1", "1", "maria", RULE, SCHEMA, answered=True)
    assert take_replies({"messages": messages}, UNTHREADED, None, (), [answered]).decisions == ()


def two_threads() -> tuple[Chat, Message, Message]:
    chat = Chat()
    first = chat.post("maria", BOT_USER, "first draft")
    second = chat.post("maria", BOT_USER, "second draft")
    return chat, first, second


def test_with_to_a_reply_answers_the_request_whose_message_it_replies_to() -> None:
    chat, first, second = two_threads()
    chat.post("maria", "maria", "revise the title", thread_ts=second.ts)
    chat.post("maria", "maria", "approve", thread_ts=first.ts)
    listed = {"messages": [m.as_listed() for m in all_messages(chat, first, second)]}
    requests = [request(first, "run-1"), request(second, "run-2")]

    result = take_replies(listed, THREADS, "", {first.ts, second.ts}, requests)

    assert [(type(d).__name__, d.run_id) for d in result.decisions] == [
        ("Answer", "run-2"),
        ("Answer", "run-1"),
    ]
    assert result.seen == 2


def all_messages(chat: Chat, *parents: Message) -> list[Message]:
    """Every message of the parents' threads, oldest first, as a channel's history would list them."""
    listed = [m for parent in parents for m in chat.thread("maria", parent.ts)[0]]
    return sorted({m.ts: m for m in listed}.values(), key=lambda m: float(m.ts))


def test_with_to_a_reply_naming_no_open_request_is_passed_over() -> None:
    messages = [
        {"ts": "3", "user": "maria", "text": "approve", "thread_ts": "99"},  # some other thread
        {"ts": "4", "user": "maria", "text": "approve", "thread_ts": {"not": "an id"}},
    ]
    result = take_replies(
        {"messages": messages}, THREADS, None, (), [request_for("1"), request_for("2", "run-2")]
    )
    assert (result.decisions, result.seen) == ((), 2)


def test_with_to_a_reply_from_someone_else_than_that_requests_answerer_is_passed_over() -> None:
    messages = [{"ts": "3", "user": "jon", "text": "approve", "thread_ts": "1"}]
    requests = [request_for("1", "run-1", "maria"), request_for("2", "run-2", "jon")]
    assert take_replies({"messages": messages}, THREADS, None, (), requests).decisions == ()


def test_outside_a_thread_a_reply_answers_the_one_open_request_and_is_refused_when_several_are_open() -> None:
    outside = {"messages": [{"ts": "3", "user": "maria", "text": "approve"}]}
    one = take_replies(outside, THREADS, None, (), [request_for("1")])
    assert one.decisions == (Answer("run-1", "3", {"verdict": "approve"}),)

    several = take_replies(outside, THREADS, None, (), [request_for("1", "run-1"), request_for("2", "run-2")])
    assert several.decisions == (Refusal(None, "3", "several_open", candidates=("run-1", "run-2")),)

    without_to = take_replies(
        outside, UNTHREADED, None, (), [request_for("1", "run-1"), request_for("2", "run-2")]
    )
    assert without_to.decisions == several.decisions


def test_without_to_even_a_threaded_reply_answers_only_the_one_open_request() -> None:
    threaded = {"messages": [{"ts": "3", "user": "maria", "text": "approve", "thread_ts": "2"}]}
    result = take_replies(
        threaded, UNTHREADED, None, (), [request_for("1", "run-1"), request_for("2", "run-2")]
    )
    assert [d.why for d in result.decisions if isinstance(d, Refusal)] == ["several_open"]


def test_a_message_naming_itself_as_its_thread_replies_to_nothing() -> None:
    own_thread = {"messages": [{"ts": "3", "user": "maria", "text": "approve", "thread_ts": "3"}]}
    result = take_replies(own_thread, THREADS, None, (), [request_for("1")])
    assert result.decisions == (Answer("run-1", "3", {"verdict": "approve"}),)


def test_a_reply_outside_the_threads_is_refused_while_several_are_open_whoever_they_are_for() -> None:
    outside = {
        "messages": [{"ts": "3", "user": "jon", "text": "revise"}, {"ts": "4", "user": "lee", "text": "ok"}]
    }
    requests = [request_for("1", "run-1", "maria"), request_for("2", "run-2", "jon")]
    assert take_replies(outside, THREADS, None, (), requests).decisions == (
        Refusal(None, "3", "several_open", candidates=("run-2",)),
    )  # lee answers none of them: passed over


def test_once_one_of_two_requests_is_answered_a_reply_outside_the_threads_answers_the_other() -> None:
    messages = [
        {"ts": "3", "user": "maria", "text": "approve"},
        {"ts": "4", "user": "maria", "text": "approve", "thread_ts": "1"},
        {"ts": "5", "user": "maria", "text": "revise"},
    ]
    result = take_replies(
        {"messages": messages}, THREADS, None, (), [request_for("1"), request_for("2", "run-2")]
    )
    assert result.decisions == (
        Refusal(None, "3", "several_open", candidates=("run-1", "run-2")),
        Answer("run-1", "4", {"verdict": "approve"}),
        Answer("run-2", "5", {"verdict": "revise"}),
    )


def test_newest_first_listings_are_handled_oldest_first_and_the_first_is_the_cursor() -> None:
    newest_first = ReadBlock("/data/items", "newest_first", EachPointers("/id", "/from/name", "/body"))
    answer = {
        "data": {
            "items": [
                {"id": 12, "from": {"name": "maria"}, "body": "revise"},
                {"id": 11, "from": {"name": "maria"}, "body": "approve"},
            ]
        }
    }
    result = take_replies(answer, newest_first, "10", (), [request_for("1")])
    assert result.since == "12"
    assert result.decisions == (Answer("run-1", "11", {"verdict": "approve"}),)


def test_whole_numbers_compare_as_their_decimal_text() -> None:
    answer = {"messages": [{"ts": 3, "user": 42, "text": "approve", "thread_ts": 1.0}]}
    result = take_replies(answer, THREADS, None, {"2"}, [request_for("1", answerer="42")])
    assert result.decisions == (Answer("run-1", "3", {"verdict": "approve"}),)
    assert result.since == "3"


@pytest.mark.parametrize(
    "message",
    [
        {"ts": "3", "user": True, "text": "approve"},
        {"ts": "3", "text": "approve"},
        {"ts": 1.5, "user": "maria", "text": "approve"},
        {"ts": "3", "user": "ma\nria", "text": "approve"},
        {"ts": "x" * 257, "user": "maria", "text": "approve"},
        {"ts": "", "user": "maria", "text": "approve"},
        {"ts": ["3"], "user": "maria", "text": "approve"},
        "approve",
    ],
)
def test_a_message_without_a_good_id_or_sender_is_passed_over(message: Any) -> None:
    result = take_replies({"messages": [message]}, UNTHREADED, "0", (), [request_for("1", answerer="maria")])
    assert (result.decisions, result.seen) == ((), 1)


def test_ids_and_senders_of_256_bytes_count() -> None:
    name = "é" * 128
    result = take_replies(
        {"messages": [{"ts": "t" * 256, "user": name, "text": "approve"}]},
        UNTHREADED,
        None,
        (),
        [request_for("1", answerer=name)],
    )
    assert [d.reply_id for d in result.decisions] == ["t" * 256]


def test_nothing_at_text_reads_as_empty_and_is_refused() -> None:
    result = take_replies(
        {"messages": [{"ts": "3", "user": "maria"}]}, UNTHREADED, None, (), [request_for("1")]
    )
    assert result.decisions == (
        Refusal("run-1", "3", "unreadable", (ErrorEntry("/answer", "The reply has no words"),)),
    )


def test_a_reply_past_8_kib_is_refused_as_too_long() -> None:
    text = "approve " + "x" * 8192
    result = take_replies(
        {"messages": [{"ts": "3", "user": "maria", "text": text}]}, UNTHREADED, None, (), [request_for("1")]
    )
    assert [(d.run_id, d.why) for d in result.decisions if isinstance(d, Refusal)] == [("run-1", "too_long")]


def test_an_answer_with_no_list_is_a_failed_read_and_keeps_the_cursor() -> None:
    assert take_replies({"ok": True}, THREADS, "5", (), [request_for("1")]) == ReadResult(
        "The reading tool's answer has nothing at /messages", "5"
    )
    assert take_replies({"messages": {"ts": "6"}}, THREADS, "5", (), [request_for("1")]) == ReadResult(
        "The reading tool's answer has no list at /messages", "5"
    )
    assert take_replies("not json at all", THREADS, None, (), []).failed is not None


def test_an_answer_larger_than_64_kib_is_a_failed_read() -> None:
    filler = [{"ts": str(n), "user": "jon", "text": "x" * 1000} for n in range(70)]
    result = take_replies({"messages": filler}, THREADS, "5", (), [request_for("1")])
    assert result == ReadResult("The reading tool's answer is larger than 64 KiB (65536 bytes)", "5")
    assert take_replies({"messages": filler[:60]}, THREADS, "5", (), [request_for("1")]).failed is None


def test_an_empty_list_finds_nothing_and_keeps_the_cursor() -> None:
    assert take_replies({"messages": []}, THREADS, "5", (), [request_for("1")]) == ReadResult(None, "5")


def test_identity_text() -> None:
    assert identity_text("1732960000.000100") == "1732960000.000100"
    assert identity_text(12) == "12"
    assert identity_text(12.0) == "12"
    refused: tuple[Any, ...] = (None, False, 1.5, "", "a\tb", {}, "x" * 257)
    assert [identity_text(value) for value in refused] == [None] * 7


message_strategy = st.fixed_dictionaries(
    {
        "ts": st.one_of(st.integers(0, 50), st.sampled_from(["a", "b", ""])),
        "user": st.sampled_from(["maria", "jon", "parley"]),
        "text": st.sampled_from(["approve", "revise now", "hm", "", "OK!"]),
    },
    optional={"thread_ts": st.sampled_from(["1", "2", "9", None])},
)


@given(st.lists(message_strategy, max_size=12), st.booleans())
def test_each_reply_is_decided_at_most_once_and_each_request_answered_at_most_once(
    messages: list[dict[str, Any]], threaded: bool
) -> None:
    requests = [
        request_for("1", "run-1", "maria"),
        request_for("2", "run-2", "maria"),
        request_for("3", "run-3", "jon"),
    ]
    result = take_replies(
        {"messages": messages}, THREADS if threaded else UNTHREADED, None, {"1", "2", "3"}, requests
    )
    ids = [d.reply_id for d in result.decisions]
    assert len(ids) == len(set(ids)) == len(result.taken)
    answered = [d.run_id for d in result.decisions if isinstance(d, Answer)]
    assert len(answered) == len(set(answered))
    assert result.seen <= len(messages)
    # the reversed listing read as newest first decides the same
    newest = ReadBlock("/messages", "newest_first", (THREADS if threaded else UNTHREADED).each)
    assert take_replies({"messages": messages[::-1]}, newest, None, {"1", "2", "3"}, requests) == result
