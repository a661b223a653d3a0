"""Figures of a workflow that asks through the inbox (issue 24; ``workflow-format.md``, "A workflow
document", "Calling a function"): the brief-approval workflow (``examples/definitions/brief-approval.yaml``),
which calls the interaction function ``approve-campaign-brief`` and catches its request's expiry.

- ``calls_of_workflow_runs``: the AWS calls of one run of each case on the local runtime (the same
  handlers, the same compiled state machine run by the local interpreter, the same scheduler port as on
  AWS), counted and priced as ``benchmarks.runs`` prices an inbox run: the workflow **asked and
  answered**, the workflow **asked, expired, then caught** (the clock moved past the expiry; the catch
  makes the run succeed), and for the second one's comparison an inbox run of the same function asked
  and expired. ``benchmarks.runs.calls_of_an_answered_run`` gives the inbox run asked and answered.
- ``answer_to_succeeded``: from sending the answer to the called run to the workflow run being
  ``succeeded``, on the local runtime.

State transitions are counted as Step Functions bills them ("a state transition each time a step of
your workflow is executed", retries included): every ``…StateEntered`` event of the workflow's execution
and of the called run's execution. A Parallel state's branches add nothing of their own: the Parallel is
one step, and each state of its branches is one more, each with its own ``…StateEntered`` event. A
Lambda task attempted again (a retry) would add one transition per attempt past the first.

Lambda invocations are counted as the local runtime makes them (each handler's invocation, by
function), and checked against the Lambda tasks of the two executions' histories. API Gateway requests
are the POSTs that act (run, answer); the reads the benchmark makes to find the called run and to see
the ending are not counted, nor their DynamoDB calls.

- ``calls_of_a_for`` and ``calls_of_a_fork_wait_and_event``: the same figures for a ``for`` of 100
  iterations of a ``set`` (no calls), and for a ``fork`` of two calls of the reasoning function
  ``review-brief`` (``examples/definitions/reasoning/review-brief.md``, on the demo model of ``parley
  demo-model`` served in process on 127.0.0.1), then a ``wait`` of a day (the manual clock moved), then a
  ``listen`` taking one event sent with ``POST /runs/{run_id}/events``. The reasoning runs have no
  execution of their own; each one's backstop is work through the timer queue (an SQS message, priced
  at ``benchmarks.replies``' SQS requests per message), delivered to the timer function. The model's
  tokens are not priced.
- ``waiting_runs``: the local runtime with 10 and 1,000 brief-approval runs waiting at once (each
  waiting on its called interaction run's open request), in a fresh interpreter as
  ``benchmarks.local_scale`` measures open requests: RSS, threads, store items, and the p50 of starting
  one more run and of answering one called run until its workflow run has succeeded.
"""

from __future__ import annotations

import contextlib
import gc
import io
import json
import os
import statistics
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Final

import httpx

from benchmarks import local_scale
from benchmarks.replies import SQS_REQUEST, SQS_REQUESTS_PER_MESSAGE
from benchmarks.runs import (
    ASSUMED_BILLED_SECONDS,
    BASE,
    BRIEF,
    HEADERS,
    INPUT,
    OPERATOR,
    PRICES,
    ROOT,
    Tally,
    calls_of_an_answered_run,
    percentiles,
)

if TYPE_CHECKING:
    from parley.local.server import LocalServer

WORKFLOW_SOURCE: Final = (ROOT / "examples" / "definitions" / "brief-approval.yaml").read_text()
WORKFLOW: Final = "brief-approval"
#: The interaction function the workflow calls, saved under the name the workflow calls it by.
FUNCTION: Final = "approve-campaign-brief"
ANSWER: Final = {"answer": {"verdict": "approve"}}
#: The clock's advance of the expired case: past the request's expiry (``P2D``) and its wait's backstop
#: (a minute later).
PAST_EXPIRY_SECONDS: Final = 172_860
ANSWERED: Final = "workflow asked and answered"
EXPIRED: Final = "workflow asked, expired, then caught"
INBOX_EXPIRED: Final = "inbox run asked and expired"
#: How long a run may take to come to rest on the local runtime before the benchmark gives up.
SETTLE_SECONDS: Final = 10.0
LAMBDA_TASKS: Final = ("TaskScheduled", "LambdaFunctionScheduled")


