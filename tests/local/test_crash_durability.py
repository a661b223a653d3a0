"""Durable before acknowledged (issue 27, item 1; ``parley.local.persistence``): ``parley serve --clock
manual`` is killed with SIGKILL at a random point of a stream of creates, runs, answers, deliveries and
clock advances (between two requests, or while one is under way), then started again on the same data
folder. Every fact a ``2xx`` reported is there, and nothing is half-written: each run and its request
agree, and the open-requests counter counts the open requests.

Deliveries go through the demo chat (``parley.demo.server``), served by the test process on 127.0.0.1 so
that it outlives the kill; the server's operator configuration names it as the tool server ``chat``. The
stream runs a notification and a question sent through its ``post_message`` (each to a channel of its
own), arms the chat's failure switch (the next call fails, or is slow, so a kill may cut an attempt
short), and advances the clock so that attempts follow. After the restart, a notification a response
showed delivered has succeeded; then the clock moves a minute (an attempt the kill cut off is counted
``lost`` and the next one made) and the server stops. In the folder it left, each request's
``attempts`` and ``standing`` agree with its ``delivery_*`` events, no attempt number is claimed twice,
and the chat, which keeps every message it received, holds at most one message per attempt its run
recorded (an attempt is recorded, on disk, before it is sent: interaction-format.md, "Attempts").

Hypothesis draws the streams and the points, six of them (each costs two starts of the server), beside
two streams given whole (a delivery that fails, and kills while an attempt is under way)."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from mcp_servers import free_port

from parley.demo.server import DemoChat, DemoChatOptions
from parley.demo.server import running as demo_chat

pytestmark = pytest.mark.http

BASE = "/v1/orgs/acme/playbooks/campaigns"
AUTH = {"Authorization": "Bearer dev-token"}
ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = (ROOT / "examples" / "definitions" / "approve-campaign-brief.md").read_text(encoding="utf-8")
OPERATOR = (
    "principals: [{id: dev, token: dev-token, grants: [{org: acme, playbook: campaigns, role: write}]}]\n"
)
BRIEF = {"owner": "maria@example.com", "review": "Clear goals; the budget needs a source."}
#: Sent through the chat (interaction-format.md, "Sending through a tool"): each run names its channel.
NOTIFY = """---
to: '{{ input.channel }}'
expires: P2D
deliver: { server: chat, tool: post_message, with: { channel: '{{ to }}', text: '{{ message }}' } }
---
Your campaign is live ({{ input.channel }}).
"""
ASK = """---
to: '{{ input.channel }}'
expires: P2D
deliver:
  server: chat
  tool: post_message
  with: { channel: '{{ to }}', text: '{{ message }}' }
  sent: { conversation: /channel, id: /ts }
output:
  schema:
    type: object
    required: [verdict]
    properties:
      verdict: { type: string, enum: [approve, revise] }
---
Approve the brief of {{ input.channel }}?
"""
#: What the chat's failure switch is armed with by a ``flaky`` step: the next call fails, or is slow.
FLAKES = (
    {"tool": "post_message", "count": 1, "mode": "error"},
    {"tool": "post_message", "count": 1, "mode": "slow", "seconds": 0.3},
)
READY_WITHIN = 60.0


@contextmanager
def serving(folder: Path, port: int) -> Iterator[tuple[subprocess.Popen[bytes], httpx.Client]]:
    """``parley serve --clock manual`` on ``folder/data``, once it answers; killed on exit if still up."""
    command = [sys.executable, "-m", "parley.cli", "serve", "--clock", "manual", "--port", str(port),
               "--config", str(folder / "operator.yaml"), "--data", str(folder / "data")]  # fmt: skip
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    with (folder / "serve.log").open("ab") as sink:
        process = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT, env=env)
    url = f"http://127.0.0.1:{port}"
    try:
        started = time.monotonic()
        while True:
            if process.poll() is not None:
                raise AssertionError(f"parley serve exited:\n{(folder / 'serve.log').read_text()}")
            try:
                httpx.get(url + "/_local/clock", timeout=1)
                break
            except httpx.TransportError:
                assert time.monotonic() - started < READY_WITHIN, (folder / "serve.log").read_text()
                time.sleep(0.05)
        with httpx.Client(base_url=url, headers=AUTH, timeout=60) as client:
            yield process, client
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=30)


@dataclass
class Acknowledged:
    """What the responses reported, as it must read after the restart."""

    definitions: set[str] = field(default_factory=set)
    runs: set[str] = field(default_factory=set)
    answered: set[str] = field(default_factory=set)
    clock: str = ""
    notifications: set[str] = field(default_factory=set)
    """Notification runs acknowledged, not yet seen delivered."""
    delivered: set[str] = field(default_factory=set)
    """Notification runs a response showed ``succeeded``."""
    channels: list[str] = field(default_factory=list)
    """The chat's channel of each delivering run asked for (acknowledged or not), in order."""
    tag: str = field(default_factory=lambda: uuid.uuid4().hex[:10])
    """This stream's own prefix of channels (the chat outlives one stream)."""


