"""Answering by reply, end to end in process (interaction-format.md, "Answering by reply", "`replies`"):
the spec's chat example delivered through the demo chat (a real MCP server on 127.0.0.1), replies posted
as the owner, reads on the cadence under the manual clock with an in-memory scheduler."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from parley.clock import ManualClock
from parley.config import parse_operator_config
from parley.definitions.model import PlaybookRef
from parley.definitions.store import DynamoDefinitionStore
from parley.demo.chat import BOT_USER
from parley.demo.server import DemoChat, DemoChatOptions, running
from parley.executions.entry import build_timer_handler
from parley.ports.runtime import Runtime
from parley.ports.tools import Bounds
from parley.ports.waiting import RunKey
from parley.runs.kinds import check_source
from parley.runs.model import Run
from parley.runs.service import RunService, run_service
from parley.tools.client import McpToolClient

PLAYBOOK = PlaybookRef("acme", "campaigns")
#: The spec's chat example ("Sending through a tool"), as examples/definitions keeps it.
CHAT_FUNCTION = (
    Path(__file__).resolve().parents[4] / "examples" / "definitions" / "approve-draft-in-chat.md"
).read_text(encoding="utf-8")
FAST = CHAT_FUNCTION.replace("  wait: PT1M\n", "")
CHANNEL = (
    FAST.replace("  conversation: '{{ sent.conversation }}/{{ sent.id }}'\n", "")
    .replace("  tool: thread_replies\n", "  tool: channel_messages\n")
    .replace("    ts: '{{ sent.id }}'\n", "")
)


@dataclass
class Waits:
    """Executions that only wait: ``succeed`` ends the wait (the ending is written before it)."""

    service: RunService | None = None
    ended: dict[str, Any] = field(default_factory=dict)
    #: Ending a wait fails this many times first (Step Functions unavailable).
    failures: int = 0

    def start(self, run: RunKey, *, timeout_seconds: int, number: int = 1) -> None:
        assert self.service is not None
        self.service.park_request(run, f"token-{run.run_id}")

    def succeed(self, token: str, output: Any) -> None:
        if self.failures:
            self.failures -= 1
            raise RuntimeError("Step Functions is unavailable")
        self.ended.setdefault(token, output.get("ending"))


@dataclass
class Calls:
    """The DynamoDB client, noting each call (its name and arguments) while ``on``."""

    client: Any
    made: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    on: bool = False
    #: Calls of these names fail once each (then are removed).
    failing: set[str] = field(default_factory=set)

    def __getattr__(self, name: str) -> Any:
        live = getattr(self.client, name)

        def call(*args: Any, **kwargs: Any) -> Any:
            if self.on:
                self.made.append((name, kwargs))
            if name in self.failing:
                self.failing.discard(name)
                raise RuntimeError(f"{name} failed")
            return live(*args, **kwargs)

        return call


@dataclass
class Scheduler:
    schedules: dict[str, tuple[datetime, dict[str, Any]]] = field(default_factory=dict)
    handler: Any = None
    fired: list[dict[str, Any]] = field(default_factory=list)

    def schedule(self, name: str, at: datetime, work: Any) -> None:
        self.schedules.setdefault(name, (at, dict(work)))

    def cancel(self, name: str) -> None:
        self.schedules.pop(name, None)


class Harness:
    def __init__(
        self, service: RunService, clock: ManualClock, scheduler: Scheduler, chat: DemoChat, calls: Calls
    ) -> None:
        self.service, self.clock, self.scheduler, self.chat = service, clock, scheduler, chat
        self.calls = calls
        self.waits = Waits()
        self.start = clock.now()

    def run(self, name: str, owner: str = "maria", draft: str = "the brief") -> Run:
        return self.service.run_definition(
            PLAYBOOK,
            "interaction",
            name,
            input_value={"owner": owner, "draft": draft},
            run_id=None,
            started_by="dev",
        )

    def advance(self, seconds: float) -> None:
        end = self.clock.now() + timedelta(seconds=seconds)
        while True:
            due = sorted((at, name) for name, (at, _) in self.scheduler.schedules.items() if at <= end)
            if not due:
                break
            at, name = due[0]
            if at > self.clock.now():
                self.clock.advance((at - self.clock.now()).total_seconds())
            work = self.scheduler.schedules.pop(name)[1]
            self.scheduler.fired.append({"at": self.clock.now(), **work})
            self.scheduler.handler(work, None)
        if end > self.clock.now():
            self.clock.advance((end - self.clock.now()).total_seconds())

    def reads(self) -> list[float]:
        return [(w["at"] - self.start).total_seconds() for w in self.scheduler.fired if w["work"] == "read"]

    def playbook_events(self, event_type: str) -> list[dict[str, Any]]:
        page = self.service.list_playbook_events(PLAYBOOK, event_type=event_type, order="asc", limit=100)
        return list(page.items)

    def history(self, run_id: str) -> list[str]:
        return [e["type"] for e in self.service.get_run_history(PLAYBOOK, run_id, limit=100).items]

    def thread_of(self, run_id: str) -> tuple[str, str]:
        sent = [
            e
            for e in self.service.get_run_history(PLAYBOOK, run_id).items
            if e["type"] == "delivery_succeeded"
        ]
        return sent[0]["data"]["sent"]["conversation"], sent[0]["data"]["sent"]["id"]


@pytest.fixture
def harness(dynamodb: tuple[Any, str], manual_clock: ManualClock) -> Iterator[Harness]:
    with running(DemoChatOptions(port=0)) as chat:
        plain, table = dynamodb
        client: Any = Calls(plain)
        operator = parse_operator_config(
            f"""
