"""Answering by reply over HTTP, black-box (interaction-format.md, "Answering by reply", "`replies`",
"`replies.read`", "`replies.read.each`", "`replies.tell`", "Bounds", "The run's history"; http-api.md,
"Runs", "Events", "Local server").

A real ``parley serve --clock manual`` (a subprocess) delivers the spec's chat example to the demo chat
(``parley.demo.server.running``, in this process, so that the test can count the chat's reads: every
``thread_replies`` and ``channel_messages`` that reached the chat) and reads the replies a person posts
through the demo chat's own HTTP API (``POST /api/reply``), on the cadence, as the clock is advanced.

Each test works in its own channel (the request's ``to``), so that the module's one server and one chat
serve them all; a test cancels what it leaves open, and the reading of that conversation then stops.
Times are counted from the moment the request was asked, which is the moment it joined its conversation:
under the manual clock the delivery's first attempt runs before ``POST …/run`` is answered.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from tool_serving import serving_with

from parley.demo.chat import BOT_USER, Chat, Message
from parley.demo.server import DemoChat, DemoChatOptions, running

pytestmark = pytest.mark.http

ROOT = Path(__file__).resolve().parents[2]
#: The spec's chat example ("Sending through a tool"), as saved in the examples.
CHAT_FUNCTION = (ROOT / "examples" / "definitions" / "approve-draft-in-chat.md").read_text(encoding="utf-8")
#: The same without ``wait``: the cadence itself (``wait`` defaults to PT5S).
FAST = CHAT_FUNCTION.replace("  wait: PT1M\n", "")
#: One conversation per channel, read with ``channel_messages``: requests to one person share it.
CHANNEL = (
    FAST.replace("  conversation: '{{ sent.conversation }}/{{ sent.id }}'\n", "")
    .replace("  tool: thread_replies\n", "  tool: channel_messages\n")
    .replace("    ts: '{{ sent.id }}'\n", "")
)
FUNCTIONS = {"approve-in-chat": CHAT_FUNCTION, "approve-fast": FAST, "approve-channel": CHANNEL}
HOW_TO_ANSWER = "To answer, reply with one of approve, revise; what follows is kept as the note."
WRITER = {"Authorization": "Bearer dev-token", "Content-Type": "application/json"}
BASE = "/v1/orgs/acme/playbooks/campaigns"


class CountingChat(Chat):
    """The demo chat's memory, noting each read that reaches it: ``(tool, channel, ts)``."""

    def __init__(self) -> None:
        super().__init__()
        self.reads: list[tuple[str, str, str | None]] = []

    def thread(self, channel: str, ts: str, oldest: str = "0", limit: int = 15) -> tuple[list[Message], bool]:
        self.reads.append(("thread_replies", channel, ts))
        return super().thread(channel, ts, oldest, limit)

    def channel(self, channel: str, oldest: str = "0", limit: int = 15) -> tuple[list[Message], bool]:
        self.reads.append(("channel_messages", channel, None))
        return super().channel(channel, oldest, limit)

    def reads_of(self, channel: str) -> int:
        return sum(1 for _, read_channel, _ in self.reads if read_channel == channel)


@dataclass
class Served:
    url: str
    log: Path
    demo: DemoChat
    chat: CountingChat


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    tmp = tmp_path_factory.mktemp("serve-replies")
    chat = CountingChat()
    with running(DemoChatOptions(port=0), chat) as demo:
        operator = f"""
principals:
  - {{ id: dev, token: dev-token, grants: [{{ org: acme, playbook: campaigns, role: write }}] }}
tool_servers:
  - name: chat
    url: {demo.mcp_url}
    orgs: [acme]
    playbooks: [campaigns]
    allowed: [post_message, thread_replies, channel_messages]
"""
        log = tmp / "serve.log"
        with serving_with(tmp, operator) as url:
            with httpx.Client(base_url=url + BASE, headers=WRITER, timeout=60) as http:
                for name, source in FUNCTIONS.items():
                    created = http.post("/definitions/interaction", json={"name": name, "source": source})
                    assert created.status_code == 201, created.text
            yield Served(url, log, demo, chat)