# One step of the stream: ("create", n), ("run", n), ("answer", i: which open run), ("advance", seconds),
# ("notify", 0) and ("ask", 0): a run sent through the chat, ("flaky", i): the chat's switch armed.
steps = st.lists(
    st.one_of(
        st.tuples(st.just("create"), st.integers(0, 10**6)),
        st.tuples(st.just("run"), st.integers(0, 0)),
        st.tuples(st.just("answer"), st.integers(0, 20)),
        st.tuples(st.just("advance"), st.sampled_from([0, 60, 3600])),
        st.tuples(st.sampled_from(["notify", "ask"]), st.integers(0, 0)),
        st.tuples(st.sampled_from(["notify", "ask"]), st.integers(0, 0)),  # (drawn twice as often)
        st.tuples(st.just("flaky"), st.integers(0, len(FLAKES) - 1)),
    ),
    min_size=2,
    max_size=8,
)


def step(
    client: httpx.Client, chat: DemoChat, kind: str, n: int, facts: Acknowledged, open_runs: list[str]
) -> None:
    """Send one step; what a 2xx reports goes into ``facts``."""
    if kind in ("notify", "ask"):
        channel = f"{facts.tag}-{len(facts.channels)}"
        facts.channels.append(channel)
        reply = client.post(
            f"{BASE}/definitions/interaction/{kind}/run", json={"input": {"channel": channel}}
        )
        if reply.is_success:
            run_id = reply.json()["run_id"]
            facts.runs.add(run_id)
            if kind == "ask":
                open_runs.append(run_id)
            else:
                facts.notifications.add(run_id)
    elif kind == "flaky":
        chat.failures.arm(FLAKES[n])
    elif kind == "create":
        name = f"brief-{n}"
        reply = client.post(f"{BASE}/definitions/interaction", json={"name": name, "source": EXAMPLE})
        if reply.status_code == 201:
            facts.definitions.add(name)
    elif kind == "run":
        reply = client.post(f"{BASE}/definitions/interaction/approve/run", json={"input": BRIEF})
        if reply.is_success:
            facts.runs.add(reply.json()["run_id"])
            open_runs.append(reply.json()["run_id"])
    elif kind == "answer" and open_runs:
        run_id = open_runs.pop(n % len(open_runs))
        reply = client.post(f"{BASE}/runs/{run_id}/answer", json={"answer": {"verdict": "approve"}})
        if reply.status_code == 200:
            facts.answered.add(run_id)
    elif kind == "advance":
        reply = client.post("/_local/clock/advance", json={"seconds": n})
        if reply.status_code == 200:
            facts.clock = max(facts.clock, reply.json()["now"])
            for run_id in sorted(facts.notifications - facts.delivered):  # what the advance made due
                run = client.get(f"{BASE}/runs/{run_id}")
                if run.status_code == 200 and run.json()["status"] == "succeeded":
                    facts.delivered.add(run_id)


def check(client: httpx.Client, facts: Acknowledged) -> None:
    """Every acknowledged fact, read through the API of the restarted server."""
    for name in facts.definitions:
        assert client.get(f"{BASE}/definitions/interaction/{name}").status_code == 200, name
    for run_id in facts.runs:
        run = client.get(f"{BASE}/runs/{run_id}")
        assert run.status_code == 200, run_id
        if run_id in facts.answered or run_id in facts.delivered:
            assert run.json()["status"] == "succeeded", run.json()
    if facts.clock:
        assert client.get("/_local/clock").json()["now"] >= facts.clock


def check_on_disk(database: Path, chat: DemoChat | None = None, tag: str = "") -> None:
    """Nothing half-written in the folder the server left: each run and its request agree, the
    open-requests counter counts the open requests, and each request sent through a tool agrees with
    its attempts (``check_deliveries``)."""
    with sqlite3.connect(database) as db:
        items = [json.loads(image) for (image,) in db.execute("select image from items")]
    plain = [{name: next(iter(value.values())) for name, value in item.items()} for item in items]
    runs = {item["run_id"]: item for item in plain if item.get("kind") == "run"}
    requests = [item for item in plain if item.get("kind") == "request"]
    for request in requests:
        run = runs[request["run_id"]]
        assert (request["state"] == "open") == (run["status"] == "started"), (request, run)
    counters = [item for item in plain if str(item["sk"]).startswith("COUNTER#open_requests")]
    counted = sum(int(item["count"]) for item in counters)
    assert counted == sum(1 for request in requests if request["state"] == "open"), counters
    events: dict[str, list[dict[str, Any]]] = {}
    for item in sorted((item for item in plain if item.get("kind") == "event"), key=lambda i: i["sk"]):
        events.setdefault(item["run_id"], []).append({**item, "data": json.loads(item["data"])})
    check_deliveries(runs, requests, events)
    if chat is not None:
        check_the_chat(chat, tag, requests, events)