principals:
  - {{ id: dev, token: dev-token, grants: [{{ org: acme, playbook: campaigns, role: write }}] }}
tool_servers:
  - {{ name: chat, url: '{chat.mcp_url}', orgs: [acme] }}
""",
            "test",
            environ={},
        )
        waits, scheduler = Waits(), Scheduler()
        runtime = Runtime(
            definitions=DynamoDefinitionStore(client, table),
            clock=manual_clock,
            operator=operator,
            check_document=check_source,
            waits=waits,
            scheduler=scheduler,
            tool_client=McpToolClient(Bounds(open_seconds=3, list_seconds=3, respond_seconds=3)),
        )
        service = run_service(runtime)
        waits.service = service
        scheduler.handler = build_timer_handler(runtime)
        definitions = runtime.definition_service()
        definitions.create_definition(PLAYBOOK, "interaction", "approve-in-chat", CHAT_FUNCTION)
        definitions.create_definition(PLAYBOOK, "interaction", "approve-fast", FAST)
        definitions.create_definition(PLAYBOOK, "interaction", "approve-channel", CHANNEL)
        harness = Harness(service, manual_clock, scheduler, chat, client)
        harness.waits = waits
        yield harness


def test_a_reply_in_the_thread_answers_the_request(harness: Harness) -> None:
    run = harness.run("approve-fast")
    harness.advance(0)
    channel, ts = harness.thread_of(run.run_id)
    listed = harness.service.list_interactions(PLAYBOOK).items[0]
    assert listed["conversation"] == f"{channel}/{ts}" and listed["answerer"] == "maria"

    harness.chat.chat.post(channel, "maria", "Approve! Ship it.", ts)
    harness.advance(5)

    done = harness.service.get_run(PLAYBOOK, run.run_id)
    assert (done.status, done.output) == ("succeeded", {"verdict": "approve", "note": "Ship it."})
    answered = [
        e
        for e in harness.service.get_run_history(PLAYBOOK, run.run_id).items
        if e["type"] == "request_answered"
    ]
    assert answered[0]["data"]["answered_by"] == "playbook:campaigns"
    assert answered[0]["data"]["reply"]["id"]
    assert len(harness.playbook_events("replies_read")) == 1


def test_the_cadence_and_the_wait_floor(harness: Harness) -> None:
    fast = harness.run("approve-fast")
    harness.advance(0)
    harness.advance(915)
    # waits of 5, 10, 20 and 40 s, then a minute through the 18th read (at 915 s), then 5 minutes
    assert harness.reads() == [
        5,
        15,
        35,
        75,
        135,
        195,
        255,
        315,
        375,
        435,
        495,
        555,
        615,
        675,
        735,
        795,
        855,
        915,
    ]
    harness.service.cancel_run(PLAYBOOK, fast.run_id, reason=None, cancelled_by="dev")
    harness.advance(3600)
    assert len(harness.reads()) == 19  # the read after the cancel finds nothing open, and the reading stops

    harness.scheduler.fired.clear()
    harness.start = harness.clock.now()
    harness.run("approve-in-chat")
    harness.advance(0)
    harness.advance(300)
    assert harness.reads() == [60, 120, 180, 240, 300]  # never sooner than wait: PT1M


def test_a_reply_the_rule_cannot_read_is_refused_and_the_owner_told(harness: Harness) -> None:
    run = harness.run("approve-fast")
    harness.advance(0)
    channel, ts = harness.thread_of(run.run_id)
    harness.chat.chat.post(channel, "maria", "maybe later", ts)
    harness.chat.chat.post(channel, "someone-else", "approve", ts)
    harness.advance(5)

    assert harness.service.get_run(PLAYBOOK, run.run_id).status == "started"
    assert "reply_refused" in harness.history(run.run_id)
    refused = [
        e for e in harness.service.get_run_history(PLAYBOOK, run.run_id).items if e["type"] == "reply_refused"
    ]
    assert "maybe" not in str(refused)
    told = [m for m in harness.chat.chat.thread(channel, ts)[0] if m.user == BOT_USER and m.ts != ts]
    assert len(told) == 1 and "To answer, reply with one of approve, revise" in told[0].text
    assert [e["type"] for e in harness.playbook_events("telling_succeeded")] == ["telling_succeeded"]
    listed = harness.service.list_interactions(PLAYBOOK).items[0]
    assert listed["reply_refusals"] == 1
    harness.advance(10)  # read 2, at 15 s, lists the telling: the playbook's own message, not counted
    assert harness.reads() == [5, 15]
    assert len(harness.playbook_events("replies_read")) == 1

    harness.chat.chat.post(channel, "maria", "revise name the role", ts)
    harness.advance(20)  # read 3, at 35 s
    assert harness.reads() == [5, 15, 35]
    done = harness.service.get_run(PLAYBOOK, run.run_id)
    assert (done.status, done.output) == ("succeeded", {"verdict": "revise", "note": "name the role"})


def test_two_requests_in_one_conversation_share_one_reading_and_replies_go_to_their_thread(
    harness: Harness,
) -> None:
    first = harness.run("approve-channel", draft="first")
    harness.advance(2)
    second = harness.run("approve-channel", draft="second")
    harness.advance(0)
    _, first_ts = harness.thread_of(first.run_id)
    _, second_ts = harness.thread_of(second.run_id)
    listed = {i["run_id"]: i["conversation"] for i in harness.service.list_interactions(PLAYBOOK).items}
    assert listed == {first.run_id: "maria", second.run_id: "maria"}

    harness.advance(75 - 2)
    assert harness.reads() == [5, 15, 35, 75]  # one reading for both, from the first's join

    harness.chat.chat.post("maria", "maria", "approve", None)  # outside any thread, two open: refused
    harness.chat.chat.post("maria", "maria", "revise the second", second_ts)
    harness.advance(60)
    assert harness.service.get_run(PLAYBOOK, second.run_id).output == {
        "verdict": "revise",
        "note": "the second",
    }
    assert harness.service.get_run(PLAYBOOK, first.run_id).status == "started"
    assert "reply_refused" in harness.history(first.run_id)

    harness.chat.chat.post("maria", "maria", "approve", None)  # now one open request: it answers it
    harness.advance(60)
    assert harness.service.get_run(PLAYBOOK, first.run_id).output == {"verdict": "approve"}
    assert harness.chat.chat.thread("maria", first_ts)[0][0].ts == first_ts


def _read_work(harness: Harness) -> dict[str, Any]:
    return next(dict(w) for _, w in harness.scheduler.schedules.values() if w["work"] == "read")


def test_a_read_that_finds_nothing_new_writes_only_its_claim(harness: Harness) -> None:
    """Issue 26: a quiet read reads nothing of its conversation before claiming it (the claim returns it)
    and writes nothing but the claim; the next read goes to the scheduler."""
    harness.run("approve-fast")
    harness.advance(5)  # read 1 moves the cursor to the message the playbook sent (its own, not counted)
    work = _read_work(harness)
    assert work["read"] == 2
    harness.calls.on = True
    outcome = harness.scheduler.handler(work, None)
    harness.calls.on = False

    assert outcome["outcome"] == "read"
    names = [name for name, _ in harness.calls.made]
    writes = [(n, a) for n, a in harness.calls.made if n in ("put_item", "update_item", "delete_item")]
    assert [n for n in names if "write" in n] == []
    assert "get_item" not in names
    assert "batch_get_item" not in names  # nor any request: the oldest one's reading is kept (issue 26)
    (claim,) = writes
    assert claim[1]["ConditionExpression"] == "#reads = :previous"
    assert claim[1]["Key"]["sk"]["S"].startswith("CONV#")
    assert claim[1]["ExpressionAttributeValues"][":number"] == {"N": str(work["read"])}
    assert any(
        w["work"] == "read" and w["read"] == work["read"] + 1 for _, w in harness.scheduler.schedules.values()
    )


def test_a_read_fired_twice_is_made_once(harness: Harness) -> None:
    run = harness.run("approve-fast")
    harness.advance(0)
    channel, ts = harness.thread_of(run.run_id)
    work = _read_work(harness)
    harness.chat.chat.post(channel, "maria", "approve", ts)
    assert harness.scheduler.handler(work, None)["outcome"] == "read"
    harness.scheduler.schedules.clear()

    harness.calls.on = True
    again = harness.scheduler.handler(work, None)
    harness.calls.on = False

    assert again["outcome"] == "unchanged"
    assert harness.scheduler.schedules == {}  # no second next read: the reading does not fork
    assert [name for name, _ in harness.calls.made] == ["update_item"]  # the refused claim, nothing else
    assert harness.service.get_run(PLAYBOOK, run.run_id).output == {"verdict": "approve"}
    assert len(harness.playbook_events("replies_read")) == 1
    assert harness.history(run.run_id).count("request_answered") == 1


def test_a_read_of_no_conversation_is_unchanged_and_makes_nothing(harness: Harness) -> None:
    work = {
        "work": "read",
        "conversation": {"org": "acme", "playbook": "campaigns", "id": "0" * 32},
        "read": 1,
    }
    assert harness.scheduler.handler(work, None)["outcome"] == "unchanged"
    found = harness.calls.client.get_item(
        TableName=harness.service.store.table_name,
        Key={"pk": {"S": "PB#acme#campaigns"}, "sk": {"S": "CONV#" + "0" * 32}},
    )
    assert "Item" not in found
    assert harness.scheduler.schedules == {}


def test_a_read_that_cannot_queue_the_next_is_made_again_by_the_retry(harness: Harness) -> None:
    """The timer queue refuses the next read: the read gives its number back and fails, so the queue's
    retry of its work makes it again; the reading goes on and a later reply is taken."""
    run = harness.run("approve-fast")
    harness.advance(5)
    work = _read_work(harness)
    harness.scheduler.schedules.clear()
    plain = harness.scheduler.schedule

    def refusing(name: str, at: datetime, work: Any) -> None:
        raise RuntimeError("the timer queue is unavailable")

    harness.scheduler.schedule = refusing  # type: ignore[method-assign]
    with pytest.raises(RuntimeError):
        harness.scheduler.handler(work, None)
    harness.scheduler.schedule = plain  # type: ignore[method-assign]

    assert harness.scheduler.handler(work, None)["outcome"] == "read"  # the queue's retry
    channel, ts = harness.thread_of(run.run_id)
    harness.chat.chat.post(channel, "maria", "approve", ts)
    harness.advance(60)
    assert harness.service.get_run(PLAYBOOK, run.run_id).output == {"verdict": "approve"}


def test_a_read_that_fails_before_taking_anything_is_made_again_and_takes_once(harness: Harness) -> None:
    run = harness.run("approve-fast")
    harness.advance(5)
    channel, ts = harness.thread_of(run.run_id)
    harness.chat.chat.post(channel, "maria", "maybe later", ts)  # refused, and the owner told
    work = _read_work(harness)
    harness.scheduler.schedules.clear()
    harness.calls.failing.add("batch_get_item")  # the read of the open requests fails once
    with pytest.raises(RuntimeError):
        harness.scheduler.handler(work, None)
    assert harness.history(run.run_id).count("reply_refused") == 0

    assert harness.scheduler.handler(work, None)["outcome"] == "read"  # the queue's retry
    assert harness.scheduler.handler(work, None)["outcome"] == "unchanged"  # and a duplicate of it
    assert harness.history(run.run_id).count("reply_refused") == 1
    told = [m for m in harness.chat.chat.thread(channel, ts)[0] if m.user == BOT_USER and m.ts != ts]
    assert len(told) == 1
    assert [w["read"] for _, w in harness.scheduler.schedules.values() if w["work"] == "read"] == [
        work["read"] + 1
    ]


def test_an_answer_whose_wait_cannot_be_ended_still_leaves_the_reading_going(harness: Harness) -> None:
    """The answer is written, then ending its run's wait fails (the wait's timeout is the backstop): the
    reply is taken, and the conversation is read on for the other request in it."""
    first = harness.run("approve-channel", draft="first")
    harness.advance(2)
    second = harness.run("approve-channel", draft="second")
    harness.advance(3)  # read 1
    _, first_ts = harness.thread_of(first.run_id)
    harness.chat.chat.post("maria", "maria", "approve", first_ts)
    harness.waits.failures = 1
    harness.advance(10)  # read 2 takes the answer; its wait is not ended

    assert harness.service.get_run(PLAYBOOK, first.run_id).output == {"verdict": "approve"}
    assert harness.reads() == [5, 15]
    assert any(w["work"] == "read" and w["read"] == 3 for _, w in harness.scheduler.schedules.values())
    _, second_ts = harness.thread_of(second.run_id)
    harness.chat.chat.post("maria", "maria", "revise the second", second_ts)
    harness.advance(20)  # read 3
    assert harness.service.get_run(PLAYBOOK, second.run_id).output == {
        "verdict": "revise",
        "note": "the second",
    }
    assert harness.history(first.run_id).count("request_answered") == 1


def test_reads_and_tellings_open_with_the_version_the_server_spoke(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A delivery's attempt discovers and lists; a conversation's reads and tellings skip
    ``server/discover`` once the process knows the server's version (issue 26), and still list: the
    demo chat's listing says ``ttlMs: 0``."""
    import httpx2

    from parley.tools.client import forget_listings

    forget_listings()
    methods: list[str] = []
    send = httpx2.AsyncClient.send

    async def recorded(self: httpx2.AsyncClient, request: httpx2.Request, **options: Any) -> Any:
        methods.append(request.headers.get("mcp-method", "?"))
        return await send(self, request, **options)

    monkeypatch.setattr(httpx2.AsyncClient, "send", recorded)
    run = harness.run("approve-fast")
    harness.advance(0)
    assert methods == ["server/discover", "tools/list", "tools/call"]
    methods.clear()
    harness.advance(15)  # reads 1 and 2
    assert methods == ["server/discover", "tools/list", "tools/call", "tools/list", "tools/call"]

    channel, ts = harness.thread_of(run.run_id)
    harness.chat.chat.post(channel, "maria", "maybe later", ts)
    methods.clear()
    harness.advance(20)  # read 3 finds the reply, refuses it and tells the party
    assert harness.history(run.run_id).count("reply_refused") == 1
    assert methods == ["tools/list", "tools/call", "tools/list", "tools/call"]
    forget_listings()


