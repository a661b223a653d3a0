"""The README's "Connect an agent (MCP)", run with the agents' own tools against a real ``parley serve``:
each configuration is read from the README's code block, so the README cannot drift from what works.

- Claude Code: the README's ``claude mcp add`` line, then ``claude mcp list``, whose health check
  connects to the server (and fails with a wrong token);
- Claude Desktop: its ``claude_desktop_config.json`` run as Claude Desktop runs it — ``npx -y mcp-remote``
  as a stdio server bridging to ``/mcp`` with the bearer header — driven by the official MCP client over
  stdio: initialize, list the tools, call one;
- Codex: the README's ``config.toml`` as Codex reads it (``codex mcp list --json``: a streamable-HTTP
  server with its bearer token from the environment; Codex connects only within a model session).

The clients come from the npm registry through ``npx`` (pinned; cached after the first run), each with a
home folder of its own; the tests are skipped only where ``npx`` is absent.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from tool_serving import serving_with

pytestmark = [
    pytest.mark.http,
    pytest.mark.skipif(shutil.which("npx") is None, reason="npx is not installed"),
]

README = Path(__file__).resolve().parents[2] / "README.md"
#: Where the README's commands point (``make serve``); the tests' server listens elsewhere.
README_URL = "http://127.0.0.1:8000"
#: Pinned: the versions these tests ran.
CLAUDE_CODE = "@anthropic-ai/claude-code@2.1.332"
MCP_REMOTE = "mcp-remote@0.15.1"
CODEX = "@openai/codex@0.171.0"
#: The first run fetches a package from the npm registry: generous.
FETCH_SECONDS = 420


def readme_block(heading: str, language: str) -> str:
    """The first ``language`` code block after ``heading`` in the README."""
    text = README.read_text(encoding="utf-8")
    block = re.search(rf"```{language}\n(.*?)```", text[text.index(heading) :], re.DOTALL)
    assert block is not None, f"the README shows {heading} as a {language} block"
    return block.group(1)


def npx(
    package: str, *arguments: str, home: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    command = [str(shutil.which("npx")), "--yes", package, *arguments]
    environment = {**clean_environment(), "HOME": str(home), **(env or {})}
    return subprocess.run(
        command, capture_output=True, text=True, timeout=FETCH_SECONDS, env=environment, cwd=home, check=False
    )


def clean_environment() -> dict[str, str]:
    """This process's environment without AWS settings, and with npm's notices off; npm keeps its cache
    where it always does, so a package fetched once is not fetched again for another home."""
    cache = os.environ.get("npm_config_cache") or str(Path.home() / ".npm")  # noqa: SIM112 - npm spells it so
    kept = {name: value for name, value in os.environ.items() if not name.startswith("AWS_")}
    return {
        **kept,
        "npm_config_cache": cache,
        "NO_UPDATE_NOTIFIER": "1",
        "npm_config_update_notifier": "false",
        "npm_config_fund": "false",
        "npm_config_audit": "false",
    }


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    operator = (
        "principals:\n"
        "  - { id: dev, token: dev-token, grants: [{ org: acme, playbook: campaigns, role: write }] }\n"
    )
    with serving_with(tmp_path_factory.mktemp("serve-agent-clients"), operator) as served:
        yield served


def test_claude_code_adds_the_readmes_server_and_connects(url: str, tmp_path: Path) -> None:
    [line] = [line for line in readme_block("**Claude Code**", "sh").splitlines() if line.strip()]
    words = shlex.split(line.replace(README_URL, url))
    assert words[:3] == ["claude", "mcp", "add"]

    added = npx(CLAUDE_CODE, *words[1:], home=tmp_path)
    assert added.returncode == 0, added.stdout + added.stderr
    listed = npx(CLAUDE_CODE, "mcp", "list", home=tmp_path)
    assert listed.returncode == 0, listed.stdout + listed.stderr
    assert re.search(rf"parley: {re.escape(url)}/mcp \(HTTP\) - \S+ Connected", listed.stdout), listed.stdout

    # The check is real: with a wrong token the same server does not connect.
    wrong = tmp_path / "wrong"
    wrong.mkdir()
    words[words.index("Authorization: Bearer dev-token")] = "Authorization: Bearer not-a-token"
    assert npx(CLAUDE_CODE, *words[1:], home=wrong).returncode == 0
    refused = npx(CLAUDE_CODE, "mcp", "list", home=wrong)
    assert "Connected" not in refused.stdout.replace("not connected", ""), refused.stdout


def test_claude_desktops_configuration_reaches_the_tools_through_mcp_remote(url: str, tmp_path: Path) -> None:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    server: dict[str, Any] = json.loads(readme_block("**Claude Desktop**", "json"))["mcpServers"]["parley"]
    assert server["command"] == "npx"
    arguments = [
        MCP_REMOTE if argument == "mcp-remote" else argument.replace(README_URL, url)
        for argument in server["args"]
    ]
    assert MCP_REMOTE in arguments and f"{url}/mcp" in arguments
    environment = {**clean_environment(), "HOME": str(tmp_path), **server["env"]}
    parameters = StdioServerParameters(
        command=str(shutil.which("npx")), args=arguments, env=environment, cwd=str(tmp_path)
    )

    async def session() -> tuple[list[str], dict[str, Any] | None]:
        with anyio.fail_after(FETCH_SECONDS):
            async with stdio_client(parameters) as (read, write), ClientSession(read, write) as client:
                await client.initialize()
                listed = await client.list_tools()
                called = await client.call_tool(
                    "list_definitions", {"org": "acme", "playbook": "campaigns", "type": "interaction"}
                )
                assert not called.is_error, called.content
                return [tool.name for tool in listed.tools], called.structured_content

    names, listing = anyio.run(session)
    assert "answer_interaction" in names and "create_definition" in names
    assert listing == {"definitions": [], "next_cursor": None}


def test_codex_reads_the_readmes_configuration_as_a_streamable_http_server(tmp_path: Path) -> None:
    (tmp_path / ".codex").mkdir()
    (tmp_path / ".codex" / "config.toml").write_text(readme_block("**Codex**", "toml"), encoding="utf-8")

    listed = npx(CODEX, "mcp", "list", "--json", home=tmp_path, env={"PARLEY_TOKEN": "dev-token"})
    assert listed.returncode == 0, listed.stdout + listed.stderr
    [server] = json.loads(listed.stdout[listed.stdout.index("[") :])
    assert server["name"] == "parley" and server["enabled"] is True
    assert server["transport"]["type"] == "streamable_http"
    assert server["transport"]["url"] == f"{README_URL}/mcp"
    assert server["transport"]["bearer_token_env_var"] == "PARLEY_TOKEN"
    assert server["auth_status"] == "bearer_token"
