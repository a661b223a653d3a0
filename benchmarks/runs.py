"""Figures of runs that ask through the inbox (issue 3).

- ``cpu_per_operation``: the CPU time of the project's own code for run start, answer and expiry,
  with the AWS calls stubbed: each operation runs once against moto while its DynamoDB responses are
  recorded, then is measured again and again with those responses replayed, so moto's and botocore's
  work is not in the figure.
- ``calls_of_an_answered_run``: the AWS calls of one asked-and-answered run on the local runtime
  (the same handlers, state machine and scheduler port as on AWS), counted and priced.
- ``first_page_scans``: the items DynamoDB reads for list_interactions' first page with 100 and
  with 10,000 open requests.
- ``answer_to_settled``: from sending an answer to the run being ``succeeded``, on the local runtime.
"""

from __future__ import annotations

import json
import math
import os
import statistics
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from benchmarks.dynamo_units import item_size, write_units
from parley.infrastructure.table import TABLE

ROOT = Path(__file__).resolve().parent.parent
BRIEF = (ROOT / "examples" / "definitions" / "approve-campaign-brief.md").read_text()
INPUT = {"owner": "maria@example.com", "review": "Clear goals; the budget needs a source."}
BASE = "/v1/orgs/acme/playbooks/campaigns"
HEADERS = [("Authorization", "Bearer dev-token"), ("Content-Type", "application/json")]
OPERATOR = """
principals:
  - id: dev
    token: dev-token
    grants: [{ org: acme, playbook: campaigns, role: write }]
limits: { interaction_open_requests: 20000 }
"""

# AWS list prices, us-east-1, on-demand (2026): what one unit costs in dollars.
PRICES = {
    "api_gateway_request": 3.50 / 1e6,  # REST API, first 333 million requests a month
    "lambda_request": 0.20 / 1e6,
    "lambda_gb_second_arm64": 0.0000133334,
    "state_transition": 0.025 / 1e3,  # Step Functions Standard
    "dynamodb_write_unit": 0.625 / 1e6,  # on-demand write request unit
    "dynamodb_read_unit": 0.125 / 1e6,  # on-demand read request unit
    "scheduler_invocation": 1.00 / 1e6,  # EventBridge Scheduler (creating and deleting schedules is free)
}


#: What a warm invocation of these handlers is assumed to bill (see calls_of_an_answered_run).
ASSUMED_BILLED_SECONDS = 0.1


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]


# --- recording and replaying DynamoDB ---------------------------------------------------------------


@dataclass
class Tape:
    """A DynamoDB client that records each call's response while live, and replays them in order."""

    client: Any
    recording: list[tuple[str, Any]] | None = None
    replaying: Iterator[tuple[str, Any]] | None = None

    def __getattr__(self, name: str) -> Any:
        live = getattr(self.client, name)

        def call(*args: Any, **kwargs: Any) -> Any:
            if self.replaying is not None:
                method, response = next(self.replaying)
                if method != name:
                    raise RuntimeError(f"replay out of step: {name} called where {method} was recorded")
                return response
            response = live(*args, **kwargs)
            if self.recording is not None:
                self.recording.append((name, response))
            return response

        return call

    @contextmanager
    def record(self) -> Iterator[list[tuple[str, Any]]]:
        self.recording = []
        try:
            yield self.recording
        finally:
            self.recording = None

    @contextmanager
    def replay(self, calls: list[tuple[str, Any]]) -> Iterator[None]:
        self.replaying = iter(calls)
        try:
            yield
        finally:
            self.replaying = None


@dataclass
class QuietWaits:
    """Waits that call nothing: the figure is our code's, not Step Functions'."""

    started: list[Any] = field(default_factory=list)

    def start(self, run: Any, *, timeout_seconds: int, number: int = 1) -> None:
        self.started.append(run)

    def succeed(self, token: str, output: Mapping[str, Any]) -> None:
        pass

    def fail(self, token: str, error: str, cause: str) -> None:
        pass


