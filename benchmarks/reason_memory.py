"""What the reason function's own process takes: its peak memory and its CPU time (issue 26).

The reason function's memory (``parley.infrastructure.functions``) is sized from these figures, not
assumed: its duration, billed by the GB-second while a model call is waited for, is most of the price of
an agent run (``benchmarks.agent_runs``). Lambda gives CPU in proportion to memory (one vCPU at 1,769
MB), so the figures are peak memory, to size the function with a margin, and CPU seconds, to say what a
step and a cold start take at the size chosen.

A process of its own plays a cold environment of the function as Lambda runs it: it imports
``functions/reason/handler.py`` and builds its runtime from the environment the CDK stack sets
(``parley.aws.environment.runtime_from_environment``), with every AWS service on a moto server (the
table, the content bucket, Step Functions, the scheduler, the timer queue) and the tool server a real MCP
server over streamable HTTP (the demo chat), both in this process, so that neither one's work counts in
the function's. This process starts each run as the api function does (``run_definition``, the run's
work handed to a reasoner that only records it) and answers the agent run's question as the api function
does; the measuring process gets each invocation's event (``{"run"}``, ``{"run", "resume": true}``) on
its standard input, one a line, and answers its figures.

The model is an in-process fake in the measuring process: ``httpx.HTTPTransport.handle_request`` is
patched (once the run code imports httpx, so that the import stays the run's) to answer requests to
Anthropic's host at once with a canned Messages body, so the adapter's own client, its TLS context
included, is made and used as in production; the MCP client's asynchronous transport is left alone. The
kinds of run, each in a fresh process, :data:`RUNS` times (the first is the cold environment's):

- ``plain``: a text function, a short answer;
- ``large JSON``: a JSON function whose model answers, through the forced ``answer`` tool, an object of
  :data:`LARGE_ANSWER_BYTES` bytes as JSON (the output and the record may be 1 MiB together) that the
  output schema (an array of objects with an enum, lengths and bounds) must check, then kept in the
  content bucket;
- ``agent``: an agent run's two steps, the one that asks (``request_input``: the request written, its
  wait's execution started, its expiry scheduled) and, after the answer, the one that ends it;
- ``MCP tools``: two tool calls on the MCP server (``channel_messages`` then ``post_message``) and three
  model steps;
- ``MCP tool, large result``: one call whose result is about 800 KB of text (and as much again of
  structured content: :data:`ARCHIVE_MESSAGES` messages of the demo chat's 40,000 characters), which the
  model reads in full in the next step's request, and which the run keeps in the content bucket;

and then every kind in one process, :data:`MIXED_ROUNDS` rounds, as one environment serves them all.

Peak memory is Linux's ``VmHWM`` of the measuring process (``/proc/self/status``), not
``resource.getrusage(RUSAGE_SELF).ru_maxrss``: the latter keeps, across ``exec``, the peak of this
process (the moto server, the MCP server) from before the child was spawned, so it says this process's
size, not the child's (both are reported). CPU time is ``time.process_time`` (user and system, the
measuring process only); the wall time is local (the loopback, and a model that answers at once).
"""

from __future__ import annotations

import json
import os
import statistics
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

