"""The local server's data folder (issue 27, items 1 and 4): what keeping every write before its answer
costs, and how long a restart takes with many open requests.

- **From a write's answer to its being on disk: 0 by construction.** ``LocalServer.answer`` calls
  ``LocalData.durable`` after the handler and before it returns the reply, and ``durable`` returns only
  once the journal's writer has committed (``fsync``) everything appended until then
  (``parley.local.journal``). The figure printed is measured anyway: the answers of a run of writes, each
  followed at once by a count of the changes the journal had committed when the reply came back,
  compared with the changes appended by then (every one committed: none waiting).
- **The journal's cost per write**: an answer to an open request (``POST /runs/{id}/answer``), in
  process (``LocalServer.answer``, what the HTTP front calls), p50 and p99 of ``ROUNDS``, with a data
  folder and without one (``--data none``), interleaved; and the commits per write, under a burst of
  concurrent answers (group commit: fewer ``fsync`` than writes).
- **The burst figure** (item 3): ``HTTP_BURST`` concurrent answers to as many open requests, each on its
  own thread and connection, all let go at once, against a real local server (in process, with a data
  folder, through its HTTP front): how many got ``200`` and how long the burst took, from the moment
  they were let go until the last answer came back. Requests beyond what the server answers at once
  wait in its queue (``parley.local.front``) rather than being refused.
- **Restart** of ``parley serve --clock manual`` on a data folder with 1,000 and 10,000 open requests
  (seeded as ``benchmarks.local_scale`` seeds them: runs of the example through the API, then clones):
  the seconds from the process's start to its start-up line, and the reading of the folder the line
  reports; then the seconds until every open request's execution has been started again (the folder's
  revival, in the background once the server answers).
"""

from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Final

ROOT: Final = Path(__file__).resolve().parent.parent
SIZES: Final = (1_000, 10_000)
ROUNDS: Final = 200
BURST: Final = 32
#: Item 3: "a burst of 200 concurrent answers to 200 requests gets 200 ``200``s".
HTTP_BURST: Final = 200
OPERATOR: Final = """
principals:
  - { id: dev, token: dev-token, grants: [{ org: acme, playbook: campaigns, role: write }] }
limits: { interaction_open_requests: 20000 }
"""
GOAL_RESTART_SECONDS: Final = 2.0
#: The revival is over once the journal has had no change for this long.
QUIET_SECONDS: Final = 3.0


def _python(*arguments: str, timeout: float = 900) -> dict[str, Any]:
    env = {**os.environ, "POWERTOOLS_LOG_LEVEL": "WARNING"}
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.local_durability", *arguments],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"the durability benchmark failed:\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}")
    figures: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return figures


def measure() -> dict[str, Any]:
    figures = _python("--writes")
    figures.update(_python("--http-burst"))
    restarts = []
    with tempfile.TemporaryDirectory() as scratch:
        for size in SIZES:
            folder = Path(scratch) / f"data-{size}"
            seeded = _python("--seed", str(size), str(folder))
            restarts.append({"open": size, **seeded, **_restart(Path(scratch), folder)})
            restarts[-1].update(_python("--revive", str(folder)))
    figures["restarts"] = restarts
    return figures


def report() -> None:
    figures = measure()
    print("The local server's data folder (issue 27): every write on disk before its answer")
    print(
        f"  from a write's answer to its being on disk: {figures['unsynced_at_reply']} changes of "
        f"{figures['changes']:,} not yet on disk when their answers came back (0 by construction: the "
    )
    print("  answer waits for the journal's fsync)")
    print(f"  an answer, in process, p50/p99 of {ROUNDS}: ", end="")
    print(
        f"with the journal {figures['with'][0]:.2f}/{figures['with'][1]:.2f} ms, "
        f"without {figures['without'][0]:.2f}/{figures['without'][1]:.2f} ms"
    )
    print(
        f"  of which the journal (reading back what the writes left, waiting for the commit): p50 "
        f"{figures['journaling'][0]:.2f} ms, p99 {figures['journaling'][1]:.2f} ms"
    )
    print(
        f"  a burst of {BURST} concurrent answers: {figures['burst_writes']} changes in "
        f"{figures['burst_commits']} commits (one fsync each): the changes of an answer share one;"
    )
    print(
        "  the answers themselves are handled one at a time under the server's lock, each far longer"
        " than an fsync,"
    )
    print("  so concurrent answers seldom meet in one commit")
    print(
        f"  the burst figure: {HTTP_BURST} concurrent answers to {HTTP_BURST} open requests over HTTP: "
        f"{figures['http_burst_ok']} answered 200 (goal: {HTTP_BURST}), the burst took "
        f"{figures['http_burst_s']:.1f} s"
    )
    if figures["http_burst_other"]:
        print(f"    the others: {figures['http_burst_other']}")
    for stage in figures["restarts"]:
        print(
            f"  restart with {stage['open']:>6,} open requests ({stage['items']:,} items): start-up line "
            f"after {stage['ready_s']:.2f} s (goal: {GOAL_RESTART_SECONDS:g} s), the folder read in "
            f"{stage['read_s']:.2f} s;"
        )
        print(
            f"    every open request's execution started again {stage['revived_s']:.1f} s later"
            " (in the background, as the server answers)"
        )