@dataclass
class Session:
    """One test's view of the server and the chat: the runs it started (cancelled at its end if still
    open) and helpers over HTTP."""

    served: Served
    http: httpx.Client
    local: httpx.Client
    chat_http: httpx.Client
    started: list[str] = field(default_factory=list)

    # --- Parley -----------------------------------------------------------------------------------------

    def advance(self, seconds: float) -> None:
        moved = self.local.post("/_local/clock/advance", json={"seconds": seconds}, headers=WRITER)
        assert moved.status_code == 200, moved.text

    def run(self, function: str, owner: str, draft: str = "Spring sale: 20% off.") -> str:
        run_id = str(uuid.uuid4())
        started = self.http.post(
            f"/definitions/interaction/{function}/run",
            json={"input": {"owner": owner, "draft": draft}, "run_id": run_id},
        )
        assert started.status_code == 200, started.text
        assert started.json()["status"] == "started"
        self.started.append(run_id)
        return run_id

    def get_run(self, run_id: str) -> dict[str, Any]:
        found = self.http.get(f"/runs/{run_id}")
        assert found.status_code == 200, found.text
        run: dict[str, Any] = found.json()
        return run

    def history(self, run_id: str) -> list[dict[str, Any]]:
        found = self.http.get(f"/runs/{run_id}/history", params={"limit": 100})
        assert found.status_code == 200, found.text
        events: list[dict[str, Any]] = found.json()["events"]
        return events

    def of_type(self, run_id: str, event_type: str) -> list[dict[str, Any]]:
        return [e for e in self.history(run_id) if e["type"] == event_type]

    def listed(self, run_id: str) -> dict[str, Any] | None:
        found = self.http.get("/interactions", params={"limit": 100})
        assert found.status_code == 200, found.text
        mine = [i for i in found.json()["interactions"] if i["run_id"] == run_id]
        return mine[0] if mine else None

    def playbook_events(self, event_type: str, conversation: str | None = None) -> list[dict[str, Any]]:
        found = self.http.get("/events", params={"type": event_type, "order": "asc", "limit": 100})
        assert found.status_code == 200, found.text
        events: list[dict[str, Any]] = found.json()["events"]
        if conversation is not None:
            events = [e for e in events if e["data"].get("conversation") == conversation]
        return events

    def tellings(self, run_id: str, event_type: str) -> list[dict[str, Any]]:
        return [e for e in self.playbook_events(event_type) if e["data"].get("run_id") == run_id]

    def sent(self, run_id: str) -> tuple[str, str]:
        """What the request was delivered as: its channel and the message's ts."""
        delivered = self.of_type(run_id, "delivery_succeeded")
        assert len(delivered) == 1, self.history(run_id)
        sent = delivered[0]["data"]["sent"]
        return sent["conversation"], sent["id"]

    # --- the demo chat --------------------------------------------------------------------------------------

    def reply(self, channel: str, thread: str | None, text: str, user: str | None = None) -> str:
        """Post as a person through the demo chat's HTTP API (what its page and ``reply`` command do)."""
        body = {"channel": channel, "thread": thread, "user": user or channel, "text": text}
        posted = self.chat_http.post("/api/reply", json=body)
        assert posted.status_code == 201, posted.text
        ts: str = posted.json()["ts"]
        return ts

    def fail_reads(self, tool: str, count: int, mode: str = "error", seconds: float = 1) -> None:
        armed = self.chat_http.post(
            "/api/failures", json={"tool": tool, "count": count, "mode": mode, "seconds": seconds}
        )
        assert armed.status_code == 200, armed.text

    def told(self, channel: str, ts: str) -> list[str]:
        """What the playbook posted in the thread of ``ts`` after the message itself: the tellings."""
        return [
            m.text for m in self.served.chat.messages(channel) if m.thread_ts == ts and m.user == BOT_USER
        ]

    def reads(self, channel: str) -> int:
        return self.served.chat.reads_of(channel)


