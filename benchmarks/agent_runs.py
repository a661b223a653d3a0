"""Figures of agent runs that ask a person and wait (``agent-runs.md``, "A run that waits").

One reasoning function with ``ask`` (and no tools: ``request_input`` is offered with ``ask`` alone) runs
on the local runtime (``parley.local.server.running``: the same handlers, state machine and scheduler
port as on AWS) under a manual clock. Its model is canned (``benchmarks.reasoning.canned_model``: one
``httpx.Client`` over ``httpx.MockTransport``, no socket): the first step asks
``request_input`` (a text question), the step after the answer gives the final text.

- :func:`calls_of_an_agent_run`: the AWS calls and the list-price cost of one run that asks, is answered
  after a wait, and finishes with one more model step; counted with ``benchmarks.replies``' harness
  (its ``Tally`` over DynamoDB, its ``_count`` over the functions and the scheduler port, each scheduler
  call counted as the AWS adapter makes it). :func:`waits_cost_nothing` counts it answered after one hour
  and after two days, and raises if the two differ: a run that waits runs nothing.
- :func:`answer_to_next_model_call`: from sending ``answer_interaction`` to the moment the model
  receives the run's next request (a ``time.perf_counter()`` stamp in the canned model).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, Final

from benchmarks.reasoning import ENVIRON, Split, canned_model
from benchmarks.replies import (
    SQS_REQUEST,
    SQS_REQUESTS_PER_MESSAGE,
    Harness,
    InProcessTools,
    _count,
    _listing,
)
from benchmarks.runs import ASSUMED_BILLED_SECONDS, PRICES, Tally, percentiles
from benchmarks.tool_runs import _anthropic

BASE = "/v1/orgs/acme/playbooks/campaigns"
HEADERS = {"Authorization": "Bearer dev-token", "Content-Type": "application/json"}
OPERATOR = """
principals:
  - { id: dev, token: dev-token, grants: [{ org: acme, playbook: campaigns, role: write }] }