@dataclass
class QuietScheduler:
    def schedule(self, name: str, at: datetime, work: Mapping[str, Any]) -> None:
        pass

    def cancel(self, name: str) -> None:
        pass


def _api_event(method: str, path: str, body: Any = None) -> dict[str, Any]:
    from parley.local.events import api_gateway_event

    payload = b"" if body is None else json.dumps(body).encode()
    return api_gateway_event(method, BASE + path, HEADERS, payload)


def _ok(reply: Mapping[str, Any]) -> None:
    if reply["statusCode"] != 200:
        raise RuntimeError(f"a replayed operation failed: {reply['statusCode']} {reply['body']}")


def _expired(outcome: Mapping[str, Any]) -> None:
    if outcome.get("outcome") != "expired":
        raise RuntimeError(f"a replayed expiry did not expire: {outcome}")


def cpu_per_operation(rounds: int = 300) -> dict[str, tuple[float, float]]:
    os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "WARNING")
    from moto import mock_aws

    from parley.api.app import build_handler
    from parley.clock import ManualClock
    from parley.config import parse_operator_config
    from parley.definitions.store import DynamoDefinitionStore
    from parley.executions.entry import build_timer_handler
    from parley.local.aws import create_table, local_dynamodb_client
    from parley.ports.runtime import Runtime
    from parley.ports.waiting import RunKey
    from parley.runs.service import run_service

    with mock_aws():
        client = local_dynamodb_client()
        table = create_table(client, "parley-bench-cpu")
        tape = Tape(client)
        clock = ManualClock()
        waits = QuietWaits()
        runtime = Runtime(
            definitions=DynamoDefinitionStore(tape, table),  # type: ignore[arg-type]
            clock=clock,
            operator=parse_operator_config(OPERATOR, "bench", environ={}),
            waits=waits,
            scheduler=QuietScheduler(),
        )
        api = build_handler(runtime)
        timer = build_timer_handler(runtime)
        service = run_service(runtime)
        created = api(
            _api_event("POST", "/definitions/interaction", {"name": "approve", "source": BRIEF}), None
        )
        assert created["statusCode"] == 201, created["body"]

        def start_run() -> str:
            reply = api(_api_event("POST", "/definitions/interaction/approve/run", {"input": INPUT}), None)
            assert reply["statusCode"] == 200, reply["body"]
            run_id: str = json.loads(reply["body"])["run_id"]
            return run_id

        def parked() -> str:
            run_id = start_run()
            service.park_request(RunKey("acme", "campaigns", run_id), f"token-{run_id}")
            return run_id

        # Warm every path once, then record one of each.
        for _ in range(2):
            answered = parked()
            api(_api_event("POST", f"/runs/{answered}/answer", {"answer": {"verdict": "approve"}}), None)
        figures: dict[str, tuple[float, float]] = {}

        def measure(name: str, operation: Callable[[], Any], recorded: list[tuple[str, Any]]) -> None:
            samples: list[float] = []
            for _ in range(rounds):
                with tape.replay(recorded):
                    begin = time.thread_time()
                    operation()
                    samples.append((time.thread_time() - begin) * 1000)
            figures[name] = percentiles(samples)

        run_event = _api_event("POST", "/definitions/interaction/approve/run", {"input": INPUT})
        with tape.record() as calls:
            _ok(api(run_event, None))
        measure("run start (POST …/run)", lambda: _ok(api(run_event, None)), calls)

        answered = parked()
        answer_event = _api_event("POST", f"/runs/{answered}/answer", {"answer": {"verdict": "approve"}})
        with tape.record() as calls:
            _ok(api(answer_event, None))
        measure("answer (POST …/answer)", lambda: _ok(api(answer_event, None)), calls)

        expiring = parked()
        clock.advance(timedelta(days=2, seconds=1).total_seconds())
        work = {"work": "expire", "run": RunKey("acme", "campaigns", expiring).as_json()}
        with tape.record() as calls:
            _expired(timer(work, None))
        measure("expiry (timer function)", lambda: _expired(timer(work, None)), calls)
    return figures