@pytest.fixture
def session(served: Served) -> Iterator[Session]:
    with (
        httpx.Client(base_url=served.url + BASE, headers=WRITER, timeout=60) as http,
        httpx.Client(base_url=served.url, timeout=120) as local,
        httpx.Client(base_url=served.demo.url, timeout=10) as chat_http,
    ):
        chat_http.delete("/api/failures")
        found = Session(served, http, local, chat_http)
        yield found
        chat_http.delete("/api/failures")
        for run_id in found.started:
            if found.get_run(run_id)["status"] == "started":
                cancelled = http.post(f"/runs/{run_id}/cancel", json={})
                assert cancelled.status_code == 200, cancelled.text
        found.advance(300)  # the next read of each conversation finds nothing open: the reading stops


def channel_of(name: str) -> str:
    """A channel (and owner) of its own for each test: the server and the chat live for the module."""
    return f"{name}-{uuid.uuid4().hex[:6]}"


# --- the cadence --------------------------------------------------------------------------------------------


def test_the_reads_at_each_step_of_the_cadence(session: Session) -> None:
    owner = channel_of("cadence")
    run_id = session.run("approve-fast", owner)
    session.advance(0)
    assert session.get_run(run_id)["status"] == "started"
    assert session.of_type(run_id, "delivery_succeeded")
    assert session.reads(owner) == 0

    # (seconds after the join, reads by then). Each figure of the page is the wait before the next read:
    # 5 s after the join, then 10, 20 and 40 s (reads at 5, 15, 35 and 75 s), then a minute through the
    # 18th read (135 … 915 s), then 5 minutes (1215, 1515 s). Each read is checked a second before it, at
    # its time and a second after: none at 4 s, one at 6 and 14 s, two at 16 s … 17 at 914 s, 18 at 916 and
    # 1,214 s, 19 at 1,216 s.
    times = [5, 15, 35, 75] + [75 + 60 * k for k in range(1, 15)] + [1215, 1515]
    assert (times[4], times[17]) == (135, 915)
    steps: list[tuple[int, int]] = []
    for n, time in enumerate(times, start=1):
        steps += [(time - 1, n - 1), (time, n), (time + 1, n)]
    at = 0.0
    for moment, reads in steps:
        session.advance(moment - at)
        at = moment
        assert session.reads(owner) == reads, f"{reads} reads by {moment} s"
    assert session.playbook_events("replies_read", f"{owner}/{session.sent(run_id)[1]}") == []

    cancelled = session.http.post(f"/runs/{run_id}/cancel", json={})
    assert cancelled.status_code == 200, cancelled.text
    session.advance(3600)
    assert session.reads(owner) == 20  # the read after the cancel finds nothing open: the reading stops


def test_the_wait_floor(session: Session) -> None:
    owner = channel_of("wait")
    session.run("approve-in-chat", owner)  # wait: PT1M
    session.advance(0)
    # every wait is at least a minute: none before 60 s, the next at 120 s and not before
    steps = [(5, 0), (15, 0), (35, 0), (59, 0), (60, 1), (75, 1), (119, 1), (120, 2), (135, 2), (179, 2)]
    steps += [(180, 3), (239, 3), (240, 4), (299, 4)]
    steps += [(300, 5), (359, 5), (360, 6)]
    at = 0.0
    for moment, reads in steps:
        session.advance(moment - at)
        at = moment
        assert session.reads(owner) == reads, f"{reads} reads by {moment} s"


def test_a_reply_in_the_thread_answers_the_request(session: Session) -> None:
    owner = channel_of("maria")
    run_id = session.run("approve-in-chat", owner)
    session.advance(0)
    channel, ts = session.sent(run_id)
    assert channel == owner
    shown = session.listed(run_id)
    assert shown is not None
    assert (shown["conversation"], shown["answerer"], shown["reply_refusals"]) == (f"{owner}/{ts}", owner, 0)

    reply_ts = session.reply(channel, ts, "approve, looks good")
    session.advance(60)

    done = session.get_run(run_id)
    assert (done["status"], done["output"]) == ("succeeded", {"verdict": "approve", "note": "looks good"})
    answered = session.of_type(run_id, "request_answered")
    assert len(answered) == 1
    assert answered[0]["data"]["answered_by"] == "playbook:campaigns"
    assert answered[0]["data"]["reply"]["id"] == reply_ts
    assert session.listed(run_id) is None
    read = session.playbook_events("replies_read", f"{owner}/{ts}")
    assert [e["data"]["read"] for e in read] == [1]
    session.advance(300)
    assert session.reads(owner) == 1  # the next read finds nothing open: no call, and none after


