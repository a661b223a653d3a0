"""Figures of reasoning runs that call tools: a run of ten steps with one tool call each, Parley's own
time per step (the fake model and tool answering at once), and the input tokens a run sends as it
grows.

``cpu_per_run`` measures ``run_definition`` of a reasoning function with ``tools`` in process, through
the api handler (an API Gateway event in, the reply out), the runtime's reasoner left out so that the
run's work happens in the call itself (as ``benchmarks.reasoning`` does): the document, the input, the
prompt, the model offered, the run written ``started``; then the work: the run read back, the tools
checked before the model (``tools_for_run``: the server listed), then eleven model steps
(``ToolLoop.steps``): steps 1-10 each ask for one tool call, which is checked, recorded
(``tool_call_started`` with the run's calls), sent, and recorded again (``tool_call_answered``); step 11
answers with text, which is checked and written with the record; and the run read once more for the
reply.

Nothing leaves the process and only the project's own code is timed:

- DynamoDB: each run is recorded once against moto, then replayed (``benchmarks.runs.Tape``): the
  writes of every step are in the tape in order, so neither moto nor botocore is in the figure.
- The model: ``call_model`` is given one ``httpx.Client`` over an ``httpx.MockTransport`` that answers
  at once as the Anthropic Messages API does: for steps 1-10 a ``tool_use`` of the one tool (a new
  ticket each step, so no call is refused as a third identical one), for step 11 the final text. The step
  is read from the request (the assistant turns it holds), so every round gets the same answers. The time
  inside ``httpx.Client.request`` (request building, the mock transport, the response) is taken out.
- The tool: the runtime's ``tool_client`` is an in-memory fake of the ``ToolClient`` port answering at
  once with a ``ToolAnswer`` built as the MCP client builds it (``parley.tools.client.answer_of`` over
  one text block holding a small JSON object); its time (``list_tools`` and ``call_tool``) is taken out.

``request_bytes`` gives the body of each step's request as the MockTransport received it: every step
resends the whole conversation, with the tools offered (the last step, made without tools, would not
differ here: the run ends on its own at step 11).

``python -m benchmarks.tool_runs`` prints the figures and a profile of the project's top functions.
"""

from __future__ import annotations

import cProfile
import json
import math
import os
import pstats
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from benchmarks.reasoning import Split, canned_model, taped_runtime
from benchmarks.runs import Tape, percentiles

BASE = "/v1/orgs/acme/playbooks/support"
HEADERS = [("Authorization", "Bearer dev-token"), ("Content-Type", "application/json")]
TOOL_SERVER_URL = "https://tickets.internal.example/mcp"
OPERATOR = f"""
principals:
  - id: dev
    token: dev-token
    grants: [{{ org: acme, playbook: support, role: write }}]
tool_servers:
  - name: tickets
    url: {TOOL_SERVER_URL}
    orgs: [acme]
    headers: {{ Authorization: "Bearer tickets-token-5f3a9c" }}
models:
  allowed: [anthropic/*]
"""
ENVIRON = {"ANTHROPIC_API_KEY": "sk-ant-bench-key-123456", "ANTHROPIC_BASE_URL": "https://api.anthropic.com"}

#: The model steps of a run: ``TOOL_STEPS`` with one tool call each, then the final answer.
TOOL_STEPS = 10
MODEL_STEPS = TOOL_STEPS + 1
#: "about 4 bytes a token".
BYTES_PER_TOKEN = 4

NAME = "triage"
SOURCE = """---
model: anthropic/claude-sonnet-4-5
tools: [tickets/find_ticket]
---
{% system %}You triage support tickets. Read every ticket the question names with the tools before you
answer, and answer in two sentences.{% endsystem %}
Question: {{ input.question }}
"""
INPUT = {"question": "Which of the tickets T-1001 to T-1010 are still open, and which needs a refund first?"}
TOOL_NAME = "find_ticket"
#: The name the model knows the tool by (``server__tool``).
MODEL_TOOL_NAME = "tickets__find_ticket"