def test_a_reading_tool_the_server_does_not_list_fails_each_read(harness: Harness) -> None:
    """Reads that skip ``server/discover`` still find a tool the server does not list, in the words a
    delivery's attempt gives, and the reading goes on."""
    from parley.tools.client import forget_listings

    forget_listings()
    gone = FAST.replace("  tool: thread_replies\n", "  tool: thread_replies_gone\n")
    harness.service.runtime.definition_service().create_definition(PLAYBOOK, "interaction", "gone", gone)
    harness.run("approve-fast")
    harness.advance(5)  # its first read: the process knows the server's version
    run = harness.run("gone")
    harness.advance(0)
    channel, ts = harness.thread_of(run.run_id)
    harness.chat.chat.post(channel, "maria", "approve", ts)
    harness.advance(15)  # reads 1 and 2 of the second conversation
    failed = [e["data"] for e in harness.playbook_events("reading_failed")]
    assert [f["because"] for f in failed] == ["tool_not_offered", "tool_not_offered"]
    assert all("thread_replies_gone" in f["message"] and "search" in f["message"] for f in failed)
    assert harness.service.get_run(PLAYBOOK, run.run_id).status == "started"
    forget_listings()


# --- the conversation's open requests, kept exact (issue 26) ------------------------------------------------


def _item(harness: Harness, sk: str) -> dict[str, Any]:
    store = harness.service.store
    key = {"pk": {"S": "PB#acme#campaigns"}, "sk": {"S": sk}}
    found: dict[str, Any] = harness.calls.client.get_item(TableName=store.table_name, Key=key)["Item"]
    return found


