"""The README's walk-throughs ("Try it", the workflows, the reasoning function with the demo model) run as
a user runs them: every shell block of the section, unchanged but for the server's address, in bash with
the ``parley`` command on the ``PATH`` (as ``source .venv/bin/activate`` puts it) and ``PARLEY_URL``
naming a fresh ``parley serve`` with the example configuration, so that the README cannot drift from
the product."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from mcp_servers import free_port
from tool_serving import serving_manually

pytestmark = pytest.mark.http

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"


def shell_blocks(heading: str, until: str) -> list[str]:
    """The ``sh`` blocks of the README from ``heading`` to the next line starting with ``until``."""
    text = README.read_text(encoding="utf-8")
    section = text.split(heading, 1)[1].split("\n" + until, 1)[0]
    return re.findall(r"```sh\n(.*?)```", section, flags=re.DOTALL)


def try_it_blocks() -> list[str]:
    return shell_blocks("### Try it", "### ")


def test_try_it_has_commands_to_run() -> None:
    blocks = try_it_blocks()
    assert len(blocks) >= 3
    assert all("parley " in block or "127.0.0.1:8000" in block for block in blocks)
    assert "python3 -c" not in "".join(blocks)


def run_blocks(
    blocks: list[str],
    log: Path,
    config: Path = ROOT / "examples" / "operator.yaml",
    *,
    with_errors: bool = False,
) -> list[str]:
    """Each block's output, run in bash against a fresh server with the example configuration; every
    block must succeed and print no problem on standard output (``with_errors``: each output is followed
    by what the block printed on standard error, as a terminal shows it)."""
    outputs = []
    with serving_manually(config, log) as url:
        env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
               "PARLEY_URL": url}  # fmt: skip
        for name in ("PARLEY_TOKEN", "PARLEY_ORG", "PARLEY_PLAYBOOK"):
            env.pop(name, None)
        for block in blocks:
            script = block.replace("http://127.0.0.1:8000", url)
            done = subprocess.run(
                ["bash", "-euo", "pipefail", "-c", script],
                cwd=ROOT,
                capture_output=True,
                text=True,
                timeout=120,
                env=env,
            )
            assert done.returncode == 0, f"{script}\n{done.stdout}\n{done.stderr}"
            assert "problems/" not in done.stdout, f"{script}\n{done.stdout}"
            outputs.append(done.stdout + done.stderr if with_errors else done.stdout)
    return outputs


def test_every_command_of_try_it_works_against_a_fresh_server(tmp_path: Path) -> None:
    outputs = run_blocks(try_it_blocks(), tmp_path / "serve.log")
    saved, answered, over_http = outputs
    assert saved.startswith("Created interaction approve-campaign-brief, version 1.") and "Asks" in saved
    assert re.search(r"approve-campaign-brief\s+maria\s+The review of your campaign", answered)  # the inbox
    assert "Status    succeeded" in answered and '"note": "Ship it"' in answered
    timeline = answered.split("History\n")[1]
    assert [line.split()[2] for line in timeline.splitlines()] == [
        "interaction_requested", "request_answered", "run_succeeded"
    ]  # fmt: skip
    assert re.search(r'"status":\s*"started"', over_http) and '"answer_schema"' in over_http


def workflow_blocks() -> list[str]:
    return shell_blocks("### A workflow:", "### A workflow that forks")


def test_the_workflow_walk_through_works_after_try_it(tmp_path: Path) -> None:
    """The workflow section's blocks, after Try it's first (which saves ``approve-campaign-brief``)."""
    outputs = run_blocks([try_it_blocks()[0], *workflow_blocks()], tmp_path / "serve.log")
    answered, expired = outputs[1], outputs[2]
    assert "```mermaid" in answered and "\nParent    " in answered
    assert "Status    succeeded" in answered and "Ship it" in answered
    assert "call_started" in answered and "run_succeeded" in answered
    assert "Status    succeeded" in expired and "No answer within two days" in expired


def test_the_fork_wait_and_listen_walk_through_works_after_try_it(tmp_path: Path) -> None:
    blocks = [try_it_blocks()[0], *shell_blocks("### A workflow that forks", "## ")]
    outputs = run_blocks(blocks, tmp_path / "serve.log")
    ended = outputs[-1]
    assert re.search(r'"status":\s*"succeeded"', ended), ended
    assert '"approved": true' in ended.replace('":true', '": true') and '"approvals"' in ended


@contextmanager
def demo_model() -> Iterator[int]:
    """``parley demo-model`` on a free port, stopped on exit."""
    port = free_port()
    command = [sys.executable, "-m", "parley.cli", "demo-model", "--port", str(port)]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        yield port
    finally:
        process.terminate()
        process.wait(timeout=15)


def test_the_reasoning_walk_through_works_with_the_demo_model(tmp_path: Path) -> None:
    """The reasoning section's block, with the example configuration's gateway ``demo`` pointed at a
    demo model on a port of the test's own."""
    blocks = shell_blocks("### A reasoning function, with the demo model", "### ")
    assert len(blocks) == 1
    with demo_model() as port:
        config = tmp_path / "operator.yaml"
        example = (ROOT / "examples" / "operator.yaml").read_text(encoding="utf-8")
        assert "http://127.0.0.1:9100/v1" in example
        config.write_text(example.replace("http://127.0.0.1:9100/v1", f"http://127.0.0.1:{port}/v1"))
        (output,) = run_blocks(blocks, tmp_path / "serve.log", config)
    assert output.startswith("Created reasoning review-brief, version 1.")
    assert "Status    succeeded" in output and '"record"' in output
    assert '"demo/echo"' in output


