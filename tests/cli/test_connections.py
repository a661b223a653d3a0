"""``parley connections`` and ``parley connection add|show|approve|authorize|remove`` (issue 32) against
``parley serve``: a module's server whose configuration gives ``dev-token`` write on the test playbooks
and the admin grant of acme, ``viewer-token`` read, and allows connections to 127.0.0.1; the connected
servers are the test MCP server of ``tests/mcp_servers.py`` and the OAuth-protected one of
``tests/oauth_servers.py``. Each test adds connections under names of its own (they are the org's, not
a playbook's). No header value appears in any output."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from mcp_servers import LocalToolServer, running_tool_server
from oauth_servers import OAuthToolServer, running_oauth_server
from tool_serving import serving_with, writer_and_viewer

pytestmark = pytest.mark.http

Cli = Any
PLAYBOOKS = [f"cli-{n}" for n in range(60)]  # conftest's: the parley fixture picks one of them
ADMIN_GRANT = "    grants:\n      - { org: acme, role: admin }\n"
SECRET = "Bearer sk-cli-4f1e0a9d"
_names = itertools.count()


@dataclass
class Servers:
    parley: str
    tools: LocalToolServer
    oauth: OAuthToolServer


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Servers]:
    tmp = tmp_path_factory.mktemp("cli-connections")
    config = writer_and_viewer(
        PLAYBOOKS,
        "connections:",
        '  allowed_urls: ["http://127.0.0.1:*/*"]',
        "  require_approval: true",
    ).replace("    token: dev-token\n    grants:\n", "    token: dev-token\n" + ADMIN_GRANT, 1)
    with running_tool_server() as tools, running_oauth_server() as oauth, serving_with(tmp, config) as url:
        yield Servers(url, tools, oauth)


@pytest.fixture(scope="module")
def server(servers: Servers) -> str:
    return servers.parley


def fresh(prefix: str = "c") -> str:
    return f"{prefix}-{next(_names)}"


def test_a_person_adds_a_connection_with_a_header_from_the_environment_and_an_admin_approves_it(
    parley: Cli, servers: Servers, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = fresh("notes")
    monkeypatch.setenv("NOTES_TOKEN", SECRET)
    added = parley(
        "connection", "add", name, servers.tools.url, "--header-from-env", "Authorization=NOTES_TOKEN"
    )
    assert added.code == 0, added.err
    assert added.out.startswith(f"Added the connection {name} to the org acme: pending, waits for an admin")

    listed = parley("connections")
    assert listed.code == 0 and listed.out.splitlines()[0].split() == [
        "NAME",
        "STATUS",
        "AUTH",
        "URL",
        "PLAYBOOKS",
    ]
    assert any(
        line.split() == [name, "pending", "headers", servers.tools.url, "all"]
        for line in listed.out.splitlines()
    )
    assert name in parley("connections", "-q").out.split()

    approved = parley("connection", "approve", name)
    assert approved.code == 0 and f"Approved the connection {name}: active" in approved.out
    shown = parley("connection", "show", name)
    assert shown.code == 0, shown.err
    assert "Status     active: the org's functions may use its tools" in shown.out
    assert "Approved   by dev," in shown.out and "Auth       headers" in shown.out

    # The connection serves: the header went to the server, never to any output.
    called = httpx.post(
        f"{servers.parley}/v1/orgs/acme/playbooks/{parley.playbook}/tool-servers/{name}/tools/thread_replies/execute",
        json={"arguments": {"channel": "team", "ts": "1.0"}},
        headers={"Authorization": "Bearer dev-token"},
        timeout=30,
    )
    assert called.status_code == 200, called.text
    assert any(headers.get("authorization") == SECRET for headers in servers.tools.received)

    as_json = parley("connection", "show", name, "--json")
    assert json.loads(as_json.out)["status"] == "active"
    everything = added.out + added.err + listed.out + approved.out + shown.out + as_json.out
    assert "sk-cli" not in everything

    removed = parley("connection", "remove", name)
    assert removed.code == 0 and f"Removed the connection {name}" in removed.out
    gone = parley("connection", "show", name)
    assert gone.code == 1 and "(404 not_found)" in gone.err and "--playbook" not in gone.err


def test_a_header_typed_at_the_terminal_and_the_playbooks_that_see_it(
    parley: Cli, servers: Servers, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = fresh("typed")
    asked: list[str] = []

    def typed(prompt: str) -> str:
        asked.append(prompt)
        return SECRET

    monkeypatch.setattr("getpass.getpass", typed)
    added = parley(
        "connection", "add", name, servers.tools.url, "--header-prompt", "Authorization",
        "--playbook", parley.playbook, "--playbook", "cli-other", "--json",
    )  # fmt: skip
    assert added.code == 0, added.err
    assert asked == ["Authorization (not shown): "]
    body = json.loads(added.out)
    assert (body["auth"], body["playbooks"]) == ("headers", [parley.playbook, "cli-other"])
    assert "sk-cli" not in added.out + added.err
    assert f"{parley.playbook}, cli-other" in parley("connections").out
    assert parley("connection", "remove", name).code == 0


def test_a_header_that_cannot_be_read_sends_nothing(parley: Cli, servers: Servers) -> None:
    name = fresh("unsent")
    for options, says in (
        (["--header-from-env", "Authorization=NO_SUCH_VARIABLE_SET"], "NO_SUCH_VARIABLE_SET is not set"),
        (["--header-from-env", "Authorization"], "give it as Name=VARIABLE"),
        (["--header", "Authorization"], "give it as 'Name: value'"),
    ):
        refused = parley("connection", "add", name, servers.tools.url, *options)
        assert refused.code == 2, refused
        assert refused.err.startswith("parley connection add: ") and says in refused.err
    assert name not in parley("connections").out


def test_the_servers_problems_are_printed_with_their_pointers(parley: Cli, servers: Servers) -> None:
    refused = parley(
        "connection", "add", "Not_A_Name", "https://elsewhere.example/mcp",
        "--header", "Host: x", "--playbook", "not a playbook",
    )  # fmt: skip
    assert refused.code == 1
    lines = refused.err.splitlines()
    assert lines[0] == "Invalid input (422 invalid_input)"
    pointers = [line.split(":")[0].strip() for line in lines[1:]]
    assert pointers == ["/name", "/url", "/headers/Host", "/playbooks/0"], refused.err
    assert "allowed_urls" in refused.err

    as_json = parley("connection", "add", "Not_A_Name", servers.tools.url, "--json")
    assert as_json.code == 1 and json.loads(as_json.out)["reason"] == "invalid_input"

    name = fresh("twice")
    assert parley("connection", "add", name, servers.tools.url).code == 0
    again = parley("connection", "add", name, servers.tools.url)
    assert again.code == 1 and "(409 conflict)" in again.err and "/name: " in again.err
    assert parley("connection", "remove", name).code == 0


def test_a_reader_sees_connections_but_may_not_approve_or_add(parley: Cli, servers: Servers) -> None:
    name = fresh("seen")
    assert parley("connection", "add", name, servers.tools.url).code == 0
    seen = parley("connections", "--token", "viewer-token")
    assert seen.code == 0 and name in seen.out
    refused = parley("connection", "approve", name, "--token", "viewer-token")
    assert refused.code == 1 and "(403 forbidden)" in refused.err and "admin grant" in refused.err
    assert "may read this playbook" not in refused.err  # the playbook's hint is not the org's
    added = parley("connection", "add", fresh("nope"), servers.tools.url, "--token", "viewer-token")
    assert added.code == 1 and "(403 forbidden)" in added.err
    unknown = parley("connection", "show", name, "--token", "wrong-token")
    assert unknown.code == 1 and "--token or PARLEY_TOKEN" in unknown.err
    assert parley("connection", "remove", name).code == 0


def test_authorize_prints_the_page_and_opens_it_with_open(
    parley: Cli, servers: Servers, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = fresh("oauth")
    assert parley("connection", "add", name, servers.oauth.url).code == 0
    printed = parley("connection", "authorize", name)
    assert printed.code == 0, printed.err
    url = printed.out.strip()
    assert url.startswith(servers.oauth.origin + "/authorize?") and "Open this in a browser" in printed.err

    opened: list[str] = []
    monkeypatch.setattr("webbrowser.open", lambda page: opened.append(page) or True)
    again = parley("connection", "authorize", name, "--open")
    assert again.code == 0 and opened == [again.out.strip()]

    # The browser: the authorization server sends it back to Parley's callback, which keeps the tokens.
    with httpx.Client(timeout=30, follow_redirects=True) as browser:
        assert browser.get(opened[0]).status_code == 200
    shown = parley("connection", "show", name)
    assert "Auth       oauth" in shown.out and "Status     pending" in shown.out
    assert parley("connection", "remove", name).code == 0


def test_the_commands_say_how_they_are_used(parley: Cli) -> None:
    with pytest.raises(SystemExit) as exited:
        parley("connection")
    assert exited.value.code == 2
    with pytest.raises(SystemExit) as helped:
        parley("connection", "add", "--help")
    assert helped.value.code == 0
    unknown = parley("connection", "show", fresh("missing"))
    assert unknown.code == 1 and "(404 not_found)" in unknown.err