@dataclass
class _Meter:
    """What one run costs: DynamoDB (the tally), Lambda invocations by function, scheduler calls."""

    tally: Tally
    invocations: Counter[str] = field(default_factory=Counter)
    schedules: Counter[str] = field(default_factory=Counter)
    #: Invocations that have returned, by function (metered or not): what a benchmark waits for.
    returned: Counter[str] = field(default_factory=Counter)
    on: bool = False

    @contextlib.contextmanager
    def measuring(self) -> Iterator[None]:
        self.tally.calls, self.tally.write_units, self.tally.read_units = Counter(), 0.0, 0.0
        self.invocations, self.schedules, self.returned = Counter(), Counter(), Counter()
        self.on = self.tally.on = True
        try:
            yield
        finally:
            self.on = self.tally.on = False

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """For the benchmark's own reads (with nothing under way: every POST has settled)."""
        was = self.on
        self.on = self.tally.on = False
        try:
            yield
        finally:
            self.on = self.tally.on = was


#: What :func:`_metered_server` saves by default: the interaction function and the workflow.
BRIEF_APPROVAL: Final = (("interaction", FUNCTION, BRIEF), ("workflow", WORKFLOW, WORKFLOW_SOURCE))


@contextlib.contextmanager
def _metered_server(
    definitions: tuple[tuple[str, str, str], ...] = BRIEF_APPROVAL, operator: str = OPERATOR
) -> Iterator[tuple[LocalServer, _Meter, httpx.Client]]:
    """A local server on the manual clock, its DynamoDB client, functions and scheduler metered, with
    ``definitions`` (kind, name, source) saved."""
    import parley.local.aws as local_aws_module
    from parley.config import parse_operator_config
    from parley.local.server import ServeOptions, running

    original = local_aws_module.local_dynamodb_client
    tallies: list[Tally] = []

    def counted() -> Any:
        tallies.append(Tally(original()))
        return tallies[-1]

    local_aws_module.local_dynamodb_client = counted
    try:
        options = ServeOptions(port=0, clock="manual")
        with (
            running(options, parse_operator_config(operator, "bench", environ={})) as server,
            httpx.Client(base_url=server.url, headers=dict(HEADERS), timeout=30) as http,
        ):
            meter = _Meter(tallies[0])
            _meter_functions(server, meter)
            for kind, name, source in definitions:
                saved = http.post(f"{BASE}/definitions/{kind}", json={"name": name, "source": source})
                if saved.status_code != 201:
                    raise RuntimeError(f"the {kind} {name} was not saved: {saved.text}")
            yield server, meter, http
    finally:
        local_aws_module.local_dynamodb_client = original


def _meter_functions(server: LocalServer, meter: _Meter) -> None:
    """Count each function's invocations and each scheduler call (as the AWS adapter makes it: work due
    at once is an asynchronous invocation, within 15 minutes an SQS message, later a schedule)."""
    from parley.aws.eventbridge import AT_ONCE, QUEUE_DELAY_MAX

    functions, scheduler = server.functions, server.scheduler
    plain_handler = functions.handler
    plain_schedule, plain_cancel = scheduler.schedule, scheduler.cancel

    def handler(name: str) -> Callable[[Any, Any], Any]:
        function = plain_handler(name)

        def invoked(event: Any, context: Any) -> Any:
            if meter.on:
                meter.invocations[name] += 1
            try:
                return function(event, context)
            finally:
                meter.returned[name] += 1

        return invoked

    def schedule(name: str, at: datetime, work: Mapping[str, Any]) -> None:
        if meter.on:
            delay = at - server.clock.now()
            kind = "at once" if delay <= AT_ONCE else "queued" if delay <= QUEUE_DELAY_MAX else "created"
            meter.schedules[kind] += 1
        plain_schedule(name, at, work)

    def cancel(name: str) -> None:
        if meter.on:
            meter.schedules["deleted"] += 1
        plain_cancel(name)

    functions.handler = handler  # type: ignore[method-assign]
    scheduler.schedule = schedule  # type: ignore[method-assign]
    scheduler.cancel = cancel  # type: ignore[method-assign]


def _settled(server: LocalServer) -> None:
    server.executor.settle(SETTLE_SECONDS)


def _called_run(http: httpx.Client, workflow_run_id: str) -> str:
    """The run the workflow waits for, found through its open request (``get_run`` shows its parent)."""
    open_requests = http.get(f"{BASE}/interactions").json()["interactions"]
    for item in open_requests:
        run = http.get(f"{BASE}/runs/{item['run_id']}").json()
        if (run.get("parent") or {}).get("run_id") == workflow_run_id:
            return str(item["run_id"])
    raise RuntimeError(f"no open request of a run called by {workflow_run_id}")


def _started(http: httpx.Client, kind: str, name: str) -> str:
    reply = http.post(f"{BASE}/definitions/{kind}/{name}/run", json={"input": INPUT})
    if reply.status_code != 200 or reply.json()["status"] != "started":
        raise RuntimeError(f"the {kind} run did not start: {reply.text}")
    return str(reply.json()["run_id"])


