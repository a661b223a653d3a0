"""The local runtime at the documented limit (issue 19): memory, threads and write latency of the local
server with 10, 1,000 and 10,000 open requests in one playbook.

A fresh interpreter (so that the figures are the server's alone, not those of the benchmarks before it)
runs the local server as ``parley serve`` does (``parley.local.server.running``: the real clock, no data
folder, moto in process), and at each size:

- **seeds** open requests of ``examples/definitions/approve-campaign-brief.md`` up to the size, in
  process (``LocalServer.answer``, what the HTTP front calls for each request):
  - up to 1,000, each through the API: ``run_definition``, its wait step, its expiry and backstop;
  - from 1,000 to 10,000, each a clone of one of those runs (its run, request and
    ``interaction_requested`` items with a new run id, stored in moto's table as moto's ``put_item``
    stores them, the open-requests counter raised to match), started waiting as the data folder's
    restore does (``RunService.start_waiting``: the expiry scheduled, the run's execution started on the
    state machine and parked on its own token, the backstop timed), the wait function keeping the token
    on the request item straight in moto's item. Through the API, at about 25 ms a run here (most of it
    botocore and moto serializing the calls), 9,000 more runs would take minutes;
- **measures**, settled: the process's RSS (psutil, after a garbage collection) and its threads;
- **times** ``create_definition`` (a new name each), ``run_definition`` of the example and an answer to
  one open request, ``ROUNDS`` of each, in process without the HTTP front, interleaved so that the open
  requests stay at the size (one answered, then one started: the operator's limit of 10,000 holds at
  the last size). Each is timed to the reply, which comes once the work it set off has run (the wait
  step of a run, the settle step of an answer), as always.

RSS per stored item is the growth over the table items added: from 10 to 1,000 open requests (through
the API) and from 1,000 to 10,000 (clones).
"""

from __future__ import annotations

import gc
import json
import os
import statistics
import subprocess
import sys
import time
import uuid
from dataclasses import replace
from pathlib import Path
from typing import Any, Final

ROOT: Final = Path(__file__).resolve().parent.parent
EXAMPLE: Final = (ROOT / "examples" / "definitions" / "approve-campaign-brief.md").read_text(encoding="utf-8")
SIZES: Final = (10, 1_000, 10_000)
#: Open requests up to this many are runs through the API, the others clones (see above).
THROUGH_THE_API: Final = 1_000
ROUNDS: Final = 25
WARM: Final = 5
BASE: Final = "/v1/orgs/acme/playbooks/campaigns"
HEADERS: Final = {"Authorization": "Bearer dev-token"}
INPUT: Final = {"owner": "maria@example.com", "review": "Clear goals; the budget needs a source."}
OPERATOR: Final = """
principals:
  - { id: dev, token: dev-token, grants: [{ org: acme, playbook: campaigns, role: write }] }
limits: { interaction_open_requests: 10000 }
"""
#: The goals of issue 19 at 10,000 open requests.
GOAL_RSS_MIB: Final = 1024
GOAL_THREADS: Final = 100
GOAL_RATIO: Final = 2.0


def measure() -> dict[str, Any]:
    """The figures, measured in a fresh interpreter (``python -m benchmarks.local_scale --child``)."""
    env = {**os.environ, "POWERTOOLS_LOG_LEVEL": "WARNING"}
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.local_scale", "--child"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"the local scale benchmark failed:\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}")
    figures: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return figures


