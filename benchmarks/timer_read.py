"""What a timer invocation that reads a conversation takes: its peak memory and its own time (issue 26).

The timer function's memory (``parley.infrastructure.functions``) and the billed time of a read in the
reply figures (``benchmarks.replies``) are measured here, not assumed. A process of its own plays the
timer function as Lambda runs it: it imports ``functions/timer/handler.py`` and builds its runtime from
the environment the CDK stack sets (``parley.aws.environment.runtime_from_environment``), with every AWS
service on a moto server and the tool server a real MCP server over streamable HTTP (the demo chat), both
in this process, so that neither one's work counts in the timer's. It then handles, as the timer queue
delivers them (an SQS batch of one), the delivery of the spec's chat example, ``READS`` reads of a quiet
conversation, a read that finds a reply the rule refuses (recorded, and the party told through the
sending tool: a second tool call) and a read that takes the answer.

For each invocation it reports the process's CPU time (``time.process_time``: user and system, this
process only), its wall time, and what it waited on: the HTTP requests it sent the tool server and the
connections it opened for them (counted by wrapping ``httpx2.AsyncClient.send``), and its AWS calls
(counted, with the CPU each took, by wrapping botocore's ``_make_api_call``); at the end, the peak
resident set (``resource.getrusage``'s ``ru_maxrss``). The wall time is the local one: the tool server
and DynamoDB answer over the loopback, so it holds no network latency; the CPU time is what a Lambda
environment's share of a vCPU stretches.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import statistics
import subprocess
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

ROOT: Final = Path(__file__).resolve().parent.parent
TIMER_HANDLER: Final = ROOT / "functions" / "timer" / "handler.py"
#: Quiet reads measured (the first is left out of the figures: the first read of a process).
READS: Final = 40
TABLE: Final = "parley-bench-timer"
QUEUE: Final = "parley-bench-timer-queue"
OWNER: Final = "maria"
OPERATOR: Final = """
principals:
  - {{ id: dev, token: dev-token, grants: [{{ org: acme, playbook: campaigns, role: write }}] }}
tool_servers:
  - name: chat
    url: {url}
    orgs: [acme]
    playbooks: [campaigns]
    allowed: [post_message, thread_replies, channel_messages]
"""


@dataclass(frozen=True)
class Invocation:
    """One timer invocation: its work, the process's CPU seconds and wall seconds, the requests it sent
    the tool server over how many connections, and its AWS calls by operation."""

    work: str
    outcome: str
    cpu_seconds: float
    wall_seconds: float
    tool_requests: int = 0
    tool_connections: int = 0
    aws_calls: dict[str, int] = field(default_factory=dict)
    #: The CPU seconds each AWS operation took, in botocore (signing, sending, parsing).
    aws_cpu_seconds: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class TimerRead:
    """The figures of one measuring process."""

    peak_rss_mb: float
    rss_after_import_mb: float
    invocations: list[Invocation]

    def quiet_reads(self) -> list[Invocation]:
        """The reads that found nothing new, less the process's first."""
        reads = [i for i in self.invocations if i.work == "read" and i.outcome == "read"]
        return reads[1:-2]

    @property
    def quiet_cpu_median(self) -> float:
        return statistics.median(i.cpu_seconds for i in self.quiet_reads())

    @property
    def quiet_wall_median(self) -> float:
        return statistics.median(i.wall_seconds for i in self.quiet_reads())

    @property
    def quiet_wait_median(self) -> float:
        """What a quiet read waited for here, on the loopback (its wall time less its CPU time)."""
        return statistics.median(i.wall_seconds - i.cpu_seconds for i in self.quiet_reads())

    @property
    def quiet_tool_requests(self) -> int:
        """The requests a quiet read sent the tool server (the median read's)."""
        return round(statistics.median(i.tool_requests for i in self.quiet_reads()))

    @property
    def quiet_tool_connections(self) -> int:
        return round(statistics.median(i.tool_connections for i in self.quiet_reads()))

    @property
    def quiet_aws_calls(self) -> dict[str, int]:
        """A quiet read's AWS calls by operation (the last quiet read's: they do not vary)."""
        return dict(self.quiet_reads()[-1].aws_calls)

    def quiet_aws_cpu(self, operation: str) -> float:
        """The median CPU seconds a quiet read spent in botocore on ``operation``."""
        return statistics.median(i.aws_cpu_seconds.get(operation, 0.0) for i in self.quiet_reads())

    @property
    def quiet_cpu_p90(self) -> float:
        ordered = sorted(i.cpu_seconds for i in self.quiet_reads())
        return ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))]


class QuietWaits:
    """Waits that start and end nothing (whatever a start is told): the figures need no execution."""

    def start(self, run: Any, **arguments: Any) -> None:
        pass

    def succeed(self, token: str, output: Mapping[str, Any]) -> None:
        pass

    def fail(self, token: str, error: str, cause: str) -> None:
        pass


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def _moto_server() -> Iterator[str]:
    from moto.server import ThreadedMotoServer

    port = _free_port()
    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # its request log
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.stop()


