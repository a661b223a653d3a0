"""The MCP front door end to end (http-api.md, "The MCP front door"): the official MCP client against a
real ``parley serve --clock manual``, beside a real MCP tool server, and the same calls over HTTP.

The client connects both ways it can: ``mcp.Client`` (which probes the 2026 protocol first) and the
classic ``ClientSession`` handshake, each over streamable HTTP with the bearer token."""

from __future__ import annotations

import json
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager
from importlib.resources import files
from typing import Any, TypeVar

import anyio
import httpx
import pytest
from mcp_servers import running_tool_server
from tool_serving import Served, serving_with

pytestmark = pytest.mark.http

T = TypeVar("T")

WRITER = "dev-token"
READER = "viewer-token"
BASE = "/v1/orgs/acme/playbooks/campaigns"
ASK_SOURCE = """---
description: Asks whether the launch may go ahead
to: '{{ input.to }}'
expires: PT10M
input:
  schema:
    type: object
    required: [to]
    properties:
      to: { type: string }
output:
  schema:
    type: object
    required: [ok]
    properties:
      ok: { type: boolean }
---
May the launch go ahead?
"""
GUIDES = [
    "interaction-format",
    "reasoning-format",
    "agent-runs",
    "output-shapes",
    "workflow-format",
    "http-api",
]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    tmp = tmp_path_factory.mktemp("serve-mcp")
    with running_tool_server() as tools:
        operator = f"""
principals:
  - id: dev
    token: {WRITER}
    grants: [{{ org: acme, playbook: campaigns, role: write }}, {{ org: acme, playbook: ops, role: write }}]
  - id: viewer
    token: {READER}
    grants: [{{ org: acme, playbook: campaigns, role: read }}]
tool_servers:
  - name: chat
    url: {tools.url}
    orgs: [acme]
    allowed: [post_message, thread_replies]
"""
        with serving_with(tmp, operator) as url:
            yield Served(url, tmp / "serve.log", tools)


def run(work: Callable[[], Awaitable[T]]) -> T:
    """``work`` on an event loop of its own thread: the test's thread may already run one (another
    test's fixture may leave it so), and anyio.run refuses to start a second there."""
    outcome: dict[str, Any] = {}

    def worker() -> None:
        try:
            outcome["value"] = anyio.run(work)
        except BaseException as exc:
            outcome["error"] = exc

    thread = threading.Thread(target=worker, name="mcp-client")
    thread.start()
    thread.join(timeout=300)
    if "error" in outcome:
        raise outcome["error"]
    value: T = outcome["value"]
    return value