ROOT: Final = Path(__file__).resolve().parent.parent
REASON_HANDLER: Final = ROOT / "functions" / "reason" / "handler.py"
#: Runs of each kind in its own process; the first is the cold environment's.
RUNS: Final = 5
#: Rounds of every kind in one process.
MIXED_ROUNDS: Final = 3
#: The large JSON answer's bytes as JSON: the output and its record together may be 1 MiB (1,048,576
#: bytes), and this one leaves the record (settings, usage, the short prompt) about 8 KiB.
LARGE_ANSWER_BYTES: Final = 1_040_000
#: Lambda gives one vCPU at this many MB, and a share in proportion below it.
MB_PER_VCPU: Final = 1769
TABLE: Final = "parley-bench-reason"
QUEUE: Final = "parley-bench-reason-timer"
BUCKET: Final = "parley-bench-reason-content"
STATE_MACHINE: Final = "parley-bench-runs"
ACCOUNT: Final = "123456789012"
MODEL_HOST: Final = "api.anthropic.com"
#: The file the large answer's Messages body is written to, for the measuring process's fake model.
LARGE_BODY_VARIABLE: Final = "PARLEY_BENCH_LARGE_BODY"
ENVIRON: Final = {
    "ANTHROPIC_API_KEY": "sk-ant-bench-key-123456",
    "ANTHROPIC_BASE_URL": f"https://{MODEL_HOST}",
}
OWNER: Final = "maria"
OPERATOR: Final = """
principals:
  - {{ id: dev, token: dev-token, grants: [{{ org: acme, playbook: campaigns, role: write }}] }}
models:
  allowed: [anthropic/*]
tool_servers:
  - name: chat
    url: {url}
    orgs: [acme]
    playbooks: [campaigns]
    allowed: [post_message, channel_messages]
"""
#: The functions, by kind: (name, source, input). Each prompt names its kind in brackets, so that the fake
#: model knows what to answer.
PLAIN: Final = "plain"
LARGE: Final = "large JSON"
AGENT: Final = "agent"
TOOLS: Final = "MCP tools"
TOOLS_LARGE: Final = "MCP tool, large result"
KINDS: Final = (PLAIN, LARGE, AGENT, TOOLS, TOOLS_LARGE)
#: The channel the large tool result reads: this many messages of the demo chat's largest text (40,000
#: characters), about 800 KB in the tool's text and as much again in its structured content.
ARCHIVE: Final = "archive"
ARCHIVE_MESSAGES: Final = 20
FUNCTIONS: Final[dict[str, tuple[str, str, dict[str, Any]]]] = {
    PLAIN: (
        "review-brief",
        """---
model: anthropic/claude-sonnet-4-5
---
{% system %}You review campaign briefs against the criteria given, in two sentences.{% endsystem %}
[plain] Brief: {{ input.brief }}
""",
        {"brief": "Launch in May with a budget of 40k."},
    ),
    LARGE: (
        "product-catalogue",
        """---
model: anthropic/claude-sonnet-4-5
config: { max_output_tokens: 64000 }
output:
  format: json
  schema:
    type: object
    additionalProperties: false
    required: [products]
    properties:
      products:
        type: array
        items:
          type: object
          additionalProperties: false
          required: [sku, name, price, stock, tags, summary]
          properties:
            sku: { type: string, minLength: 10, maxLength: 10 }
            name: { type: string, minLength: 1, maxLength: 80 }
            price: { type: number, minimum: 0, maximum: 100000 }
            stock: { type: integer, minimum: 0 }
            tags:
              type: array
              maxItems: 4
              items: { type: string, enum: [outdoor, kitchen, garden, sale, new, bundle] }
            summary: { type: string, maxLength: 400 }
---
[large] Write the catalogue entries of every product in: {{ input.range }}
""",
        {"range": "the spring range"},
    ),
    AGENT: (
        "post-launch-note",
        """---
model: anthropic/claude-sonnet-4-5
ask: { to: '{{ input.owner }}', expires: P3D }
---
[agent] Post the launch note to the channel the owner names: {{ input.note }}
""",
        {"owner": OWNER, "note": "Spring sale starts Monday."},
    ),
    TOOLS: (
        "channel-digest",
        """---
model: anthropic/claude-sonnet-4-5
tools: [chat/channel_messages, chat/post_message]
---
[tools] Read the channel {{ input.owner }} and post a one-line digest of it there.
""",
        {"owner": OWNER},
    ),
    TOOLS_LARGE: (
        "archive-digest",
        """---
model: anthropic/claude-sonnet-4-5
tools: [chat/channel_messages]
---
[tools-large] Read the last messages of the channel {{ input.channel }} and say what they are about.
""",
        {"channel": ARCHIVE},
    ),
}
ANSWER: Final = "#launches"