# -- the measuring processes ---------------------------------------------------------------------------


def _writes() -> dict[str, Any]:
    """The journal's cost per answer (the same server, its journal on and off in turn), and the changes
    not yet on disk at each reply."""
    from benchmarks.local_scale import _Seeder
    from parley.config import parse_operator_config
    from parley.local.server import ServeOptions, running

    operator = parse_operator_config(OPERATOR, "bench", environ={})
    samples: dict[str, list[float]] = {"with": [], "without": []}
    unsynced = 0
    with tempfile.TemporaryDirectory() as scratch:
        options = ServeOptions(port=0, clock="manual", data=Path(scratch) / "data")
        with running(options, operator) as server:
            data = server.data
            assert data is not None
            seeder = _Seeder(server)
            seeder.run_to(2 * ROUNDS + BURST + 10)
            changes = data.journal.changes
            spent = _time_spent_journaling(data)
            for round_ in range(2 * ROUNDS):
                label = "with" if round_ % 2 else "without"
                _journal(server, data if label == "with" else None)
                run_id = seeder.open_ids.pop()
                began = time.perf_counter()
                seeder.post(f"/runs/{run_id}/answer", {"answer": {"verdict": "approve"}})
                samples[label].append((time.perf_counter() - began) * 1000)
                if label == "with":
                    unsynced += data.journal._appended - data.journal._committed
                    spent.append(0.0)
            _journal(server, data)
            changes = data.journal.changes - changes
            burst = _burst(server, seeder)
    deciles = {
        label: (statistics.median(values), statistics.quantiles(values, n=100)[98])
        for label, values in samples.items()
    }
    spent = spent[:-1]  # (the last entry was opened for a round that did not come)
    journaling = (statistics.median(spent), statistics.quantiles(spent, n=100)[98])
    return {**deciles, "journaling": journaling, "unsynced_at_reply": unsynced, "changes": changes, **burst}


def _time_spent_journaling(data: Any) -> list[float]:
    """Milliseconds each answer spends on its journal (reading back what its writes left, and waiting
    for the commit), added up into the last entry of the list returned."""
    from parley.local import aws

    spent = [0.0]
    sync, tell = data.journal.sync, aws._Serialized._tell

    def timed_sync() -> None:
        began = time.perf_counter()
        sync()
        spent[-1] += (time.perf_counter() - began) * 1000

    def timed_tell(log: Any, name: str, kwargs: Any) -> None:
        began = time.perf_counter()
        tell(log, name, kwargs)
        spent[-1] += (time.perf_counter() - began) * 1000

    data.journal.sync = timed_sync
    aws._Serialized._tell = staticmethod(timed_tell)  # type: ignore[method-assign]
    return spent


def _journal(server: Any, data: Any) -> None:
    """The server's writes kept by ``data``'s journal, or (``None``) by nothing, as with ``--data none``."""
    from parley.local.aws import journal_writes

    keeping = server._kept_data = getattr(server, "_kept_data", None) or server.data
    for client in keeping._clients:
        journal_writes(client, data)
    server.scheduler.journal = data
    server.clock.on_move = None if data is None else data.clock_moved
    server.data = data


