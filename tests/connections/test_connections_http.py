"""Connections end to end (``http-api.md``, "Connections"; issue 32): a real ``parley serve`` with a data
folder, called over HTTP and through the MCP front door.

Every route with each grant (a writer adds, the org's admin approves and removes, the one who added
removes their own, a reader sees, anyone else meets ``404``), every problem with its pointer, the
OpenAPI description, and the secrets: a header value never appears in a response, the server's log or
the data folder's files (the folder holds it encrypted, with the key outside the folder). A server
killed with SIGKILL right after a ``201`` has the connection, and its secret, when it starts again; a
rule changed meanwhile shows the connection ``not_allowed``."""

from __future__ import annotations

import json
import os
import signal
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
from mcp_servers import free_port

from parley.connections.secrets import LocalConnectionSecrets

pytestmark = pytest.mark.http

SECRET = "Bearer sk-conn-7f3a91c2e5d84b06"
CONNECTIONS = "/v1/orgs/acme/connections"
READY_WITHIN = 60.0

OPERATOR = """
principals:
  - { id: root, token: root-token, grants: [{ org: acme, role: admin }] }
  - { id: dev, token: dev-token, grants: [{ org: acme, playbook: campaigns, role: write }] }
  - { id: ann, token: ann-token, grants: [{ org: acme, playbook: launches, role: write }] }
  - { id: viewer, token: viewer-token, grants: [{ org: acme, playbook: campaigns, role: read }] }
  - { id: outsider, token: outsider-token, grants: [{ org: globex, playbook: campaigns, role: write }] }
tool_servers:
  - { name: chat, url: "http://127.0.0.1:9/mcp", orgs: [acme] }
connections:
  allowed_urls: ["http://127.0.0.1:*/*", "https://*.acme.com/*"]
"""


@dataclass
class Server:
    url: str
    process: subprocess.Popen[bytes]
    folder: Path

    @property
    def log(self) -> str:
        return (self.folder / "serve.log").read_text(encoding="utf-8", errors="replace")

    @property
    def data(self) -> Path:
        return self.folder / "data"

    def call(
        self, method: str, path: str, token: str | None, body: Any = None, **options: Any
    ) -> httpx.Response:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        if body is not None:
            options["json"] = body
        return httpx.request(method, self.url + path, headers=headers, timeout=60, **options)

    def tool(self, token: str, name: str, arguments: dict[str, Any], path: str = "/mcp") -> dict[str, Any]:
        message = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": name, "arguments": arguments},
        }
        reply = httpx.post(
            self.url + path,
            json=message,
            headers={"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"},
            timeout=60,
        )
        assert reply.status_code == 200, reply.text
        result: dict[str, Any] = reply.json()["result"]
        return result

    def tools(self, token: str, path: str = "/mcp") -> list[str]:
        reply = httpx.post(
            self.url + path,
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            headers={"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"},
            timeout=60,
        )
        return [tool["name"] for tool in reply.json()["result"]["tools"]]


@contextmanager
def serving(folder: Path, operator: str) -> Iterator[Server]:
    """``parley serve`` on ``folder/data`` with the secret key in ``folder/keys`` (outside the data
    folder), once it answers; stopped (or killed) on exit."""
    (folder / "operator.yaml").write_text(operator, encoding="utf-8")
    port = free_port()
    command = [sys.executable, "-m", "parley.cli", "serve", "--clock", "manual", "--port", str(port),
               "--config", str(folder / "operator.yaml"), "--data", str(folder / "data")]  # fmt: skip
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env["PARLEY_SECRET_KEY_FILE"] = str(folder / "keys" / "secret.key")
    with (folder / "serve.log").open("ab") as sink:
        process = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT, env=env)
    server = Server(f"http://127.0.0.1:{port}", process, folder)
    try:
        started = time.monotonic()
        while True:
            if process.poll() is not None:
                raise AssertionError(f"parley serve exited:\n{server.log}")
            try:
                httpx.get(server.url + "/_local/clock", timeout=1)
                break
            except httpx.TransportError:
                assert time.monotonic() - started < READY_WITHIN, server.log
                time.sleep(0.05)
        yield server
    finally:
        if process.poll() is None:
            process.terminate()
        process.wait(timeout=30)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with serving(tmp_path_factory.mktemp("connections"), OPERATOR) as running:
        yield running