def report() -> None:
    figures = measure()
    print("The local server with open requests in one playbook (approve-campaign-brief; real clock; a fresh")
    print(f"process; up to 1,000 runs through the API, then clones; writes in process, p50 of {ROUNDS})")
    columns = (
        "open",
        "items",
        "RSS MiB",
        "threads",
        "create ms",
        "run ms",
        "answer ms",
        "calls",
        "snapshot s",
    )
    print("  " + " ".join(f"{name:>{max(7, len(name))}}" for name in columns))
    for stage in figures["stages"]:
        print(
            f"  {stage['open']:>7,} {stage['items']:>7,} {stage['rss_mib']:>7.0f} {stage['threads']:>7}"
            f" {stage['create_ms']:>9.1f} {stage['run_ms']:>7.1f} {stage['answer_ms']:>9.1f}"
            f" {stage['calls']:>7,.0f} {stage['snapshot_s']:>10.2f}"
        )
    for label, key in (
        ("10 -> 1,000, through the API", "through_the_api"),
        ("1,000 -> 10,000, clones", "cloned"),
    ):
        growth = figures[key]
        print(
            f"  RSS per stored item, {label}: {growth['per_item_kib']:.1f} KiB"
            f" ({growth['per_open_kib']:.1f} KiB per open request, {growth['items_per_open']:.1f} items each)"
        )
    print(
        "  (calls: Python function calls of one answer and one run, which the machine's load does not move;"
    )
    print("  snapshot: how long one save of the data folder, as make serve keeps it, holds the server)")
    first, last = figures["stages"][0], figures["stages"][-1]
    ratios = {name: last[f"{name}_ms"] / first[f"{name}_ms"] for name in ("create", "run", "answer")}
    print(
        "  p50 at 10,000 over p50 at 10: "
        + ", ".join(f"{name} {ratio:.2f}x" for name, ratio in ratios.items())
        + f" (goal: at most {GOAL_RATIO:g}x)"
    )
    print(
        f"  at 10,000: {last['rss_mib']:.0f} MiB, {last['threads']} threads"
        f" (goal: under {GOAL_RSS_MIB:,} MiB and {GOAL_THREADS} threads);"
        f" seeding took {figures['seed_seconds']:.0f} s, the whole run {figures['total_seconds']:.0f} s"
    )


# -- the measuring process ---------------------------------------------------------------------------------


def _child() -> dict[str, Any]:
    import psutil

    from parley.config import parse_operator_config
    from parley.local.server import ServeOptions, running

    started = time.monotonic()
    process = psutil.Process()
    operator = parse_operator_config(OPERATOR, "bench", environ={})
    stages: list[dict[str, Any]] = []
    seed_seconds = 0.0
    with running(ServeOptions(port=0, clock="real"), operator) as server:
        seeder = _Seeder(server)
        for size in SIZES:
            began = time.monotonic()
            if size <= THROUGH_THE_API:
                seeder.run_to(size)
            else:
                seeder.clone_to(size)
            seed_seconds += time.monotonic() - began
            gc.collect()
            rss = process.memory_info().rss
            threads = process.num_threads()
            timings = _time_writes(seeder)
            stages.append(
                {
                    "open": seeder.open_count(),
                    "items": seeder.items(),
                    "rss_mib": rss / 2**20,
                    "threads": threads,
                    **timings,
                    "calls": _calls_per_write(seeder),
                    "snapshot_s": _snapshot_seconds(server),
                }
            )

    def per_item(low: dict[str, Any], high: dict[str, Any]) -> dict[str, float]:
        grown = (high["rss_mib"] - low["rss_mib"]) * 1024
        return {
            "per_item_kib": grown / (high["items"] - low["items"]),
            "per_open_kib": grown / (high["open"] - low["open"]),
            "items_per_open": (high["items"] - low["items"]) / (high["open"] - low["open"]),
        }

    return {
        "stages": stages,
        "through_the_api": per_item(stages[0], stages[1]),
        "cloned": per_item(stages[1], stages[2]),
        "seed_seconds": seed_seconds,
        "total_seconds": time.monotonic() - started,
    }


def _snapshot_seconds(server: Any) -> float:
    """How long one snapshot of the data folder holds the server (``parley.local.persistence``; ``make
    serve`` keeps one in ``.parley/``), taken into a scratch folder."""
    import tempfile

    from parley.local.aws import LOCAL_TABLE, moto_lock
    from parley.local.persistence import LocalData

    with tempfile.TemporaryDirectory() as scratch:
        data = LocalData(
            Path(scratch),
            table=LOCAL_TABLE,
            content=server.runtime.content,
            scheduler=server.scheduler,
            clock_now=server.clock.now,
            lock=moto_lock(),
        )
        return data.save()


