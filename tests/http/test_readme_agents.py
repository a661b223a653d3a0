"""The README's agent walk-through ("Agent runs") and the demo model's page run as a user runs them,
against what ``make demo`` serves (``examples/operator-demo.yaml``: Parley, the demo chat and the demo
model; here on free ports), with ``parley`` on the ``PATH`` and ``PARLEY_URL`` naming the server; and the
README's Python example of the MCP front door, run with the official SDK against ``parley serve`` with
the example configuration (issue 29, items 3 and 5)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from demo_serving import serving_demo
from tool_serving import serving_manually

pytestmark = pytest.mark.http

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"


def blocks(path: Path, heading: str, until: str, language: str = "sh") -> list[str]:
    """The ``language`` blocks of ``path`` from ``heading`` to the next line starting with ``until``."""
    text = path.read_text(encoding="utf-8")
    section = text.split(heading, 1)[1].split("\n" + until, 1)[0]
    return re.findall(rf"```{language}\n(.*?)```", section, flags=re.DOTALL)


def run_in_bash(scripts: list[str], url: str) -> list[str]:
    """Each script's output, run in bash from the repository with ``parley`` on the ``PATH``; each must
    succeed and print no problem."""
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
           "PARLEY_URL": url}  # fmt: skip
    for name in ("PARLEY_TOKEN", "PARLEY_ORG", "PARLEY_PLAYBOOK"):
        env.pop(name, None)
    outputs = []
    for block in scripts:
        script = block.replace("http://127.0.0.1:8000", url)
        done = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", script],
            cwd=ROOT, capture_output=True, text=True, timeout=120, env=env,
        )  # fmt: skip
        assert done.returncode == 0, f"{script}\n{done.stdout}\n{done.stderr}"
        assert "problems/" not in done.stdout, f"{script}\n{done.stdout}"
        outputs.append(done.stdout)
    return outputs


def test_the_agent_walk_through_names_an_example_that_exists() -> None:
    section = README.read_text(encoding="utf-8").split("### Agent runs", 1)[1].split("\n### ", 1)[0]
    named = re.findall(r"\(examples/definitions/reasoning/([\w-]+\.md)\)", section)

    assert "trip-planner" not in section
    assert {"choose-launch-channel.md", "ask-for-headline.md", "collect-launch-details.md"} <= set(named)
    assert all((ROOT / "examples" / "definitions" / "reasoning" / name).is_file() for name in named)


def test_the_agent_walk_through_works_against_the_demo(tmp_path: Path) -> None:
    scripts = blocks(README, "### Agent runs", "### ")
    assert len(scripts) == 1

    with serving_demo(tmp_path) as demo:
        (output,) = run_in_bash(scripts, demo.url)

    assert "Where should spring-sale launch?" in output  # the inbox, and the request's JSON
    assert '"options"' in output and '"answer_schema"' in output
    assert "Status    succeeded" in output and "email" in output.split("Status    succeeded", 1)[1]
    timeline = output.split("History\n")[1]
    kinds = [line.split()[2] for line in timeline.splitlines() if len(line.split()) > 2]
    assert {"activity_updated", "input_requested", "request_answered", "run_succeeded"} <= set(kinds)


def test_the_demo_models_walk_through_works_against_the_demo(tmp_path: Path) -> None:
    page = ROOT / "docs" / "demo-model.md"
    scripts = [block for block in blocks(page, "## The examples", "## ") if "parley save" in block]
    assert len(scripts) == 1

    with serving_demo(tmp_path) as demo:
        (output,) = run_in_bash(scripts, demo.url)
        (posted,) = demo.chat.messages("launch")

    assert 'Post to #launch: "Spring sale starts today"?' in output
    assert posted.text == "Spring sale starts today"
    assert "Status    succeeded" in output and posted.ts in output


def test_the_python_mcp_example_runs_with_the_official_sdk(tmp_path: Path) -> None:
    (example,) = blocks(README, "## Connect an agent (MCP)", "## ", language="python")
    assert "from mcp import Client" in example and "http://127.0.0.1:8000/mcp" in example

    with serving_manually(ROOT / "examples" / "operator.yaml", tmp_path / "serve.log") as url:
        done = subprocess.run(
            [sys.executable, "-c", example.replace("http://127.0.0.1:8000", url)],
            cwd=ROOT, capture_output=True, text=True, timeout=120,
        )  # fmt: skip

    assert done.returncode == 0, done.stderr
    tools, status, inbox = done.stdout.splitlines()[:3]
    assert "'create_definition'" in tools and "'answer_interaction'" in tools
    assert status == "started"
    assert inbox.startswith("1 open request"), inbox


@pytest.mark.skipif(shutil.which("jq") is None, reason="the page's block uses jq")
def test_the_agent_runs_reference_block_works_against_the_demo(tmp_path: Path) -> None:
    page = ROOT / "docs" / "reference" / "agent-runs.md"
    scripts = blocks(page, "## A run that waits", "## ")
    assert len(scripts) == 1
    save = "parley save -q examples/definitions/reasoning/choose-launch-channel.md\n"

    with serving_demo(tmp_path) as demo:
        (output,) = run_in_bash([save + scripts[0]], demo.url)

    assert '"message": "Where should spring-sale launch?"' in output
    assert '"answer":{"selected":["email"]}' in output.replace(": ", ":") and '"answered_by":"dev"' in output