# --- one conversation, several requests ---------------------------------------------------------------------


def test_two_requests_share_one_reading_and_replies_go_to_the_thread_they_name(session: Session) -> None:
    owner = channel_of("shared")
    first = session.run("approve-channel", owner, draft="first")
    session.advance(2)
    second = session.run("approve-channel", owner, draft="second")
    session.advance(0)
    _, first_ts = session.sent(first)
    _, second_ts = session.sent(second)
    assert {session.listed(r)["conversation"] for r in (first, second)} == {owner}  # type: ignore[index]

    previous = 2
    for moment, reads in [(5, 1), (15, 2), (35, 3), (75, 4), (135, 5)]:
        session.advance(moment - previous)
        previous = moment
        assert session.reads(owner) == reads, f"one read per step for both: {reads} by {moment} s"
    assert all(
        tool == "channel_messages" for tool, channel, _ in session.served.chat.reads if channel == owner
    )

    outside = session.reply(owner, None, "approve")  # outside any thread, two open: refused
    session.reply(owner, second_ts, "revise the second")
    session.advance(60)
    assert session.get_run(second)["output"] == {"verdict": "revise", "note": "the second"}
    assert session.get_run(first)["status"] == "started"
    refused = session.of_type(first, "reply_refused")
    assert [r["data"]["reply"]["id"] for r in refused] == [outside]
    told = session.told(owner, first_ts)
    assert len(told) == 1
    assert "Reply to the message of the request you answer" in told[0] and told[0].endswith(HOW_TO_ANSWER)

    session.reply(owner, None, "approve")  # now one open request: it answers it
    session.advance(60)
    assert session.get_run(first)["output"] == {"verdict": "approve"}
    assert len(session.of_type(first, "request_answered")) == 1
    assert len(session.of_type(second, "request_answered")) == 1


def test_a_request_joining_a_conversation_with_nothing_open_is_read_5_seconds_later(session: Session) -> None:
    owner = channel_of("rejoin")
    first = session.run("approve-channel", owner, draft="first")
    session.advance(76)  # reads at 5, 15, 35 and 75 s; the next would come at 135 s
    assert session.reads(owner) == 4
    answered = session.http.post(f"/runs/{first}/answer", json={"answer": {"verdict": "approve"}})
    assert answered.status_code == 200, answered.text
    session.run("approve-channel", owner, draft="second")  # joins at 76 s, with nothing else open
    session.advance(5)
    assert session.reads(owner) == 5, "read 5 seconds after the request joined"


def test_a_reply_in_one_thread_never_answers_the_other(session: Session) -> None:
    owner = channel_of("threads")
    first = session.run("approve-channel", owner, draft="first")
    second = session.run("approve-channel", owner, draft="second")
    session.advance(0)
    _, first_ts = session.sent(first)
    session.reply(owner, first_ts, "approve")
    session.reply(owner, first_ts, "revise too late")  # the first is answered: this one is passed over
    session.advance(5)
    assert session.get_run(first)["output"] == {"verdict": "approve"}
    assert session.get_run(second)["status"] == "started"
    assert session.of_type(second, "request_answered") == []
    assert session.of_type(first, "reply_refused") == session.of_type(second, "reply_refused") == []


# --- refusals and tellings ----------------------------------------------------------------------------------