def _environment(endpoint: str, queue_url: str, mcp_url: str) -> dict[str, str]:
    from parley.infrastructure.functions import (
        SCHEDULE_GROUP_VARIABLE,
        SCHEDULER_ROLE_ARN_VARIABLE,
        STATE_MACHINE_ARN_VARIABLE,
        TIMER_FUNCTION_ARN_VARIABLE,
        TIMER_QUEUE_URL_VARIABLE,
    )
    from parley.infrastructure.table import TABLE_NAME_VARIABLE

    keep = ("PATH", "HOME", "LANG", "PYTHONPATH", "VIRTUAL_ENV", "SYSTEMROOT", "PARLEY_BENCH_PROFILE")
    return {
        **{name: os.environ[name] for name in keep if name in os.environ},
        "AWS_ENDPOINT_URL": endpoint,
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "POWERTOOLS_LOG_LEVEL": "WARNING",
        TABLE_NAME_VARIABLE: TABLE,
        "PARLEY_OPERATOR_CONFIG": OPERATOR.format(url=mcp_url),
        # (the run's execution is never started: the parent's waits start nothing, so no token is sent)
        STATE_MACHINE_ARN_VARIABLE: "arn:aws:states:us-east-1:123456789012:stateMachine:parley-runs",
        SCHEDULE_GROUP_VARIABLE: "default",
        SCHEDULER_ROLE_ARN_VARIABLE: "arn:aws:iam::123456789012:role/parley-scheduler",
        TIMER_FUNCTION_ARN_VARIABLE: "arn:aws:lambda:us-east-1:123456789012:function:parley-timer",
        TIMER_QUEUE_URL_VARIABLE: queue_url,
    }


def measure(reads: int = READS) -> TimerRead:
    """Start the moto server and the demo chat here, ask one request, and measure the timer's process."""
    import boto3

    from benchmarks.replies import CHAT_EXAMPLE, DRAFT
    from parley.clock import SystemClock
    from parley.config import parse_operator_config
    from parley.definitions.model import PlaybookRef
    from parley.definitions.store import DynamoDefinitionStore
    from parley.demo.server import DemoChatOptions, running
    from parley.local.aws import create_table
    from parley.ports.runtime import Runtime
    from parley.runs.service import run_service

    with _moto_server() as endpoint, running(DemoChatOptions(port=0)) as chat:
        session = boto3.Session(
            aws_access_key_id="testing", aws_secret_access_key="testing", region_name="us-east-1"
        )
        dynamodb = session.client("dynamodb", endpoint_url=endpoint)
        create_table(dynamodb, TABLE)
        queue_url = session.client("sqs", endpoint_url=endpoint).create_queue(QueueName=QUEUE)["QueueUrl"]
        works: list[Mapping[str, Any]] = []

        class Recording:
            def schedule(self, name: str, at: Any, work: Mapping[str, Any]) -> None:
                works.append(work)

            def cancel(self, name: str) -> None:
                pass

        runtime = Runtime(
            definitions=DynamoDefinitionStore(dynamodb, TABLE),
            clock=SystemClock(),
            operator=parse_operator_config(OPERATOR.format(url=chat.mcp_url), "bench", environ={}),
            waits=QuietWaits(),
            scheduler=Recording(),
        )
        playbook = PlaybookRef("acme", "campaigns")
        runtime.definition_service().create_definition(
            playbook, "interaction", "approve-draft-in-chat", CHAT_EXAMPLE
        )
        run_service(runtime).run_definition(
            playbook,
            "interaction",
            "approve-draft-in-chat",
            input_value={"owner": OWNER, "draft": DRAFT},
            run_id=None,
            started_by="dev",
        )
        deliver = next(work for work in works if work.get("work") == "deliver")
        child = subprocess.run(
            [sys.executable, "-m", "benchmarks.timer_read", str(reads)],
            input=json.dumps({"deliver": deliver, "chat": chat.url}),
            capture_output=True,
            text=True,
            cwd=ROOT,
            env=_environment(endpoint, queue_url, chat.mcp_url),
            check=False,
            timeout=600,
        )
    if child.returncode != 0:
        raise RuntimeError(f"the timer's process failed:\n{child.stderr[-4000:]}")
    data = json.loads(child.stdout.strip().splitlines()[-1])
    return TimerRead(
        peak_rss_mb=data["peak_rss_kb"] / 1024,
        rss_after_import_mb=data["rss_after_import_kb"] / 1024,
        invocations=[Invocation(**one) for one in data["invocations"]],
    )


# --- the timer's process ---------------------------------------------------------------------------------


def _peak_rss_kb() -> int:
    """The process's peak resident set in KiB: Linux's ``VmHWM``, which starts anew with the program
    (``ru_maxrss`` would keep the parent's peak from before the fork)."""
    import resource

    try:
        status = Path("/proc/self/status").read_text(encoding="ascii")
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    for line in status.splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