# --- one asked-and-answered run on the local runtime ------------------------------------------------


@dataclass
class Tally:
    """DynamoDB calls and their request units, as DynamoDB meters them (``benchmarks.dynamo_units``): a
    write's item and its index entries, read from the item before and after the write (through the
    client, unmetered); a read's items by size."""

    client: Any
    calls: Counter[str] = field(default_factory=Counter)
    write_units: float = 0.0
    read_units: float = 0.0
    #: The part of :attr:`write_units` that the table's global secondary indexes take.
    index_write_units: float = 0.0
    on: bool = False

    def __getattr__(self, name: str) -> Any:
        live = getattr(self.client, name)

        def call(*args: Any, **kwargs: Any) -> Any:
            if not self.on:
                return live(*args, **kwargs)
            written = _written(name, kwargs)
            before = [self._image(table, key) for table, key, _ in written]
            try:
                response = live(*args, **kwargs)
            except Exception:
                self.calls[name] += 1
                for image, (_, _, transactional) in zip(before, written, strict=True):
                    own, _ = write_units(image, image, (), None, transactional=transactional, done=False)
                    self.write_units += own
                raise
            self.calls[name] += 1
            after = [self._image(table, key) for table, key, _ in written]
            for old, new, (_, _, transactional) in zip(before, after, written, strict=True):
                own, indexed = write_units(old, new, TABLE.indexes, TABLE, transactional=transactional)
                self.write_units += own + indexed
                self.index_write_units += indexed
            self._meter(name, kwargs, response)
            return response

        return call

    def _image(self, table: str, key: Mapping[str, Any]) -> dict[str, Any] | None:
        found = self.client.get_item(TableName=table, Key=dict(key), ConsistentRead=True).get("Item")
        return dict(found) if found else None

    def _meter(self, name: str, request: Mapping[str, Any], response: Mapping[str, Any]) -> None:
        if name == "transact_write_items":
            for entry in request["TransactItems"]:
                if "ConditionCheck" in entry:
                    body = entry["ConditionCheck"]
                    checked = item_size(self._image(body["TableName"], body["Key"]))
                    self.read_units += 2 * math.ceil(max(1, checked) / 4096)
        elif name == "get_item":
            strong = 1 if request.get("ConsistentRead") else 0.5
            self.read_units += strong * math.ceil(max(1, item_size(response.get("Item"))) / 4096)
        elif name == "query":
            strong = 1 if request.get("ConsistentRead") else 0.5
            self.read_units += strong * max(
                1, math.ceil(sum(item_size(i) for i in response.get("Items", [])) / 4096)
            )


def _written(name: str, request: Mapping[str, Any]) -> list[tuple[str, dict[str, Any], bool]]:
    """The items a write names: ``(table, key, transactional)``."""

    def key_of(body: Mapping[str, Any]) -> dict[str, Any]:
        item = body.get("Key") or body.get("Item") or {}
        return {name: item[name] for name in (TABLE.partition_key, TABLE.sort_key)}

    if name == "transact_write_items":
        return [
            (body["TableName"], key_of(body), True)
            for entry in request["TransactItems"]
            for kind, body in entry.items()
            if kind in ("Put", "Update", "Delete")
        ]
    if name in ("put_item", "update_item", "delete_item"):
        return [(request["TableName"], key_of(request), False)]
    if name == "batch_write_item":
        return [
            (table, key_of(next(iter(entry.values()))), False)
            for table, entries in request["RequestItems"].items()
            for entry in entries
        ]
    return []