def _conversation_of(harness: Harness, run_id: str) -> tuple[str, dict[str, Any]]:
    joined = _item(harness, f"REQ#{run_id}")["conversation_id"]["S"]
    return joined, _item(harness, f"CONV#{joined}")


def _open_runs(conversation: dict[str, Any]) -> set[str]:
    return set(conversation.get("open_runs", {}).get("SS", []))


def _end_by(harness: Harness, how: str, run_id: str) -> None:
    service = harness.service
    if how == "inbox answer":
        service.answer_interaction(
            PLAYBOOK, run_id, {"verdict": "approve"}, claimed_for=None, answered_by="dev"
        )
    elif how == "cancel":
        service.cancel_run(PLAYBOOK, run_id, reason=None, cancelled_by="dev")
    elif how == "expiry":
        request = service.store.get_request(PLAYBOOK, run_id)
        assert request is not None
        harness.clock.advance(
            (datetime.fromisoformat(request.expires_at) - harness.clock.now()).total_seconds() + 1
        )
        harness.scheduler.handler(
            {"work": "expire", "run": RunKey("acme", "campaigns", run_id).as_json()}, None
        )
    else:
        channel, ts = harness.thread_of(run_id)
        harness.chat.chat.post(channel, "maria", "approve", ts)
        name = next(n for n, (_, w) in harness.scheduler.schedules.items() if w["work"] == "read")
        harness.scheduler.handler(harness.scheduler.schedules.pop(name)[1], None)