@asynccontextmanager
async def connected(url: str, token: str = WRITER, *, classic: bool = False) -> AsyncIterator[Any]:
    """The official client, connected with ``Authorization: Bearer <token>``."""
    import httpx2
    from mcp import Client, ClientSession
    from mcp.client.streamable_http import streamable_http_client

    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60)
    async with http:
        if classic:
            async with (
                streamable_http_client(url, http_client=http) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                yield session
        else:
            async with Client(streamable_http_client(url, http_client=http)) as client:
                yield client


def texts(result: Any) -> list[str]:
    return [block.text for block in result.content]


def problem_of(result: Any) -> dict[str, Any]:
    assert result.is_error is True, texts(result)
    document: dict[str, Any] = json.loads(result.content[1].text)
    assert result.content[0].text == document["detail"]
    return document


def http(served: Served, token: str = WRITER) -> httpx.Client:
    return httpx.Client(base_url=served.url, headers={"Authorization": f"Bearer {token}"}, timeout=60)


# --- tools ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("classic", [False, True], ids=["client", "client-session"])
def test_a_writer_lists_every_tool_and_a_reader_only_those_that_read(served: Served, classic: bool) -> None:
    async def listed(token: str) -> dict[str, Any]:
        async with connected(served.url + "/mcp", token, classic=classic) as client:
            return {tool.name: tool for tool in (await client.list_tools()).tools}

    writer, reader = run(lambda: listed(WRITER)), run(lambda: listed(READER))

    assert len(writer) == 25  # every tool but approve_connection (the org's admin grant)
    assert set(reader) == {
        "list_definitions",
        "get_definition",
        "get_run",
        "list_runs",
        "get_run_history",
        "list_interactions",
        "list_playbook_events",
        "get_event",
        "search",
        "introspect",
        "list_models",
        "list_connections",
        "get_connection",
    }
    assert all(tool.annotations.read_only_hint for tool in reader.values())
    retire = writer["retire_definition"]
    assert retire.annotations.destructive_hint is True and retire.annotations.read_only_hint is False
    assert writer["execute"].annotations.open_world_hint is True
    assert writer["create_definition"].input_schema["required"] == [
        "org",
        "playbook",
        "type",
        "name",
        "source",
    ]
    limit = writer["list_runs"].input_schema["properties"]["limit"]
    assert (limit["type"], limit["minimum"], limit["maximum"], limit["default"]) == ("integer", 1, 100, 50)
    assert "when to use" not in writer["run_definition"].description  # words, not a template
    assert "answer_interaction" in writer["run_definition"].description


def test_create_run_list_and_answer_a_request_end_to_end(served: Served) -> None:
    async def scenario() -> dict[str, Any]:
        found: dict[str, Any] = {}
        async with connected(served.url + BASE + "/mcp") as client:
            created = await client.call_tool(
                "create_definition", {"type": "interaction", "name": "ask-launch", "source": ASK_SOURCE}
            )
            found["created"] = created
            started = await client.call_tool(
                "run_definition",
                {"type": "interaction", "name": "ask-launch", "input": {"to": "maria@example.com"}},
            )
            found["started"] = started
            run_id = started.structured_content["run_id"]
            found["listed"] = await client.call_tool("list_interactions", {"function": "ask-launch"})
            found["wrong"] = await client.call_tool(
                "answer_interaction", {"run_id": run_id, "answer": {"ok": "yes"}}
            )
            found["answered"] = await client.call_tool(
                "answer_interaction", {"run_id": run_id, "answer": {"ok": True}, "claimed_for": "Maria"}
            )
            found["run"] = await client.call_tool("get_run", {"run_id": run_id})
            found["runs"] = await client.call_tool("list_runs", {"name": "ask-launch", "limit": 1})
        return found

    found = run(scenario)

    created = found["created"]
    assert texts(created)[0] == "The interaction definition 'ask-launch' is saved as version 1."
    assert json.loads(texts(created)[1]) == created.structured_content
    started = found["started"].structured_content
    assert started["status"] == "started" and started["started_by"] == "dev"
    assert "waits for its request's answer" in texts(found["started"])[0]
    requests = found["listed"].structured_content["interactions"]
    assert [r["run_id"] for r in requests] == [started["run_id"]]
    assert requests[0]["answer_schema"]["required"] == ["ok"]
    assert texts(found["listed"])[0] == "1 open request is on this page; this is the last page."
    wrong = problem_of(found["wrong"])
    assert (wrong["status"], wrong["reason"]) == (422, "invalid_input")
    answered = found["answered"]
    assert texts(answered)[0].startswith("The request is answered: the run that asked it ")
    assert answered.structured_content["answered_by"] == "dev"
    assert answered.structured_content["claimed_for"] == "Maria"
    assert found["run"].structured_content["status"] == "succeeded"
    assert found["run"].structured_content["output"] == {"ok": True}
    assert len(found["runs"].structured_content["runs"]) == 1
    # structuredContent is the HTTP response's body, exactly.
    with http(served, READER) as client:
        assert client.get(f"{BASE}/runs/{started['run_id']}").json() == found["run"].structured_content
        got = client.get(f"{BASE}/definitions/interaction/ask-launch").json()
    assert got == created.structured_content


def test_a_workflow_is_saved_run_and_its_call_answered_over_mcp(served: Served) -> None:
    workflow = (
        "document: { dsl: '1.0.3', namespace: t, name: ask-in-a-workflow, version: '1.0.0' }\n"
        "do:\n"
        "  - ask:\n"
        "      call: run_definition\n"
        "      with: { type: interaction, name: ask-for-workflow, input: { to: maria@example.com } }\n"
    )

    async def scenario() -> dict[str, Any]:
        found: dict[str, Any] = {}
        async with connected(served.url + BASE + "/mcp") as client:
            await client.call_tool(
                "create_definition", {"type": "interaction", "name": "ask-for-workflow", "source": ASK_SOURCE}
            )
            found["created"] = await client.call_tool(
                "create_definition", {"type": "workflow", "name": "ask-in-a-workflow", "source": workflow}
            )
            found["started"] = await client.call_tool(
                "run_definition", {"type": "workflow", "name": "ask-in-a-workflow", "input": {}}
            )
            listed = await client.call_tool("list_interactions", {"function": "ask-for-workflow"})
            (request,) = listed.structured_content["interactions"]
            found["child"] = await client.call_tool("get_run", {"run_id": request["run_id"]})
            await client.call_tool(
                "answer_interaction", {"run_id": request["run_id"], "answer": {"ok": True}}
            )
            found["run"] = await client.call_tool(
                "get_run", {"run_id": found["started"].structured_content["run_id"]}
            )
        return found

    found = run(scenario)
    created = found["created"].structured_content
    assert created["type"] == "workflow" and created["state_machine"]["QueryLanguage"] == "JSONata"
    started = found["started"].structured_content
    assert started["status"] == "started"
    assert "waits for the runs it calls" in texts(found["started"])[0]
    assert found["child"].structured_content["parent"] == {"run_id": started["run_id"], "task": "/do/0/ask"}
    assert found["run"].structured_content["status"] == "succeeded"
    assert found["run"].structured_content["output"] == {"ok": True}


def test_results_equal_the_http_bodies_on_either_endpoint(served: Served) -> None:
    async def calls() -> list[Any]:
        async with connected(served.url + "/mcp", READER) as client:
            return [
                await client.call_tool("search", {"org": "acme", "playbook": "campaigns", "terms": "post"}),
                await client.call_tool("list_models", {"org": "acme"}),
                await client.call_tool(
                    "list_definitions", {"org": "acme", "playbook": "campaigns", "type": "interaction"}
                ),
            ]

    searched, models, definitions = run(calls)

    with http(served, READER) as client:
        assert searched.structured_content == client.get(f"{BASE}/tool-servers/search?terms=post").json()
        assert models.structured_content["object"] == client.get("/v1/orgs/acme/models").json()["object"]
        assert definitions.structured_content == client.get(f"{BASE}/definitions/interaction").json()
    assert searched.structured_content["servers"][0]["tools"][0]["tool"] == "post_message"


def test_a_failure_is_the_problem_document_http_answers(served: Served) -> None:
    bad = {"type": "interaction", "name": "bad-doc", "source": "---\nto: [\n---\nHi\n"}

    async def calls() -> list[Any]:
        async with connected(served.url + "/mcp") as client:
            return [
                await client.call_tool("create_definition", {"org": "acme", "playbook": "campaigns", **bad}),
                await client.call_tool("list_runs", {"org": "acme", "playbook": "campaigns", "limit": 0}),
                await client.call_tool("get_run", {"org": "acme", "playbook": "campaigns"}),
            ]

    invalid, bad_limit, missing = run(calls)

    with http(served) as client:
        refused = client.post(
            f"{BASE}/definitions/interaction", json={"name": "bad-doc", "source": bad["source"]}
        )
        limit = client.get(f"{BASE}/runs?limit=0")
    assert problem_of(invalid) == refused.json()
    assert refused.status_code == 422 and refused.json()["errors"][0]["pointer"] == "/source"
    assert problem_of(bad_limit) == limit.json()
    assert problem_of(missing)["errors"] == [{"pointer": "/run_id", "detail": "Required."}]


def test_another_orgs_playbook_is_404_and_a_reader_may_not_write(served: Served) -> None:
    async def calls() -> list[Any]:
        async with connected(served.url + "/mcp", READER) as client:
            return [
                await client.call_tool("list_runs", {"org": "globex", "playbook": "launch"}),
                await client.call_tool("list_runs", {"org": "acme", "playbook": "ops"}),
                await client.call_tool(
                    "retire_definition",
                    {"org": "acme", "playbook": "campaigns", "type": "interaction", "name": "ask-launch"},
                ),
            ]

    other_org, unreadable, write = run(calls)

    assert problem_of(other_org)["status"] == 404
    assert problem_of(unreadable) == {
        "type": "https://on.auto/problems/not_found",
        "title": "Not found",
        "status": 404,
        "reason": "not_found",
        "detail": "Org 'acme' has no playbook 'ops'.",
    }
    assert problem_of(write)["status"] == 403
    # A playbook's own endpoint the caller cannot read does not exist for it, as any route.
    with http(served, READER) as client:
        scoped = client.post(
            "/v1/orgs/globex/playbooks/launch/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"}
        )
    assert scoped.status_code == 404
    assert scoped.headers["content-type"] == "application/problem+json"