def _time_writes(seeder: _Seeder) -> dict[str, float]:
    samples: dict[str, list[float]] = {"create_ms": [], "run_ms": [], "answer_ms": []}
    for i in range(ROUNDS + WARM):  # the first rounds warm the code paths
        writes = {
            "create_ms": (
                "/definitions/interaction",
                {"name": f"bench-{uuid.uuid4().hex[:12]}", "source": EXAMPLE},
            ),
            "answer_ms": (f"/runs/{seeder.open_ids.pop()}/answer", {"answer": {"verdict": "approve"}}),
            "run_ms": ("/definitions/interaction/approve/run", {"input": INPUT}),
        }
        for label, (path, body) in writes.items():
            began = time.perf_counter()
            answered = seeder.post(path, body)
            elapsed = (time.perf_counter() - began) * 1000
            if label == "run_ms":
                seeder.open_ids.append(answered["run_id"])
            if i >= WARM:
                samples[label].append(elapsed)
    return {label: statistics.median(values) for label, values in samples.items()}


def _calls_per_write(seeder: _Seeder, rounds: int = 3) -> float:
    """Python function calls of one answer and one run (cProfile: the server's thread and the executor's
    workers), a figure the machine's load does not move: equal at every size, the writes do no work
    that grows with the table."""
    import cProfile
    import pstats

    server, workers = cProfile.Profile(), cProfile.Profile()
    executor = seeder.server.executor
    invoke = executor._invoke

    def profiled(name: str, event: Any) -> Any:
        workers.enable()
        try:
            return invoke(name, event)
        finally:
            workers.disable()

    executor._invoke = profiled
    try:
        for _ in range(rounds):
            server.enable()
            seeder.post(f"/runs/{seeder.open_ids.pop()}/answer", {"answer": {"verdict": "approve"}})
            run_id = seeder.post("/definitions/interaction/approve/run", {"input": INPUT})["run_id"]
            server.disable()
            seeder.open_ids.append(run_id)
    finally:
        executor._invoke = invoke
    calls: int = pstats.Stats(server).total_calls + pstats.Stats(workers).total_calls  # type: ignore[attr-defined]
    return calls / rounds


