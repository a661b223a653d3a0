"""Fixtures of the HTTP tests that need a real MCP tool server beside ``parley serve``.

``served`` starts, for each test module, a real MCP server on 127.0.0.1 (``tests/mcp_servers.py``) and a
``parley serve --clock manual`` whose operator configuration names it (with a secret header), another
org's server and an unreachable one; ``http`` is a client of the playbook acme/campaigns.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp_servers import LocalToolServer, free_port, running_tool_server, unreachable_url

CREDENTIAL = "sk-http-2b7c9e11f4"
WRITER = {"Authorization": "Bearer dev-token", "Content-Type": "application/json"}
BASE = "/v1/orgs/acme/playbooks/campaigns"
VIEWER = {"Authorization": "Bearer viewer-token"}


def writer_and_viewer(playbooks: list[str], *extra: str) -> str:
    """An operator configuration: ``dev-token`` writes and ``viewer-token`` reads each playbook of acme
    in ``playbooks`` (one per test, so that tests sharing a server count no one else's requests), then
    the ``extra`` lines."""
    lines = ["principals:"]
    for principal, role in (("dev", "write"), ("viewer", "read")):
        lines += [f"  - id: {principal}", f"    token: {principal}-token", "    grants:"]
        lines += [f"      - {{ org: acme, playbook: {p}, role: {role} }}" for p in playbooks]
    return "\n".join([*lines, *extra, ""])


def problem(reply: httpx.Response, status: int, reason: str) -> dict[str, Any]:
    """The problem document of ``reply``, which must have ``status`` and ``reason``."""
    assert reply.status_code == status, reply.text
    body: dict[str, Any] = reply.json()
    assert body["reason"] == reason, body
    return body


@dataclass
class PlaybookClient:
    """A client of one playbook of a ``parley serve`` (``writer_and_viewer``'s tokens), with the manual
    clock's route beside it."""

    http: httpx.Client
    base: str

    def post(self, path: str, body: Any = None, headers: dict[str, str] | None = None) -> httpx.Response:
        content = None if body is None else json.dumps(body)
        sent = {**WRITER, **(headers or {})}
        return self.http.post(self.base + path, content=content, headers=sent)

    def get(self, path: str, params: dict[str, str] | None = None) -> httpx.Response:
        return self.http.get(
            self.base + path, params=params, headers={"Authorization": "Bearer viewer-token"}
        )

    def advance(self, seconds: float) -> str:
        moved = self.http.post("/_local/clock/advance", json={"seconds": seconds}, headers=WRITER)
        assert moved.status_code == 200, moved.text
        now: str = moved.json()["now"]
        return now

    def run_of(self, run_id: str) -> dict[str, Any]:
        reply = self.get(f"/runs/{run_id}")
        assert reply.status_code == 200, reply.text
        body: dict[str, Any] = reply.json()
        return body

    def history(self, run_id: str) -> list[dict[str, Any]]:
        reply = self.get(f"/runs/{run_id}/history", {"limit": "100"})
        assert reply.status_code == 200, reply.text
        events: list[dict[str, Any]] = reply.json()["events"]
        return events

    def open_requests(self) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = self.get("/interactions").json()["interactions"]
        return items


@dataclass
class Served:
    url: str
    log: Path
    tools: LocalToolServer


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    tmp = tmp_path_factory.mktemp("serve-tools")
    with running_tool_server() as tools:
        operator = f"""
principals:
  - {{ id: dev, token: dev-token, grants: [{{ org: acme, playbook: campaigns, role: write }}] }}
tool_servers:
  - name: chat
    url: {tools.url}
    orgs: [acme]
    playbooks: [campaigns]
    allowed: [post_message, thread_replies, whoami, write_fails, read_fails, slow, repeat]
    headers: {{ Authorization: "Bearer {CREDENTIAL}" }}
  - name: globex-chat
    url: {tools.url}
    orgs: [globex]
  - name: gone
    url: {unreachable_url()}
    orgs: [acme]
"""
        with serving_with(tmp, operator) as url:
            yield Served(url, tmp / "serve.log", tools)


@contextmanager
def serving_with(tmp: Path, operator_yaml: str) -> Iterator[str]:
    """:func:`serving_manually` with ``operator_yaml`` as its operator configuration (written to
    ``tmp/operator.yaml``; the server's log is ``tmp/serve.log``)."""
    config = tmp / "operator.yaml"
    config.write_text(operator_yaml, encoding="utf-8")
    with serving_manually(config, tmp / "serve.log") as url:
        yield url


@contextmanager
def serving_manually(
    config: Path, log: Path, ready_within: float = 20.0, data: Path | None = None
) -> Iterator[str]:
    """``parley serve --clock manual`` with the operator configuration ``config``, in a subprocess that
    writes to ``log`` (AWS variables and INTERACTION_OPEN_REQUESTS left out of its environment); its URL
    once it answers. Stopped on exit, and it must stop cleanly. It keeps its data in ``data`` (none by
    default: each test's server starts empty)."""
    port = free_port()
    command = [sys.executable, "-m", "parley.cli", "serve", "--clock", "manual", "--port", str(port),
               "--config", str(config), "--data", str(data) if data is not None else "none"]  # fmt: skip
    env = {
        k: v for k, v in os.environ.items() if not k.startswith("AWS_") and k != "INTERACTION_OPEN_REQUESTS"
    }
    with log.open("ab") as sink:
        process = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT, env=env)
    url = f"http://127.0.0.1:{port}"
    started = time.monotonic()
    while True:
        if process.poll() is not None:
            raise AssertionError(f"parley serve exited with {process.returncode}:\n{log.read_text()}")
        try:
            httpx.get(url + "/_local/clock", timeout=1)
            break
        except httpx.TransportError:
            if time.monotonic() - started > ready_within:
                process.kill()
                raise AssertionError(f"parley serve did not answer:\n{log.read_text()}") from None
            time.sleep(0.05)
    try:
        yield url
    finally:
        process.terminate()
        assert process.wait(timeout=15) == 0, log.read_text()


@pytest.fixture
def http(served: Served) -> Iterator[httpx.Client]:
    served.tools.reset()
    with httpx.Client(base_url=served.url + BASE, headers=WRITER, timeout=60) as client:
        yield client