def calls_of_an_answered_run() -> dict[str, Any]:
    import httpx

    import parley.local.aws as local_aws_module
    from parley.config import parse_operator_config
    from parley.infrastructure.functions import function_named
    from parley.infrastructure.state_machine import WAIT_STATE
    from parley.local.server import ServeOptions, running
    from parley.ports.waiting import RunKey

    original = local_aws_module.local_dynamodb_client
    tally: Tally | None = None

    def counted() -> Any:
        nonlocal tally
        tally = Tally(original())
        return tally

    local_aws_module.local_dynamodb_client = counted  # type: ignore[assignment]
    try:
        options = ServeOptions(port=0, clock="manual")
        with running(options, parse_operator_config(OPERATOR, "bench", environ={})) as server:
            assert tally is not None
            schedules: Counter[str] = Counter()
            scheduler = server.scheduler
            plain_schedule, plain_cancel = scheduler.schedule, scheduler.cancel

            def schedule(name: str, at: datetime, work: Mapping[str, Any]) -> None:
                schedules["created"] += 1
                plain_schedule(name, at, work)

            def cancel(name: str) -> None:
                schedules["deleted"] += 1
                plain_cancel(name)

            scheduler.schedule = schedule  # type: ignore[method-assign]
            scheduler.cancel = cancel  # type: ignore[method-assign]
            headers = dict(HEADERS)
            with httpx.Client(base_url=server.url, headers=headers, timeout=30) as http:
                saved = http.post(
                    f"{BASE}/definitions/interaction", json={"name": "approve", "source": BRIEF}
                )
                assert saved.status_code == 201, saved.text
                tally.on = True
                run = http.post(f"{BASE}/definitions/interaction/approve/run", json={"input": INPUT})
                run_id = run.json()["run_id"]
                answered = http.post(f"{BASE}/runs/{run_id}/answer", json={"answer": {"verdict": "approve"}})
                assert answered.status_code == 200, answered.text
                deadline = time.monotonic() + 10
                while http.get(f"{BASE}/runs/{run_id}").json()["status"] == "started":
                    if time.monotonic() > deadline:
                        raise RuntimeError("the run did not settle")
                    time.sleep(0.01)
                tally.on = False
            history = server.executor.history(RunKey("acme", "campaigns", run_id))
    finally:
        local_aws_module.local_dynamodb_client = original  # type: ignore[assignment]

    transitions = sum(1 for e in history if e["type"].endswith("StateEntered"))
    tasks = [e["name"] for e in history if e["type"] in ("LambdaFunctionScheduled", "TaskScheduled")]
    api_requests = 2  # run_definition and answer_interaction (the reads above are not counted)
    # The execution only waits: its one task invokes the wait function; the answer's write ended the run.
    invocations = {"api": api_requests, "wait": len(tasks)}
    if tasks != [WAIT_STATE]:
        raise RuntimeError(f"expected the wait task alone, found {tasks}")
    # Billed duration is an assumption, not a measurement: each of these handlers makes one to four
    # DynamoDB calls and at most two other AWS calls when warm (the CPU figures above are < 2 ms).
    gb_seconds = sum(
        function_named(name).memory_mb / 1024 * ASSUMED_BILLED_SECONDS * count
        for name, count in invocations.items()
    )
    cost = {
        "API Gateway requests": api_requests * PRICES["api_gateway_request"],
        "Lambda requests": sum(invocations.values()) * PRICES["lambda_request"],
        "Lambda duration (arm64)": gb_seconds * PRICES["lambda_gb_second_arm64"],
        "Step Functions transitions": transitions * PRICES["state_transition"],
        "DynamoDB writes": tally.write_units * PRICES["dynamodb_write_unit"],
        "DynamoDB reads": tally.read_units * PRICES["dynamodb_read_unit"],
        "Scheduler invocations": 0 * PRICES["scheduler_invocation"],  # the answered run's expiry never fires
    }
    return {
        "state_transitions": transitions,
        "lambda_invocations": invocations,
        "dynamodb_calls": dict(tally.calls),
        "dynamodb_units": (tally.write_units, tally.read_units),
        "index_write_units": tally.index_write_units,
        "schedules": dict(schedules),
        "cost_per_1000_runs": {k: v * 1000 for k, v in cost.items()},
    }