def _ending(http: httpx.Client, run_id: str) -> dict[str, Any]:
    run: dict[str, Any] = http.get(f"{BASE}/runs/{run_id}").json()
    return run


def _run_once(server: LocalServer, meter: _Meter, http: httpx.Client, case: str) -> dict[str, Any]:
    """One run of ``case``, metered from its POST …/run until it has ended."""
    from parley.definitions.model import PlaybookRef
    from parley.ports.waiting import RunKey
    from parley.runs.service import run_service

    api_requests = 0
    workflow = case != INBOX_EXPIRED
    with meter.measuring():
        run_id = _started(http, "workflow" if workflow else "interaction", WORKFLOW if workflow else FUNCTION)
        api_requests += 1
        _settled(server)
        with meter.paused():
            called = _called_run(http, run_id) if workflow else run_id
        if case == ANSWERED:
            answered = http.post(f"{BASE}/runs/{called}/answer", json=ANSWER)
            if answered.status_code != 200:
                raise RuntimeError(f"the answer was refused: {answered.text}")
            api_requests += 1
        else:
            moved = http.post("/_local/clock/advance", json={"seconds": PAST_EXPIRY_SECONDS})
            if moved.status_code != 200:
                raise RuntimeError(f"the clock did not move: {moved.text}")
        _settled(server)
        with meter.paused():
            ending = _ending(http, run_id)
    expected = "succeeded" if workflow else "rejected"
    if ending["status"] != expected:
        raise RuntimeError(f"the {case} run ended {ending['status']}, not {expected}: {ending}")

    playbook = PlaybookRef("acme", "campaigns")
    executions: dict[str, list[dict[str, Any]]] = {}
    if workflow:
        item = run_service(server.runtime).store.get_run(playbook, run_id)
        if item is None or item.execution is None:
            raise RuntimeError(f"the workflow run {run_id} has no execution")
        executions["workflow"] = server.executor.execution_history(item.execution)
    called_execution = "called run" if workflow else "run"
    executions[called_execution] = server.executor.history(RunKey(playbook.org, playbook.playbook, called))
    entered, transitions = _transitions(executions)

    invocations = Counter({"api": api_requests, **meter.invocations})
    from_history = {
        "workflow": sum(1 for e in executions.get("workflow", []) if e["type"] in LAMBDA_TASKS),
        "wait + settle": sum(1 for e in executions[called_execution] if e["type"] in LAMBDA_TASKS),
    }
    counted = {
        "workflow": invocations["workflow"],
        "wait + settle": invocations["wait"] + invocations["settle"],
    }
    if from_history != counted:
        raise RuntimeError(
            f"{case}: invocations {counted} where the histories' Lambda tasks say {from_history}"
        )
    if meter.schedules["queued"]:
        raise RuntimeError(f"{case}: work through the timer queue (SQS), which this benchmark does not price")
    fired = invocations["timer"] - meter.schedules["at once"]
    return _priced(
        {
            "output": ending.get("output"),
            "states_entered": entered,
            "state_transitions": sum(transitions.values()),
            "transitions_by_execution": transitions,
            "lambda_invocations": dict(sorted(invocations.items())),
            "dynamodb_calls": dict(meter.tally.calls),
            "dynamodb_units": (meter.tally.write_units, meter.tally.read_units),
            "schedules": {**meter.schedules, "fired": fired},
        },
        api_requests,
    )


def _transitions(
    executions: Mapping[str, list[dict[str, Any]]],
) -> tuple[dict[str, list[str]], dict[str, int]]:
    """The states each execution entered, and its state transitions as Step Functions bills them (each
    state entered, and each Lambda task's attempt past the first)."""
    entered = {
        name: [e["name"] for e in h if e["type"].endswith("StateEntered")] for name, h in executions.items()
    }
    retried = {
        name: sum(1 for e in h if e["type"] in LAMBDA_TASKS)
        - sum(1 for e in h if e["type"] == "TaskStateEntered")
        for name, h in executions.items()
    }
    return entered, {name: len(states) + retried[name] for name, states in entered.items()}