@pytest.mark.parametrize("how", ["inbox answer", "cancel", "expiry", "reply"])
def test_every_ending_takes_the_request_out_of_its_conversation_in_its_own_write(
    harness: Harness, how: str
) -> None:
    """The join names the conversation on the request, in one transaction with the conversation's
    ``open_runs``; each ending takes it out again in its own, so the read after it stops without reading
    any request."""
    run = harness.run("approve-fast")
    harness.advance(5)  # delivered, joined, read 1 (which keeps the oldest request's reading)
    _, before = _conversation_of(harness, run.run_id)
    assert _open_runs(before) == {run.run_id} and "reader" in before

    _end_by(harness, how, run.run_id)

    assert harness.service.get_run(PLAYBOOK, run.run_id).status != "started"
    _, after = _conversation_of(harness, run.run_id)
    assert _open_runs(after) == set()
    assert int(after["changes"]["N"]) == int(before["changes"]["N"]) + 1
    work = next((w for _, w in harness.scheduler.schedules.values() if w["work"] == "read"), None)
    if work is not None:
        harness.calls.on = True
        assert harness.scheduler.handler(work, None)["outcome"] == "idle"
        harness.calls.on = False
        assert [name for name, _ in harness.calls.made] == ["update_item"]  # its claim, no request read