def test_get_is_405_and_no_token_401(served: Served) -> None:
    with httpx.Client(base_url=served.url, timeout=30) as client:
        for path in ("/mcp", BASE + "/mcp"):
            got = client.get(
                path, headers={"Authorization": f"Bearer {WRITER}", "Accept": "text/event-stream"}
            )
            anonymous = client.post(path, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})

            assert (got.status_code, got.headers["allow"]) == (405, "POST")
            assert got.json()["reason"] == "method_not_allowed"
            assert (anonymous.status_code, anonymous.headers["www-authenticate"]) == (401, "Bearer")


# --- instructions and guides ----------------------------------------------------------------------------


def test_the_guides_are_resources_with_the_reference_pages_text(served: Served) -> None:
    async def read() -> tuple[Any, dict[str, str], str | None]:
        async with connected(served.url + "/mcp", READER, classic=True) as session:
            initialized = session.initialize_result if hasattr(session, "initialize_result") else None
            listed = await session.list_resources()
            pages = {}
            for resource in listed.resources:
                contents = (await session.read_resource(resource.uri)).contents
                pages[str(resource.uri)] = contents[0].text
            instructions = getattr(initialized, "instructions", None)
            return listed, pages, instructions

    listed, pages, _ = run(read)

    assert [str(r.uri) for r in listed.resources] == [f"guide://{name}" for name in GUIDES]
    assert all(r.mime_type == "text/markdown" for r in listed.resources)
    for name in GUIDES:
        # The pages ship inside the package (parley.reference), the same text as docs/reference/.
        shipped = files("parley.reference").joinpath(f"{name}.md").read_text(encoding="utf-8")
        assert pages[f"guide://{name}"] == shipped


def test_the_instructions_tell_an_agent_how_to_work(served: Served) -> None:
    with httpx.Client(base_url=served.url, timeout=30) as client:
        reply = client.post(
            "/mcp",
            headers={"Authorization": f"Bearer {READER}", "Accept": "application/json, text/event-stream"},
            json={
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "t", "version": "1"},
                },
            },
        )
    text = reply.json()["result"]["instructions"]

    assert reply.headers["cache-control"] == "no-store"
    for words in (
        "guide://interaction-format",
        "guide://reasoning-format",
        "guide://agent-runs",
        "guide://http-api",
    ):
        assert words in text
    assert "answer_interaction, in the shape of that answer_schema; it starts no new run" in text
    assert "next_cursor" in text and "acme/campaigns (read)" in text
