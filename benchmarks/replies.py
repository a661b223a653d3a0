"""Figures of answering by reply (issue 6; ``interaction-format.md``, "Answering by reply", "Bounds").

Both deliver the spec's chat example (``examples/definitions/approve-draft-in-chat.md``) to the demo
chat's tools (``parley.demo.server``) under a manual clock, on the local runtime: the whole of it
(``parley.local.server.running``: the same handlers, state machine and scheduler port as on AWS) for
the calls, and its run service, scheduler port and timer handler over moto for the reads per hour.
The tools are called in this process, without the MCP transport (:class:`InProcessTools`): an exchange
over streamable HTTP costs about 0.2 s here, and two days of reads are about 600 of them. The calls are
counted all the same. What a read bills on AWS is measured apart (``benchmarks.timer_read``: the timer
function's own process reading over MCP, its CPU time and peak memory), except what it waits for, which
is counted there and priced at assumed round-trip times (:func:`read_wait_seconds`); see
:func:`billed_tool_work_seconds`.

- :func:`reads_per_hour`: the timer's ``read`` works over the first hour of one conversation, with 1
  and with 100 open requests in it (the example read by channel, so that requests to one person share
  a conversation). Reading is per conversation, so the two figures must be equal.
- :func:`calls_of_a_reply_answer`: the AWS calls, the tool calls and the list-price cost of one request
  answered by reply after two days (the spec's example as written: ``wait: PT1M``, ``expires: P2D``;
  the reply comes 10 minutes before the expiry and is taken at the next read). Each call of the
  scheduler port is counted as what the AWS adapter (``parley.aws.eventbridge``) makes of it:
  work due at once is an asynchronous Lambda invocation, work due within 15 minutes an SQS message with
  a per-message delay (so every read is one SendMessage and one Lambda invocation through the queue's
  event source), and later work an EventBridge schedule (the expiry, deleted once answered).
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import math
import textwrap
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Final

from benchmarks.runs import ASSUMED_BILLED_SECONDS, PRICES, Tally
from benchmarks.timer_read import TimerRead
from parley.aws.eventbridge import AT_ONCE, QUEUE_DELAY_MAX

ROOT = Path(__file__).resolve().parent.parent
CHAT_EXAMPLE = (ROOT / "examples" / "definitions" / "approve-draft-in-chat.md").read_text(encoding="utf-8")
#: The example read by channel (``channel_messages``; the conversation is the channel): requests to one
#: person share one conversation. No ``wait``: the cadence itself.
BY_CHANNEL = (
    CHAT_EXAMPLE.replace("  wait: PT1M\n", "")
    .replace("  conversation: '{{ sent.conversation }}/{{ sent.id }}'\n", "")
    .replace("  tool: thread_replies\n", "  tool: channel_messages\n")
    .replace("    ts: '{{ sent.id }}'\n", "")
)
BASE = "/v1/orgs/acme/playbooks/campaigns"
HEADERS = {"Authorization": "Bearer dev-token", "Content-Type": "application/json"}
OPERATOR = """
principals:
  - { id: dev, token: dev-token, grants: [{ org: acme, playbook: campaigns, role: write }] }
tool_servers:
  - name: chat
    url: http://127.0.0.1:9/mcp
    orgs: [acme]
    playbooks: [campaigns]
    allowed: [post_message, thread_replies, channel_messages]