@contextmanager
def demo_chat() -> Iterator[int]:
    """``parley demo-chat`` on a free port, stopped on exit."""
    port = free_port()
    command = [sys.executable, "-m", "parley.cli", "demo-chat", "--port", str(port)]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = 200
        while deadline:
            try:
                httpx.get(f"http://127.0.0.1:{port}/", timeout=1)
                break
            except httpx.TransportError:
                deadline -= 1
                time.sleep(0.05)
        yield port
    finally:
        process.terminate()
        process.wait(timeout=15)


def test_the_connections_walk_through_works_with_the_demo_chat_and_model(tmp_path: Path) -> None:
    """The connections section's blocks: the demo chat (on a port of the test's own, for the README's
    9001) added as a connection, refused while pending, approved, called by a reasoning function of the
    demo model, shown and removed; the header's value appears in no output."""
    blocks = shell_blocks("### Connections: MCP servers people add to their org", "### ")
    assert len(blocks) == 3
    with demo_model() as model_port, demo_chat() as chat_port:
        config = tmp_path / "operator.yaml"
        example = (ROOT / "examples" / "operator.yaml").read_text(encoding="utf-8")
        config.write_text(example.replace("http://127.0.0.1:9100/v1", f"http://127.0.0.1:{model_port}/v1"))
        moved = [
            block.replace("127.0.0.1:9001", f"127.0.0.1:{chat_port}").replace(
                "parley demo-chat reply", f"parley demo-chat reply --port {chat_port}"
            )
            for block in blocks
        ]
        added, pending, used = run_blocks(moved, tmp_path / "serve.log", config, with_errors=True)
    assert added.startswith("Added the connection team-chat to the org acme: pending")
    assert re.search(rf"team-chat\s+pending\s+headers\s+http://127.0.0.1:{chat_port}/mcp\s+all", added)
    assert "connection_pending" in pending and "exit 4" in pending, pending
    assert "Approved the connection team-chat: active" in used
    assert "Status    succeeded" in used
    assert re.search(r"tool_call_started\s+team-chat/channel_messages", used), used
    assert "tool_call_answered" in used and "May 12" in used
    assert re.search(r"Approved\s+by dev", used) and "Removed the connection team-chat" in used
    assert "demo-chat-token" not in added + pending + used
