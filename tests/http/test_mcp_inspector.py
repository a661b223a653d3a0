"""The MCP Inspector's CLI (the reference TypeScript client) lists the front door's tools with the bearer
header. It comes from the npm registry through ``npx`` (cached after the first run); the test is skipped
only where ``npx`` is absent."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from tool_serving import serving_with

pytestmark = pytest.mark.http

#: Pinned: the CLI's options (``--header``) and output are those of this version.
INSPECTOR = "@modelcontextprotocol/inspector@2.12.0"
NPX = shutil.which("npx")


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    operator = (
        "principals:\n"
        "  - { id: dev, token: dev-token, grants: [{ org: acme, playbook: campaigns, role: write }] }\n"
        "  - { id: viewer, token: viewer-token, grants: [{ org: acme, playbook: campaigns, role: read }] }\n"
    )
    with serving_with(tmp_path_factory.mktemp("serve-inspector"), operator) as served:
        yield served


def inspector(url: str, token: str, *arguments: str) -> dict[str, object]:
    assert NPX is not None
    command = [NPX, "--yes", INSPECTOR, "--cli", url, "--transport", "http",
               "--header", f"Authorization: Bearer {token}", *arguments]  # fmt: skip
    env = {**os.environ, "NO_UPDATE_NOTIFIER": "1", "npm_config_fund": "false", "npm_config_audit": "false"}
    # The first run fetches the package from the npm registry (then it is in npm's cache): generous.
    finished = subprocess.run(command, capture_output=True, text=True, timeout=420, env=env, cwd=Path.home())
    assert finished.returncode == 0, finished.stdout[-4000:] + finished.stderr[-4000:]
    result: dict[str, object] = json.loads(finished.stdout)
    return result


@pytest.mark.skipif(NPX is None, reason="npx is not installed")
def test_the_inspector_lists_the_tools_a_principal_may_call(url: str) -> None:
    writer = inspector(url + "/mcp", "dev-token", "--method", "tools/list")
    reader = inspector(
        url + "/v1/orgs/acme/playbooks/campaigns/mcp", "viewer-token", "--method", "tools/list"
    )

    written = {tool["name"]: tool for tool in writer["tools"]}  # type: ignore[attr-defined]
    read = {tool["name"] for tool in reader["tools"]}  # type: ignore[attr-defined]
    assert len(written) == 25  # every tool but approve_connection (the org's admin grant)
    assert written["answer_interaction"]["annotations"]["destructiveHint"] is True
    assert "org" in written["get_run"]["inputSchema"]["required"]
    assert "create_definition" not in read and "get_run" in read