def _priced(calls: dict[str, Any], api_requests: int) -> dict[str, Any]:
    """The figures with their list price per 1,000 runs, in ``benchmarks.runs``' parts."""
    from parley.infrastructure.functions import function_named

    invocations: dict[str, int] = calls["lambda_invocations"]
    # Billed duration is the same assumption as the inbox run's (benchmarks.runs), for every function.
    gb_seconds = sum(
        function_named(name).memory_mb / 1024 * ASSUMED_BILLED_SECONDS * count
        for name, count in invocations.items()
    )
    writes, reads = calls["dynamodb_units"]
    cost = {
        "API Gateway requests": api_requests * PRICES["api_gateway_request"],
        "Lambda requests": sum(invocations.values()) * PRICES["lambda_request"],
        "Lambda duration (arm64)": gb_seconds * PRICES["lambda_gb_second_arm64"],
        "Step Functions transitions": calls["state_transitions"] * PRICES["state_transition"],
        "DynamoDB writes": writes * PRICES["dynamodb_write_unit"],
        "DynamoDB reads": reads * PRICES["dynamodb_read_unit"],
        "Scheduler invocations": calls["schedules"]["fired"] * PRICES["scheduler_invocation"],
    }
    if queued := calls["schedules"].get("queued", 0):
        cost["SQS requests"] = queued * SQS_REQUESTS_PER_MESSAGE * SQS_REQUEST
    return {**calls, "cost_per_1000_runs": {k: v * 1000 for k, v in cost.items()}}


def calls_of_workflow_runs() -> dict[str, dict[str, Any]]:
    """One run of each case on one local server, after one warm-up run of the workflow (so that its
    state machine's version is made, as a warm api function has it): :data:`ANSWERED`, :data:`EXPIRED`
    and :data:`INBOX_EXPIRED`, each with the keys of ``runs.calls_of_an_answered_run`` and
    ``states_entered``, ``transitions_by_execution`` and the run's ``output``."""
    with _metered_server() as (server, meter, http):
        _run_once(server, meter, http, ANSWERED)  # warm-up
        return {case: _run_once(server, meter, http, case) for case in (ANSWERED, EXPIRED, INBOX_EXPIRED)}


def answer_to_succeeded(rounds: int = 40) -> tuple[float, float]:
    """p50 and p99, in ms, from the answer's POST to ``GET /runs/{workflow run}`` saying ``succeeded``
    (after 3 warm-up rounds)."""
    from parley.config import parse_operator_config
    from parley.local.server import ServeOptions, running

    samples: list[float] = []
    with (
        running(
            ServeOptions(port=0, clock="manual"), parse_operator_config(OPERATOR, "bench", environ={})
        ) as server,
        httpx.Client(base_url=server.url, headers=dict(HEADERS), timeout=30) as http,
    ):
        for kind, name, source in (("interaction", FUNCTION, BRIEF), ("workflow", WORKFLOW, WORKFLOW_SOURCE)):
            saved = http.post(f"{BASE}/definitions/{kind}", json={"name": name, "source": source})
            assert saved.status_code == 201, saved.text
        for _ in range(rounds + 3):
            run_id = _started(http, "workflow", WORKFLOW)
            called = _called_run(http, run_id)
            start = time.perf_counter()
            answered = http.post(f"{BASE}/runs/{called}/answer", json=ANSWER)
            assert answered.status_code == 200, answered.text
            deadline = start + SETTLE_SECONDS
            while _ending(http, run_id)["status"] != "succeeded":
                if time.perf_counter() > deadline:
                    raise RuntimeError(f"the workflow run {run_id} did not succeed after its answer")
                time.sleep(0.002)
            samples.append((time.perf_counter() - start) * 1000)
    return percentiles(samples[3:])


# -- a 100-item for; a fork of two reasoning calls, a day's wait and an event ---------------------------

#: A ``for`` of 100 iterations, each a ``set`` (no calls): its input ``{"total": 0}``, its output the sum.
FOR_WORKFLOW: Final = "hundred-items"
FOR_SOURCE: Final = """\
document: { dsl: '1.0.3', namespace: bench, name: hundred-items, version: '1.0.0' }
do:
  - add-up:
      for:
        in: '${ [1..100] }'
        each: item
      do:
        - add: { set: { total: '${ $data.total + $item }' } }
"""
FOR_INPUT: Final = {"total": 0}
#: The reasoning function the fork calls twice: the page's example on the demo model (``demo/echo``).
REASONING: Final = "review-brief"
REASONING_SOURCE: Final = (ROOT / "examples" / "definitions" / "reasoning" / "review-brief.md").read_text()
EVENT_TYPE: Final = "com.example.brief.decided"
DAY_SECONDS: Final = 86_400
#: Two reasoning calls together, then a day's ``wait``, then a ``listen`` for one decision event.
FORK_WORKFLOW: Final = "review-twice-then-decide"
FORK_SOURCE: Final = f"""\
document: {{ dsl: '1.0.3', namespace: bench, name: review-twice-then-decide, version: '1.0.0' }}
do:
  - reviews:
      fork:
        branches:
          - against-goals:
              call: run_definition
              with:
                type: reasoning
                name: {REASONING}
                input: {{ brief: '${{ $data.brief }}', criteria: Clear goals and a named audience }}
          - against-budget:
              call: run_definition
              with:
                type: reasoning
                name: {REASONING}
                input: {{ brief: '${{ $data.brief }}', criteria: A budget with its source }}
  - a-day: {{ wait: {{ days: 1 }} }}
  - decision:
      listen:
        to:
          one:
            with: {{ type: {EVENT_TYPE} }}
"""
FORK_INPUT: Final = {"brief": "Spring launch: a week of posts for the new range, budget 40k."}
FORK_EVENT: Final = {"type": EVENT_TYPE, "data": {"verdict": "approve"}}
FOR_CASE: Final = "a 100-item for of a set"
FORK_CASE: Final = "a fork of two reasoning calls, a day's wait, then an event"