def check_deliveries(
    runs: dict[str, dict[str, Any]], requests: list[dict[str, Any]], events: dict[str, list[dict[str, Any]]]
) -> None:
    """Each request sent through a tool: its ``attempts`` counts its ``delivery_started`` events,
    numbered 1, 2, … with no number twice; each attempt ended at most once; an open request's
    ``standing`` is what its last attempt says; a notification delivered has succeeded."""
    for request in requests:
        if request.get("delivery") is None:
            continue
        history = events.get(request["run_id"], [])
        started = [e["data"]["attempt"] for e in history if e["type"] == "delivery_started"]
        ended = [
            e["data"]["attempt"] for e in history if e["type"] in ("delivery_succeeded", "delivery_failed")
        ]
        assert started == list(range(1, len(started) + 1)), (request, started)
        assert int(request["attempts"]) == len(started), (request, started)
        assert len(ended) == len(set(ended)) and set(ended) <= set(started), (request, started, ended)
        last = [e for e in history if e["type"].startswith("delivery_") and e["type"] != "delivery_refused"]
        if request["state"] == "open":
            expected = (
                {
                    "delivery_started": ("delivering",),
                    "delivery_succeeded": ("delivered",),
                    "delivery_failed": ("retrying", "undelivered"),
                }[last[-1]["type"]]
                if last
                else ("to_deliver",)
            )
            assert request["standing"] in expected, (request, [e["type"] for e in history])
        if not request["takes_answer"] and any(e["type"] == "delivery_succeeded" for e in history):
            assert runs[request["run_id"]]["status"] == "succeeded", (request, runs[request["run_id"]])


def check_the_chat(
    chat: DemoChat, tag: str, requests: list[dict[str, Any]], events: dict[str, list[dict[str, Any]]]
) -> None:
    """The chat's own record: at most one message per attempt a run recorded (none for a run the
    folder does not hold), and a message for each attempt recorded as delivered."""
    to_run = {request["to"]: request["run_id"] for request in requests if request.get("delivery")}
    for channel in chat.chat.channels():
        if not channel.startswith(f"{tag}-"):
            continue
        received = len(chat.chat.messages(channel))
        history = events.get(to_run.get(channel, ""), [])
        attempts = sum(1 for e in history if e["type"] == "delivery_started")
        delivered = sum(1 for e in history if e["type"] == "delivery_succeeded")
        assert delivered <= received <= attempts, (channel, received, [e["type"] for e in history])


@pytest.fixture(scope="module")
def chat() -> Iterator[DemoChat]:
    """The demo chat, outside the server that is killed: it outlives each kill."""
    with demo_chat(DemoChatOptions(port=0)) as served:
        yield served


def operator_with(chat: DemoChat) -> str:
    return OPERATOR + (
        f"tool_servers: [{{name: chat, url: '{chat.mcp_url}', orgs: [acme], playbooks: [campaigns],"
        " allowed: [post_message]}]\n"
    )


