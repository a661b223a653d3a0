"""Every listing reads in proportion to what it returns (issue 31).

- ``first_pages``: for each listing and filter, the items its first page (``limit`` 50) reads — DynamoDB's
  ``ScannedCount`` over its queries and the items it then reads by key (``Page.scanned``) — with 100 and
  with 100,000 runs in the playbook (goal: the same, within one page: at most twice 51). Seeded through
  the store's own items, straight into moto's table (moto's transactions copy the whole table): each run
  an item, an event (``interaction_requested``, ``request_answered`` or ``run_succeeded`` in turn) and,
  one run in ten, an open request.
- ``local_times``: the local server's time for each listing at 10,000 runs (the same seed in its table),
  over HTTP, the median of three.
- ``write_units``: the write units an asked-and-answered run's transactions cost (the run, its request,
  events and counter; each index entry put, moved or deleted; ``benchmarks.dynamo_units``), without the
  filter slots (``gsi1`` and ``gsi2`` alone) and with them (``gsi3`` to ``gsi5``), item by item. (With the
  seven slots of the listings' first layout, one a combination of filters, the same run took 72 units;
  the whole run, with its token's write, is priced by ``benchmarks.runs``.)
"""

from __future__ import annotations

import contextlib
import io
import os
import statistics
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace
from datetime import timedelta
from typing import Any, Final

BASE: Final = "/v1/orgs/acme/playbooks/campaigns"
SIZES: Final = (100, 100_000)
TIMED_SIZE: Final = 10_000
EVENT_TYPES: Final = ("interaction_requested", "request_answered", "run_succeeded")
PEOPLE: Final = ("maria@example.com", "li@example.com", "sam@example.com")
NAMES: Final = ("approve", "review", "launch", "notify", "archive")
OPERATOR: Final = """
principals:
  - { id: dev, token: dev-token, grants: [{ org: acme, playbook: campaigns, role: write }] }
limits: { interaction_open_requests: 20000 }
"""
BRIEF: Final = """---
to: '{{ input.owner }}'
expires: P7D
output:
  schema:
    type: object
    required: [verdict]
    properties: { verdict: { enum: [approve, revise] } }
---
Please review the brief.
"""

#: (list, query string) of each listing measured; ``{run}`` and ``{since}`` are filled in from the seed.
LISTINGS: Final = (
    ("runs", ""),
    ("runs", "type=reasoning"),
    ("runs", "type=workflow"),
    ("runs", "name=review"),
    ("runs", "name=nosuch-name"),
    ("runs", "status=succeeded"),
    ("runs", "status=rejected"),
    ("runs", "type=interaction&name=approve"),
    ("runs", "type=interaction&status=started"),
    ("runs", "name=approve&status=failed"),
    ("runs", "type=interaction&name=launch&status=started"),
    ("events", ""),
    ("events", "type=interaction"),
    ("events", "type=request_answered"),
    ("events", "type=request_answered&order=asc"),
    ("events", "run_id={run}"),
    ("events", "run_id={run}&type=run_succeeded"),
    ("events", "since={since}"),
    ("events", "since={since}&order=asc&type=run_succeeded"),
    ("interactions", ""),
    ("interactions", "to=li@example.com"),
    ("interactions", "type=interaction"),
    ("interactions", "function=approve"),
    ("interactions", "function=nosuch"),
    ("interactions", "to=sam@example.com&function=approve"),
)


def _shape(number: int) -> tuple[str, str, str]:
    kind = "reasoning" if number % 10 == 3 else "interaction"
    status = ("succeeded", "succeeded", "started", "failed")[number % 4]
    return kind, NAMES[number % len(NAMES)], status


@contextmanager
def _seeded(size: int, table_name: str, runtime_of: Callable[[Any, str], Any]) -> Iterator[dict[str, Any]]:
    """A table holding ``size`` runs (see above); yields the service and the seed's ``run`` and
    ``since``. ``runtime_of(client, table)`` gives the runtime (the caller holds moto's mock)."""
    from moto.dynamodb.models.dynamo_type import DynamoType, Item

    from parley.clock import format_time
    from parley.definitions.model import PlaybookRef
    from parley.local.aws import moto_lock, moto_table
    from parley.runs.events import new_event_id
    from parley.runs.model import Event
    from parley.runs.service import run_service

    runtime, client = runtime_of(None, table_name)
    playbook = PlaybookRef("acme", "campaigns")
    service = run_service(runtime)
    runtime.definition_service().create_definition(playbook, "interaction", "approve", BRIEF)
    first = service.run_definition(
        playbook, "interaction", "approve", input_value={"owner": PEOPLE[0]}, run_id=None, started_by="dev"
    )
    model_run = service.store.get_run(playbook, first.run_id)
    model_request = service.store.get_request(playbook, first.run_id)
    assert model_run is not None and model_request is not None
    clock = runtime.clock
    store = service.store
    table = moto_table(table_name)
    start = clock.now() - timedelta(days=1)
    middle = run_id = ""
    with moto_lock():
        for number in range(size - 1):
            at_time = start + timedelta(milliseconds=number)
            at = format_time(at_time)
            kind, name, status = _shape(number)
            run_id = str(uuid.uuid4())
            run = replace(model_run, run_id=run_id, type=kind, name=name, status=status, started_at=at)  # type: ignore[arg-type]
            items = [store._put_run(playbook, run, None)["Put"]["Item"]]
            event_type = EVENT_TYPES[number % 3]
            event = Event(new_event_id(event_type, at_time), event_type, at, run_id, {})
            items.append(store._put_event(playbook, event)["Put"]["Item"])
            if number % 10 == 0:
                request = replace(
                    model_request, run_id=run_id, requested_at=at, to=PEOPLE[number % 3], function=name
                )
                items.append(store._put_request(playbook, request)["Put"]["Item"])
            for attributes in [dict[str, Any](item) for item in items]:
                pk, sk = DynamoType(attributes["pk"]), DynamoType(attributes["sk"])
                table.items[pk][sk] = Item(pk, sk, attributes)
            if number == size // 2:
                middle = at
    yield {"service": service, "playbook": playbook, "run": run_id, "since": middle, "client": client}


