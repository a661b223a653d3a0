"""Bursts are queued, not refused (issue 27, item 3; ``parley.local.front``): requests beyond what the
server answers at once wait their turn in a bounded queue, and only a full queue or a wait too long is a
``503`` with ``Retry-After``."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from tool_serving import BASE, WRITER, serving_with, writer_and_viewer

from parley.local.events import HttpReply
from parley.local.front import FrontLimits, HttpFront, listening_socket

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "definitions" / "approve-campaign-brief.md"
BURST = 200


def at_once(count: int, work: Callable[[int], Any]) -> list[Any]:
    """``work(i)`` for each i on its own thread, all let go together."""
    barrier = threading.Barrier(count)
    results: list[Any] = [None] * count

    def one(i: int) -> None:
        barrier.wait()
        try:
            results[i] = work(i)
        except Exception as exc:  # kept, to be seen in the assertion
            results[i] = exc

    threads = [threading.Thread(target=one, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    return results


def test_a_burst_of_200_answers_to_200_open_requests_is_200_times_200(tmp_path: Path) -> None:
    with (
        serving_with(tmp_path, writer_and_viewer(["campaigns"])) as url,
        httpx.Client(base_url=url + BASE, headers=WRITER, timeout=60) as http,
    ):
        saved = http.post(
            "/definitions/interaction",
            json={"name": "approve-campaign-brief", "source": EXAMPLE.read_text(encoding="utf-8")},
        )
        assert saved.status_code == 201, saved.text
        run_ids = []
        for i in range(BURST):
            run = http.post(
                "/definitions/interaction/approve-campaign-brief/run",
                json={"input": {"owner": f"owner-{i}", "review": "Fine."}},
            )
            assert run.status_code == 200, run.text
            run_ids.append(run.json()["run_id"])

        def answer(i: int) -> tuple[int, str]:
            reply = httpx.post(
                f"{url}{BASE}/runs/{run_ids[i]}/answer",
                json={"answer": {"verdict": "approve"}},
                headers=WRITER,
                timeout=120,
            )
            return reply.status_code, reply.text

        replies = at_once(BURST, answer)

        statuses = [reply[0] if isinstance(reply, tuple) else reply for reply in replies]
        assert statuses == [200] * BURST, [reply for reply in replies if reply[0] != 200][:5]
        assert http.get("/interactions").json()["interactions"] == []  # every request answered
        for run_id in (run_ids[0], run_ids[-1]):
            assert http.get(f"/runs/{run_id}").json()["status"] == "succeeded"


# --- the queue, with a front of its own whose answers wait until the test lets them go ---------------


class Gate:
    """An answer that blocks until opened, counting the requests under way."""

    def __init__(self) -> None:
        self.opened = threading.Event()
        self.entered = threading.Semaphore(0)
        self.seen: list[str] = []  # the targets, in the order they were let in

    def __call__(self, method: str, target: str, headers: Any, body: bytes, ip: str) -> HttpReply:
        self.seen.append(target)
        self.entered.release()
        self.opened.wait(timeout=60)
        return HttpReply(200, [("Content-Type", "text/plain")], target.encode())


@contextmanager
def gated_front(limits: FrontLimits) -> Iterator[tuple[HttpFront, Gate]]:
    gate = Gate()
    front = HttpFront(listening_socket("127.0.0.1", 0), gate, limits)
    front.start()
    try:
        yield front, gate
    finally:
        gate.opened.set()
        front.stop()


def get(front: HttpFront, path: str) -> httpx.Response:
    host, port = front.address
    return httpx.get(f"http://{host}:{port}{path}", timeout=60)


def until(condition: Callable[[], bool]) -> None:
    """Wait for ``condition`` (bounded generously: the test asserts the state, not the time)."""
    deadline = time.monotonic() + 30
    while not condition():
        assert time.monotonic() < deadline
        time.sleep(0.01)


def in_background(work: Callable[[], httpx.Response]) -> Callable[[], httpx.Response]:
    """Start ``work`` on a thread; the returned call waits for its result."""
    result: list[httpx.Response] = []
    thread = threading.Thread(target=lambda: result.append(work()))
    thread.start()

    def wait() -> httpx.Response:
        thread.join(timeout=60)
        return result[0]

    return wait


def test_a_request_beyond_the_queue_is_a_503_with_retry_after_and_the_queued_ones_are_answered() -> None:
    with gated_front(FrontLimits(max_in_flight=1, max_queued=1)) as (front, gate):
        first = in_background(lambda: get(front, "/first"))
        assert gate.entered.acquire(timeout=30)  # the first is being answered
        second = in_background(lambda: get(front, "/second"))
        until(lambda: len(front.app.waiting) == 1)  # the second waits its turn

        third = get(front, "/third")

        assert third.status_code == 503
        assert third.headers["content-type"] == "application/problem+json"
        assert third.headers["retry-after"] == "1"
        assert third.json()["reason"] == "unavailable"
        assert "waiting" in third.json()["detail"]
        gate.opened.set()
        assert (first().status_code, first().text) == (200, "/first")
        assert (second().status_code, second().text) == (200, "/second")
        assert (front.app.in_flight, len(front.app.waiting)) == (0, 0)


def test_a_request_that_waits_too_long_is_a_503_with_retry_after() -> None:
    with gated_front(FrontLimits(max_in_flight=1, max_queued=4, queue_seconds=0.2)) as (front, gate):
        first = in_background(lambda: get(front, "/first"))
        assert gate.entered.acquire(timeout=30)

        waited = get(front, "/second")

        assert (waited.status_code, waited.headers["retry-after"]) == (503, "1")
        assert "waited 0.2 seconds" in waited.json()["detail"]
        assert len(front.app.waiting) == 0  # it left the queue
        gate.opened.set()
        assert first().status_code == 200
        assert get(front, "/after").status_code == 200  # the place was given back


def test_queued_requests_are_answered_first_come_first_served() -> None:
    with gated_front(FrontLimits(max_in_flight=1, max_queued=8)) as (front, gate):
        first = in_background(lambda: get(front, "/0"))
        assert gate.entered.acquire(timeout=30)
        waiting = []
        for i in range(1, 5):
            waiting.append(in_background(lambda i=i: get(front, f"/{i}")))  # type: ignore[misc]
            until(lambda i=i: len(front.app.waiting) == i)  # type: ignore[misc]
        gate.opened.set()
        assert first().status_code == 200
        assert [wait().status_code for wait in waiting] == [200] * 4
        assert gate.seen == ["/0", "/1", "/2", "/3", "/4"]


def test_the_documented_figures(capsys: pytest.CaptureFixture[str]) -> None:
    """The queue's size and longest wait are what ``parley serve --help`` says."""
    from parley.cli import build_parser

    limits = FrontLimits()
    with pytest.raises(SystemExit):
        build_parser().parse_args(["serve", "--help"])
    described = " ".join(capsys.readouterr().out.split())
    assert f"answers {limits.max_in_flight} requests at once" in described
    assert f"up to {limits.max_queued:,} more wait their turn, each at most {limits.queue_seconds:g} s" in (
        described
    )


def test_a_client_that_leaves_the_queue_gives_its_place_back() -> None:
    with gated_front(FrontLimits(max_in_flight=1, max_queued=1, queue_seconds=60)) as (front, gate):
        first = in_background(lambda: get(front, "/first"))
        assert gate.entered.acquire(timeout=30)
        with socket.create_connection(front.address, timeout=10) as conn:
            conn.sendall(b"GET /gone HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            until(lambda: len(front.app.waiting) == 1)
        gate.opened.set()
        assert first().status_code == 200
        # The one that left is still answered into the void; then the front takes requests again.
        until(lambda: front.app.in_flight == 0 and not front.app.waiting)
        assert get(front, "/after").status_code == 200