def _with_demo_model(base_url: str) -> str:
    """The benchmark's operator configuration with the demo model as the gateway ``demo``, as
    ``examples/operator.yaml`` names it."""
    return (
        OPERATOR
        + f"""models:
  allowed: [demo/*]
  gateways:
    - {{ name: demo, base_url: {base_url}, structured_outputs: true }}
  catalog:
    - {{ id: demo/echo, context_window: 32768, max_tokens: 4096 }}
"""
    )


def _workflow_run(
    server: LocalServer,
    meter: _Meter,
    http: httpx.Client,
    name: str,
    input_value: Any,
    drive: Callable[[str], int],
) -> dict[str, Any]:
    """One run of the workflow ``name``, metered from its POST …/run until it has succeeded: ``drive``
    (given the run id) does what the run waits for and gives the acting API requests it made. Its state
    transitions are those of its execution and of each called run's own (a reasoning run has none)."""
    from parley.definitions.model import PlaybookRef
    from parley.ports.waiting import RunKey
    from parley.runs.service import run_service

    with meter.measuring():
        reply = http.post(f"{BASE}/definitions/workflow/{name}/run", json={"input": input_value})
        if reply.status_code != 200:
            raise RuntimeError(f"the workflow {name} did not run: {reply.text}")
        run_id = str(reply.json()["run_id"])
        _settled(server)
        api_requests = 1 + drive(run_id)
        _settled(server)
        with meter.paused():
            ending = _ending(http, run_id)
            called = http.get(f"{BASE}/events", params={"type": "call_started", "run_id": run_id}).json()
    if ending["status"] != "succeeded":
        raise RuntimeError(f"the {name} run ended {ending['status']}: {ending}")

    playbook = PlaybookRef("acme", "campaigns")
    item = run_service(server.runtime).store.get_run(playbook, run_id)
    if item is None or item.execution is None:
        raise RuntimeError(f"the workflow run {run_id} has no execution")
    executions = {"workflow": server.executor.execution_history(item.execution)}
    for event in called["events"]:  # an interaction run's own execution (a reasoning run has none)
        child = str(event["data"]["run_id"])
        history = server.executor.history(RunKey(playbook.org, playbook.playbook, child))
        if history:
            executions[f"called run {child[:8]}"] = history
    entered, transitions = _transitions(executions)
    invocations = Counter({"api": api_requests, **meter.invocations})
    from_history = sum(1 for e in executions["workflow"] if e["type"] in LAMBDA_TASKS)
    if from_history != invocations["workflow"]:
        raise RuntimeError(
            f"{name}: {invocations['workflow']} workflow function invocations where its execution's "
            f"history has {from_history} Lambda tasks"
        )
    # Work through the timer queue (the reasoning runs' backstops, due within 15 minutes) is an SQS
    # message each, delivered to the timer function; the timer's other invocations are schedules fired.
    fired = invocations["timer"] - meter.schedules["at once"] - meter.schedules["queued"]
    return _priced(
        {
            "output": ending.get("output"),
            "states_entered": entered,
            "state_transitions": sum(transitions.values()),
            "transitions_by_execution": transitions,
            "called_runs": [str(e["data"]["type"]) for e in called["events"]],
            "lambda_invocations": dict(sorted(invocations.items())),
            "dynamodb_calls": dict(meter.tally.calls),
            "dynamodb_units": (meter.tally.write_units, meter.tally.read_units),
            "schedules": {**meter.schedules, "fired": fired},
        },
        api_requests,
    )


def calls_of_a_for() -> dict[str, Any]:
    """One run of :data:`FOR_SOURCE` (after a warm-up run), with the keys of
    :func:`calls_of_workflow_runs`' cases."""
    with _metered_server((("workflow", FOR_WORKFLOW, FOR_SOURCE),)) as (server, meter, http):
        for _ in range(2):  # the first a warm-up
            calls = _workflow_run(server, meter, http, FOR_WORKFLOW, FOR_INPUT, lambda run_id: 0)
        return calls