def test_refusals_are_recorded_without_words_ten_at_most_and_told_three_times(session: Session) -> None:
    owner = channel_of("refusals")
    run_id = session.run("approve-fast", owner)
    session.advance(0)
    channel, ts = session.sent(run_id)
    words = [f"maybe-{n} later" for n in range(12)]
    replies = [session.reply(channel, ts, text) for text in words]
    session.reply(channel, ts, "approve", user="someone-else")  # not the answerer: passed over, kept nowhere
    session.advance(5)

    refused = session.of_type(run_id, "reply_refused")
    # the ten refused first; they were recorded at one moment, so the history lists them in any order
    assert sorted(r["data"]["reply"]["id"] for r in refused) == replies[:10]
    assert all(r["data"]["reply"]["conversation"] == f"{owner}/{ts}" for r in refused)
    shown = json.dumps(session.history(run_id))
    assert not any(text.split()[0] in shown for text in words), "a refusal never keeps the reply's words"
    assert session.listed(run_id)["reply_refusals"] == 10  # type: ignore[index]

    told = session.told(channel, ts)
    assert len(told) == 3
    assert all(t.endswith(HOW_TO_ANSWER) for t in told)
    assert all(t.startswith("Your reply was not taken as an answer: for the verdict") for t in told)
    started = session.tellings(run_id, "telling_started")
    assert sorted(t["data"]["telling"] for t in started) == [1, 2, 3]  # at one moment, in any order
    assert [t["data"]["tool"] for t in started] == ["post_message"] * 3  # tell names no tool
    assert len(session.tellings(run_id, "telling_succeeded")) == 3
    assert session.tellings(run_id, "telling_failed") == []

    session.reply(channel, ts, "no")  # an 11th refusal: no trace, nobody told
    session.advance(10)  # read 2, at 15 s
    assert session.reads(owner) == 2
    assert len(session.of_type(run_id, "reply_refused")) == 10
    assert len(session.told(channel, ts)) == 3
    assert session.get_run(run_id)["status"] == "started"

    session.reply(channel, ts, "Approve! Ship it.")
    session.advance(20)  # read 3, at 35 s
    done = session.get_run(run_id)
    assert (done["status"], done["output"]) == ("succeeded", {"verdict": "approve", "note": "Ship it."})


def test_a_reply_the_schema_refuses_is_told_its_problem_first(session: Session) -> None:
    owner = channel_of("schema")
    run_id = session.run("approve-fast", owner)
    session.advance(0)
    channel, ts = session.sent(run_id)
    session.reply(channel, ts, "revise " + "x" * 2001)  # the note takes at most 2000 characters
    session.advance(5)
    refused = session.of_type(run_id, "reply_refused")
    assert len(refused) == 1 and refused[0]["data"]["problems"] == ["/answer/note"]
    (told,) = session.told(channel, ts)
    assert told.startswith("Your reply was not taken as an answer: for the note, ")
    assert "2000" in told.split(HOW_TO_ANSWER)[0] and told.endswith(HOW_TO_ANSWER)
    assert "xxxx" not in told


def test_a_telling_that_fails_is_recorded_and_the_refusal_stands(session: Session) -> None:
    owner = channel_of("telling-fails")
    run_id = session.run("approve-fast", owner)
    session.advance(0)
    channel, ts = session.sent(run_id)
    refused_ts = session.reply(channel, ts, "later")
    session.fail_reads("post_message", 1)
    session.advance(5)
    assert [r["data"]["reply"]["id"] for r in session.of_type(run_id, "reply_refused")] == [refused_ts]
    assert len(session.tellings(run_id, "telling_started")) == 1
    (failed,) = session.tellings(run_id, "telling_failed")
    assert (failed["data"]["because"], failed["data"]["tool"]) == ("tool_error", "post_message")
    assert session.tellings(run_id, "telling_succeeded") == [] and session.told(channel, ts) == []
    assert session.listed(run_id)["reply_refusals"] == 1  # type: ignore[index]