def add(server: Server, name: str, token: str = "dev-token", **fields: Any) -> httpx.Response:
    body = {"name": name, "url": f"http://127.0.0.1:9/{name}", **fields}
    return server.call("POST", CONNECTIONS, token, body)


def problem(reply: httpx.Response, status: int, reason: str) -> dict[str, Any]:
    assert reply.status_code == status, reply.text
    assert reply.headers["content-type"].startswith("application/problem+json")
    body: dict[str, Any] = reply.json()
    assert body["reason"] == reason, body
    return body


# --- add, see, approve, remove ----------------------------------------------------------------------


def test_a_writer_adds_an_admin_approves_and_readers_see_without_secrets(server: Server) -> None:
    added = add(server, "notes", headers={"Authorization": SECRET}, playbooks=["campaigns"])

    assert added.status_code == 201, added.text
    assert added.headers["location"] == f"{CONNECTIONS}/notes"
    assert added.headers["cache-control"] == "no-store"
    shown = added.json()
    assert shown == {
        "name": "notes",
        "url": "http://127.0.0.1:9/notes",
        "status": "pending",
        "playbooks": ["campaigns"],
        "added_by": "dev",
        "added_at": shown["added_at"],
        "approved_by": None,
        "approved_at": None,
        "auth": "headers",
    }
    for token in ("dev-token", "viewer-token", "root-token", "ann-token"):
        got = server.call("GET", f"{CONNECTIONS}/notes", token)
        assert got.status_code == 200 and got.json() == shown, (token, got.text)
        listed = server.call("GET", CONNECTIONS, token)
        assert shown in listed.json()["connections"]
        assert SECRET not in got.text + listed.text

    problem(server.call("POST", f"{CONNECTIONS}/notes/approve", "dev-token"), 403, "forbidden")
    problem(server.call("POST", f"{CONNECTIONS}/notes/approve", "viewer-token"), 403, "forbidden")
    problem(server.call("POST", f"{CONNECTIONS}/notes/approve", "outsider-token"), 404, "not_found")
    approved = server.call("POST", f"{CONNECTIONS}/notes/approve", "root-token")

    assert approved.status_code == 200, approved.text
    assert approved.json()["status"] == "active"
    assert approved.json()["approved_by"] == "root" and approved.json()["approved_at"]
    assert server.call("POST", f"{CONNECTIONS}/notes/approve", "root-token").json() == approved.json()
    assert server.call("GET", f"{CONNECTIONS}/notes", "viewer-token").json() == approved.json()


def test_who_may_add(server: Server) -> None:
    problem(add(server, "by-viewer", "viewer-token"), 403, "forbidden")
    problem(add(server, "by-root", "root-token"), 403, "forbidden")  # admin gives no playbook role
    problem(add(server, "by-outsider", "outsider-token"), 404, "not_found")
    unauthenticated = problem(add(server, "by-nobody", "wrong-token"), 401, "unauthenticated")
    assert unauthenticated["status"] == 401
    assert add(server, "by-ann", "ann-token").status_code == 201


def test_nobody_outside_the_org_sees_anything(server: Server) -> None:
    assert add(server, "hidden").status_code == 201
    for method, path in (
        ("GET", CONNECTIONS),
        ("GET", f"{CONNECTIONS}/hidden"),
        ("POST", f"{CONNECTIONS}/hidden/approve"),
        ("DELETE", f"{CONNECTIONS}/hidden"),
    ):
        outside = problem(server.call(method, path, "outsider-token"), 404, "not_found")
        assert "hidden" not in outside["detail"]
    problem(server.call("GET", f"{CONNECTIONS}/nothing-here", "viewer-token"), 404, "not_found")
    problem(server.call("GET", f"{CONNECTIONS}/Not_A_Name", "viewer-token"), 404, "not_found")
    problem(server.call("POST", f"{CONNECTIONS}/nothing-here/approve", "root-token"), 404, "not_found")
    problem(server.call("DELETE", f"{CONNECTIONS}/nothing-here", "root-token"), 404, "not_found")
    problem(server.call("GET", CONNECTIONS, None), 401, "unauthenticated")