@settings(
    max_examples=6,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
# Drawn at random, a stream seldom has a failure switch before a delivery: two streams that do, always
# run. A notification whose attempt 1 fails, then a question killed while its attempt is under way (the
# chat is slow); and a notification killed while the advance makes its attempt 2.
@example(
    stream=[("flaky", 0), ("notify", 0), ("flaky", 1), ("ask", 0)], kill_after=3, in_flight=True, delay_ms=150
)
@example(
    stream=[("flaky", 0), ("notify", 0), ("flaky", 1), ("advance", 60)],
    kill_after=3,
    in_flight=True,
    delay_ms=150,
)
@given(
    stream=steps,
    kill_after=st.integers(0, 8),
    in_flight=st.booleans(),
    delay_ms=st.integers(0, 250),
)
def test_every_acknowledged_write_survives_a_kill_at_any_point(
    chat: DemoChat, stream: list[tuple[str, int]], kill_after: int, in_flight: bool, delay_ms: int
) -> None:
    chat.failures.clear()
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        (folder / "operator.yaml").write_text(operator_with(chat), encoding="utf-8")
        facts = Acknowledged()
        open_runs: list[str] = []
        with serving(folder, free_port()) as (process, client):
            for name, source in (("approve", EXAMPLE), ("notify", NOTIFY), ("ask", ASK)):
                created = client.post(
                    f"{BASE}/definitions/interaction", json={"name": name, "source": source}
                )
                assert created.status_code == 201, created.text
                facts.definitions.add(name)
            for kind, n in stream[:kill_after]:
                step(client, chat, kind, n, facts, open_runs)
            if in_flight:  # killed while the next step is under way (answered or not)
                kind, n = stream[kill_after] if kill_after < len(stream) else ("run", 0)
                arguments = (step, client, chat, kind, n, facts, open_runs)
                sender = threading.Thread(target=_quietly, args=arguments)
                sender.start()
                time.sleep(delay_ms / 1000)
                process.send_signal(signal.SIGKILL)
                sender.join(timeout=60)
            else:
                process.send_signal(signal.SIGKILL)
            process.wait(timeout=30)
        with serving(folder, free_port()) as (process, client):
            check(client, facts)
            # An attempt the kill cut off counts as failed a minute after it started; the next follows.
            moved = client.post("/_local/clock/advance", json={"seconds": 60})
            assert moved.status_code == 200, moved.text
            process.send_signal(signal.SIGTERM)
            assert process.wait(timeout=30) == 0
        check_on_disk(folder / "data" / "parley-local.sqlite", chat, facts.tag)


def _quietly(*call: Any) -> None:
    """A step whose connection the kill may cut."""
    function, *arguments = call
    with suppress(httpx.TransportError):
        function(*arguments)


def test_the_start_up_line_says_what_was_restored_and_a_stop_that_all_is_saved(tmp_path: Path) -> None:
    (tmp_path / "operator.yaml").write_text(OPERATOR, encoding="utf-8")
    log = tmp_path / "serve.log"
    with serving(tmp_path, free_port()) as (process, client):
        created = client.post(f"{BASE}/definitions/interaction", json={"name": "approve", "source": EXAMPLE})
        assert created.status_code == 201, created.text
        run = client.post(f"{BASE}/definitions/interaction/approve/run", json={"input": BRIEF})
        assert run.is_success, run.text
        process.send_signal(signal.SIGINT)  # Ctrl-C
        assert process.wait(timeout=30) == 0
    assert f"Parley stopped; everything is saved in {tmp_path / 'data'}/." in log.read_text()
    with serving(tmp_path, free_port()) as (process, client):
        assert client.post("/_local/clock/advance", json={"seconds": 60}).status_code == 200
        process.send_signal(signal.SIGKILL)
    with serving(tmp_path, free_port()) as (process, client):
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
    starts = [line for line in log.read_text().splitlines() if line.startswith("Parley is serving")]
    assert "data: " in starts[0] and "(new)" in starts[0]
    for line in starts[1:]:
        restored = re.search(
            r"\((\d+) items, (\d+) objects, (\d+) schedules and (\d+) journal pages restored", line
        )
        assert restored is not None, line
        items, _objects, schedules, _pages = map(int, restored.groups())
        assert items >= 4 and schedules == 1, (
            line
        )  # the definition, the run, its request and event; its expiry
    # The kill left the journal uncompacted: the next start replayed it.
    assert re.search(r"and [1-9]\d* journal pages restored", starts[2]), starts[2]


def test_a_folder_an_earlier_version_kept_is_read_once_and_moved_aside(tmp_path: Path) -> None:
    (tmp_path / "operator.yaml").write_text(OPERATOR, encoding="utf-8")
    (tmp_path / "data").mkdir()
    snapshot = {
        "version": 1,
        "clock": "2026-01-02T03:04:05.000Z",
        "items": [],
        "content": {},
        "schedules": [],
    }
    (tmp_path / "data" / "parley-local.json").write_text(json.dumps(snapshot), encoding="utf-8")
    for _ in range(2):  # imported, then read from the journal
        with serving(tmp_path, free_port()) as (process, client):
            assert client.get("/_local/clock").json()["now"] == "2026-01-02T03:04:05.000Z"
            process.send_signal(signal.SIGTERM)
            assert process.wait(timeout=30) == 0
    assert sorted(path.name for path in (tmp_path / "data").glob("parley-local*")) == [
        "parley-local.json.imported",
        "parley-local.sqlite",
    ]


def test_a_data_folder_that_is_not_ours_is_refused_in_words(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "parley-local.sqlite").write_text("somebody's notes\n" * 500, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "parley.cli", "serve", "--port", "0", "--data", str(tmp_path / "data")],
        capture_output=True,
        text=True,
        timeout=60,
        env={k: v for k, v in os.environ.items() if not k.startswith("AWS_")},
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert "is not a Parley data file" in done.stderr and "--data none" in done.stderr
    assert "Traceback" not in done.stderr