@dataclass
class _Waits:
    """What the invocation under way waited on (see :func:`_count_waits`)."""

    tool_requests: int = 0
    tool_clients: set[int] = field(default_factory=set)
    aws_calls: dict[str, int] = field(default_factory=dict)
    aws_cpu: dict[str, float] = field(default_factory=dict)

    def clear(self) -> None:
        self.tool_requests = 0
        self.tool_clients.clear()
        self.aws_calls.clear()
        self.aws_cpu.clear()


def _count_waits() -> _Waits:  # pragma: no cover - runs in the measuring process
    """Count the tool server's requests and connections (each exchange is an ``httpx2.AsyncClient`` of
    its own, one connection) and the AWS calls, by wrapping the two libraries' senders."""
    import botocore.client
    import httpx2

    waits = _Waits()
    send = httpx2.AsyncClient.send
    make_api_call = botocore.client.BaseClient._make_api_call  # type: ignore[attr-defined]

    async def counted_send(self: Any, request: Any, **options: Any) -> Any:
        waits.tool_requests += 1
        waits.tool_clients.add(id(self))
        return await send(self, request, **options)

    def counted_call(self: Any, operation: str, params: Any) -> Any:
        import time

        waits.aws_calls[operation] = waits.aws_calls.get(operation, 0) + 1
        started = time.process_time()
        try:
            return make_api_call(self, operation, params)
        finally:
            spent = time.process_time() - started
            waits.aws_cpu[operation] = waits.aws_cpu.get(operation, 0.0) + spent

    httpx2.AsyncClient.send = counted_send  # type: ignore[method-assign]
    botocore.client.BaseClient._make_api_call = counted_call  # type: ignore[attr-defined]
    return waits


def _child(reads: int) -> None:  # pragma: no cover - runs in the measuring process
    import importlib.util
    import time
    import urllib.request

    given = json.loads(sys.stdin.read())
    waits = _count_waits()
    spec = importlib.util.spec_from_file_location("timer_handler", TIMER_HANDLER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    handler = module.handler
    rss_after_import = _peak_rss_kb()
    invocations: list[dict[str, Any]] = []

    def invoke(work: Mapping[str, Any]) -> None:
        batch = {"Records": [{"messageId": str(len(invocations)), "body": json.dumps(dict(work))}]}
        waits.clear()
        cpu, wall = time.process_time(), time.perf_counter()
        result = handler(batch, None)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        if result.get("batchItemFailures"):
            raise RuntimeError(f"the work failed: {work}")
        invocations.append(
            {
                "work": str(work["work"]),
                "outcome": "",
                "cpu_seconds": cpu,
                "wall_seconds": wall,
                "tool_requests": waits.tool_requests,
                "tool_connections": len(waits.tool_clients),
                "aws_calls": dict(waits.aws_calls),
                "aws_cpu_seconds": dict(waits.aws_cpu),
            }
        )

    def chat(path: str, body: Any = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            given["chat"] + path, data=data, headers={"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.loads(response.read())

    invoke(given["deliver"])
    invocations[-1]["outcome"] = "delivered"
    # Which conversation: the example's key, "{{ sent.conversation }}/{{ sent.id }}", from what was posted.
    from parley.interaction.replies.conversations import ConversationRef

    (channel,) = [c for c in chat("/api/channels")["channels"] if c["channel"] == OWNER]
    thread = channel["threads"][0]["ts"]
    conversation = ConversationRef.of("acme", "campaigns", "thread_replies", f"{OWNER}/{thread}").as_json()
    number = 0

    def read(outcome: str) -> None:
        nonlocal number
        number += 1
        invoke({"work": "read", "conversation": conversation, "read": number})
        invocations[-1]["outcome"] = outcome

    for _ in range(reads):
        read("read")
    if os.environ.get("PARLEY_BENCH_PROFILE"):
        import cProfile
        import pstats

        profile = cProfile.Profile(time.process_time)
        profile.enable()
        for _ in range(20):
            read("read")
        profile.disable()
        stats = pstats.Stats(profile, stream=sys.stderr)
        stats.sort_stats("cumulative").print_stats(60)
        stats.sort_stats("tottime").print_stats(30)
    chat("/api/reply", {"channel": OWNER, "thread": thread, "user": OWNER, "text": "maybe later"})
    read("refused and told")
    chat("/api/reply", {"channel": OWNER, "thread": thread, "user": OWNER, "text": "approve, looks good"})
    read("answered")
    peak = _peak_rss_kb()
    figures = {"peak_rss_kb": peak, "rss_after_import_kb": rss_after_import, "invocations": invocations}
    print(json.dumps(figures))


if __name__ == "__main__":
    _child(int(sys.argv[1]) if len(sys.argv) > 1 else READS)