def test_who_may_remove(server: Server) -> None:
    for name in ("mine", "anns", "theirs"):
        assert add(server, name, "ann-token" if name == "anns" else "dev-token").status_code == 201

    problem(server.call("DELETE", f"{CONNECTIONS}/anns", "dev-token"), 403, "forbidden")  # another's
    problem(server.call("DELETE", f"{CONNECTIONS}/mine", "viewer-token"), 403, "forbidden")
    removed = server.call("DELETE", f"{CONNECTIONS}/mine", "dev-token")  # their own
    assert (removed.status_code, removed.content) == (204, b""), removed.text
    assert server.call("DELETE", f"{CONNECTIONS}/anns", "root-token").status_code == 204  # the admin
    assert server.call("DELETE", f"{CONNECTIONS}/theirs", "root-token").status_code == 204
    for name in ("mine", "anns", "theirs"):
        problem(server.call("GET", f"{CONNECTIONS}/{name}", "dev-token"), 404, "not_found")
    assert add(server, "mine").status_code == 201  # the name is free again


def test_a_path_knows_its_methods(server: Server) -> None:
    wrong = problem(server.call("PUT", f"{CONNECTIONS}/notes", "dev-token", {}), 405, "method_not_allowed")
    assert wrong["status"] == 405
    assert server.call("PUT", f"{CONNECTIONS}/notes", "dev-token", {}).headers["allow"] == "DELETE, GET, HEAD"


# --- problems ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "pointer", "words"),
    [
        ({"name": "Bad_Name", "url": "http://127.0.0.1:9/x"}, "/name", "1 to 32 of a-z"),
        ({"name": "x" * 33, "url": "http://127.0.0.1:9/x"}, "/name", "1 to 32 of a-z"),
        (
            {"name": "far", "url": "https://elsewhere.example/mcp"},
            "/url",
            "connections.allowed_urls does not allow",
        ),
        ({"name": "plain", "url": "http://mcp.acme.com/mcp"}, "/url", "http is allowed only to 127.0.0.1"),
        ({"name": "ftp", "url": "ftp://127.0.0.1/x"}, "/url", "an https URL with a host"),
        ({"name": "userinfo", "url": "https://me:pw@mcp.acme.com/"}, "/url", "no user name or password"),
        (
            {"name": "h", "url": "http://127.0.0.1:9/x", "headers": {"Bad Name": "v"}},
            "/headers/Bad Name",
            "header name",
        ),
        (
            {"name": "h", "url": "http://127.0.0.1:9/x", "headers": {"Host": "v"}},
            "/headers/Host",
            "sets this header",
        ),
        (
            {"name": "h", "url": "http://127.0.0.1:9/x", "headers": {"X-Key": ""}},
            "/headers/X-Key",
            "1 to 8,192",
        ),
        (
            {"name": "h", "url": "http://127.0.0.1:9/x", "headers": {"X-Key": 7}},
            "/headers/X-Key",
            "Expected a string",
        ),
        (
            {"name": "h", "url": "http://127.0.0.1:9/x", "headers": {"X-Key": "a\nb"}},
            "/headers/X-Key",
            "one line",
        ),
        ({"name": "p", "url": "http://127.0.0.1:9/x", "playbooks": ["#no"]}, "/playbooks/0", "A playbook id"),
        (
            {"name": "p", "url": "http://127.0.0.1:9/x", "playbooks": ["a", "a"]},
            "/playbooks/1",
            "named twice",
        ),
        ({"name": "p", "url": "http://127.0.0.1:9/x", "playbooks": []}, "/playbooks", "at least one"),
        ({"url": "http://127.0.0.1:9/x"}, "/name", "Required"),
        ({"name": "u"}, "/url", "Required"),
        ({"name": "u", "url": "http://127.0.0.1:9/x", "extra": 1}, "/extra", "Not a field"),
        ({"name": 5, "url": "http://127.0.0.1:9/x"}, "/name", "Expected a string"),
    ],
)
def test_every_problem_has_its_pointer(
    server: Server, body: dict[str, Any], pointer: str, words: str
) -> None:
    found = problem(server.call("POST", CONNECTIONS, "dev-token", body), 422, "invalid_input")

    assert any(e["pointer"] == pointer and words in e["detail"] for e in found["errors"]), found
    assert server.call("GET", f"{CONNECTIONS}/{body.get('name')}", "dev-token").status_code == 404