def test_the_playbooks_own_tellings_are_not_counted_as_replies(session: Session) -> None:
    """A telling is a message the playbook sent in the conversation: "passed over and not counted, so a
    read that finds nothing else has found nothing and records no replies_read" (``replies.read.each``)."""
    owner = channel_of("own")
    run_id = session.run("approve-fast", owner)
    session.advance(0)
    channel, ts = session.sent(run_id)
    session.reply(channel, ts, "later")
    session.advance(5)  # read 1: the reply, refused and told
    assert len(session.told(channel, ts)) == 1
    session.advance(10)  # read 2, at 15 s, lists only the telling, which the playbook sent
    assert session.reads(owner) == 2
    read = session.playbook_events("replies_read", f"{owner}/{ts}")
    assert [(e["data"]["read"], e["data"]["messages"]) for e in read] == [(1, 1)]


def test_a_read_over_64_kib_fails_and_the_reading_goes_on(session: Session) -> None:
    owner = channel_of("huge")
    run_id = session.run("approve-fast", owner)
    session.advance(0)
    channel, ts = session.sent(run_id)
    for _ in range(9):
        session.reply(channel, ts, "w" * 7500, user="someone-else")  # 9 × 7,500 bytes and more: past 64 KiB
    session.advance(5)
    failed = session.playbook_events("reading_failed", f"{owner}/{ts}")
    assert [e["data"]["read"] for e in failed] == [1]
    assert "64 KiB" in failed[0]["data"]["message"]
    session.advance(10)  # read 2, at 15 s
    assert [e["data"]["read"] for e in session.playbook_events("reading_failed", f"{owner}/{ts}")] == [1, 2]
    assert session.reads(owner) == 2


def test_a_reply_over_8_kib_is_refused_with_the_limit_in_the_telling(session: Session) -> None:
    owner = channel_of("large")
    run_id = session.run("approve-fast", owner)
    session.advance(0)
    channel, ts = session.sent(run_id)
    # 8 KiB exactly is read (and its note refused by the schema); 8,194 bytes in 4,101 characters is not
    exactly = session.reply(channel, ts, "approve " + "y" * (8 * 1024 - len("approve ")))
    large = session.reply(channel, ts, "approve " + "é" * 4093)
    session.advance(5)
    refused = {r["data"]["reply"]["id"]: r["data"]["why"] for r in session.of_type(run_id, "reply_refused")}
    assert refused == {exactly: "unreadable", large: "too_long"}
    told = session.told(channel, ts)
    assert len(told) == 2 and all(t.endswith(HOW_TO_ANSWER) for t in told)
    assert sum("at most 8 KiB (8,192 bytes)" in t for t in told) == 1
    assert session.get_run(run_id)["status"] == "started"

    session.reply(channel, ts, "approve " + "y" * 1990)  # within every bound: taken
    session.advance(10)  # read 2, at 15 s
    assert session.get_run(run_id)["output"] == {"verdict": "approve", "note": "y" * 1990}


def test_the_events_of_one_read_list_in_the_order_they_happened(session: Session) -> None:
    owner = channel_of("order")
    run_id = session.run("approve-fast", owner)
    session.advance(0)
    channel, ts = session.sent(run_id)
    replies = [session.reply(channel, ts, f"maybe-{n}") for n in range(10)]
    session.advance(5)
    refused = [r["data"]["reply"]["id"] for r in session.of_type(run_id, "reply_refused")]
    tellings = [
        (e["type"], e["data"]["telling"])
        for e in session.playbook_events("telling_started") + session.playbook_events("telling_succeeded")
        if e["data"].get("run_id") == run_id
    ]
    since = session.get_run(run_id)["started_at"]  # the module's server holds other tests' events too
    listed = session.http.get("/events", params={"order": "asc", "limit": 100, "since": since}).json()[
        "events"
    ]
    in_order = [
        (e["type"], e["data"]["telling"])
        for e in listed
        if e["type"].startswith("telling_") and e["data"].get("run_id") == run_id
    ]
    assert len(tellings) == 6
    assert (refused, in_order) == (
        replies,
        [(kind, n) for n in (1, 2, 3) for kind in ("telling_started", "telling_succeeded")],
    )


# --- a reply racing an inbox answer -------------------------------------------------------------------------