def calls_of_a_fork_wait_and_event() -> dict[str, Any]:
    """One run of :data:`FORK_SOURCE` (after a warm-up run) with the demo model (``parley demo-model``)
    served in process on 127.0.0.1: both reviews answered, the clock moved a day (the ``wait``), then
    the event sent (``POST /runs/{run_id}/events``) to the ``listen`` waiting for it."""
    from parley.demo.model import DemoModelOptions
    from parley.demo.model import running as demo_model

    with demo_model(DemoModelOptions(port=0)) as model:
        definitions = (("reasoning", REASONING, REASONING_SOURCE), ("workflow", FORK_WORKFLOW, FORK_SOURCE))
        operator = _with_demo_model(model.openai_base_url)
        with _metered_server(definitions, operator) as (server, meter, http):
            _pause_off_the_lock(server)

            def drive(run_id: str) -> int:
                deadline = time.monotonic() + SETTLE_SECONDS
                while meter.returned["reason"] < 2:  # each reasoning run works on its own thread
                    if time.monotonic() > deadline:
                        raise RuntimeError(f"the reasoning runs of {run_id} did not end")
                    time.sleep(0.005)
                _settled(server)
                moved = http.post("/_local/clock/advance", json={"seconds": DAY_SECONDS})
                if moved.status_code != 200:
                    raise RuntimeError(f"the clock did not move: {moved.text}")
                _settled(server)
                sent = http.post(f"{BASE}/runs/{run_id}/events", json=FORK_EVENT)
                if sent.status_code not in (200, 202):  # the contract says 202
                    raise RuntimeError(f"the event was refused: {sent.status_code} {sent.text}")
                return 1

            for _ in range(2):  # the first a warm-up
                calls = _workflow_run(server, meter, http, FORK_WORKFLOW, FORK_INPUT, drive)
            return calls


def _pause_off_the_lock(server: LocalServer) -> None:
    """The workflow function starts a called reasoning run on an executor's worker thread, where
    ``run_definition``'s wait for the run (``runtime.pause``) finds the server's lock not held: the
    local server's pause (the condition's ``wait``) then raises ``cannot wait on un-acquired lock``.
    Off the lock the pause sleeps, as ``Runtime``'s default does (and as the function does on AWS)."""
    on_the_lock = server.runtime.pause

    def pause(seconds: float) -> Any:
        if server.lock._is_owned():  # type: ignore[attr-defined]
            return on_the_lock(seconds)
        time.sleep(seconds)
        return None

    server.runtime.pause = pause


def _print_case(case: str, calls: Mapping[str, Any], note: str = "") -> None:
    """One case's figures, as the brief-approval cases print them."""
    billed = ASSUMED_BILLED_SECONDS * 1000
    print(f"  {case} (output {json.dumps(calls['output'])[:100]})")
    by_execution = ", ".join(f"{name} {count}" for name, count in calls["transitions_by_execution"].items())
    called = calls["called_runs"]
    runs = (
        f"; {len(called)} called runs ({', '.join(sorted(set(called)))}) with none of their own"
        if called
        else ""
    )
    print(f"    Step Functions state transitions: {calls['state_transitions']} ({by_execution}{runs})")
    states = calls["states_entered"]["workflow"]
    shown = ", ".join(states) if len(states) <= 12 else f"{', '.join(states[:5])}, … ({len(states)} in all)"
    print(f"      workflow states: {shown}")
    print(f"    Lambda invocations: {calls['lambda_invocations']}")
    print(f"    DynamoDB calls: {calls['dynamodb_calls']}")
    writes, reads = calls["dynamodb_units"]
    print(f"    DynamoDB request units: {writes:g} write, {reads:g} read")
    print(f"    schedules: {calls['schedules']}")
    total = sum(calls["cost_per_1000_runs"].values())
    print(f"    list price per 1,000 runs: ${total:.4f} (Lambda at an assumed {billed:.0f} ms a call)")
    for item, dollars in calls["cost_per_1000_runs"].items():
        print(f"      {item:<28} ${dollars:.5f}")
    if note:
        print(note)


def report_loops_and_waits(for_calls: Mapping[str, Any], fork_calls: Mapping[str, Any]) -> None:
    print(
        "A for and a fork with a wait and a listen, one run each (local runtime: the same handlers,\n"
        "compiled state machine and scheduler port; every execution counted)"
    )
    _print_case(FOR_CASE, for_calls)
    _print_case(
        FORK_CASE,
        fork_calls,
        "    (the demo model served in process; the reasoning runs' model tokens are not priced, and the\n"
        "    invocations that last as long as the model answers, reason's and the workflow function's\n"
        "    calls, which wait for the run they start, are billed at the same assumed duration)",
    )