def test_a_quiet_read_reads_no_request_and_a_join_makes_the_next_read_them(harness: Harness) -> None:
    first = harness.run("approve-channel", draft="first")
    harness.advance(5)  # read 1 reads the requests and keeps the oldest's reading
    harness.calls.on = True
    harness.advance(10)  # read 2: nothing new
    harness.calls.on = False
    assert "batch_get_item" not in [name for name, _ in harness.calls.made]

    second = harness.run("approve-channel", draft="second")
    harness.advance(0)  # delivered and joined: the kept reading no longer holds
    harness.calls.made.clear()
    harness.calls.on = True
    harness.advance(20)  # read 3 reads the requests again
    harness.calls.on = False
    assert [name for name, _ in harness.calls.made].count("batch_get_item") == 1
    _, conversation = _conversation_of(harness, second.run_id)
    assert _open_runs(conversation) == {first.run_id, second.run_id}
    assert json.loads(conversation["reader"]["S"])["run_id"] == first.run_id  # the oldest's


def test_an_ending_that_did_not_know_the_join_is_written_again_with_the_conversation(
    harness: Harness,
) -> None:
    """An ending is first written for a request that joined no conversation (nothing is read before an
    inbox answer); the request's condition refuses it once it has joined one, and the ending is written
    again, with the conversation's update in the same transaction."""
    run = harness.run("approve-fast")
    harness.advance(5)
    harness.calls.on = True
    _end_by(harness, "inbox answer", run.run_id)
    harness.calls.on = False

    transactions = [a["TransactItems"] for n, a in harness.calls.made if n == "transact_write_items"]
    assert len(transactions) == 2
    assert "attribute_not_exists(#conversation_id)" in transactions[0][0]["Update"]["ConditionExpression"]
    assert transactions[1][-1]["Update"]["Key"]["sk"]["S"].startswith("CONV#")