def test_a_problem_with_a_header_never_shows_its_value(server: Server) -> None:
    reply = server.call(
        "POST",
        CONNECTIONS,
        "dev-token",
        {"name": "h", "url": "http://127.0.0.1:9/x", "headers": {"X-Key": SECRET + "\n"}},
    )
    problem(reply, 422, "invalid_input")
    assert "sk-conn" not in reply.text


def test_every_field_problem_at_once(server: Server) -> None:
    body = {"name": "Bad", "url": "https://elsewhere.example/", "playbooks": ["#"]}
    found = problem(server.call("POST", CONNECTIONS, "dev-token", body), 422, "invalid_input")
    assert [e["pointer"] for e in found["errors"]] == ["/name", "/url", "/playbooks/0"]


def test_a_name_taken_is_a_conflict(server: Server) -> None:
    server_name = problem(add(server, "chat"), 409, "conflict")  # the operator's tool server of the org
    assert server_name["errors"][0]["pointer"] == "/name" and "tool servers" in server_name["detail"]
    assert add(server, "twice").status_code == 201
    again = problem(add(server, "twice", "ann-token", url="https://mcp.acme.com/other"), 409, "conflict")
    assert again["errors"][0]["pointer"] == "/name"
    assert server.call("GET", f"{CONNECTIONS}/twice", "dev-token").json()["added_by"] == "dev"


def test_bodies_as_every_route(server: Server) -> None:
    plain = httpx.post(
        server.url + CONNECTIONS,
        content=b'{"name": "plain", "url": "http://127.0.0.1:9/x"}',
        headers={"Authorization": "Bearer dev-token", "Content-Type": "text/plain"},
        timeout=60,
    )
    problem(plain, 415, "unsupported_media_type")
    broken = httpx.post(
        server.url + CONNECTIONS,
        content=b"{",
        headers={"Authorization": "Bearer dev-token", "Content-Type": "application/json"},
        timeout=60,
    )
    problem(broken, 400, "bad_request")
    large = httpx.post(
        server.url + CONNECTIONS,
        content=b'{"name": "' + b"x" * (1024 * 1024 + 10) + b'"}',
        headers={"Authorization": "Bearer dev-token", "Content-Type": "application/json"},
        timeout=60,
    )
    problem(large, 413, "content_too_large")
    problem(server.call("POST", CONNECTIONS, "dev-token", []), 400, "bad_request")


# --- the MCP front door and the description -----------------------------------------------------


def test_the_tools_take_the_org(server: Server) -> None:
    assert {"add_connection", "list_connections", "get_connection", "remove_connection"} <= set(
        server.tools("dev-token")
    )
    assert "approve_connection" not in server.tools("dev-token")
    assert {"list_connections", "get_connection", "approve_connection", "remove_connection"} <= set(
        server.tools("root-token")
    )
    assert "add_connection" not in server.tools("root-token")
    reader = server.tools("viewer-token")
    assert {"list_connections", "get_connection"} <= set(reader) and "add_connection" not in reader

    added = server.tool(
        "dev-token",
        "add_connection",
        {"org": "acme", "name": "by-tool", "url": "http://127.0.0.1:9/t", "headers": {"X-Key": SECRET}},
    )
    assert added.get("isError") is not True, added
    assert added["structuredContent"]["status"] == "pending"
    assert SECRET not in json.dumps(added)
    scoped = "/v1/orgs/acme/playbooks/campaigns/mcp"
    got = server.tool("viewer-token", "get_connection", {"name": "by-tool"}, path=scoped)
    assert got["structuredContent"]["auth"] == "headers" and SECRET not in json.dumps(got)
    approved = server.tool("root-token", "approve_connection", {"org": "acme", "name": "by-tool"})
    assert approved["structuredContent"]["status"] == "active", approved
    refused = server.tool("dev-token", "approve_connection", {"org": "acme", "name": "by-tool"})
    assert refused["isError"] is True and json.loads(refused["content"][1]["text"])["status"] == 403
    missing = server.tool("dev-token", "add_connection", {"org": "acme", "name": "no-url"})
    assert (
        missing["isError"] is True
        and json.loads(missing["content"][1]["text"])["errors"][0]["pointer"] == "/url"
    )
    removed = server.tool("dev-token", "remove_connection", {"org": "acme", "name": "by-tool"})
    assert removed.get("isError") is not True and removed["structuredContent"] == {}
    assert server.call("GET", f"{CONNECTIONS}/by-tool", "dev-token").status_code == 404