def test_an_inbox_answer_before_the_read_wins_and_the_reply_loses_quietly(session: Session) -> None:
    owner = channel_of("race-inbox")
    run_id = session.run("approve-fast", owner)
    session.advance(0)
    channel, ts = session.sent(run_id)
    session.reply(channel, ts, "revise name the role")
    answered = session.http.post(f"/runs/{run_id}/answer", json={"answer": {"verdict": "approve"}})
    assert answered.status_code == 200, answered.text
    session.advance(5)

    done = session.get_run(run_id)
    assert (done["status"], done["output"]) == ("succeeded", {"verdict": "approve"})
    facts = session.of_type(run_id, "request_answered")
    assert len(facts) == 1 and "reply" not in facts[0]["data"]
    assert facts[0]["data"]["answered_by"] == "dev"
    types = [e["type"] for e in session.history(run_id)]
    assert types.count("run_succeeded") == 1 and "reply_refused" not in types
    assert session.told(channel, ts) == []


def test_a_reply_read_first_wins_and_the_inbox_answer_is_a_conflict(session: Session) -> None:
    owner = channel_of("race-reply")
    run_id = session.run("approve-fast", owner)
    session.advance(0)
    channel, ts = session.sent(run_id)
    reply_ts = session.reply(channel, ts, "revise name the role")
    session.advance(5)
    other = session.http.post(f"/runs/{run_id}/answer", json={"answer": {"verdict": "approve"}})
    assert other.status_code == 409, other.text
    same = session.http.post(
        f"/runs/{run_id}/answer", json={"answer": {"verdict": "revise", "note": "name the role"}}
    )
    assert same.status_code == 200 and same.json()["answered_by"] == "playbook:campaigns", same.text
    session.advance(60)

    done = session.get_run(run_id)
    assert (done["status"], done["output"]) == ("succeeded", {"verdict": "revise", "note": "name the role"})
    facts = session.of_type(run_id, "request_answered")
    assert len(facts) == 1 and facts[0]["data"]["reply"]["id"] == reply_ts
    assert [e["type"] for e in session.history(run_id)].count("run_succeeded") == 1


# --- failed reads -------------------------------------------------------------------------------------------


def test_a_failed_read_is_recorded_and_the_reading_goes_on(session: Session) -> None:
    owner = channel_of("failing")
    run_id = session.run("approve-fast", owner)
    session.advance(0)
    channel, ts = session.sent(run_id)
    conversation = f"{owner}/{ts}"
    session.reply(channel, ts, "approve")
    session.fail_reads("thread_replies", 1, mode="server_error")
    session.advance(5)
    session.fail_reads("thread_replies", 1000)
    session.advance(30)  # reads 2 and 3, at 15 and 35 s
    failed = session.playbook_events("reading_failed", conversation)
    assert [(e["data"]["read"], e["data"]["because"]) for e in failed] == [
        (1, "server_failure"),
        (2, "tool_error"),
        (3, "tool_error"),
    ]
    assert failed[0]["data"]["tool"] == "thread_replies"
    assert session.get_run(run_id)["status"] == "started"

    session.chat_http.delete("/api/failures")
    session.advance(40)  # read 4, at 75 s
    done = session.get_run(run_id)
    assert (done["status"], done["output"]) == ("succeeded", {"verdict": "approve"})
    assert [e["data"]["read"] for e in session.playbook_events("replies_read", conversation)] == [4]
    assert len(session.playbook_events("reading_failed", conversation)) == 3


def test_a_read_answered_with_retry_after_waits_as_asked(session: Session) -> None:
    owner = channel_of("retry-after")
    run_id = session.run("approve-fast", owner)
    session.advance(0)
    _, ts = session.sent(run_id)
    conversation = f"{owner}/{ts}"
    session.fail_reads("thread_replies", 1, mode="retry_after", seconds=120)
    session.advance(5)
    failed = session.playbook_events("reading_failed", conversation)
    assert [(e["data"]["read"], e["data"].get("retry_after_ms")) for e in failed] == [(1, 120_000)]
    assert session.reads(owner) == 0  # refused before the tool ran
    session.advance(119)  # 124 s: not yet
    assert session.reads(owner) == 0
    session.advance(1)  # 125 s: the second read
    assert session.reads(owner) == 1