def _listed_tool() -> Any:
    from parley.ports.tools import ListedTool

    return ListedTool(
        name=TOOL_NAME,
        description="Read one support ticket by its id: title, status, priority, assignee, last update.",
        input_schema={
            "type": "object",
            "properties": {"ticket": {"type": "string", "description": "The ticket's id, such as T-1001."}},
            "required": ["ticket"],
            "additionalProperties": False,
        },
        read_only=True,
    )


def ticket_json(ticket: str) -> str:
    """The tool's small JSON text result for one ticket."""
    number = int(ticket.rsplit("-", 1)[-1]) if ticket.rsplit("-", 1)[-1].isdigit() else 0
    return json.dumps(
        {
            "ticket": ticket,
            "title": "Refund not received after cancelling the order",
            "status": "open" if number % 3 else "closed",
            "priority": "high" if number % 2 else "normal",
            "assignee": "maria@example.com",
            "updated": "2026-01-05T10:42:00Z",
        }
    )


@dataclass
class InstantTools:
    """The ``ToolClient`` port answering at once, in memory; the CPU time of each call is kept (ms)."""

    spent: list[float] = field(default_factory=list)
    calls: int = 0

    def __post_init__(self) -> None:
        self.tool = _listed_tool()

    def list_tools(self, address: Any) -> list[Any]:
        begin = time.thread_time()
        try:
            return [self.tool]
        finally:
            self.spent.append((time.thread_time() - begin) * 1000)

    def call_tool(
        self,
        address: Any,
        tool: str,
        arguments: Mapping[str, Any],
        *,
        before_call: Callable[[Any], None] | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> Any:
        from parley.ports.tools import ToolAnswer
        from parley.tools.client import answer_of

        begin = time.thread_time()
        try:
            if before_call is not None:
                before_call(self.tool)
            self.calls += 1
            content: list[Mapping[str, Any]] = [
                {"type": "text", "text": ticket_json(str(arguments.get("ticket", "")))}
            ]
            answer, text = answer_of(None, content)
            return ToolAnswer(
                tool=self.tool,
                is_error=False,
                answer=answer,
                text=text,
                result={"content": content, "isError": False},
                duration_ms=0,
                jsonrpc_id=self.calls,
            )
        finally:
            self.spent.append((time.thread_time() - begin) * 1000)


def _anthropic(content: list[Any], stop_reason: str, input_tokens: int) -> bytes:
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
                "output_tokens": 40,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
            },
        }
    ).encode()


@dataclass
class Model:
    """The model behind ``httpx.MockTransport``: steps 1-10 ask for one tool call, step 11 answers.
    ``bodies`` keeps the size of each request body received (bytes) while ``keeping``."""

    bodies: list[int] = field(default_factory=list)
    keeping: bool = False

    def __call__(self, request: Any) -> Any:
        import httpx

        raw = request.content
        sent = json.loads(raw)
        step = 1 + sum(1 for message in sent["messages"] if message["role"] == "assistant")
        if self.keeping:
            self.bodies.append(len(raw))
        tokens = math.ceil(len(raw) / BYTES_PER_TOKEN)
        if step <= TOOL_STEPS:
            ticket = f"T-{1000 + step}"
            content = [
                {"type": "text", "text": f"I will read {ticket} next."},
                {
                    "type": "tool_use",
                    "id": f"toolu_bench{step:02d}",
                    "name": MODEL_TOOL_NAME,
                    "input": {"ticket": ticket},
                },
            ]
            body = _anthropic(content, "tool_use", tokens)
        else:
            text = (
                "Seven of the ten tickets are still open: T-1001, T-1002, T-1004, T-1005, T-1007, T-1008 and "
                "T-1010. T-1001 needs a refund first: it is open, high priority, and the oldest."
            )
            body = _anthropic([{"type": "text", "text": text}], "end_turn", tokens)
        return httpx.Response(200, content=body, headers={"content-type": "application/json"})