def test_the_description_has_the_routes(server: Server) -> None:
    paths = httpx.get(server.url + "/openapi.json", timeout=60).json()["paths"]

    assert set(paths[CONNECTIONS.replace("acme", "{org}")]) == {"get", "post"}
    one = paths["/v1/orgs/{org}/connections/{name}"]
    assert set(one) == {"get", "delete"}
    assert "content" not in one["delete"]["responses"]["204"]
    assert set(paths["/v1/orgs/{org}/connections/{name}/approve"]) == {"post"}
    assert {"409", "422", "403"} <= set(paths[CONNECTIONS.replace("acme", "{org}")]["post"]["responses"])


# --- secrets ---------------------------------------------------------------------------------------


def test_secrets_stay_out_of_logs_and_the_data_folder(server: Server) -> None:
    assert (
        add(server, "secretive", headers={"Authorization": SECRET, "X-Other": "other-" + SECRET}).status_code
        == 201
    )
    server.call("GET", CONNECTIONS, "dev-token")
    server.call("POST", f"{CONNECTIONS}/secretive/approve", "root-token")

    needle = SECRET.split()[1].encode()
    assert needle not in server.log.encode()
    files = [path for path in server.data.rglob("*") if path.is_file()]
    assert files
    for path in files:
        assert needle not in path.read_bytes(), path
    kept = server.data / "connections" / "acme" / "secretive.secret"
    assert kept.stat().st_mode & 0o777 == 0o600
    key = server.folder / "keys" / "secret.key"
    assert key.stat().st_mode & 0o777 == 0o600
    assert LocalConnectionSecrets(server.data, key).read("acme", "secretive") == {
        "headers": {"Authorization": SECRET, "X-Other": "other-" + SECRET}
    }
    assert server.call("DELETE", f"{CONNECTIONS}/secretive", "root-token").status_code == 204
    assert not kept.exists()


# --- durability, and the rules read again -------------------------------------------------------------


def test_a_connection_outlives_a_kill_and_a_rule_change_shows(tmp_path: Path) -> None:
    quick = OPERATOR.replace('"https://*.acme.com/*"]', '"https://*.acme.com/*"]\n  require_approval: false')
    with serving(tmp_path, quick) as first:
        added = add(first, "kept", headers={"Authorization": SECRET})
        assert added.status_code == 201, added.text
        assert added.json()["status"] == "active"  # require_approval: false
        first.process.send_signal(signal.SIGKILL)
        first.process.wait(timeout=30)

    with serving(tmp_path, quick) as second:
        assert second.call("GET", f"{CONNECTIONS}/kept", "viewer-token").json() == added.json()
    key = tmp_path / "keys" / "secret.key"
    assert LocalConnectionSecrets(tmp_path / "data", key).read("acme", "kept") == {
        "headers": {"Authorization": SECRET}
    }

    narrower = quick.replace('"http://127.0.0.1:*/*", ', "")
    with serving(tmp_path, narrower) as third:
        assert third.call("GET", f"{CONNECTIONS}/kept", "viewer-token").json()["status"] == "not_allowed"
        problem(third.call("POST", f"{CONNECTIONS}/kept/approve", "root-token"), 409, "conflict")
        problem(add(third, "new-one"), 422, "invalid_input")
    with serving(tmp_path, quick) as fourth:
        assert fourth.call("GET", f"{CONNECTIONS}/kept", "viewer-token").json()["status"] == "active"