models:
  allowed: [anthropic/*]
"""
NAME = "post-launch-note"
#: ``expires: P3D``: the question outlives the longest wait measured.
SOURCE = """---
model: anthropic/claude-sonnet-4-5
ask: { to: '{{ input.owner }}', expires: P3D }
---
Post the launch note to the channel the owner names: {{ input.note }}
"""
INPUT = {"owner": "maria", "note": "Spring sale starts Monday."}
QUESTION = {"kind": "text", "prompt": "Which channel?"}
ANSWER = "#launches"
FINAL = "Posted the launch note to #launches."
WAITS: Final = {"1 hour": timedelta(hours=1), "2 days": timedelta(days=2)}
#: After the run succeeded, the clock goes on this far, so that the work it queued fires (the resumed
#: segment's backstop, an SQS message due 11 minutes after the segment began: on AWS it cannot be taken
#: back, and the timer function is invoked for it all the same).
DRAIN: Final = timedelta(minutes=20)
#: DynamoDB reads of one round of ``run_definition`` polling an agent run (``get_run``, ``get_request``).
POLL_READS: Final = 2
#: The moments after the answer is sent that :func:`answer_to_next_model_call` times.
MODEL_CALL: Final = "the run's next model call"
LATENCIES: Final = (
    "the reason function invoked",
    MODEL_CALL,
    "the answer's reply (run ended)",
)
#: What one model step is assumed to bill in the reason function besides its own work: the provider's
#: time to the whole answer of a short step. The model's tokens are the provider's bill, not AWS's.
ASSUMED_MODEL_CALL_BILLED_SECONDS: Final = 2.0


@dataclass
class AgentModel:
    """The model behind ``httpx.MockTransport``: step 1 calls ``request_input``, step 2 (after the
    answer) gives the final text. ``calls`` counts the requests; ``resumed`` keeps the
    ``time.perf_counter()`` of each step-2 request, and ``answered`` whether it carried the answer."""

    calls: int = 0
    resumed: list[float] = field(default_factory=list)
    answered: list[bool] = field(default_factory=list)

    def __call__(self, request: Any) -> Any:
        import httpx

        received = time.perf_counter()
        sent = json.loads(request.content)
        self.calls += 1
        if not any(message["role"] == "assistant" for message in sent["messages"]):
            content = [{"type": "tool_use", "id": "toolu_ask01", "name": "request_input", "input": QUESTION}]
            body = _anthropic(content, "tool_use", 60)
        else:
            self.resumed.append(received)
            self.answered.append(ANSWER in json.dumps(sent["messages"][-1]))
            body = _anthropic([{"type": "text", "text": FINAL}], "end_turn", 90)
        return httpx.Response(200, content=body, headers={"content-type": "application/json"})


@dataclass
class AgentBench:
    harness: Harness
    model: AgentModel
    #: The rounds ``run_definition`` paused while polling the run (``runtime.pause``), while counting.
    polls: int = 0

    def start(self) -> str:
        """``POST …/run``: answers ``started`` once the run waits for its question."""
        started = self.harness.http.post(f"{BASE}/definitions/reasoning/{NAME}/run", json={"input": INPUT})
        run = started.json()
        if (
            started.status_code != 200
            or run["status"] != "started"
            or run.get("waiting", {}).get("for") != "input"
        ):
            raise RuntimeError(f"the run did not wait for its question: {started.text}")
        run_id: str = run["run_id"]
        # The run's wait is an execution its step started as it asked: let it park (its wait function
        # invoked) before anything moves on, or that invocation is counted in one run and not another.
        self.harness.server.settle()
        return run_id

    def answer(self, run_id: str) -> None:
        answered = self.harness.http.post(f"{BASE}/runs/{run_id}/answer", json={"answer": ANSWER})
        if answered.status_code != 200:
            raise RuntimeError(f"the answer was refused: {answered.status_code} {answered.text}")


@contextlib.contextmanager
def agent_runtime() -> Iterator[AgentBench]:
    """The local runtime with the canned model and the function saved, its work counted as
    ``benchmarks.replies`` counts it (there are no tools: its tool client stays unused)."""
    import httpx

    import parley.local.aws as local_aws_module
    from parley.config import parse_operator_config
    from parley.local.server import ServeOptions, running

    os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "WARNING")
    original = local_aws_module.local_dynamodb_client
    tally: Tally | None = None

    def counted_client() -> Any:
        nonlocal tally
        tally = Tally(original())
        return tally

    model = AgentModel()
    local_aws_module.local_dynamodb_client = counted_client
    try:
        with (
            contextlib.redirect_stderr(io.StringIO()),  # the local server's request log
            canned_model(Split(), model=model),
            running(
                ServeOptions(port=0, clock="manual"), parse_operator_config(OPERATOR, "bench", environ={})
            ) as server,
            httpx.Client(headers=HEADERS, base_url=server.url, timeout=120) as http,
        ):
            assert tally is not None
            server.runtime.environ = ENVIRON
            harness = Harness(server, None, InProcessTools(None), http, tally)
            _count(harness)
            bench = AgentBench(harness, model)
            plain_pause = server.runtime.pause

            def pause(seconds: float) -> Any:
                if harness.counts.on:
                    bench.polls += 1
                return plain_pause(seconds)

            server.runtime.pause = pause
            saved = http.post(f"{BASE}/definitions/reasoning", json={"name": NAME, "source": SOURCE})
            if saved.status_code != 201:
                raise RuntimeError(f"the function was not saved: {saved.text}")
            yield bench
    finally:
        local_aws_module.local_dynamodb_client = original


# --- the calls of one agent run ---------------------------------------------------------------------------


@dataclass
class AgentRunCalls:
    api_requests: int
    invocations: dict[str, int]
    works: dict[str, int]
    scheduled: dict[str, int]
    schedules_fired: int
    state_transitions: int
    dynamodb_calls: dict[str, int]
    dynamodb_units: tuple[float, float]
    model_calls: int
    polls: int
    events: list[str]
    cost: dict[str, float]

    def counts(self) -> dict[str, Any]:
        """What must not grow with the wait: everything counted but the prices, and the reads of
        ``run_definition`` polling the run while the first step works (two a round: ``get_run`` and
        ``get_request``), whose number follows the first step's time, not the wait."""
        counted = {key: value for key, value in vars(self).items() if key not in ("cost", "polls")}
        calls = dict(self.dynamodb_calls)
        calls["get_item"] = calls.get("get_item", 0) - POLL_READS * self.polls
        counted["dynamodb_calls"] = calls
        counted["dynamodb_units"] = self.dynamodb_units[0]  # the reads' units follow the polling too
        return counted


def calls_of_an_agent_run(bench: AgentBench, wait: timedelta) -> AgentRunCalls:
    """Count one run from ``POST …/run``: it asks, the clock moves on ``wait``, the answer comes, the
    run's next model step ends it; then the clock moves on :data:`DRAIN` so that the work it queued
    fires. Then price it."""
    from parley.infrastructure.functions import function_named
    from parley.ports.waiting import RunKey

    harness = bench.harness
    model_calls = bench.model.calls
    bench.polls = 0
    with harness.counting() as counts:
        run_id = bench.start()
        harness.advance(wait.total_seconds())
        with harness.paused():  # the bench's own reads of the run are not counted
            if harness.status(run_id) != "started":
                raise RuntimeError(f"the run ended while it waited {wait}")
        bench.answer(run_id)
        with harness.paused():
            done = harness.http.get(f"{BASE}/runs/{run_id}").json()
        harness.advance(DRAIN.total_seconds())
        model_calls = bench.model.calls - model_calls
        with harness.paused():
            events = harness.http.get(f"{BASE}/runs/{run_id}/history", params={"limit": 100}).json()["events"]
            history = harness.server.executor.history(RunKey("acme", "campaigns", run_id))
        tally = harness.tally
    if (done["status"], done.get("output")) != ("succeeded", FINAL) or not bench.model.answered[-1]:
        raise RuntimeError(f"the answered run did not finish with the answer: {json.dumps(done)}")
    transitions = sum(1 for event in history if event["type"].endswith("StateEntered"))
    api_requests = 2  # run_definition and answer_interaction
    invocations = {"api": api_requests, **dict(counts.invocations)}
    queued = counts.scheduled["sqs_message"] + counts.scheduled["lambda_invoke"]
    fired = invocations.get("timer", 0) - queued  # the timer's other invocations: schedules that fired
    seconds = {name: count * ASSUMED_BILLED_SECONDS for name, count in invocations.items()}
    seconds["reason"] = seconds.get("reason", 0.0) + model_calls * ASSUMED_MODEL_CALL_BILLED_SECONDS
    # run_definition waits (polling the run) while the first step works: the api function bills it too.
    seconds["api"] += ASSUMED_MODEL_CALL_BILLED_SECONDS
    gb_seconds = sum(function_named(name).memory_mb / 1024 * s for name, s in seconds.items())
    cost = {
        "API Gateway requests": api_requests * PRICES["api_gateway_request"],
        "Lambda requests": sum(invocations.values()) * PRICES["lambda_request"],
        "Lambda duration (arm64)": gb_seconds * PRICES["lambda_gb_second_arm64"],
        "SQS requests": counts.scheduled["sqs_message"] * SQS_REQUESTS_PER_MESSAGE * SQS_REQUEST,
        "Step Functions transitions": transitions * PRICES["state_transition"],
        "DynamoDB writes": tally.write_units * PRICES["dynamodb_write_unit"],
        "DynamoDB reads": tally.read_units * PRICES["dynamodb_read_unit"],
        "Scheduler invocations": fired * PRICES["scheduler_invocation"],
    }
    return AgentRunCalls(
        api_requests=api_requests,
        invocations=invocations,
        works=dict(counts.works),
        scheduled=dict(counts.scheduled),
        schedules_fired=fired,
        state_transitions=transitions,
        dynamodb_calls=dict(tally.calls),
        dynamodb_units=(tally.write_units, tally.read_units),
        model_calls=model_calls,
        polls=bench.polls,
        events=[str(event["type"]) for event in events],
        cost=cost,
    )


def waits_cost_nothing(bench: AgentBench) -> dict[str, AgentRunCalls]:
    """The run answered after each of :data:`WAITS` (after one uncounted run, so that every counted
    one finds the same warm caches); raises if the counts differ."""
    calls_of_an_agent_run(bench, timedelta(hours=1))
    figures = {label: calls_of_an_agent_run(bench, wait) for label, wait in WAITS.items()}
    shorter, longer = (figures[label].counts() for label in WAITS)
    if shorter != longer:
        differ = {key: (shorter[key], longer[key]) for key in shorter if shorter[key] != longer[key]}
        raise AssertionError(f"an agent run's calls grow with its wait: {differ}")
    return figures


# --- answer -> the next model call ----------------------------------------------------------------------


def answer_to_next_model_call(bench: AgentBench, rounds: int = 30) -> dict[str, tuple[float, float]]:
    """From sending the answer to the canned model receiving the run's next request, p50 and p99 (ms),
    over ``rounds`` runs (after three uncounted ones); with, on the way, the times to the invocation of
    the reason function (invoked by the answer itself, after its write) and to the answer's reply."""
    functions = bench.harness.server.functions
    plain_handler = functions.handler
    invoked: dict[str, float] = {}

    def handler(name: str) -> Callable[[Any, Any], Any]:
        inner = plain_handler(name)

        def stamped(event: Any, context: Any) -> Any:
            invoked.setdefault(name, time.perf_counter())
            return inner(event, context)

        return stamped

    samples: dict[str, list[float]] = {key: [] for key in LATENCIES}
    functions.handler = handler
    try:
        for round_number in range(rounds + 3):
            run_id = bench.start()
            before = len(bench.model.resumed)
            invoked.clear()
            sent = time.perf_counter()
            bench.answer(run_id)
            replied = time.perf_counter()
            if len(bench.model.resumed) != before + 1:
                raise RuntimeError("the answer did not lead to exactly one model call")
            if round_number < 3:
                continue
            stamps = [invoked["reason"], bench.model.resumed[-1], replied]
            for key, stamp in zip(LATENCIES, stamps, strict=True):
                samples[key].append((stamp - sent) * 1000)
    finally:
        functions.handler = plain_handler
    return {key: percentiles(values) for key, values in samples.items()}


def measure() -> tuple[dict[str, AgentRunCalls], dict[str, tuple[float, float]]]:
    with agent_runtime() as bench:
        figures = waits_cost_nothing(bench)
        latency = answer_to_next_model_call(bench)
    return figures, latency


def report() -> None:
    """Print the figures (``make bench``)."""
    figures, latency = measure()
    labels = list(figures)
    print(
        "One agent run that asks one question (request_input, text), answered after a wait, then one more\n"
        "model step (from POST …/run until it succeeded, and the work it queued fired; local runtime,\n"
        "each scheduler call counted as the AWS adapter makes it)"
    )

    def row(name: str, value: Any) -> tuple[str, list[str]]:
        return name, [str(value(figures[label])) for label in labels]

    rows = [
        ("answered after", labels),
        row("API Gateway requests", lambda c: c.api_requests),
        row("Lambda invocations", lambda c: _listing(c.invocations)),
        row("  the timer's works", lambda c: _listing(c.works)),
        row("  invoked at once (async Invoke)", lambda c: c.scheduled.get("lambda_invoke", 0)),
        row("  through the timer queue (SQS)", lambda c: c.scheduled.get("sqs_message", 0)),
        row("EventBridge schedules created", lambda c: c.scheduled.get("schedule_created", 0)),
        row("  DeleteSchedule calls", lambda c: c.scheduled.get("schedule_deleted", 0)),
        row("  fired", lambda c: c.schedules_fired),
        row("Step Functions state transitions", lambda c: c.state_transitions),
        row("DynamoDB calls", lambda c: _listing(c.dynamodb_calls)),
        row("  run_definition's polling reads", lambda c: POLL_READS * c.polls),
        row(
            "DynamoDB request units", lambda c: f"{c.dynamodb_units[0]:g} write, {c.dynamodb_units[1]:g} read"
        ),
        row("model calls", lambda c: c.model_calls),
        row("list price per 1,000 runs (goal: ≤ $0.15)", lambda c: f"${sum(c.cost.values()) * 1000:.4f}"),
    ]
    rows += [
        row(f"  {item}", lambda c, item=item: f"${c.cost[item] * 1000:.5f}")
        for item in figures[labels[0]].cost
    ]
    name_width = max(len(name) for name, _ in rows)
    value_width = max(len(value) for _, values in rows for value in values)
    for name, values in rows:
        print(f"  {name:<{name_width}}  " + "  ".join(f"{value:<{value_width}}" for value in values).rstrip())
    print(f"  run history: {', '.join(figures[labels[-1]].events)}")
    print("  (equal columns: while it waits the run's execution is parked on a task token and nothing runs;")
    print("   compared without run_definition's polling reads, whose number follows the first step's time)")
    model_ms, other_ms = ASSUMED_MODEL_CALL_BILLED_SECONDS * 1000, ASSUMED_BILLED_SECONDS * 1000
    print(f"  (Lambda billed at an assumed {other_ms:.0f} ms an invocation, plus {model_ms:.0f} ms a model")
    print("   call in the reason function, and once more in the api function, whose run_definition waits")
    print("   for the first step; the model's tokens are the provider's bill, not in it. The model answers")
    print("   at once here: while a real first step works, run_definition polls the run more, 2 reads a")
    print("   round, rounds at most 0.25 s apart)")
    print()
    p50, p99 = latency.pop(MODEL_CALL)
    print("answer_interaction -> the run's next model call on the local runtime (30 runs; the model canned")
    print("in process, so no provider round trip; the answer invokes the reason function after its write)")
    print(f"  p50 {p50:.1f} ms   p99 {p99:.1f} ms")
    print("  on the way, from sending the answer:")
    for name, (p50, p99) in latency.items():
        print(f"    {name:<32} p50 {p50:6.1f} ms   p99 {p99:6.1f} ms")


if __name__ == "__main__":
    report()