# -- workflow runs waiting at once --------------------------------------------------------------------

#: Brief-approval runs waiting at once, at each stage.
WAITING_SIZES: Final = (10, 1_000)


def waiting_runs() -> dict[str, Any]:
    """The figures of :data:`WAITING_SIZES` waiting runs, measured in a fresh interpreter (``python -m
    benchmarks.workflows --waiting``), so that they are the server's alone: a list of stages, each with
    ``waiting``, ``open`` (the open requests' counter), ``items`` (the table's), ``rss_mib``,
    ``threads``, ``run_ms`` and ``answer_ms`` (p50), and ``seed_seconds``."""
    env = {**os.environ, "POWERTOOLS_LOG_LEVEL": "WARNING"}
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.workflows", "--waiting"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    if done.returncode != 0:
        output = f"{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
        raise RuntimeError(f"the waiting-runs benchmark failed:\n{output}")
    figures: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return figures


def _waiting_child() -> dict[str, Any]:
    """The measuring process: ``parley serve``'s server (the real clock, no data folder), the
    operator's open-requests limit at 10,000 (``benchmarks.local_scale``'s), runs started through the
    API handler in process (``LocalServer.answer``, what the HTTP front calls)."""
    import psutil

    from parley.config import parse_operator_config
    from parley.local.server import ServeOptions, running

    process = psutil.Process()
    operator = parse_operator_config(local_scale.OPERATOR, "bench", environ={})
    stages: list[dict[str, Any]] = []
    seed_seconds = 0.0
    with running(ServeOptions(port=0, clock="real"), operator) as server:
        seeder = local_scale._Seeder(server)
        seeder.post("/definitions/interaction", {"name": FUNCTION, "source": BRIEF})
        seeder.post("/definitions/workflow", {"name": WORKFLOW, "source": WORKFLOW_SOURCE})
        waiting: list[str] = []

        def start() -> str:
            started = seeder.post(f"/definitions/workflow/{WORKFLOW}/run", {"input": INPUT})
            if started["status"] != "started":
                raise RuntimeError(f"the workflow run did not wait: {started}")
            return str(started["run_id"])

        for size in WAITING_SIZES:
            began = time.monotonic()
            while len(waiting) < size:
                waiting.append(start())
            seed_seconds += time.monotonic() - began
            if seeder.open_count() != size:
                raise RuntimeError(f"{seeder.open_count()} open requests with {size} workflow runs waiting")
            gc.collect()
            rss, threads, items = process.memory_info().rss, process.num_threads(), seeder.items()
            timings: dict[str, list[float]] = {"run_ms": [], "answer_ms": []}
            for i in range(local_scale.ROUNDS + local_scale.WARM):
                # One answered (its workflow run then succeeds), one started: the size holds.
                run_id = waiting.pop(0)
                called = _called_by(server, run_id)
                began = time.perf_counter()
                seeder.post(f"/runs/{called}/answer", ANSWER)
                answered = (time.perf_counter() - began) * 1000
                if (status := _get(server, f"/runs/{run_id}")["status"]) != "succeeded":
                    raise RuntimeError(f"the workflow run {run_id} is {status} after its call's answer")
                began = time.perf_counter()
                waiting.append(start())
                started = (time.perf_counter() - began) * 1000
                if i >= local_scale.WARM:
                    timings["answer_ms"].append(answered)
                    timings["run_ms"].append(started)
            stages.append(
                {
                    "waiting": len(waiting),
                    "open": seeder.open_count(),
                    "items": items,
                    "rss_mib": rss / 2**20,
                    "threads": threads,
                    **{label: statistics.median(values) for label, values in timings.items()},
                }
            )
    return {"stages": stages, "seed_seconds": seed_seconds}


def _get(server: LocalServer, path: str) -> Any:
    reply = server.answer("GET", f"{BASE}{path}", list(HEADERS), b"", "127.0.0.1")
    if reply.status != 200:
        raise RuntimeError(f"GET {path}: {reply.status} {reply.body[:500]!r}")
    return json.loads(reply.body)


def _called_by(server: LocalServer, workflow_run_id: str) -> str:
    """The run a workflow run called, from its ``call_started`` event."""
    page = _get(server, f"/events?type=call_started&run_id={workflow_run_id}")
    if not page["events"]:
        raise RuntimeError(f"the workflow run {workflow_run_id} called no run")
    return str(page["events"][0]["data"]["run_id"])