def _query(listing: str, filled: Mapping[str, str]) -> dict[str, str]:
    from urllib.parse import parse_qsl

    return dict(parse_qsl(listing.format(**filled)))


def _scanned(service: Any, playbook: Any, kind: str, query: Mapping[str, str]) -> int:
    arguments: dict[str, Any] = {("definition_type" if k == "type" else k): v for k, v in query.items()}
    if kind == "runs":
        page = service.list_runs(playbook, **arguments)
    elif kind == "interactions":
        page = service.list_interactions(playbook, **arguments)
    else:
        arguments = {("event_type" if k == "definition_type" else k): v for k, v in arguments.items()}
        page = service.list_playbook_events(playbook, **arguments)
    return int(page.scanned)


def first_pages(sizes: tuple[int, ...] = SIZES) -> dict[tuple[str, str], dict[int, int]]:
    """Items read by each listing's first page, by size (see above)."""
    os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "WARNING")
    from moto import mock_aws

    figures: dict[tuple[str, str], dict[int, int]] = {}
    for size in sizes:
        with mock_aws(), _seeded(size, f"parley-bench-listings-{size}", _bench_runtime) as seed:
            filled = {"run": seed["run"], "since": seed["since"]}
            for kind, listing in LISTINGS:
                scanned = _scanned(seed["service"], seed["playbook"], kind, _query(listing, filled))
                figures.setdefault((kind, listing), {})[size] = scanned
    return figures


def _bench_runtime(_: Any, table_name: str) -> tuple[Any, Any]:
    from benchmarks.runs import QuietScheduler, QuietWaits
    from parley.clock import ManualClock
    from parley.config import parse_operator_config
    from parley.definitions.store import DynamoDefinitionStore
    from parley.local.aws import create_table, local_dynamodb_client
    from parley.ports.runtime import Runtime

    client = local_dynamodb_client()
    table = create_table(client, table_name)
    runtime = Runtime(
        definitions=DynamoDefinitionStore(client, table),
        clock=ManualClock(),
        operator=parse_operator_config(OPERATOR, "bench", environ={}),
        waits=QuietWaits(),
        scheduler=QuietScheduler(),
    )
    return runtime, client


def local_times(size: int = TIMED_SIZE) -> dict[tuple[str, str], float]:
    """The local server's time for each listing (median of three, ms) with ``size`` runs seeded."""
    import httpx

    from parley.config import parse_operator_config
    from parley.local.aws import LOCAL_TABLE
    from parley.local.server import ServeOptions, running

    os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "WARNING")
    times: dict[tuple[str, str], float] = {}
    with running(ServeOptions(port=0), parse_operator_config(OPERATOR, "bench", environ={})) as server:

        def the_servers(_: Any, __: str) -> tuple[Any, Any]:
            return server.runtime, None

        with (
            _seeded(size, LOCAL_TABLE, the_servers) as seed,
            httpx.Client(
                base_url=server.url, headers={"Authorization": "Bearer dev-token"}, timeout=120
            ) as http,
        ):
            filled = {"run": seed["run"], "since": seed["since"]}
            for kind, listing in LISTINGS:
                target = f"{BASE}/{kind}"
                params = _query(listing, filled)
                samples = []
                for _ in range(3):
                    began = time.perf_counter()
                    answered = http.get(target, params=params)
                    samples.append((time.perf_counter() - began) * 1000)
                    assert answered.status_code == 200, answered.text
                times[(kind, listing)] = statistics.median(samples)
    return times


# --- write units -------------------------------------------------------------------------------------