def _succeeded(reply: Mapping[str, Any]) -> None:
    body = json.loads(reply["body"])
    if reply["statusCode"] != 200 or body.get("status") != "succeeded":
        raise RuntimeError(f"a tool-calling run did not succeed: {reply['statusCode']} {reply['body']}")


@dataclass
class Bench:
    run: Callable[[], None]
    tape: Tape
    split: Split
    tools: InstantTools
    model: Model


@contextmanager
def _bench() -> Iterator[Bench]:
    """The api handler over moto's DynamoDB (through a tape), the canned model and the instant tool
    client; gives one run of the function as a call."""
    os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "WARNING")
    from moto import mock_aws

    from parley.api.app import build_handler
    from parley.definitions.model import PlaybookRef
    from parley.local.events import api_gateway_event

    split, model, tools = Split(), Model(), InstantTools()
    with mock_aws(), canned_model(split, model=model):
        runtime, tape = taped_runtime("parley-bench-tool-runs", OPERATOR, ENVIRON, tool_client=tools)
        runtime.definition_service().create_definition(
            PlaybookRef("acme", "support"), "reasoning", NAME, SOURCE
        )
        api = build_handler(runtime)
        event = api_gateway_event(
            "POST", f"{BASE}/definitions/reasoning/{NAME}/run", HEADERS, json.dumps({"input": INPUT}).encode()
        )
        yield Bench(lambda: _succeeded(api(event, None)), tape, split, tools, model)


def _recorded(bench: Bench) -> list[tuple[str, Any]]:
    for _ in range(3):  # warm: the document check (once per version), imports, caches
        bench.run()
    with bench.tape.record() as calls:
        bench.run()
    return calls


def cpu_per_run(rounds: int = 200) -> dict[str, Any]:
    """The CPU time (ms) of a run, as (p50, p99): the whole call, httpx, the fake tool client, and
    Parley's own (the whole less httpx and the tool), for the run and per model step; with the
    DynamoDB calls of a run."""
    with _bench() as bench:
        calls = _recorded(bench)
        whole: list[float] = []
        http: list[float] = []
        tool: list[float] = []
        model: list[float] = []
        for _ in range(rounds):
            bench.split.clear()
            bench.tools.spent.clear()
            with bench.tape.replay(calls):
                begin = time.thread_time()
                bench.run()
                whole.append((time.thread_time() - begin) * 1000)
            if len(bench.split.model) != MODEL_STEPS or len(bench.split.http) != MODEL_STEPS:
                raise RuntimeError(f"expected {MODEL_STEPS} model calls a run, got {len(bench.split.model)}")
            if len(bench.tools.spent) != TOOL_STEPS + 1:  # the list before the model, then ten calls
                raise RuntimeError(f"expected {TOOL_STEPS} tool calls and one list a run")
            http.append(sum(bench.split.http))
            tool.append(sum(bench.tools.spent))
            model.append(sum(bench.split.model))
    own = [w - h - t for w, h, t in zip(whole, http, tool, strict=True)]
    outside_model = [w - m - t for w, m, t in zip(whole, model, tool, strict=True)]
    in_adapter = [m - h for m, h in zip(model, http, strict=True)]
    kinds: dict[str, int] = {}
    for method, _ in calls:
        kinds[method] = kinds.get(method, 0) + 1
    return {
        "run": {
            "whole call": percentiles(whole),
            "inside httpx (no socket)": percentiles(http),
            "fake tool client": percentiles(tool),
            "Parley's own (whole less both)": percentiles(own),
            "  of which in call_model (adapter)": percentiles(in_adapter),
            "  of which outside call_model": percentiles(outside_model),
        },
        "step": {
            "Parley's own": percentiles([value / MODEL_STEPS for value in own]),
            "  in call_model (adapter)": percentiles([value / MODEL_STEPS for value in in_adapter]),
            "  outside call_model": percentiles([value / MODEL_STEPS for value in outside_model]),
        },
        "dynamodb_calls": kinds,
        "rounds": rounds,
    }


