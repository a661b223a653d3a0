"""Black-box tests of ``parley serve`` over real HTTP (http-api.md, "Local server")."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

pytestmark = pytest.mark.http

OPERATOR = """
principals:
  - { id: dev, token: dev-token, grants: [{ org: acme, playbook: campaigns, role: write }] }
  - { id: viewer, token: viewer-token, grants: [{ org: acme, playbook: campaigns, role: read }] }
"""
DEFINITIONS = "/v1/orgs/acme/playbooks/campaigns/definitions"
WRITER = {"Authorization": "Bearer dev-token"}
READY_WITHIN = 60.0  # a generous wait for a loaded machine, not a speed target


@dataclass
class Server:
    url: str
    process: subprocess.Popen[bytes]
    output: Path

    def stop(self, sig: signal.Signals = signal.SIGTERM) -> int:
        self.process.send_signal(sig)
        return self.process.wait(timeout=15)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def start_server(tmp: Path, clock: str) -> Server:
    config = tmp / "operator.yaml"
    config.write_text(OPERATOR, encoding="utf-8")
    output = tmp / f"serve-{clock}.log"
    port = free_port()
    command = [
        sys.executable,
        "-m",
        "parley.cli",
        "serve",
        "--clock",
        clock,
        "--port",
        str(port),
        "--config",
        str(config),
        "--data",
        "none",
    ]
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    started = time.monotonic()
    with output.open("wb") as sink:
        process = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT, env=env)
    url = f"http://127.0.0.1:{port}"
    while time.monotonic() - started < READY_WITHIN:
        if process.poll() is not None:
            raise AssertionError(f"parley serve exited with {process.returncode}:\n{output.read_text()}")
        try:
            httpx.get(url + "/", timeout=1)
            return Server(url, process, output)
        except httpx.TransportError:
            time.sleep(0.05)
    process.kill()
    raise AssertionError(f"parley serve did not answer within {READY_WITHIN} s:\n{output.read_text()}")


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    running = start_server(tmp_path_factory.mktemp("serve"), "manual")
    yield running
    assert running.stop() == 0, running.output.read_text()


@pytest.fixture
def client(server: Server) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=10) as http:
        yield http


def test_it_starts_and_says_where(server: Server) -> None:
    # How fast it starts is the README's figure (timed by hand and printed by `make bench`'s restarts),
    # not an assertion a loaded machine could trip.
    first_line = server.output.read_text().splitlines()[0]
    assert first_line.startswith(f"Parley is serving {server.url} (clock: manual")


def test_save_the_example_and_read_it_back(client: httpx.Client, example_source: str) -> None:
    # What `curl -X POST -H 'Authorization: Bearer dev-token' -H 'Content-Type: application/json'
    # --data-binary @body.json .../definitions/interaction` sends.
    body = json.dumps({"name": "approve-campaign-brief", "source": example_source}).encode()
    created = client.post(
        f"{DEFINITIONS}/interaction", content=body, headers={**WRITER, "Content-Type": "application/json"}
    )
    got = client.get(f"{DEFINITIONS}/interaction/approve-campaign-brief", headers=WRITER)

    assert created.status_code == 201, created.text
    assert created.headers["cache-control"] == "no-store"
    assert created.headers["location"] == f"{DEFINITIONS}/interaction/approve-campaign-brief"
    assert got.status_code == 200
    assert got.headers["content-type"] == "application/json"
    definition = got.json()
    assert definition == created.json()
    assert (definition["type"], definition["name"], definition["version"], definition["status"]) == (
        "interaction", "approve-campaign-brief", 1, "active",
    )  # fmt: skip
    assert definition["source"] == example_source
    assert definition["media_type"] == "text/markdown"
    assert definition["description"] == "Asks the campaign owner to approve a reviewed brief"
    assert "Asks the campaign owner to approve a reviewed brief" in definition["overview"]
    assert "owner" in definition["overview"] and "review" in definition["overview"]
    listed = client.get(f"{DEFINITIONS}/interaction", headers={"Authorization": "Bearer viewer-token"})
    assert "approve-campaign-brief" in [d["name"] for d in listed.json()["definitions"]]


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
def test_the_documented_curl_saves_a_definition(server: Server, tmp_path: Path, example_source: str) -> None:
    body = tmp_path / "body.json"
    body.write_text(json.dumps({"name": "curl-saved", "source": example_source}), encoding="utf-8")

    done = subprocess.run(
        [
            "curl", "-sS", "-X", "POST", f"{server.url}{DEFINITIONS}/interaction",
            "-H", "Authorization: Bearer dev-token", "-H", "Content-Type: application/json",
            "--data-binary", f"@{body}", "-w", "\n%{http_code}",
        ],
        capture_output=True, text=True, timeout=30, check=True,
    )  # fmt: skip

    text, status = done.stdout.rsplit("\n", 1)
    assert status == "201", text
    assert json.loads(text)["name"] == "curl-saved"


def test_the_clock_stands_still_until_advanced(client: httpx.Client) -> None:
    before = client.get("/_local/clock")
    again = client.get("/_local/clock")
    moved = client.post("/_local/clock/advance", json={"seconds": 90}, headers=WRITER)
    after = client.get("/_local/clock")

    assert before.status_code == 200
    assert before.headers["content-type"] == "application/json"
    assert before.json() == again.json()
    assert moved.status_code == 200
    elapsed = _parse(after.json()["now"]) - _parse(before.json()["now"])
    assert elapsed == 90
    assert moved.json() == after.json()
    assert client.post("/_local/clock/advance", json={"seconds": 0}, headers=WRITER).json() == after.json()


def test_created_at_comes_from_the_manual_clock(client: httpx.Client, example_source: str) -> None:
    now = client.post("/_local/clock/advance", json={"seconds": 3600}, headers=WRITER).json()["now"]
    created = client.post(
        f"{DEFINITIONS}/interaction", json={"name": "timed-one", "source": example_source}, headers=WRITER
    )

    assert created.status_code == 201, created.text
    assert created.json()["created_at"] == created.json()["updated_at"] == now


@pytest.mark.parametrize("body", [{"seconds": -1}, {"seconds": "soon"}, {}])
def test_advance_refuses_what_is_not_seconds_at_least_0(client: httpx.Client, body: object) -> None:
    reply = client.post("/_local/clock/advance", json=body, headers=WRITER)

    assert reply.status_code == 400
    assert reply.headers["content-type"] == "application/problem+json"
    assert reply.json()["reason"] == "bad_request"


def test_bad_requests_over_http(client: httpx.Client) -> None:
    post = f"{DEFINITIONS}/interaction"
    json_type = {**WRITER, "Content-Type": "application/json"}

    bad_json = client.post(post, content=b"{not json", headers=json_type)
    too_large = client.post(post, content=b'{"source": "' + b"x" * (1024 * 1024) + b'"}', headers=json_type)
    wrong_type = client.post(
        post, content=b"name=x", headers={**WRITER, "Content-Type": "application/x-www-form-urlencoded"}
    )
    wrong_method = client.delete(f"{DEFINITIONS}/interaction/approve-campaign-brief", headers=WRITER)
    unknown = client.get("/v1/nothing-here", headers=WRITER)
    no_token = client.get(f"{DEFINITIONS}/interaction")
    reader_writes = client.post(
        post, json={"name": "x-y-z", "source": "---\n---\n"}, headers={"Authorization": "Bearer viewer-token"}
    )
    bad_limit = client.get(f"{DEFINITIONS}/interaction?limit=0", headers=WRITER)
    wrong_fields = client.post(post, json={"name": 1}, headers=WRITER)

    expected = [
        (bad_json, 400, "bad_request"),
        (too_large, 413, "content_too_large"),
        (wrong_type, 415, "unsupported_media_type"),
        (wrong_method, 405, "method_not_allowed"),
        (unknown, 404, "not_found"),
        (no_token, 401, "unauthenticated"),
        (reader_writes, 403, "forbidden"),
        (bad_limit, 400, "bad_request"),
        (wrong_fields, 422, "invalid_input"),
    ]
    for reply, status, reason in expected:
        assert (reply.status_code, reply.json()["reason"]) == (status, reason), reply.text
        assert reply.headers["content-type"] == "application/problem+json"
        assert reply.json()["type"] == f"https://on.auto/problems/{reason}"
    assert wrong_method.headers["allow"] == "GET, HEAD, PUT"
    assert no_token.headers["www-authenticate"] == "Bearer"
    assert [e["pointer"] for e in wrong_fields.json()["errors"]] == ["/name", "/source"]


def test_a_chunked_body_is_read(client: httpx.Client) -> None:
    def chunks() -> Iterator[bytes]:
        yield b'{"seconds":'
        yield b" 1}"

    reply = client.post(
        "/_local/clock/advance", content=chunks(), headers={**WRITER, "Content-Type": "application/json"}
    )

    assert reply.status_code == 200, reply.text


def test_concurrent_creates_over_http_have_one_winner(server: Server, example_source: str) -> None:
    statuses: list[int] = []
    barrier = threading.Barrier(6)

    def create() -> None:
        with httpx.Client(base_url=server.url, timeout=10) as http:
            barrier.wait()
            reply = http.post(
                f"{DEFINITIONS}/interaction",
                json={"name": "raced-over-http", "source": example_source},
                headers=WRITER,
            )
            statuses.append(reply.status_code)

    threads = [threading.Thread(target=create) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)

    assert sorted(statuses) == [201, 409, 409, 409, 409, 409]


def test_under_a_real_clock_the_clock_routes_do_not_exist(tmp_path: Path) -> None:
    real = start_server(tmp_path, "real")
    try:
        with httpx.Client(base_url=real.url, timeout=10) as http:
            clock = http.get("/_local/clock")
            advance = http.post("/_local/clock/advance", json={"seconds": 1})
    finally:
        code = real.stop(signal.SIGINT)  # Ctrl-C

    assert (clock.status_code, clock.json()["reason"]) == (404, "not_found")
    assert (advance.status_code, advance.json()["reason"]) == (404, "not_found")
    assert code == 0, real.output.read_text()
    assert "Traceback" not in real.output.read_text()


def _parse(text: str) -> float:
    from parley.clock import parse_time

    return parse_time(text).timestamp()