def write_units() -> dict[str, Any]:
    """The write units of an asked-and-answered run's transactions (``benchmarks.dynamo_units``): ``before``
    without the filter slots (``gsi1``, ``gsi2``; the items without the slots' attributes), ``after``
    with every index; and ``items``, each item write's units (the item's and its indexes')."""
    os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "WARNING")
    from moto import mock_aws

    from benchmarks.dynamo_units import write_units as units_of
    from parley.definitions.model import PlaybookRef
    from parley.infrastructure.table import FILTER_INDEXES, TABLE
    from parley.runs.service import run_service

    slots = {name for index in FILTER_INDEXES for name in (index.partition_key, index.sort_key)}
    old_indexes = [index for index in TABLE.indexes if index not in FILTER_INDEXES]
    writes: list[tuple[str, dict[str, Any] | None, dict[str, Any] | None]] = []
    with mock_aws():
        runtime, client = _bench_runtime(None, "parley-bench-write-units")
        playbook = PlaybookRef("acme", "campaigns")
        service = run_service(runtime)
        runtime.definition_service().create_definition(playbook, "interaction", "approve", BRIEF)
        store = service.store
        transact = store._client.transact_write_items

        def image(key: Mapping[str, Any]) -> dict[str, Any] | None:
            found = client.get_item(TableName=store.table_name, Key=dict(key)).get("Item")
            return dict(found) if found else None

        def watched(**kwargs: Any) -> Any:
            keys = []
            for entry in kwargs["TransactItems"]:
                for kind in ("Put", "Update", "Delete"):
                    if kind in entry:
                        body = entry[kind]
                        keys.append({k: body.get("Key", body.get("Item"))[k] for k in ("pk", "sk")})
            befores = [image(key) for key in keys]
            result = transact(**kwargs)
            for key, before, after in zip(keys, befores, [image(key) for key in keys], strict=True):
                writes.append((str(key["sk"]["S"]).split("#", 1)[0], before, after))
            return result

        store._client = _Watched(store._client, watched)  # type: ignore[assignment]
        started = service.run_definition(
            playbook,
            "interaction",
            "approve",
            input_value={"owner": PEOPLE[0]},
            run_id=None,
            started_by="dev",
        )
        service.answer_interaction(
            playbook, started.run_id, {"verdict": "approve"}, claimed_for=None, answered_by="dev"
        )

    def stripped(item: dict[str, Any] | None) -> dict[str, Any] | None:
        return None if item is None else {k: v for k, v in item.items() if k not in slots}

    items = []
    for kind, before, after in writes:
        without = sum(units_of(stripped(before), stripped(after), old_indexes, TABLE, transactional=True))
        own, indexed = units_of(before, after, TABLE.indexes, TABLE, transactional=True)
        items.append((kind, without, own, indexed))
    return {
        "before": sum(without for _, without, _, _ in items),
        "after": sum(own + indexed for _, _, own, indexed in items),
        "writes": len(writes),
        "items": items,
    }


class _Watched:
    """A client whose ``transact_write_items`` is ``watched``; the rest as it is."""

    def __init__(self, client: Any, watched: Callable[..., Any]) -> None:
        self._client = client
        self.transact_write_items = watched

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


def report() -> None:
    units = write_units()
    print(
        "Write units of an asked-and-answered run (its transactions and every index entry they put or move)"
    )
    writes = units["writes"]
    print(f"  without the filter slots (gsi1, gsi2): {units['before']} WRU over {writes} item writes")
    print(f"  with them (gsi3-gsi5):                 {units['after']} WRU")
    print("  each item write: WRU without the slots / the item's with them + its index entries'")
    for kind, without, own, indexed in units["items"]:
        print(f"    {kind:<8} {without:>2} / {own:>2} + {indexed}")
    scans = first_pages()
    with contextlib.redirect_stderr(io.StringIO()):  # (the local server's access log)
        times = local_times()
    from parley.runs.store import READ_BOUND_PAGES

    print(
        "Items read by each listing's first page (limit 50; goal: the same with 100 and 100,000 runs, "
        "within one page: at most twice 51), and the local server's time at 10,000 runs"
    )
    for (kind, listing), by_size in scans.items():
        shown = f"{kind}?{listing}" if listing else kind
        figures = "  ".join(f"{by_size[size]:>4} at {size:,}" for size in SIZES)
        checked = ",".join(checked_after_key(kind, _query(listing, {"run": "r", "since": "s"})))
        mark = f"  * {checked} checked" if checked else ""
        print(f"  {shown:<58} {figures}   {times[(kind, listing)]:7.1f} ms{mark}")
    print(
        "  * filters without an index of their own: the page reads the index of another filter (or the "
        f"list's own) and checks them on what it reads, at most {READ_BOUND_PAGES} times the page and one "
        "more item (issue 31's bounded read; a short page says where it stopped)"
    )


def checked_after_key(kind: str, query: Mapping[str, str]) -> list[str]:
    """The filters of a listing that its index's key does not hold (checked on the items read)."""
    from parley.runs.items import EVENT_SLOTS, REQUEST_SLOTS, RUN_SLOTS, chosen_slot

    filters = {name: value for name, value in query.items() if name not in ("order", "since")}
    if kind == "events":
        read = "run_id" if "run_id" in filters else chosen_slot(EVENT_SLOTS, filters)
    else:
        read = chosen_slot(RUN_SLOTS if kind == "runs" else REQUEST_SLOTS, filters)
    return sorted(name for name in filters if name != read)


if __name__ == "__main__":
    report()