def _burst(server: Any, seeder: Any) -> dict[str, int]:
    """``BURST`` answers at once, each on its thread as the front hands them out."""
    journal = server.data.journal
    commits, before = journal.commits, journal.changes
    ids = [seeder.open_ids.pop() for _ in range(BURST)]
    threads = [
        threading.Thread(
            target=seeder.post, args=(f"/runs/{run_id}/answer", {"answer": {"verdict": "approve"}})
        )
        for run_id in ids
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return {"burst_commits": journal.commits - commits, "burst_writes": journal.changes - before}


def _http_burst() -> dict[str, Any]:
    """``HTTP_BURST`` answers to as many open requests, each on its own thread and connection, let go
    together (a barrier) against the server's HTTP front; the seconds from their release to the last
    reply, and how many replies were ``200`` (the others counted by status, or by the error met)."""
    import httpx

    from benchmarks.local_scale import BASE, HEADERS, _Seeder
    from parley.config import parse_operator_config
    from parley.local.server import ServeOptions, running

    operator = parse_operator_config(OPERATOR, "bench", environ={})
    with tempfile.TemporaryDirectory() as scratch:
        options = ServeOptions(port=0, clock="manual", data=Path(scratch) / "data")
        with running(options, operator) as server:
            seeder = _Seeder(server)
            seeder.run_to(HTTP_BURST)
            ids = list(seeder.open_ids)
            barrier = threading.Barrier(HTTP_BURST + 1)
            outcomes: list[str] = [""] * HTTP_BURST
            ended: list[float] = [0.0] * HTTP_BURST

            def answer(i: int) -> None:
                barrier.wait()
                try:
                    reply = httpx.post(
                        f"{server.url}{BASE}/runs/{ids[i]}/answer",
                        json={"answer": {"verdict": "approve"}},
                        headers=HEADERS,
                        timeout=300,
                    )
                    outcomes[i] = str(reply.status_code)
                except httpx.HTTPError as exc:
                    outcomes[i] = type(exc).__name__
                ended[i] = time.monotonic()

            threads = [threading.Thread(target=answer, args=(i,)) for i in range(HTTP_BURST)]
            for thread in threads:
                thread.start()
            barrier.wait()
            began = time.monotonic()
            for thread in threads:
                thread.join()
    other: dict[str, int] = {}
    for outcome in outcomes:
        if outcome != "200":
            other[outcome] = other.get(outcome, 0) + 1
    return {
        "http_burst_ok": outcomes.count("200"),
        "http_burst_s": max(ended) - began,
        "http_burst_other": other,
    }


def _seed(size: int, folder: Path) -> dict[str, Any]:
    """A data folder with ``size`` open requests (``benchmarks.local_scale``'s seeding), saved whole."""
    from benchmarks.local_scale import _Seeder
    from parley.config import parse_operator_config
    from parley.local.server import ServeOptions, running

    operator = parse_operator_config(OPERATOR, "bench", environ={})
    with running(ServeOptions(port=0, clock="manual", data=folder), operator) as server:
        seeder = _Seeder(server)
        seeder.run_to(10)
        seeder.clone_to(size)
        assert server.data is not None
        server.data.save()  # the clones went straight into moto's table
        items = seeder.items()
    return {"items": items}


def _restart(scratch: Path, folder: Path) -> dict[str, float]:
    """``parley serve`` on ``folder``: from the process's start until its start-up line."""
    config = scratch / "operator.yaml"
    config.write_text(OPERATOR, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env["POWERTOOLS_LOG_LEVEL"] = "WARNING"
    command = [sys.executable, "-m", "parley.cli", "serve", "--clock", "manual", "--port", "0",
               "--config", str(config), "--data", str(folder)]  # fmt: skip
    began = time.monotonic()
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert process.stdout is not None
        line = ""
        while "Parley is serving" not in line:
            line = process.stdout.readline()
            if not line:
                raise RuntimeError(f"parley serve ended: {process.wait()}")
        ready = time.monotonic() - began
        read = re.search(r"restored in ([\d.]+) s", line)
        assert read is not None, line
        return {"ready_s": ready, "read_s": float(read.group(1))}
    finally:
        process.terminate()
        process.wait(timeout=60)


def _revive(folder: Path) -> dict[str, float]:
    """In process, as ``parley serve`` starts: until the revival's last write (its thread ends once it
    has started every execution again, and what they write comes after: the time of the last change to
    the journal, once it has had none for ``QUIET_SECONDS``)."""
    from parley.config import parse_operator_config
    from parley.local.server import ServeOptions, running

    operator = parse_operator_config(OPERATOR, "bench", environ={})
    began = time.monotonic()
    with running(ServeOptions(port=0, clock="manual", data=folder), operator) as server:
        ready = time.monotonic()
        assert server.data is not None
        journal = server.data.journal
        for thread in threading.enumerate():
            if thread.name == "parley-revive":
                thread.join()
        changes, last = journal.changes, time.monotonic()
        while time.monotonic() - last < QUIET_SECONDS:
            time.sleep(0.1)
            if journal.changes != changes:
                changes, last = journal.changes, time.monotonic()
        return {"revived_s": last - ready, "in_process_ready_s": ready - began, "revival_changes": changes}


if __name__ == "__main__":
    if sys.argv[1:2] == ["--writes"]:
        print(json.dumps(_writes()))
    elif sys.argv[1:2] == ["--http-burst"]:
        print(json.dumps(_http_burst()))
    elif sys.argv[1:2] == ["--revive"]:
        print(json.dumps(_revive(Path(sys.argv[2]))))
    elif sys.argv[1:2] == ["--seed"]:
        print(json.dumps(_seed(int(sys.argv[2]), Path(sys.argv[3]))))
    else:
        report()
