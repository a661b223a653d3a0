"""The README's walk-through ("Try it") run as a user runs it: every shell block of the section,
unchanged but for the server's address, against a fresh ``parley serve`` with the example
configuration, so that the README cannot drift from the product."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
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
    assert len(blocks) >= 2
    assert all("127.0.0.1:8000" in block for block in blocks)


def run_blocks(blocks: list[str], log: Path) -> list[str]:
    """Each block's output, run in bash against a fresh server with the example configuration; every
    block must succeed and print no problem."""
    outputs = []
    with serving_manually(ROOT / "examples" / "operator.yaml", log) as url:
        for block in blocks:
            script = block.replace("http://127.0.0.1:8000", url)
            done = subprocess.run(
                ["bash", "-euo", "pipefail", "-c", script],
                cwd=ROOT,
                capture_output=True,
                text=True,
                timeout=120,
            )
            assert done.returncode == 0, f"{script}\n{done.stdout}\n{done.stderr}"
            assert "problems/" not in done.stdout, f"{script}\n{done.stdout}"
            outputs.append(done.stdout)
    return outputs


def test_every_command_of_try_it_works_against_a_fresh_server(tmp_path: Path) -> None:
    outputs = run_blocks(try_it_blocks(), tmp_path / "serve.log")
    saved, run = outputs[0], outputs[-1]
    assert "approve-campaign-brief" in saved or "Asks" in saved
    assert re.search(r'"status":\s*"succeeded"', run), run
    assert "request_answered" in run and "run_succeeded" in run


def workflow_blocks() -> list[str]:
    return shell_blocks("### A workflow:", "### A workflow that forks")


def test_the_workflow_walk_through_works_after_try_it(tmp_path: Path) -> None:
    """The workflow section's blocks, after Try it's first (which saves ``approve-campaign-brief``)."""
    outputs = run_blocks([try_it_blocks()[0], *workflow_blocks()], tmp_path / "serve.log")
    answered, expired = outputs[1], outputs[2]
    assert "```mermaid" in answered and '"parent"' in answered
    assert re.search(r'"status":\s*"succeeded"', answered) and "Ship it" in answered
    assert "call_started" in answered and "run_succeeded" in answered
    assert "No answer within two days" in expired


def test_the_fork_wait_and_listen_walk_through_works_after_try_it(tmp_path: Path) -> None:
    blocks = [try_it_blocks()[0], *shell_blocks("### A workflow that forks", "## ")]
    outputs = run_blocks(blocks, tmp_path / "serve.log")
    ended = outputs[-1]
    assert re.search(r'"status":\s*"succeeded"', ended), ended
    assert '"approved": true' in ended.replace('":true', '": true') and '"approvals"' in ended