def report_waiting(figures: dict[str, Any]) -> None:
    print(
        "The local server with brief-approval workflow runs waiting at once (each on its called\n"
        "approve-campaign-brief run's open request; real clock; a fresh process; runs through the API\n"
        f"handler in process; p50 of {local_scale.ROUNDS} answers and runs at each size)"
    )
    columns = ("waiting", "open", "items", "RSS MiB", "threads", "run ms", "answer ms")
    print("  " + " ".join(f"{name:>{max(7, len(name))}}" for name in columns))
    for stage in figures["stages"]:
        print(
            f"  {stage['waiting']:>7,} {stage['open']:>7,} {stage['items']:>7,} {stage['rss_mib']:>7.0f}"
            f" {stage['threads']:>7} {stage['run_ms']:>7.1f} {stage['answer_ms']:>9.1f}"
        )
    first, last = figures["stages"][0], figures["stages"][-1]
    grown = (last["rss_mib"] - first["rss_mib"]) * 1024
    runs = last["waiting"] - first["waiting"]
    print(
        f"  RSS per waiting run, {first['waiting']:,} -> {last['waiting']:,}: {grown / runs:.1f} KiB"
        f" ({(last['items'] - first['items']) / runs:.1f} store items each, the called run's with it);\n"
        f"  threads {first['threads']} -> {last['threads']} (goal: flat per run, no thread per run)"
    )
    ratios = {name: last[f"{name}_ms"] / first[f"{name}_ms"] for name in ("run", "answer")}
    print(
        f"  p50 at {last['waiting']:,} over p50 at {first['waiting']:,}: "
        + ", ".join(f"{name} {ratio:.2f}x" for name, ratio in ratios.items())
    )
    print(
        "  (run: POST …/workflow/brief-approval/run until both executions are parked; answer: the called\n"
        "  run's answer until the workflow run has succeeded; seeding took"
        f" {figures['seed_seconds']:.0f} s)"
    )


def report() -> None:
    """Print the figures (``make bench``)."""
    with contextlib.redirect_stderr(io.StringIO()):  # the local server's request log
        inbox = calls_of_an_answered_run()
        cases = calls_of_workflow_runs()
        p50, p99 = answer_to_succeeded()
        for_calls = calls_of_a_for()
        fork_calls = calls_of_a_fork_wait_and_event()
    waiting = waiting_runs()
    inbox_total = sum(inbox["cost_per_1000_runs"].values())
    expired_total = sum(cases[INBOX_EXPIRED]["cost_per_1000_runs"].values())
    billed = ASSUMED_BILLED_SECONDS * 1000
    print(
        "The brief-approval workflow calling approve-campaign-brief, one run (local runtime: the same\n"
        "handlers, compiled state machine and scheduler port; both executions counted)"
    )
    for case in (ANSWERED, EXPIRED):
        calls = cases[case]
        by_execution = calls["transitions_by_execution"]
        print(f"  {case} (output {calls['output']})")
        print(
            f"    Step Functions state transitions: {calls['state_transitions']} "
            f"(workflow {by_execution['workflow']}, called run {by_execution['called run']})"
        )
        print(f"      workflow states: {', '.join(calls['states_entered']['workflow'])}")
        print(f"    Lambda invocations: {calls['lambda_invocations']}")
        print(f"    DynamoDB calls: {calls['dynamodb_calls']}")
        writes, reads = calls["dynamodb_units"]
        print(f"    DynamoDB request units: {writes:g} write, {reads:g} read")
        print(f"    schedules: {calls['schedules']}")
        total = sum(calls["cost_per_1000_runs"].values())
        print(f"    list price per 1,000 runs: ${total:.4f} (Lambda at an assumed {billed:.0f} ms a call)")
        for item, dollars in calls["cost_per_1000_runs"].items():
            print(f"      {item:<28} ${dollars:.5f}")
        if case == ANSWERED:
            print(
                f"    ratio to an inbox run asked and answered (${inbox_total:.4f}): "
                f"{total / inbox_total:.2f}x (goal: at most 2x)"
            )
        else:
            print(
                f"    ratio to an inbox run asked and expired (${expired_total:.4f}): "
                f"{total / expired_total:.2f}x (goal: at most 2x); "
                f"to one asked and answered: {total / inbox_total:.2f}x"
            )
    print()
    print("answer -> workflow run succeeded on the local runtime (40 runs)")
    print(f"  p50 {p50:.1f} ms   p99 {p99:.1f} ms")
    print()
    report_loops_and_waits(for_calls, fork_calls)
    print()
    report_waiting(waiting)


if __name__ == "__main__":
    if sys.argv[1:] == ["--waiting"]:
        print(json.dumps(_waiting_child()))
    else:
        report()
