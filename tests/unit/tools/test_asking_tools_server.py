"""The test server's tools for agent runs (``tests/mcp_servers.py``; agent-runs.md, "A tool that asks"
and "Approvals"), through the project's MCP client and the official one: a tool that asks answers a
``parley/interaction`` request in its result's ``_meta``, its continuation's listing says it takes an
answer and reads the answer from the request's ``_meta``, which the server records in ``metas``."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp_servers import LocalToolServer

from parley.ports.tools import Bounds, ServerAddress, ToolAnswer
from parley.tools.client import McpToolClient

QUICK = Bounds(open_seconds=3, list_seconds=3, respond_seconds=3)
STATION = {"id": "station", "label": "Kyoto Station", "recommended": True}
TOWER = {"id": "tower", "label": "Kyoto Tower"}


def response(answer: Any, kind: str = "choice", prompt: str = "Which place did you mean by Kyoto?") -> Any:
    return {
        "parley/interaction_response": {
            "interaction_id": "in-1",
            "prompt": prompt,
            "kind": kind,
            "answer": answer,
        }
    }


@pytest.fixture
def address(tools: LocalToolServer) -> ServerAddress:
    return ServerAddress("places", tools.url)


@pytest.fixture
def client() -> McpToolClient:
    return McpToolClient(QUICK)


def request_of(answer: ToolAnswer) -> Any:
    assert not answer.is_error
    assert answer.meta is not None
    return answer.meta["parley/interaction"]


def test_the_listing_says_which_tool_takes_an_answer(client: McpToolClient, address: ServerAddress) -> None:
    listed = {tool.name: tool for tool in client.list_tools(address)}
    assert listed["resolve_place"].requires_interaction_response is True
    assert listed["resolve_place"].read_only is False
    assert listed["ask_place"].requires_interaction_response is False
    assert listed["thread_replies"].requires_interaction_response is False
    assert listed["ask_place"].read_only is True
    assert listed["preview_post"].read_only is True
    assert set(listed["resolve_place"].input_schema["properties"]) == {"draft", "round"}

    async def wire_metas() -> dict[str, Any]:
        async with Client(streamable_http_client(address.url)) as official:
            return {tool.name: tool.meta for tool in (await official.list_tools()).tools}

    metas = anyio.run(wire_metas)
    assert metas["resolve_place"] == {"parley/requires_interaction_response": True}
    assert not metas["ask_place"]


def test_a_tool_that_asks(client: McpToolClient, address: ServerAddress, tools: LocalToolServer) -> None:
    answer = client.call_tool(address, "ask_place", {"query": "Kyoto"})
    assert answer.text == 'I need to know which place you meant by "Kyoto".'
    assert request_of(answer) == {
        "kind": "choice",
        "prompt": "Which place did you mean by Kyoto?",
        "options": [STATION, TOWER],
        "allow_custom": True,
        "allow_skip": True,
        "skip_label": "Skip this place",
        "continuation": {"tool": "resolve_place", "arguments": {"draft": "Kyoto"}},
    }
    assert tools.calls == [("ask_place", {"query": "Kyoto"})]
    assert tools.metas == [{}]


def test_the_queries_that_change_the_continuation(client: McpToolClient, address: ServerAddress) -> None:
    bad = request_of(client.call_tool(address, "ask_place", {"query": "bad continuation"}))
    assert bad["continuation"] == {"tool": "thread_replies", "arguments": {"draft": "bad continuation"}}
    twice = request_of(client.call_tool(address, "ask_place", {"query": "twice"}))
    assert twice["continuation"] == {"tool": "resolve_place", "arguments": {"draft": "twice", "round": 1}}


def test_the_continuation_reads_the_answer_from_meta(
    client: McpToolClient, address: ServerAddress, tools: LocalToolServer
) -> None:
    sent = response({"selected": ["station"]})
    answer = client.call_tool(address, "resolve_place", {"draft": "Kyoto"}, meta=sent)
    assert not answer.is_error
    assert answer.text == 'Resolved Kyoto to {"selected": ["station"]}.'
    assert answer.meta is None or "parley/interaction" not in answer.meta
    bare = client.call_tool(address, "resolve_place", {"draft": "Kyoto"})
    assert bare.text == "Resolved Kyoto with no answer."
    assert tools.calls == [("resolve_place", {"draft": "Kyoto", "round": 0})] * 2
    assert tools.metas == [sent, {}]  # the client's own io.modelcontextprotocol/ keys are left out
    tools.reset()
    assert tools.metas == [] and tools.calls == []


def test_a_sequence_of_two_questions(
    client: McpToolClient, address: ServerAddress, tools: LocalToolServer
) -> None:
    first = request_of(client.call_tool(address, "ask_place", {"query": "twice"}))["continuation"]
    chosen = response({"selected": ["tower"]}, prompt="Which place did you mean by twice?")
    second = client.call_tool(address, first["tool"], first["arguments"], meta=chosen)
    assert second.text == "I need a note for the driver."
    assert request_of(second) == {
        "kind": "text",
        "prompt": "Any note for the driver?",
        "continuation": {"tool": "resolve_place", "arguments": {"draft": "twice", "round": 2}},
    }
    then = request_of(second)["continuation"]
    noted = response("Side entrance, please", kind="text", prompt="Any note for the driver?")
    last = client.call_tool(address, then["tool"], then["arguments"], meta=noted)
    assert last.text == 'Resolved twice to "Side entrance, please".'
    assert last.meta is None or "parley/interaction" not in last.meta
    assert [tool for tool, _ in tools.calls] == ["ask_place", "resolve_place", "resolve_place"]
    assert tools.metas == [{}, chosen, noted]


def test_the_preview_of_a_post(client: McpToolClient, address: ServerAddress, tools: LocalToolServer) -> None:
    answer = client.call_tool(address, "preview_post", {"channel": "#launch", "text": "We ship today"})
    assert not answer.is_error
    assert answer.text == 'Post "We ship today" to #launch? It will be seen by everyone in the channel.'
    assert "structuredContent" not in answer.result
    assert tools.calls == [("preview_post", {"channel": "#launch", "text": "We ship today"})]
    assert tools.metas == [{}]