limits: { interaction_open_requests: 1000 }
"""
DRAFT = "Spring sale: 20% off."
HOUR: Final = timedelta(hours=1)
TWO_DAYS: Final = timedelta(days=2)
#: When the owner replies: 10 minutes before the request expires (``expires: P2D``).
REPLY_AT: Final = TWO_DAYS - timedelta(minutes=10)

#: SQS standard queue, us-east-1 (2026): a request (each 64 KiB chunk of one).
SQS_REQUEST: Final = 0.40 / 1e6
#: Billed requests of one SQS message through a Lambda event source: SendMessage, the ReceiveMessage that
#: gets it and the DeleteMessageBatch after the batch. The mapping's empty long polls are a fixed cost of
#: the queue (a few thousand requests an hour whatever the traffic), not of a request.
SQS_REQUESTS_PER_MESSAGE: Final = 3
#: Lambda gives a function one vCPU at 1,769 MB and a share in proportion below it (the Lambda guide,
#: "Configuring function memory"): CPU work takes 1769/memory times as long as on a whole vCPU.
VCPU_MB: Final = 1769
#: What a timer work that calls the tool server waits for, besides its own CPU, cannot be measured here,
#: where the tool server and AWS answer over the loopback; it is counted instead (``benchmarks.timer_read``
#: counts a read's connections and requests to the tool server and its AWS calls) and priced at these
#: assumed times. One round trip to a chat's MCP server over the internet, its own work included:
ASSUMED_TOOL_ROUND_TRIP_SECONDS: Final = 0.05
#: Opening a connection to it (each exchange opens one): TCP's handshake, then TLS 1.3's.
CONNECTION_ROUND_TRIPS: Final = 2
#: One AWS call within the region (DynamoDB, SQS).
ASSUMED_AWS_CALL_SECONDS: Final = 0.01
#: The requests of an exchange that discovers and lists before it calls (a delivery's attempt; every
#: read before issue 26's cut): ``server/discover``, ``tools/list``, ``tools/call``.
REQUESTS_OF_A_FULL_EXCHANGE: Final = 3


def read_wait_seconds(connections: int, tool_requests: int, aws_calls: int) -> float:
    """What a read waits for by the model above: its connections' handshakes and its requests to the tool
    server, a round trip each, and its AWS calls."""
    round_trips = connections * CONNECTION_ROUND_TRIPS + tool_requests
    return round_trips * ASSUMED_TOOL_ROUND_TRIP_SECONDS + aws_calls * ASSUMED_AWS_CALL_SECONDS


def billed_tool_work_seconds(cpu_seconds: float, memory_mb: int, wait_seconds: float) -> float:
    """What a timer work that calls the tool server bills: its CPU time (measured on a core of this
    machine, taken as one of Lambda's vCPUs) stretched to the function's share of a vCPU, plus what it
    waits for."""
    return cpu_seconds * max(1.0, VCPU_MB / memory_mb) + wait_seconds


@dataclass
class MeteredTally(Tally):
    """:class:`~benchmarks.runs.Tally`, metering ``BatchGetItem`` too (each item found: a read unit per
    4 KB, half one when not consistent), which a read calls for its open requests."""

    batch_read_units: float = 0.0

    def _meter(self, name: str, request: Mapping[str, Any], response: Mapping[str, Any]) -> None:
        super()._meter(name, request, response)
        if name != "batch_get_item":
            return
        for table, items in (response.get("Responses") or {}).items():
            consistent = (request.get("RequestItems") or {}).get(table, {}).get("ConsistentRead")
            for item in items:
                size = len(json.dumps(item, default=str))
                units = (1 if consistent else 0.5) * math.ceil(size / 4096)
                self.read_units += units
                self.batch_read_units += units


class InProcessTools:
    """The runtime's tool client, answering from the demo chat's own MCP tools in this process (the
    server's ``list_tools`` and ``call_tool``), without the transport; ``calls`` counts each tool call."""

    def __init__(self, server: Any) -> None:
        self._server = server
        self.calls: Counter[str] = Counter()
        self.on = False

    def list_tools(self, address: Any) -> list[Any]:
        from parley.ports.tools import ListedTool

        listed = asyncio.run(self._server.list_tools())
        return [
            ListedTool(
                name=tool.name,
                description=tool.description or "",
                input_schema=dict(tool.input_schema),
                read_only=bool(tool.annotations and tool.annotations.read_only_hint),
            )
            for tool in listed
        ]

    def call_tool(
        self,
        address: Any,
        tool: str,
        arguments: Mapping[str, Any],
        *,
        before_call: Callable[[Any], None] | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> Any:
        from mcp.server.mcpserver.exceptions import ToolError
        from mcp.types import CallToolResult, TextContent

        from parley.ports.tools import ToolAnswer, ToolNotOffered
        from parley.tools.client import answer_of

        listed = {found.name: found for found in self.list_tools(address)}
        if tool not in listed:
            raise ToolNotOffered("tool_not_listed", f"The server {address.name} does not list {tool}.")
        if before_call is not None:
            before_call(listed[tool])
        if self.on:
            self.calls[tool] += 1
        try:
            result = asyncio.run(self._server.call_tool(tool, dict(arguments)))
        except ToolError as error:
            result = CallToolResult(content=[TextContent(type="text", text=str(error))], is_error=True)
        shown = result.model_dump(mode="json", by_alias=True, exclude_none=True)
        whole = {key: shown[key] for key in ("content", "structuredContent", "isError") if key in shown}
        whole.setdefault("isError", bool(result.is_error))
        answer, text = answer_of(result.structured_content, whole.get("content") or [])
        return ToolAnswer(listed[tool], bool(result.is_error), answer, text, whole, 1, None)


@dataclass
class Counts:
    """What the local runtime did while :attr:`on`: invocations of each function, the timer's works and
    their outcomes, and the scheduler port's calls as the AWS adapter makes them."""

    invocations: Counter[str] = field(default_factory=Counter)
    works: Counter[str] = field(default_factory=Counter)
    outcomes: Counter[str] = field(default_factory=Counter)
    scheduled: Counter[str] = field(default_factory=Counter)
    on: bool = False


@dataclass
class Harness:
    server: Any
    chat: Any
    tools: InProcessTools
    http: Any
    tally: Tally
    counts: Counts = field(default_factory=Counts)

    @contextlib.contextmanager
    def counting(self) -> Iterator[Counts]:
        """Count what happens within, afresh (and nothing of the bench's own reads of runs)."""
        self.counts = Counts(on=True)
        self.tally.calls.clear()
        self.tally.write_units = self.tally.read_units = 0.0
        if isinstance(self.tally, MeteredTally):
            self.tally.batch_read_units = 0.0
        self.tools.calls.clear()
        self.tally.on = self.tools.on = True
        try:
            yield self.counts
        finally:
            self.counts.on = self.tally.on = self.tools.on = False

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """Within :meth:`counting`, leave out what happens here (the bench's own reads of runs)."""
        self.counts.on = self.tally.on = self.tools.on = False
        try:
            yield
        finally:
            self.counts.on = self.tally.on = self.tools.on = True

    def advance(self, seconds: float) -> None:
        moved = self.http.post(
            self.server.url + "/_local/clock/advance", json={"seconds": seconds}, headers=HEADERS
        )
        if moved.status_code != 200:
            raise RuntimeError(f"the clock did not advance: {moved.status_code} {moved.text}")

    def save(self, name: str, source: str) -> None:
        saved = self.http.post(f"{BASE}/definitions/interaction", json={"name": name, "source": source})
        if saved.status_code != 201:
            raise RuntimeError(f"the function was not saved: {saved.text}")

    def run(self, name: str, owner: str) -> str:
        """Start a run over HTTP (its delivery runs before the answer)."""
        started = self.http.post(
            f"{BASE}/definitions/interaction/{name}/run", json={"input": {"owner": owner, "draft": DRAFT}}
        )
        if started.status_code != 200 or started.json()["status"] != "started":
            raise RuntimeError(f"the run did not start: {started.text}")
        run_id: str = started.json()["run_id"]
        return run_id

    def status(self, run_id: str) -> str:
        status: str = self.http.get(f"{BASE}/runs/{run_id}").json()["status"]
        return status

    def sent(self, run_id: str) -> tuple[str, str]:
        events = self.http.get(f"{BASE}/runs/{run_id}/history", params={"limit": 100}).json()["events"]
        sent = next(e["data"]["sent"] for e in events if e["type"] == "delivery_succeeded")
        return str(sent["conversation"]), str(sent["id"])


@contextlib.contextmanager
def local_runtime() -> Iterator[Harness]:
    """The local runtime with the demo chat's tools, its work counted (see :class:`Counts`)."""
    import httpx

    import parley.local.aws as local_aws_module
    from parley.config import parse_operator_config
    from parley.demo.chat import Chat
    from parley.demo.failures import FailureSwitch
    from parley.demo.server import TOOLS, build_mcp_server
    from parley.local.server import ServeOptions, running

    original = local_aws_module.local_dynamodb_client
    tally: Tally | None = None

    def counted_client() -> Any:
        nonlocal tally
        tally = MeteredTally(original())
        return tally

    chat = Chat()
    tools = InProcessTools(build_mcp_server(chat, FailureSwitch(TOOLS)))
    local_aws_module.local_dynamodb_client = counted_client
    try:
        with (
            contextlib.redirect_stderr(io.StringIO()),  # the local server's request log
            running(
                ServeOptions(port=0, clock="manual"), parse_operator_config(OPERATOR, "bench", environ={})
            ) as server,
            httpx.Client(headers=HEADERS, base_url=server.url, timeout=120) as http,
        ):
            assert tally is not None
            server.runtime.tool_client = tools
            harness = Harness(server, chat, tools, http, tally)
            _count(harness)
            harness.save("approve-draft-in-chat", CHAT_EXAMPLE)
            yield harness
    finally:
        local_aws_module.local_dynamodb_client = original


def _count(harness: Harness) -> None:
    """Wrap the local functions and the scheduler port to count what they do."""
    server = harness.server
    functions, scheduler = server.functions, server.scheduler
    plain_handler, plain_schedule, plain_cancel = functions.handler, scheduler.schedule, scheduler.cancel

    def handler(name: str) -> Callable[[Any, Any], Any]:
        inner = plain_handler(name)

        def invoked(event: Any, context: Any) -> Any:
            result = inner(event, context)
            counts = harness.counts
            if counts.on:
                counts.invocations[name] += 1
                if name == "timer" and isinstance(event, Mapping):
                    work = str(event.get("work"))
                    counts.works[work] += 1
                    if isinstance(result, Mapping):
                        counts.outcomes[f"{work}: {result.get('outcome')}"] += 1
            return result

        return invoked

    queued: set[str] = set()

    def schedule(name: str, at: datetime, work: Mapping[str, Any]) -> None:
        counts = harness.counts
        delay = at - server.clock.now()
        if AT_ONCE < delay <= QUEUE_DELAY_MAX:
            queued.add(name)
        if counts.on:
            if delay <= AT_ONCE:
                counts.scheduled["lambda_invoke"] += 1
            elif delay <= QUEUE_DELAY_MAX:
                counts.scheduled["sqs_message"] += 1
            else:
                counts.scheduled["schedule_created"] += 1
        plain_schedule(name, at, work)

    def cancel(name: str) -> None:
        # On AWS, work in the timer queue cannot be taken back: the adapter's DeleteSchedule finds no
        # schedule, and the message fires all the same (its work finds nothing to do). So it does here.
        if harness.counts.on:
            harness.counts.scheduled["schedule_deleted"] += 1
        if name not in queued:
            plain_cancel(name)

    functions.handler = handler
    scheduler.schedule = schedule
    scheduler.cancel = cancel


# --- reads per hour of one conversation ------------------------------------------------------------------


@dataclass(frozen=True)
class HourOfReads:
    """One conversation's first hour: the timer's ``read`` works, and what they called."""

    open_requests: int
    reads: int
    tool_calls: int
    dynamodb_calls: int


def reads_per_hour(sizes: tuple[int, ...] = (1, 100)) -> list[HourOfReads]:
    """For each size, the timer's ``read`` works over the first hour of one conversation (a channel of
    its own) with that many open requests in it, all asked at one moment.

    The runtime is the local one without its HTTP front and state machine (``park`` needs no
    execution to read replies): the run service over moto's DynamoDB, the local scheduler port stepped
    by the manual clock as ``POST /_local/clock/advance`` steps it, and the timer function's handler."""
    import os

    from moto import mock_aws

    from benchmarks.timer_read import QuietWaits
    from parley.clock import ManualClock
    from parley.config import parse_operator_config
    from parley.definitions.model import PlaybookRef
    from parley.definitions.store import DynamoDefinitionStore
    from parley.demo.chat import Chat
    from parley.demo.failures import FailureSwitch
    from parley.demo.server import TOOLS, build_mcp_server
    from parley.local.aws import create_table, local_dynamodb_client
    from parley.local.clock_routes import advance
    from parley.local.functions import project_functions
    from parley.local.scheduler import LocalScheduler
    from parley.ports.runtime import Runtime
    from parley.runs.service import run_service

    os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "WARNING")
    playbook = PlaybookRef("acme", "campaigns")
    figures = []
    with mock_aws():
        tally = MeteredTally(local_dynamodb_client())
        table = create_table(tally.client, "parley-bench-replies")
        clock = ManualClock()
        chat = Chat()
        tools = InProcessTools(build_mcp_server(chat, FailureSwitch(TOOLS)))
        runtime = Runtime(
            definitions=DynamoDefinitionStore(tally, table),  # type: ignore[arg-type]
            clock=clock,
            operator=parse_operator_config(OPERATOR, "bench", environ={}),
            waits=QuietWaits(),
            tool_client=tools,
        )
        functions = project_functions(runtime)
        works: Counter[str] = Counter()

        def timer(work: Mapping[str, Any]) -> Any:
            works[str(work.get("work"))] += 1
            return functions.invoke("timer", work)

        scheduler = LocalScheduler(clock, timer)
        runtime.scheduler = scheduler
        service = run_service(runtime)
        runtime.definition_service().create_definition(
            playbook, "interaction", "approve-by-channel", BY_CHANNEL
        )
        for size in sizes:
            owner = f"owner-{size}"
            run_ids = [
                service.run_definition(
                    playbook,
                    "interaction",
                    "approve-by-channel",
                    input_value={"owner": owner, "draft": DRAFT},
                    run_id=None,
                    started_by="dev",
                ).run_id
                for _ in range(size)
            ]
            advance(clock, 0, [scheduler])  # the deliveries, at once
            if works["deliver"] != size or len(chat.messages(owner)) != size:
                raise RuntimeError(f"the {size} requests were not delivered to {owner}")
            works.clear()
            tools.calls.clear()
            tally.calls.clear()
            tally.on = tools.on = True
            advance(clock, HOUR.total_seconds(), [scheduler])
            tally.on = tools.on = False
            figures.append(
                HourOfReads(size, works["read"], sum(tools.calls.values()), sum(tally.calls.values()))
            )
            if tools.calls["channel_messages"] != works["read"]:
                raise RuntimeError(f"not every read called the chat: {dict(tools.calls)}")
            if size != sizes[-1]:  # (cancelling 100 runs on moto takes long: the last are left open)
                for run_id in run_ids:
                    service.cancel_run(playbook, run_id, reason=None, cancelled_by="dev")
                advance(clock, 600, [scheduler])  # the next read finds nothing open: the reading stops
                works.clear()
    return figures


# --- the calls of a request answered by reply after two days ---------------------------------------------


@dataclass
class ReplyAnswerCalls:
    api_requests: int
    invocations: dict[str, int]
    works: dict[str, int]
    outcomes: dict[str, int]
    scheduled: dict[str, int]
    state_transitions: int
    dynamodb_calls: dict[str, int]
    dynamodb_units: tuple[float, float]
    #: The read units of the reads' ``BatchGetItem`` of their open requests.
    batch_read_units: float
    tool_calls: dict[str, int]
    #: The timer's works that call the tool server: the delivery and every read of an open conversation.
    tool_works: int
    #: The timer function's own process, measured (``benchmarks.timer_read``).
    timer: TimerRead

    @property
    def read_wait(self) -> float:
        """What a quiet read waits for (:func:`read_wait_seconds` of what the timer's read made)."""
        timer = self.timer
        aws_calls = sum(timer.quiet_aws_calls.values())
        return read_wait_seconds(timer.quiet_tool_connections, timer.quiet_tool_requests, aws_calls)

    @property
    def cost(self) -> dict[str, float]:
        """The list price of the request, a read waiting :attr:`read_wait`."""
        return self.priced(self.read_wait)

    def priced(
        self, wait_seconds: float, *, cpu_seconds: float | None = None, read_units: float | None = None
    ) -> dict[str, float]:
        """The list price of the request when a work that calls the tool server waits ``wait_seconds``.

        Each such work bills :func:`billed_tool_work_seconds` of the median CPU time of a quiet read
        (the delivery, the read that takes the answer: one each, priced as a read; ``cpu_seconds``
        instead when given); every other invocation the flat
        :data:`~benchmarks.runs.ASSUMED_BILLED_SECONDS` at its function's memory. ``read_units``
        replaces the DynamoDB read units counted."""
        from parley.infrastructure.functions import function_named

        timer_mb = function_named("timer").memory_mb
        seconds = {name: count * ASSUMED_BILLED_SECONDS for name, count in self.invocations.items()}
        cpu = self.timer.quiet_cpu_median if cpu_seconds is None else cpu_seconds
        tool_seconds = billed_tool_work_seconds(cpu, timer_mb, wait_seconds)
        seconds["timer"] += self.tool_works * (tool_seconds - ASSUMED_BILLED_SECONDS)
        gb_seconds = sum(function_named(name).memory_mb / 1024 * s for name, s in seconds.items())
        writes, reads = self.dynamodb_units
        reads = reads if read_units is None else read_units
        return {
            "API Gateway requests": self.api_requests * PRICES["api_gateway_request"],
            "Lambda requests": sum(self.invocations.values()) * PRICES["lambda_request"],
            "Lambda duration (arm64)": gb_seconds * PRICES["lambda_gb_second_arm64"],
            "SQS requests": self.scheduled.get("sqs_message", 0) * SQS_REQUESTS_PER_MESSAGE * SQS_REQUEST,
            "Step Functions transitions": self.state_transitions * PRICES["state_transition"],
            "DynamoDB writes": writes * PRICES["dynamodb_write_unit"],
            "DynamoDB reads": reads * PRICES["dynamodb_read_unit"],
            "Scheduler invocations": 0 * PRICES["scheduler_invocation"],  # the expiry is deleted unfired
        }


def calls_of_a_reply_answer(timer: TimerRead | None = None) -> ReplyAnswerCalls:
    """Count one run of the spec's chat example from ``POST …/run`` until its reading stops: delivered
    at once, read on the cadence for two days, answered by a reply 10 minutes before it would expire,
    settled, and the read after the answer finding nothing open. Then price it, with the timer's own
    figures (``timer``, else measured now)."""
    from benchmarks.timer_read import measure as measure_timer
    from parley.ports.waiting import RunKey

    timer = timer or measure_timer()
    owner = "maria"
    with local_runtime() as harness, harness.counting() as counts:
        run_id = harness.run("approve-draft-in-chat", owner)
        with harness.paused():  # the bench's own reads of the run are not counted
            channel, ts = harness.sent(run_id)
        harness.advance(REPLY_AT.total_seconds())
        with harness.paused():
            if harness.status(run_id) != "started":
                raise RuntimeError("the request ended before the reply")
            harness.chat.post(channel, owner, "approve, looks good", ts)
        harness.advance(timedelta(minutes=10).total_seconds())
        with harness.paused():
            done = harness.http.get(f"{BASE}/runs/{run_id}").json()
            history = harness.server.executor.history(RunKey("acme", "campaigns", run_id))
        tally, tool_calls = harness.tally, dict(harness.tools.calls)
    if (done["status"], done.get("output")) != ("succeeded", {"verdict": "approve", "note": "looks good"}):
        raise RuntimeError(f"the reply did not answer the request: {json.dumps(done)}")
    if counts.outcomes["read: idle"] != 1:
        raise RuntimeError(f"the reading did not stop after the answer: {dict(counts.outcomes)}")
    transitions = sum(1 for e in history if e["type"].endswith("StateEntered"))
    api_requests = 1  # run_definition: the answer comes by reply
    return ReplyAnswerCalls(
        api_requests=api_requests,
        invocations={"api": api_requests, **dict(counts.invocations)},
        works=dict(counts.works),
        outcomes=dict(counts.outcomes),
        scheduled=dict(counts.scheduled),
        state_transitions=transitions,
        dynamodb_calls=dict(tally.calls),
        dynamodb_units=(tally.write_units, tally.read_units),
        batch_read_units=tally.batch_read_units if isinstance(tally, MeteredTally) else 0.0,
        tool_calls=tool_calls,
        tool_works=counts.works["deliver"] + counts.outcomes["read: read"] + counts.outcomes["read: failed"],
        timer=timer,
    )


def measure() -> tuple[list[HourOfReads], ReplyAnswerCalls]:
    """Reads per hour with 1 and 100 open requests (asserted equal), and the calls of a reply answer;
    the timer's own process is measured first, alone (its CPU time is the figure), then the other two
    run side by side, the first in a process of its own (each is mostly moto's work)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from benchmarks.timer_read import measure as measure_timer

    timer = measure_timer()
    with ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn")) as pool:
        hours = pool.submit(reads_per_hour)
        calls = calls_of_a_reply_answer(timer)
        figures = hours.result()
    if len({figure.reads for figure in figures}) != 1:
        raise AssertionError(f"reads per hour grow with the open requests: {figures}")
    return figures, calls


def report() -> None:
    """Print the figures (``make bench``)."""
    from parley.infrastructure.functions import function_named

    hours, calls = measure()
    print("Reads of one conversation in its first hour (the timer's read works; requests read by channel)")
    for hour in hours:
        print(
            f"  with {hour.open_requests:>3} open request{'s' if hour.open_requests > 1 else ' '}: "
            f"{hour.reads} reads, {hour.tool_calls} tool calls, {hour.dynamodb_calls:,} DynamoDB calls"
        )
    print("  (equal reads: reading is per conversation; each read gets every open request of it)")
    print()
    print(
        "One request answered by reply after two days (the spec's chat example: wait PT1M, expires P2D;\n"
        "the reply 10 minutes before the expiry; from POST …/run until the reading stops; local runtime,\n"
        "each scheduler call counted as the AWS adapter makes it)"
    )
    messages = calls.scheduled.get("sqs_message", 0)
    deleted = calls.scheduled.get("schedule_deleted", 0)
    rows = [
        ("API Gateway requests", f"{calls.api_requests}"),
        ("Lambda invocations", _listing(calls.invocations)),
        ("  the timer's works", _listing(calls.works)),
        ("  their outcomes", _listing(calls.outcomes)),
        ("  invoked at once (async Invoke)", f"{calls.scheduled.get('lambda_invoke', 0)}"),
        ("  through the timer queue (SQS messages)", f"{messages}"),
        ("SQS requests (send, receive, delete)", f"{messages * SQS_REQUESTS_PER_MESSAGE}"),
        (
            "EventBridge Scheduler",
            f"{calls.scheduled.get('schedule_created', 0)} schedule created (the expiry), "
            f"{deleted} DeleteSchedule calls, 0 fired",
        ),
        ("Step Functions state transitions", f"{calls.state_transitions}"),
        ("DynamoDB calls", _listing(calls.dynamodb_calls)),
        ("DynamoDB request units", f"{calls.dynamodb_units[0]:g} write, {calls.dynamodb_units[1]:g} read"),
        ("MCP tool calls", _listing(calls.tool_calls)),
    ]
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"  {name:<{width}}  {value}")
    total = sum(calls.cost.values()) * 1000
    print(f"  list price per 1,000 such requests (us-east-1): ${total:.2f}")
    for item, dollars in calls.cost.items():
        print(f"    {item:<28} ${dollars * 1000:.4f}")
    timer, memory = calls.timer, function_named("timer").memory_mb
    cpu, wait = timer.quiet_cpu_median, calls.read_wait
    billed = billed_tool_work_seconds(cpu, memory, wait)
    aws = timer.quiet_aws_calls
    connections, requests = timer.quiet_tool_connections, timer.quiet_tool_requests
    note = (
        f"(A timer work that calls the tool server bills {billed * 1000:.0f} ms at the timer's {memory} MB: "
        f"its CPU, {cpu * 1000:.0f} ms a read measured in the timer's own process (median of "
        f"{len(timer.quiet_reads())} reads, p90 {timer.quiet_cpu_p90 * 1000:.0f} ms; a core of this machine "
        f"taken as a vCPU), times {VCPU_MB}/{memory}, Lambda's share of a vCPU at that size; plus "
        f"{wait * 1000:.0f} ms waiting, which cannot be measured here (the tool server and AWS answer over "
        f"the loopback: {timer.quiet_wall_median * 1000:.0f} ms a read in all). It is counted and priced at "
        f"assumed times: a read opens {connections} connection{'s' if connections != 1 else ''} to the tool "
        f"server ({CONNECTION_ROUND_TRIPS} round trips each: TCP, TLS) and sends it {requests} request"
        f"{'s' if requests != 1 else ''}, at an assumed {ASSUMED_TOOL_ROUND_TRIP_SECONDS * 1000:.0f} ms a "
        f"round trip, and makes AWS calls, {_listing(aws)}, at an assumed "
        f"{ASSUMED_AWS_CALL_SECONDS * 1000:.0f} ms each. The timer's process peaks at "
        f"{timer.peak_rss_mb:.0f} MB resident. Other invocations: {ASSUMED_BILLED_SECONDS * 1000:.0f} ms "
        f"each. SQS: {SQS_REQUESTS_PER_MESSAGE} requests a message; the event source's empty polls are the "
        "queue's fixed cost, not a request's)"
    )
    print(textwrap.fill(note, width=104, initial_indent="  ", subsequent_indent="   "))
    full = read_wait_seconds(connections, REQUESTS_OF_A_FULL_EXCHANGE, sum(aws.values()))
    print(
        f"  a read that discovered and listed first ({REQUESTS_OF_A_FULL_EXCHANGE} requests) would wait "
        f"{full * 1000:.0f} ms: ${sum(calls.priced(full).values()) * 1000:.2f} per 1,000"
    )
    # What-if, for a timer whose quiet reads still read their requests (a BatchGetItem: none since the
    # conversation keeps its open requests exact and the oldest one's reading, issue 26): one AWS call,
    # its CPU in botocore and its read units less.
    batch_cpu = timer.quiet_aws_cpu("BatchGetItem")
    if batch_cpu:
        without = calls.priced(
            read_wait_seconds(connections, requests, sum(aws.values()) - 1),
            cpu_seconds=cpu - batch_cpu,
            read_units=calls.dynamodb_units[1] - calls.batch_read_units,
        )
        what_if = (
            f"a quiet read without its BatchGetItem ({batch_cpu * 1000:.1f} ms of botocore's CPU, an AWS "
            f"call, {calls.batch_read_units:g} read units in all) would give "
            f"${sum(without.values()) * 1000:.2f} per 1,000"
        )
        print(textwrap.fill(what_if, width=104, initial_indent="  ", subsequent_indent="   "))
    loopback = timer.quiet_wait_median
    waits = (loopback, 0.2, 0.3, 0.5)
    shown = ", ".join(f"{w * 1000:.0f} ms ${sum(calls.priced(w).values()) * 1000:.2f}" for w in waits)
    print(f"  the price per 1,000 by what a read waits for: {shown}")
    print(f"  ({loopback * 1000:.0f} ms: what a read waited for here, tool server and moto on the loopback)")


def _listing(counter: Mapping[str, int]) -> str:
    total = sum(counter.values())
    return f"{total} (" + ", ".join(f"{name} {count}" for name, count in sorted(counter.items())) + ")"


if __name__ == "__main__":
    report()