def test_a_join_after_the_request_ended_adds_nothing_and_starts_no_reading(harness: Harness) -> None:
    from parley.interaction.replies.conversations import ConversationRef, ConversationStore

    run = harness.run("approve-fast")
    harness.service.answer_interaction(
        PLAYBOOK, run.run_id, {"verdict": "approve"}, claimed_for=None, answered_by="dev"
    )
    store = ConversationStore(harness.calls.client, harness.service.store.table_name)
    ref = ConversationRef.of("acme", "campaigns", "thread_replies", "C1/1")

    joined = store.join(PLAYBOOK, ref, "thread_replies", "C1/1", run.run_id, "1", restart=True)

    assert joined is False and store.get(ref) is None


def test_a_conversation_kept_before_its_open_requests_were_exact_drops_the_ended_ones(
    harness: Harness,
) -> None:
    """A conversation item written before the joins and endings kept ``open_runs`` exact lists a run
    that ended, and keeps no reading: its next read reads the requests, drops the ended one, keeps the
    open one's reading, and the reads after it read no request."""
    run = harness.run("approve-fast")
    harness.advance(5)
    joined, _ = _conversation_of(harness, run.run_id)
    ended = "0f0e0d0c-0b0a-4908-8706-050403020100"
    harness.calls.client.update_item(
        TableName=harness.service.store.table_name,
        Key={"pk": {"S": "PB#acme#campaigns"}, "sk": {"S": f"CONV#{joined}"}},
        UpdateExpression="ADD #open :ended REMOVE #reader, #changes",
        ExpressionAttributeNames={"#open": "open_runs", "#reader": "reader", "#changes": "changes"},
        ExpressionAttributeValues={":ended": {"SS": [ended]}},
    )

    harness.advance(10)  # read 2

    _, repaired = _conversation_of(harness, run.run_id)
    assert _open_runs(repaired) == {run.run_id}
    assert json.loads(repaired["reader"]["S"])["run_id"] == run.run_id
    harness.calls.on = True
    harness.advance(20)  # read 3
    harness.calls.on = False
    assert "batch_get_item" not in [name for name, _ in harness.calls.made]
    channel, ts = harness.thread_of(run.run_id)
    harness.chat.chat.post(channel, "maria", "approve", ts)
    harness.advance(40)
    assert harness.service.get_run(PLAYBOOK, run.run_id).output == {"verdict": "approve"}