class _Seeder:
    """Open requests in the server, and the writes the benchmark times (see above)."""

    def __init__(self, server: Any) -> None:
        from parley.definitions.model import PlaybookRef
        from parley.local.aws import LOCAL_TABLE, local_dynamodb_client, moto_table
        from parley.runs.service import run_service

        self.server = server
        self.playbook = PlaybookRef("acme", "campaigns")
        self.client = local_dynamodb_client()
        self.table_name = LOCAL_TABLE
        self.table = moto_table(LOCAL_TABLE)
        self.runs = run_service(server.runtime)
        self.headers = [*HEADERS.items(), ("Content-Type", "application/json")]
        self.post("/definitions/interaction", {"name": "approve", "source": EXAMPLE})
        self.open_ids: list[str] = []
        self.template: str | None = None

    def post(self, path: str, body: Any) -> Any:
        """A POST as the server answers it (``LocalServer.answer``), without the HTTP front."""
        reply = self.server.answer(
            "POST", f"{BASE}{path}", self.headers, json.dumps(body).encode(), "127.0.0.1"
        )
        if reply.status not in (200, 201):
            raise RuntimeError(f"POST {path}: {reply.status} {reply.body[:500]!r}")
        return json.loads(reply.body)

    def run_to(self, size: int) -> None:
        while len(self.open_ids) < size:
            self.open_ids.append(
                self.post("/definitions/interaction/approve/run", {"input": INPUT})["run_id"]
            )
        if self.open_count() != size:
            raise RuntimeError(f"{self.open_count()} open requests, not {size}")

    def _model(self) -> str:
        """The store items of one open run, as the text of their attributes."""
        from moto.dynamodb.models.dynamo_type import DynamoType

        from parley.local.aws import moto_lock

        if self.template is None:
            model_id = self.open_ids[0]
            run_id = DynamoType({"S": model_id})
            model = self.runs.store.get_request(self.playbook, model_id)
            assert model is not None
            self.model_request = model
            self.model_id = model_id
            with moto_lock():
                stored = self.table.items[DynamoType({"S": "PB#acme#campaigns"})].values()
                ours = [item for item in stored if "run_id" in item.attrs and item.attrs["run_id"] == run_id]
                items = [item.to_json()["Attributes"] for item in ours]
            kinds = sorted(item["kind"]["S"] for item in items)
            if kinds != ["event", "request", "run"]:
                raise RuntimeError(f"a run of the example is not the items this benchmark clones: {kinds}")
            for item in items:
                item.pop("token", None)  # each clone's wait keeps its own
                if item["kind"]["S"] == "event":
                    self.model_event = (item["event_id"]["S"], item["type"]["S"], item["at"]["S"])
            self.template = json.dumps(items)
        return self.template

    def clone_to(self, size: int) -> None:
        from moto.dynamodb.models.dynamo_type import DynamoType, Item

        from parley.clock import parse_time
        from parley.local.aws import moto_lock
        from parley.runs.events import new_event_id

        template = self._model()
        model_event, event_type, at = self.model_event
        missing = size - len(self.open_ids)
        executor = self.server.executor
        invoke, executor._invoke = executor._invoke, self._parking(executor._invoke)
        try:
            for start in range(0, missing, 500):
                batch = [str(uuid.uuid4()) for _ in range(min(500, missing - start))]
                with moto_lock():
                    for run_id in batch:
                        event_id = new_event_id(event_type, parse_time(at))
                        text = template.replace(self.model_id, run_id).replace(model_event, event_id)
                        for attributes in json.loads(text):  # stored as moto's put_item stores an item
                            pk, sk = DynamoType(attributes["pk"]), DynamoType(attributes["sk"])
                            self.table.items[pk][sk] = Item(pk, sk, attributes)
                self._count(len(batch))
                for run_id in batch:
                    with self.server.lock:
                        self.runs.start_waiting(self.playbook, replace(self.model_request, run_id=run_id))
                    self.open_ids.append(run_id)
                executor.settle(timeout=120)
        finally:
            executor._invoke = invoke
        if self.open_count() != size:
            raise RuntimeError(f"seeded {self.open_count()} open requests, not {size}")

    def _parking(self, invoke: Any) -> Any:
        """The wait function for the clones: what it does for an open request (``park_request``: the
        task token kept on the request item), written into moto's item directly; the others as they are."""
        from moto.dynamodb.models.dynamo_type import DynamoType

        from parley.local.aws import moto_lock

        def invoke_or_park(name: str, event: Any) -> Any:
            if name != "wait":
                return invoke(name, event)
            pk = DynamoType({"S": "PB#acme#campaigns"})
            sk = DynamoType({"S": f"REQ#{event['run']['run_id']}"})
            with moto_lock():
                request = self.table.get_item(pk, sk)
                assert request is not None
                request.attrs["token"] = DynamoType({"S": event["token"]})
            return {"run": event["run"], "outcome": "parked"}

        return invoke_or_park

    def _count(self, added: int) -> None:
        self.client.update_item(
            TableName=self.table_name,
            Key={"pk": {"S": "PB#acme#campaigns"}, "sk": {"S": "COUNTER#open_requests"}},
            UpdateExpression="ADD #count :n",
            ExpressionAttributeNames={"#count": "count"},
            ExpressionAttributeValues={":n": {"N": str(added)}},
        )

    def open_count(self) -> int:
        counter = self.client.get_item(
            TableName=self.table_name,
            Key={"pk": {"S": "PB#acme#campaigns"}, "sk": {"S": "COUNTER#open_requests"}},
            ConsistentRead=True,
        )["Item"]
        return int(counter["count"]["N"])

    def items(self) -> int:
        return len(self.table)


if __name__ == "__main__":
    if sys.argv[1:] == ["--child"]:
        print(json.dumps(_child()))
    else:
        report()