# --- the figures ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Invocation:
    """One invocation of the handler: what it did, its outcome, the process's CPU and wall seconds."""

    kind: str
    step: str
    outcome: str
    cpu_seconds: float
    wall_seconds: float
    rss_mb: float


@dataclass
class Environment:
    """The figures of one measuring process (one cold environment of the reason function)."""

    label: str
    #: CPU seconds of the interpreter's start-up before the handler's import (this module's imports too).
    startup_cpu: float
    import_cpu: float
    import_wall: float
    rss_after_import_mb: float
    invocations: list[Invocation] = field(default_factory=list)
    peak_rss_mb: float = 0.0
    #: ``ru_maxrss`` as the measuring process reads it (the spawning process's peak: see the docstring).
    ru_maxrss_mb: float = 0.0
    rss_at_end_mb: float = 0.0
    #: The largest request the model received (bytes).
    largest_request: int = 0

    def steps(self) -> list[str]:
        return list(dict.fromkeys(i.step for i in self.invocations))

    def of(self, step: str) -> list[Invocation]:
        return [i for i in self.invocations if i.step == step]

    def first_cpu(self, step: str) -> float:
        return self.of(step)[0].cpu_seconds

    def warm_cpu(self, step: str) -> float:
        """The median CPU seconds of the step's invocations after its first."""
        later = self.of(step)[1:]
        return statistics.median(i.cpu_seconds for i in later) if later else float("nan")

    @property
    def cold_start_cpu(self) -> float:
        """The handler's import and the first invocation's work (which loads the rest)."""
        return self.import_cpu + self.invocations[0].cpu_seconds


@dataclass(frozen=True)
class ReasonMemory:
    """Every measuring process: one a kind (:data:`KINDS`), then all the kinds in one."""

    kinds: dict[str, Environment]
    mixed: Environment
    large_answer_bytes: int

    @property
    def peak_rss_mb(self) -> float:
        return max(e.peak_rss_mb for e in [*self.kinds.values(), self.mixed])


# --- this process: the services, the runs started and answered -------------------------------------------


class RecordingReasoner:
    """The api function's reasoner port, recording what it would invoke (the measuring process is
    invoked by this benchmark instead)."""

    def __init__(self) -> None:
        self.started: list[tuple[Any, bool]] = []

    def start(self, run: Any, *, resume: bool = False) -> None:
        self.started.append((run, resume))


class QuietScheduler:
    """This process's scheduler: the backstops and the expiry's cancel of the runs it starts are not
    the reason function's (its own schedules go to moto)."""

    def schedule(self, name: str, at: Any, work: Mapping[str, Any]) -> None:
        pass

    def cancel(self, name: str) -> None:
        pass


def _environment(endpoint: str, queue_url: str, state_machine_arn: str, mcp_url: str) -> dict[str, str]:
    """The reason function's environment as the CDK stack sets it, on the moto server."""
    from parley.infrastructure.functions import (
        CONTENT_BUCKET_VARIABLE,
        SCHEDULE_GROUP_VARIABLE,
        SCHEDULER_ROLE_ARN_VARIABLE,
        STATE_MACHINE_ARN_VARIABLE,
        TIMER_FUNCTION_ARN_VARIABLE,
        TIMER_QUEUE_URL_VARIABLE,
    )
    from parley.infrastructure.table import TABLE_NAME_VARIABLE

    keep = ("PATH", "HOME", "LANG", "PYTHONPATH", "VIRTUAL_ENV", "SYSTEMROOT")
    return {
        **{name: os.environ[name] for name in keep if name in os.environ},
        **ENVIRON,
        "AWS_ENDPOINT_URL": endpoint,
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "POWERTOOLS_LOG_LEVEL": "WARNING",
        TABLE_NAME_VARIABLE: TABLE,
        "PARLEY_OPERATOR_CONFIG": OPERATOR.format(url=mcp_url),
        STATE_MACHINE_ARN_VARIABLE: state_machine_arn,
        SCHEDULE_GROUP_VARIABLE: "default",
        SCHEDULER_ROLE_ARN_VARIABLE: f"arn:aws:iam::{ACCOUNT}:role/parley-scheduler",
        TIMER_FUNCTION_ARN_VARIABLE: f"arn:aws:lambda:us-east-1:{ACCOUNT}:function:parley-timer",
        TIMER_QUEUE_URL_VARIABLE: queue_url,
        CONTENT_BUCKET_VARIABLE: BUCKET,
    }