def request_bytes() -> list[int]:
    """The bytes of each model step's request body, steps 1..11, as the MockTransport received them."""
    with _bench() as bench:
        bench.run()  # warm
        bench.model.bodies.clear()
        bench.model.keeping = True
        bench.run()
        bench.model.keeping = False
        sizes = list(bench.model.bodies)
    if len(sizes) != MODEL_STEPS:
        raise RuntimeError(f"expected {MODEL_STEPS} requests, got {len(sizes)}")
    return sizes


def profile(rounds: int = 100, top: int = 15) -> list[tuple[str, float, float, int]]:
    """The top functions by own time of ``rounds`` replayed runs: (where, own ms a run, cumulative ms a
    run, calls a run)."""
    from benchmarks.reasoning import _where

    with _bench() as bench:
        calls = _recorded(bench)
        profiler = cProfile.Profile()
        for _ in range(rounds):
            with bench.tape.replay(calls):
                profiler.enable()
                bench.run()
                profiler.disable()
    stats = pstats.Stats(profiler).stats  # type: ignore[attr-defined]
    rows = [
        (_where(path, line, func), own * 1000 / rounds, cumulative * 1000 / rounds, made // rounds)
        for (path, line, func), (_cc, made, own, cumulative, _callers) in stats.items()
    ]
    rows.sort(key=lambda row: row[1], reverse=True)
    return rows[:top]


def report(with_profile: bool = False) -> None:
    figures = cpu_per_run()
    print(f"Reasoning run with tools in process: {TOOL_STEPS} steps with one tool call each, then the answer")
    print("(API Gateway event -> api handler -> reply; the run's work in the call), DynamoDB replayed, the")
    print("model answering at once through httpx.MockTransport, an in-memory tool client answering at once")
    print(f"(CPU time, {figures['rounds']} rounds)")
    print("  the whole run")
    for name, (p50, p99) in figures["run"].items():
        print(f"    {name:<36} p50 {p50:6.2f} ms   p99 {p99:6.2f} ms")
    print(f"  per model step (the run's own time / {MODEL_STEPS} steps)")
    for name, (p50, p99) in figures["step"].items():
        print(f"    {name:<36} p50 {p50:6.2f} ms   p99 {p99:6.2f} ms")
    kinds = figures["dynamodb_calls"]
    shown = ", ".join(f"{count} {method}" for method, count in sorted(kinds.items()))
    print(f"  DynamoDB calls of a run: {sum(kinds.values())} ({shown})")
    sizes = request_bytes()
    print("Input a run sends as it grows: each step's request body (every step resends the conversation),")
    print(f"tokens at ~{BYTES_PER_TOKEN} bytes a token")
    for step, size in enumerate(sizes, start=1):
        kind = "tool_use" if step <= TOOL_STEPS else "answer"
        tokens = math.ceil(size / BYTES_PER_TOKEN)
        print(f"  step {step:>2} ({kind:<8}) {size:7,} bytes   ~{tokens:6,} tokens")
    total = sum(sizes)
    print(f"  whole run            {total:7,} bytes   ~{math.ceil(total / BYTES_PER_TOKEN):6,} tokens")
    growth = (sizes[-1] - sizes[0]) / (len(sizes) - 1)
    added = growth / BYTES_PER_TOKEN
    print(f"  each step adds about {growth:,.0f} bytes (~{added:,.0f} tokens) to the next request")
    if with_profile:
        print()
        print("cProfile of the run, top by own time (ms a run; profiled, so inflated)")
        for where, own, cumulative, made in profile():
            print(f"  {own:6.3f} own  {cumulative:6.3f} cum  {made:5d}x  {where}")


if __name__ == "__main__":
    report(with_profile=True)