# --- list_interactions' first page ---------------------------------------------------------------


def first_page_scans(sizes: tuple[int, ...] = (100, 10_000)) -> dict[int, int]:
    os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "WARNING")
    from moto import mock_aws

    from parley.clock import ManualClock, format_time
    from parley.config import parse_operator_config
    from parley.definitions.model import PlaybookRef
    from parley.definitions.store import DynamoDefinitionStore
    from parley.local.aws import create_table, local_dynamodb_client
    from parley.ports.runtime import Runtime
    from parley.runs.service import run_service

    playbook = PlaybookRef("acme", "campaigns")
    scanned: dict[int, int] = {}
    for size in sizes:
        with mock_aws():
            client = local_dynamodb_client()
            table = create_table(client, f"parley-bench-scan-{size}")
            clock = ManualClock()
            runtime = Runtime(
                definitions=DynamoDefinitionStore(client, table),
                clock=clock,
                operator=parse_operator_config(OPERATOR, "bench", environ={}),
                waits=QuietWaits(),
                scheduler=QuietScheduler(),
            )
            service = run_service(runtime)
            runtime.definition_service().create_definition(playbook, "interaction", "approve", BRIEF)
            first = service.run_definition(
                playbook, "interaction", "approve", input_value=INPUT, run_id=None, started_by="dev"
            )
            model = service.store.get_request(playbook, first.run_id)
            assert model is not None
            # Seed the other requests as the store writes them, but in batches: moto's transactions copy
            # the whole table each time, which would make 10,000 runs take hours.
            items = []
            for i in range(size - 1):
                at = clock.now() + timedelta(milliseconds=i + 1)
                request = replace(model, run_id=str(uuid.uuid4()), requested_at=format_time(at))
                items.append(service.store._put_request(playbook, request)["Put"]["Item"])
            for start in range(0, len(items), 25):
                batch = [{"PutRequest": {"Item": item}} for item in items[start : start + 25]]
                client.batch_write_item(RequestItems={table: batch})
            page = service.list_interactions(playbook)
            assert len(page.items) == 50, len(page.items)
            scanned[size] = page.scanned
    return scanned


# --- answer -> settled on the local runtime ------------------------------------------------------


def answer_to_settled(rounds: int = 40) -> tuple[float, float, int]:
    """The time from sending an answer to reading the run ``succeeded`` (p50, p99 in ms), and how many
    of the runs read right after the answer's ``200`` said ``succeeded`` already (the answer's own write
    ends the run: all of them)."""
    import httpx

    from parley.config import parse_operator_config
    from parley.local.server import ServeOptions, running

    samples: list[float] = []
    at_once = 0
    with (
        running(
            ServeOptions(port=0, clock="manual"), parse_operator_config(OPERATOR, "bench", environ={})
        ) as server,
        httpx.Client(base_url=server.url, headers=dict(HEADERS), timeout=30) as http,
    ):
        saved = http.post(f"{BASE}/definitions/interaction", json={"name": "approve", "source": BRIEF})
        assert saved.status_code == 201, saved.text
        for round_ in range(rounds + 3):
            run_id = http.post(f"{BASE}/definitions/interaction/approve/run", json={"input": INPUT}).json()[
                "run_id"
            ]
            start = time.perf_counter()
            answered = http.post(f"{BASE}/runs/{run_id}/answer", json={"answer": {"verdict": "approve"}})
            assert answered.status_code == 200, answered.text
            first = True
            while http.get(f"{BASE}/runs/{run_id}").json()["status"] != "succeeded":
                first = False
                time.sleep(0.002)
            samples.append((time.perf_counter() - start) * 1000)
            at_once += first and round_ >= 3  # the first three warm the server
    p50, p99 = percentiles(samples[3:])
    return p50, p99, at_once