class MeasuringProcess:
    """One fresh process playing a cold environment of the reason function; events in, figures out."""

    def __init__(self, label: str, environ: Mapping[str, str]) -> None:
        import subprocess
        import tempfile

        self.label = label
        # (closed by close(): it outlives this call)
        self._stderr = tempfile.TemporaryFile(mode="w+", encoding="utf-8")  # noqa: SIM115
        self._process = subprocess.Popen(
            [sys.executable, "-m", "benchmarks.reason_memory"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
            cwd=ROOT,
            env=dict(environ),
        )
        ready = self._read()
        self.figures = Environment(
            label=label,
            startup_cpu=ready["startup_cpu"],
            import_cpu=ready["import_cpu"],
            import_wall=ready["import_wall"],
            rss_after_import_mb=ready["rss_after_import_kb"] / 1024,
        )

    def _read(self) -> Any:
        assert self._process.stdout is not None
        line = self._process.stdout.readline()
        if not line:
            self._process.wait(timeout=30)
            self._stderr.seek(0)
            raise RuntimeError(f"the measuring process stopped:\n{self._stderr.read()[-4000:]}")
        return json.loads(line)

    def _send(self, message: Mapping[str, Any]) -> None:
        assert self._process.stdin is not None
        self._process.stdin.write(json.dumps(message) + "\n")
        self._process.stdin.flush()

    def invoke(self, kind: str, step: str, event: Mapping[str, Any]) -> str:
        self._send({"event": event})
        data = self._read()
        outcome = str(data["result"].get("outcome"))
        self.figures.invocations.append(
            Invocation(kind, step, outcome, data["cpu_seconds"], data["wall_seconds"], data["rss_kb"] / 1024)
        )
        return outcome

    def close(self) -> Environment:
        self._send({"done": True})
        data = self._read()
        self._process.wait(timeout=30)
        self._stderr.close()
        self.figures.peak_rss_mb = data["peak_rss_kb"] / 1024
        self.figures.ru_maxrss_mb = data["ru_maxrss_kb"] / 1024
        self.figures.rss_at_end_mb = data["rss_kb"] / 1024
        self.figures.largest_request = data["largest_request"]
        return self.figures


@dataclass
class Bench:
    """This process's runtime on the moto server and the demo chat, and the measuring processes'
    environment."""

    runtime: Any
    reasoner: RecordingReasoner
    environ: dict[str, str]
    large_answer_bytes: int

    def run(self, process: MeasuringProcess, kind: str) -> None:
        """Start one run of ``kind`` as the api function does, and have the measuring process work it;
        the agent run's question is answered here between its two steps."""
        from parley.definitions.model import PlaybookRef
        from parley.runs.answering import answer_interaction
        from parley.runs.service import run_service

        playbook = PlaybookRef("acme", "campaigns")
        name, _, value = FUNCTIONS[kind]
        runs = run_service(self.runtime)
        run = runs.run_definition(
            playbook, "reasoning", name, input_value=value, run_id=None, started_by="dev"
        )
        (key, resume), *_ = self.reasoner.started[-1:]
        event = {"run": key.as_json()}
        if kind != AGENT:
            self._expect(process.invoke(kind, kind, event), "succeeded", run.run_id)
            return
        self._expect(process.invoke(kind, "agent: the step that asks", event), "waiting", run.run_id)
        answer_interaction(runs, playbook, run.run_id, ANSWER, claimed_for=None, answered_by="dev")
        (key, resume), *_ = self.reasoner.started[-1:]
        if not resume:
            raise RuntimeError("the answer did not take the agent run up again")
        step = "agent: the step after the answer"
        self._expect(process.invoke(kind, step, {**event, "resume": True}), "succeeded", run.run_id)

    def _expect(self, outcome: str, expected: str, run_id: str) -> None:
        if outcome != expected:
            from parley.definitions.model import PlaybookRef
            from parley.runs.service import run_service

            found = run_service(self.runtime).store.get_run(PlaybookRef("acme", "campaigns"), run_id)
            raise RuntimeError(f"the run's outcome was {outcome!r}, not {expected!r}: {found}")


def archived_chat() -> Any:
    """The demo chat with :data:`ARCHIVE_MESSAGES` messages of 40,000 characters in :data:`ARCHIVE`."""
    from parley.demo.chat import MAX_TEXT, Chat

    chat = Chat()
    line = "Spring range note: the folding chairs ship in May, the tables in June; stock is counted weekly. "
    for number in range(ARCHIVE_MESSAGES):
        text = f"Note {number}. " + line * (MAX_TEXT // len(line))
        chat.post(ARCHIVE, OWNER, text[:MAX_TEXT])
    return chat


@contextmanager
def bench() -> Iterator[Bench]:
    """The moto server and the demo chat here, the functions saved, this process's runtime over them."""
    import tempfile

    import boto3

    from benchmarks.timer_read import QuietWaits, _moto_server
    from parley.aws.content import S3ContentStore
    from parley.clock import SystemClock
    from parley.config import parse_operator_config
    from parley.definitions.model import PlaybookRef
    from parley.definitions.store import DynamoDefinitionStore
    from parley.demo.server import DemoChatOptions, running
    from parley.documents.json_schema import json_size
    from parley.local.aws import create_table
    from parley.ports.runtime import Runtime

    with (
        tempfile.TemporaryDirectory() as folder,
        _moto_server() as endpoint,
        running(DemoChatOptions(port=0), archived_chat()) as chat,
    ):
        large = _large_answer()
        answer = {"type": "tool_use", "id": "toolu_answer", "name": "answer", "input": large}
        large_body = Path(folder) / "large-answer.json"
        large_body.write_bytes(_messages_body([answer], "tool_use", output_tokens=64_000))
        session = boto3.Session(
            aws_access_key_id="testing", aws_secret_access_key="testing", region_name="us-east-1"
        )
        dynamodb = session.client("dynamodb", endpoint_url=endpoint)
        create_table(dynamodb, TABLE)
        queue_url = session.client("sqs", endpoint_url=endpoint).create_queue(QueueName=QUEUE)["QueueUrl"]
        s3 = session.client("s3", endpoint_url=endpoint)
        s3.create_bucket(Bucket=BUCKET)
        machine = session.client("stepfunctions", endpoint_url=endpoint).create_state_machine(
            name=STATE_MACHINE,
            definition=json.dumps({"StartAt": "Wait", "States": {"Wait": {"Type": "Pass", "End": True}}}),
            roleArn=f"arn:aws:iam::{ACCOUNT}:role/parley-runs",
        )["stateMachineArn"]
        reasoner = RecordingReasoner()
        runtime = Runtime(
            definitions=DynamoDefinitionStore(dynamodb, TABLE),
            clock=SystemClock(),
            operator=parse_operator_config(OPERATOR.format(url=chat.mcp_url), "bench", environ={}),
            waits=QuietWaits(),
            scheduler=QuietScheduler(),
            content=S3ContentStore(s3, BUCKET),
            reasoner=reasoner,
            run_wait_seconds=0,
            environ=ENVIRON,
        )
        definitions = runtime.definition_service()
        for name, source, _ in FUNCTIONS.values():
            definitions.create_definition(PlaybookRef("acme", "campaigns"), "reasoning", name, source)
        environ = {
            **_environment(endpoint, queue_url, machine, chat.mcp_url),
            LARGE_BODY_VARIABLE: str(large_body),
        }
        yield Bench(runtime, reasoner, environ, json_size(large))


def measure(runs: int = RUNS, mixed_rounds: int = MIXED_ROUNDS) -> ReasonMemory:
    """Each kind of run ``runs`` times in a fresh measuring process, then every kind ``mixed_rounds``
    times in one."""
    kinds: dict[str, Environment] = {}
    with bench() as here:
        for kind in KINDS:
            process = MeasuringProcess(kind, here.environ)
            for _ in range(runs):
                here.run(process, kind)
            kinds[kind] = process.close()
        process = MeasuringProcess("every kind", here.environ)
        for _ in range(mixed_rounds):
            for kind in KINDS:
                here.run(process, kind)
        mixed = process.close()
        return ReasonMemory(kinds, mixed, here.large_answer_bytes)


def report() -> None:
    """Print the figures (``make bench``)."""
    from parley.infrastructure.functions import function_named

    figures = measure()
    memory_mb = function_named("reason").memory_mb
    print(
        "The reason function's own process: peak resident memory and CPU time (a fresh process imports\n"
        "functions/reason/handler.py and works runs from the environment the stack sets; AWS on a moto\n"
        "server and the tool server, the demo chat over MCP, in another process; the model an in-process\n"
        f"fake answering at once; each kind {RUNS} runs, the first the cold environment's)"
    )
    cold = figures.kinds[PLAIN]
    print(
        f"  interpreter start-up: {cold.startup_cpu * 1000:.0f} ms of CPU; the handler's import: "
        f"{cold.import_cpu * 1000:.0f} ms of CPU ({cold.import_wall * 1000:.0f} ms wall), "
        f"{cold.rss_after_import_mb:.0f} MB resident after it"
    )
    header = f"  {'run':<34} {'peak RSS':>9} {'1st invocation CPU':>19} {'later (median)':>15}"
    print(header)
    for kind, environment in figures.kinds.items():
        for number, step in enumerate(environment.steps()):
            peak = f"{environment.peak_rss_mb:.0f} MB" if number == 0 else ""
            label = step if kind == AGENT else kind
            if kind == LARGE:
                label = f"large JSON ({figures.large_answer_bytes:,} B)"
            print(
                f"  {label:<34} {peak:>9} {environment.first_cpu(step) * 1000:>16.0f} ms"
                f" {environment.warm_cpu(step) * 1000:>12.0f} ms"
            )
    mixed = figures.mixed
    print(
        f"  every kind in one process, {MIXED_ROUNDS} rounds: peak {mixed.peak_rss_mb:.0f} MB, "
        f"{mixed.rss_at_end_mb:.0f} MB resident at the end"
    )
    print(
        f"  (ru_maxrss read by a measuring process: {cold.ru_maxrss_mb:.0f} MB, the spawning process's "
        "peak,\n   kept across exec; the peaks above are VmHWM)"
    )
    worst_step = max(
        environment.warm_cpu(step) for environment in figures.kinds.values() for step in environment.steps()
    )
    cold_start = max(environment.cold_start_cpu for environment in figures.kinds.values())
    print(
        f"  the function has {memory_mb} MB: peak {figures.peak_rss_mb:.0f} MB here, plus Lambda's runtime "
        "(30-60 MB); by size, the share of a vCPU\n"
        f"  ({MB_PER_VCPU} MB a vCPU) and what the costliest warm step's {worst_step * 1000:.0f} ms of CPU "
        f"and a cold start's {cold_start * 1000:.0f} ms\n"
        "  (the handler's import and the first run, which loads the rest) become, CPU-bound:"
    )
    for size in sorted({256, 512, 1024, 1536, MB_PER_VCPU, memory_mb}):
        share = min(1.0, size / MB_PER_VCPU)
        mark = "  <- the function's" if size == memory_mb else ""
        print(
            f"    {size:>5} MB: {share:.2f} vCPU, the step {worst_step / share:5.2f} s, "
            f"the cold start {cold_start / share:4.1f} s{mark}"
        )


# --- the measuring process -------------------------------------------------------------------------------


def _status_kb(field_name: str) -> int:
    """A ``/proc/self/status`` figure in KiB (``VmHWM``: the peak resident set; ``VmRSS``: the current)."""
    for line in Path("/proc/self/status").read_text(encoding="ascii").splitlines():
        if line.startswith(f"{field_name}:"):
            return int(line.split()[1])
    raise RuntimeError(f"no {field_name} in /proc/self/status")


def _large_answer() -> dict[str, Any]:
    """A catalogue of :data:`LARGE_ANSWER_BYTES` bytes as compact JSON that matches the schema."""
    tags = ["outdoor", "kitchen", "garden", "sale", "new", "bundle"]
    products: list[dict[str, Any]] = []
    size = len('{"products":[]}')
    number = 0
    while True:
        product = {
            "sku": f"SKU-{number:06d}",
            "name": f"Folding garden chair, model {number}",
            "price": round(19.5 + number % 300 * 1.25, 2),
            "stock": number * 7 % 1000,
            "tags": tags[number % 4 : number % 4 + 2],
            "summary": "A light folding chair of powder-coated steel and weatherproof fabric; seats one "
            f"adult, folds flat to 9 cm, and carries 120 kg. Sold as entry {number} of the range.",
        }
        text = json.dumps(product, ensure_ascii=False, separators=(",", ":"))
        grown = size + len(text.encode()) + (1 if products else 0)
        if grown > LARGE_ANSWER_BYTES:
            break
        products.append(product)
        size = grown
        number += 1
    # The last product's summary is padded so that the whole is exactly LARGE_ANSWER_BYTES.
    products[-1]["summary"] += "." * min(LARGE_ANSWER_BYTES - size, 400 - len(products[-1]["summary"]))
    return {"products": products}


def _messages_body(
    content: list[Any], stop_reason: str, output_tokens: int = 40, input_tokens: int = 120
) -> bytes:
    return json.dumps(
        {
            "id": "msg_bench",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5-20250929",
            "content": content,
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": {
                "input_tokens": input_tokens,
                "output_tokens": output_tokens,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
            },
        }
    ).encode()


class FakeModel:
    """Anthropic's Messages API, answering at once by the kind the prompt names and the step the
    conversation is at."""

    def __init__(self, large_body: Path) -> None:
        #: The large answer's body, read when the model is first asked for it, as a response is received.
        self.large_body = large_body
        #: The largest request body received (bytes).
        self.largest_request = 0

    def body(self, sent: Mapping[str, Any], size: int) -> bytes:
        """The answer to a request of ``size`` bytes (counted as input tokens at 4 bytes a token, so
        that a run's budget and a tool result's room are reckoned as with a real model). A step made
        without tools (a run's last) gets the final text."""
        self.largest_request = max(self.largest_request, size)
        messages = sent["messages"]
        first = json.dumps(messages[0]["content"])
        steps = sum(1 for message in messages if message["role"] == "assistant")
        use: dict[str, Any] | None = None
        text = "The brief states a budget but gives no source for it; the May date lacks a plan."
        if "[large]" in first:
            return self.large_body.read_bytes()
        if "[agent]" in first:
            if steps == 0:
                question = {"kind": "text", "prompt": "Which channel?"}
                use = {"type": "tool_use", "id": "toolu_ask01", "name": "request_input", "input": question}
            text = f"Posted the launch note to {ANSWER}."
        elif "[tools-large]" in first:
            if steps == 0 and sent.get("tools"):
                read = {"channel": ARCHIVE, "limit": ARCHIVE_MESSAGES}
                use = {"type": "tool_use", "id": "toolu_00", "name": "chat__channel_messages", "input": read}
            text = "The archive holds the spring range's product notes."
        elif "[tools]" in first:
            calls: list[tuple[str, dict[str, Any]]] = [
                ("chat__channel_messages", {"channel": OWNER}),
                ("chat__post_message", {"channel": OWNER, "text": "Digest: the channel is quiet today."}),
            ]
            if steps < len(calls) and sent.get("tools"):
                name, arguments = calls[steps]
                use = {"type": "tool_use", "id": f"toolu_{steps:02d}", "name": name, "input": arguments}
            text = "Posted the digest: the channel is quiet today."
        if use is not None:
            return _messages_body([use], "tool_use", input_tokens=size // 4)
        return _messages_body([{"type": "text", "text": text}], "end_turn", input_tokens=size // 4)


def _patch_httpx_on_import(model: FakeModel) -> None:
    """Once the run code imports httpx, its ``HTTPTransport`` answers the model's host with ``model``
    (any other host, none here, is sent as usual); the import itself stays the run's."""
    import importlib.abc
    import importlib.machinery

    def patch(httpx: Any) -> None:
        plain = httpx.HTTPTransport.handle_request

        def handle_request(self: Any, request: Any) -> Any:
            if request.url.host != MODEL_HOST:
                return plain(self, request)
            body = model.body(json.loads(request.content), len(request.content))
            return httpx.Response(200, content=body, headers={"content-type": "application/json"})

        httpx.HTTPTransport.handle_request = handle_request

    class Finder(importlib.abc.MetaPathFinder):
        def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
            if name != "httpx":
                return None
            sys.meta_path.remove(self)
            spec = importlib.machinery.PathFinder.find_spec(name, path)
            if spec is None or spec.loader is None:
                return spec
            loader: Any = spec.loader
            plain_exec = loader.exec_module

            def exec_module(module: Any) -> None:
                plain_exec(module)
                patch(module)

            loader.exec_module = exec_module
            return spec

    sys.meta_path.insert(0, Finder())


def _child() -> None:  # pragma: no cover - runs in the measuring process
    import importlib.util
    import resource
    import time

    startup_cpu = time.process_time()
    model = FakeModel(Path(os.environ[LARGE_BODY_VARIABLE]))
    _patch_httpx_on_import(model)
    if "httpx" in sys.modules:
        raise RuntimeError("httpx was imported before the handler")

    cpu, wall = time.process_time(), time.perf_counter()
    spec = importlib.util.spec_from_file_location("reason_handler", REASON_HANDLER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    handler = module.handler
    import_cpu, import_wall = time.process_time() - cpu, time.perf_counter() - wall

    def say(figures: Mapping[str, Any]) -> None:
        sys.stdout.write(json.dumps(figures) + "\n")
        sys.stdout.flush()

    say(
        {
            "startup_cpu": startup_cpu,
            "import_cpu": import_cpu,
            "import_wall": import_wall,
            "rss_after_import_kb": _status_kb("VmRSS"),
        }
    )
    for line in sys.stdin:
        message = json.loads(line)
        if message.get("done"):
            break
        cpu, wall = time.process_time(), time.perf_counter()
        result = handler(message["event"], None)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        say({"result": result, "cpu_seconds": cpu, "wall_seconds": wall, "rss_kb": _status_kb("VmRSS")})
    say(
        {
            "peak_rss_kb": _status_kb("VmHWM"),
            "rss_kb": _status_kb("VmRSS"),
            "ru_maxrss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
            "largest_request": model.largest_request,
        }
    )


if __name__ == "__main__":
    _child()
