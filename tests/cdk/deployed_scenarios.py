"""What the deployed stack is put through offline (issue 28): every function's events, through the
wires of the template (``deployed.Deployment``), so that the calls the code makes on AWS are recorded.

:func:`play` runs, in one deployment: every operation of the HTTP API (``events/api/``); an inbox run
answered, one expired by its schedule, one cancelled, and one whose expiry was lost, settled by the
wait's timeout; a delivery through a tool with its replies read from the timer queue and the answer
taken from a reply; a call to a system whose result is kept in the content bucket; a reasoning run and
an agent run (asking a person, answered, then one expired) on a fake model provider whose key is a
secret; a workflow saved with a schedule that fires, calls a function and waits for its answer, and a
workflow run cancelled; the MCP front door; the authorizer. Each step checks its own outcome, so that a
recorded call is one the code makes when it works, not on a path that failed early.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final
from urllib.parse import parse_qsl

from deployed import Deployment, FunctionFailed

ROOT: Final = Path(__file__).resolve().parents[2]
EVENTS: Final = ROOT / "events"
BASE: Final = "/v1/orgs/acme/playbooks/campaigns"
CONNECTIONS: Final = "/v1/orgs/acme/connections"
PRINCIPAL: Final = "alice@example.com"
DAY: Final = 24 * 3600
#: The tool servers' header secret (by stack: names its grants cover) and the gateway's key.
TOOL_SECRETS: Final = {"options": "parley/prod/tool-servers/chat", "dev": "parley/dev/tool-servers/chat"}
MODEL_SECRET: Final = "parley/dev/models/internal"
GATEWAY_KEY: Final = "sk-gateway-deployed"

#: The API's operations in an order that works: each event of ``events/api/`` once.
API_EVENTS: Final = (
    "create_definition",
    "get_definition",
    "list_definitions",
    "update_definition",
    "run_definition",
    "get_run",
    "list_interactions",
    "list_runs",
    "list_playbook_events",
    "get_run_history",
    "get_event",
    "answer_interaction",
    "cancel_run",
)

CHAT: Final = (ROOT / "examples" / "definitions" / "approve-draft-in-chat.md").read_text(encoding="utf-8")
CHAT_CALL: Final = """---
call: { server: chat, tool: post_message, with: { channel: C1, text: hi } }
output: { schema: { type: object } }
---
"""
LARGE_CALL: Final = """---
call: { server: tools, tool: repeat, with: { text: 'x', times: '{{ input.times }}' } }
output: { schema: { type: string } }
---
"""
REASONING: Final = """---
model: internal/llama
---
Summarize: {{ input.text }}
"""
AGENT: Final = """---
model: internal/llama
tools: [chat/post_message]
ask: { to: '{{ input.owner }}', expires: P3D }
---
Do this: {{ input.task }}
"""
WORKFLOW: Final = """\
document: { dsl: '1.0.3', namespace: campaigns, name: asking, version: '1.0.0' }
schedule: { every: PT1H }
do:
  - ask:
      call: run_definition
      with:
        type: interaction
        name: approve-campaign-brief
        input: { owner: maria@example.com, review: '${ "Due " & $data.schedule.due }' }
"""
WORKFLOW_REASONS: Final = """\
document: { dsl: '1.0.3', namespace: campaigns, name: summarizes, version: '1.0.0' }
do:
  - sum:
      call: run_definition
      with: { type: reasoning, name: summarize, input: { text: '${ $data.text }' } }
"""


def rid(name: str) -> str:
    """The run id of the scenarios' run ``name`` (a run id is a UUID)."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"parley-deployed/{name}"))


WORKFLOW_AT_ONCE: Final = """\
document: { dsl: '1.0.3', namespace: campaigns, name: calls-at-once, version: '1.0.0' }
do:
  - big:
      call: run_definition
      with: { type: interaction, name: repeat-large, input: { times: 70000 } }
"""
WORKFLOW_CALLS_WORKFLOW: Final = """\
document: { dsl: '1.0.3', namespace: campaigns, name: calls-workflow, version: '1.0.0' }
do:
  - inner:
      call: run_definition
      with: { type: workflow, name: calls-at-once, input: {} }
"""


def operator_config(chat_url: str, tools_url: str, gateway_url: str, tool_secret: str) -> str:
    return f"""
principals:
  - id: {PRINCIPAL}
    grants: [{{ org: acme, playbook: campaigns, role: write }}, {{ org: acme, role: admin }}]
tool_servers:
  - name: chat
    url: {chat_url}
    orgs: [acme]
    headers: {{ Authorization: "Bearer {{{{resolve:secretsmanager:{tool_secret}}}}}" }}
  - {{ name: tools, url: "{tools_url}", orgs: [acme] }}
models:
  allowed: [internal/*]
  gateways:
    - name: internal
      base_url: {gateway_url}
      api_key: "{{{{resolve:secretsmanager:{MODEL_SECRET}}}}}"
connections:
  allowed_urls: ["https://*.acme.example/*"]
"""


def event(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((EVENTS / f"{name}.json").read_text(encoding="utf-8"))
    return loaded


def api_event(method: str, path: str, body: Any = None, *, resource: str = "/v1/{proxy+}") -> dict[str, Any]:
    """An API Gateway proxy event of ``path``, behind the authorizer (which named :data:`PRINCIPAL`)."""
    shaped = event("api/run_definition")
    path, _, query = path.partition("?")
    parameters = dict(parse_qsl(query))
    shaped.update(
        path=path,
        httpMethod=method,
        resource=resource,
        body=None if body is None else json.dumps(body),
        pathParameters={"proxy": path.removeprefix("/v1/")} if resource == "/v1/{proxy+}" else None,
        queryStringParameters=parameters or None,
        multiValueQueryStringParameters={k: [v] for k, v in parameters.items()} or None,
    )
    shaped["requestContext"].update(
        httpMethod=method, path=f"/dev{path}", resourcePath=resource, authorizer={"principalId": PRINCIPAL}
    )
    return shaped


class Player:
    """Drives one :class:`Deployment` through the scenarios; ``chat`` is the demo chat's memory."""

    def __init__(self, deployment: Deployment, chat: Any, fake: Any) -> None:
        self.d = deployment
        self.chat = chat
        self.fake = fake
        self.done: list[str] = []

    def api(self, method: str, path: str, body: Any = None, *, expect: int | tuple[int, ...] = 200) -> Any:
        return self.http("api", api_event(method, path, body), expect=expect)

    def http(self, function: str, shaped: dict[str, Any], *, expect: int | tuple[int, ...] = 200) -> Any:
        reply = self.d.invoke(function, shaped)
        wanted = expect if isinstance(expect, tuple) else (expect,)
        assert reply["statusCode"] in wanted, (shaped["httpMethod"], shaped["path"], reply)
        body = reply.get("body") or ""
        try:
            return json.loads(body)
        except ValueError:
            return body

    def run(self, definition_type: str, name: str, run_id: str, data: Any) -> Any:
        return self.api(
            "POST", f"{BASE}/definitions/{definition_type}/{name}/run", {"input": data, "run_id": run_id}
        )

    def status(self, run_id: str) -> str:
        status: str = self.api("GET", f"{BASE}/runs/{run_id}")["status"]
        return status

    def save(self, definition_type: str, name: str, source: str) -> None:
        self.api(
            "POST", f"{BASE}/definitions/{definition_type}", {"name": name, "source": source}, expect=201
        )

    def step(self, name: str, scenario: Callable[[], None]) -> None:
        scenario()
        assert not self.d.failures, (name, self.d.failures)
        self.done.append(name)

    # -- the scenarios -----------------------------------------------------------------------------------

    def every_operation(self) -> None:
        """Each event of ``events/api/``: the HTTP API's operations, an inbox run answered among them."""
        for name in API_EVENTS:
            shaped = event(f"api/{name}")
            shaped["requestContext"]["authorizer"] = {"principalId": PRINCIPAL}
            expect: tuple[int, ...] = (200, 201)
            if name == "get_event":
                expect = (200, 404)  # the event's id is the fixture's own
            if name == "cancel_run":
                expect = (409,)  # answered just before
            self.http("api", shaped, expect=expect)
        assert self.status("0f5e8c1a-4d3b-4f6e-9a2c-7b1d3e5f7a9c") == "succeeded"

    def expired_cancelled_settled(self) -> None:
        owner = {"owner": "maria@example.com", "review": "Fine."}
        self.run("interaction", "approve-campaign-brief", rid("expired"), owner)
        self.run("interaction", "approve-campaign-brief", rid("cancelled"), owner)
        self.run("interaction", "approve-campaign-brief", rid("settled"), owner)
        self.api("POST", f"{BASE}/runs/{rid('cancelled')}/cancel", {"reason": "Moved."})
        assert self.status(rid("cancelled")) in ("rejected", "cancelled")
        # The settled run's expiry is lost: only the wait's timeout (the settle state) ends it.
        for key in [k for k in self.d.schedules if rid("settled") in k]:
            del self.d.schedules[key]
        self.d.fire_schedules(advance=3 * DAY)
        assert self.status(rid("expired")) == "rejected"
        assert self.status(rid("settled")) == "started"
        self.d.time_out_wait(rid("settled"))
        assert self.status(rid("settled")) == "rejected"
        # Answered before its execution's wait keeps the token: the wait function ends the wait itself.
        self.d.invoke(
            "api",
            api_event(
                "POST",
                f"{BASE}/definitions/interaction/approve-campaign-brief/run",
                {"input": owner, "run_id": rid("raced")},
            ),
            settle=False,
        )
        self.d.invoke(
            "api",
            api_event("POST", f"{BASE}/runs/{rid('raced')}/answer", {"answer": {"verdict": "approve"}}),
            settle=False,
        )
        self.d.settle()
        assert self.status(rid("raced")) == "succeeded"

    def delivered_and_read(self) -> None:
        self.save("interaction", "approve-draft-in-chat", CHAT)
        self.run(
            "interaction", "approve-draft-in-chat", rid("chat"), {"owner": "maria", "draft": "Spring sale"}
        )
        history = self.api("GET", f"{BASE}/runs/{rid('chat')}/history")["events"]
        sent = [e for e in history if e["type"] == "delivery_succeeded"]
        assert sent, history
        conversation, ts = sent[0]["data"]["sent"]["conversation"], sent[0]["data"]["sent"]["id"]
        self.d.deliver_queue(advance=10)  # a read: nothing yet
        self.chat.post(conversation, "maria", "approve", thread_ts=ts)
        for _ in range(8):
            if self.status(rid("chat")) == "succeeded":
                break
            self.d.deliver_queue(advance=60)
        assert self.status(rid("chat")) == "succeeded"

    def large_call(self) -> None:
        self.save("interaction", "chat-call", CHAT_CALL)
        assert self.run("interaction", "chat-call", rid("chat-call"), {})["status"] == "succeeded"
        self.save("interaction", "repeat-large", LARGE_CALL)
        reply = self.run("interaction", "repeat-large", rid("large"), {"times": 70_000})
        assert reply["status"] == "succeeded", reply
        assert len(self.api("GET", f"{BASE}/runs/{rid('large')}")["output"]) == 70_000

    def reasoning(self) -> None:
        from fake_providers import CHAT_COMPLETIONS, Scripted, openai_text

        self.save("reasoning", "summarize", REASONING)
        self.fake.script(CHAT_COMPLETIONS, Scripted(body=openai_text("Short.")))
        self.run("reasoning", "summarize", rid("reason"), {"text": "A long text."})
        assert self.status(rid("reason")) == "succeeded"
        assert (
            self.fake.requests_to("/v1/chat/completions")[-1].headers["authorization"]
            == f"Bearer {GATEWAY_KEY}"
        )
        self.api("GET", "/v1/orgs/acme/models")
        # An output past 64 KiB is kept in the content bucket, and read back from it.
        self.fake.script(CHAT_COMPLETIONS, Scripted(body=openai_text("y" * 70_000)))
        self.run("reasoning", "summarize", rid("reason-large"), {"text": "Say a lot."})
        assert len(self.api("GET", f"{BASE}/runs/{rid('reason-large')}")["output"]) == 70_000

    def agent(self) -> None:
        from fake_providers import CHAT_COMPLETIONS, Scripted, openai_text, openai_tool_call

        self.save("reasoning", "agent", AGENT)
        asks = Scripted(body=openai_tool_call("request_input", {"kind": "text", "prompt": "Which channel?"}))
        posts = Scripted(body=openai_tool_call("chat__post_message", {"channel": "C1", "text": "hi"}))
        self.fake.script(CHAT_COMPLETIONS, asks, posts, Scripted(body=openai_text("Posted to C1.")))
        self.run("reasoning", "agent", rid("agent"), {"owner": "maria", "task": "post hi"})
        assert self.status(rid("agent")) == "started"
        self.api("POST", f"{BASE}/runs/{rid('agent')}/answer", {"answer": "C1"})
        assert self.status(rid("agent")) == "succeeded"
        # Asked again and never answered: the expiry (timer) has the reason function take the next step.
        self.fake.script(CHAT_COMPLETIONS, asks, Scripted(body=openai_text("Nobody answered.")))
        self.run("reasoning", "agent", rid("agent-expired"), {"owner": "maria", "task": "post hi"})
        assert self.status(rid("agent-expired")) == "started"
        self.d.fire_schedules(advance=4 * DAY)
        assert self.status(rid("agent-expired")) in ("succeeded", "rejected")

    def workflows(self) -> None:
        from fake_providers import CHAT_COMPLETIONS, Scripted, openai_text

        self.save("workflow", "asking", WORKFLOW)
        fired = self.d.fire_schedules(advance=3600)
        assert fired >= 1
        runs = self.api("GET", f"{BASE}/runs?name=asking")["runs"]
        assert runs, "the workflow's schedule started no run"
        asking = runs[0]["run_id"]
        children = [
            r
            for r in self.api("GET", f"{BASE}/runs?name=approve-campaign-brief&limit=100")["runs"]
            if r["status"] == "started"
        ]
        assert children, "the workflow called no function"
        for child in children:
            self.api("POST", f"{BASE}/runs/{child['run_id']}/answer", {"answer": {"verdict": "approve"}})
        assert self.status(asking) == "succeeded"
        # A workflow calling a reasoning function (the workflow function invokes reason), run by the API.
        self.fake.script(CHAT_COMPLETIONS, Scripted(body=openai_text("Short.")))
        self.save("workflow", "summarizes", WORKFLOW_REASONS)
        self.run("workflow", "summarizes", rid("workflow"), {"text": "Long."})
        assert self.status(rid("workflow")) == "succeeded"
        # A workflow calling a function that ends at once, and a workflow calling that workflow.
        self.save("workflow", "calls-at-once", WORKFLOW_AT_ONCE)
        self.save("workflow", "calls-workflow", WORKFLOW_CALLS_WORKFLOW)
        self.run("workflow", "calls-workflow", rid("workflow-nested"), {})
        assert self.status(rid("workflow-nested")) == "succeeded"
        # A workflow run cancelled while it waits.
        self.save(
            "workflow",
            "waits",
            WORKFLOW.replace("name: asking", "name: waits").replace("schedule: { every: PT1H }\n", ""),
        )
        self.run("workflow", "waits", rid("workflow-cancelled"), {"schedule": {"due": "now"}})
        self.api("POST", f"{BASE}/runs/{rid('workflow-cancelled')}/cancel", {"reason": "No longer needed."})
        self.api("GET", f"{BASE}/runs/{rid('workflow-cancelled')}/history")
        # A workflow whose called run expires: the timer's expiry answers the workflow's call.
        self.run("workflow", "waits", rid("workflow-expired"), {"schedule": {"due": "now"}})
        self.d.fire_schedules(advance=3 * DAY)
        assert self.status(rid("workflow-expired")) in ("failed", "rejected"), self.status(
            rid("workflow-expired")
        )

    def mcp(self) -> None:
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}

        def post(message: dict[str, Any]) -> Any:
            shaped = api_event("POST", "/mcp", message, resource="/mcp")
            shaped["headers"].update(headers)
            shaped["multiValueHeaders"].update({k: [v] for k, v in headers.items()})
            return self.http("mcp", shaped)

        init = {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        }
        post({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init})
        tools = post({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}})
        assert tools["result"]["tools"]
        arguments = {
            "org": "acme",
            "playbook": "campaigns",
            "name": "approve-campaign-brief",
            "type": "interaction",
            "input": {"owner": "maria@example.com", "review": "Via MCP."},
            "run_id": rid("mcp"),
        }
        called = post(
            {
                "jsonrpc": "2.0",
                "id": 3,
                "method": "tools/call",
                "params": {"name": "run_definition", "arguments": arguments},
            }
        )
        assert not called["result"].get("isError"), called
        self.api("POST", f"{BASE}/runs/{rid('mcp')}/answer", {"answer": {"verdict": "approve"}})

    def connections(self) -> None:
        """A connection with headers added, approved and removed through the api function (its secret
        created and deleted), and another added and removed through the MCP front door (issue 32)."""
        added = self.api(
            "POST",
            CONNECTIONS,
            {
                "name": "notes",
                "url": "https://notes.acme.example/mcp",
                "headers": {"Authorization": "Bearer n"},
            },
            expect=201,
        )
        assert (added["status"], added["auth"]) == ("pending", "headers"), added
        assert self.api("POST", f"{CONNECTIONS}/notes/approve")["status"] == "active"
        assert [c["name"] for c in self.api("GET", CONNECTIONS)["connections"]] == ["notes"]
        self.api("DELETE", f"{CONNECTIONS}/notes", expect=204)
        self.api("GET", f"{CONNECTIONS}/notes", expect=404)
        for name, arguments in (
            (
                "add_connection",
                {
                    "org": "acme",
                    "name": "tickets",
                    "url": "https://t.acme.example/mcp",
                    "headers": {"X-Key": "k"},
                },
            ),
            ("remove_connection", {"org": "acme", "name": "tickets"}),
        ):
            called = self.mcp_post(
                {
                    "jsonrpc": "2.0",
                    "id": 9,
                    "method": "tools/call",
                    "params": {"name": name, "arguments": arguments},
                }
            )
            assert not called["result"].get("isError"), called

    def mcp_post(self, message: dict[str, Any]) -> Any:
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        shaped = api_event("POST", "/mcp", message, resource="/mcp")
        shaped["headers"].update(headers)
        shaped["multiValueHeaders"].update({k: [v] for k, v in headers.items()})
        return self.http("mcp", shaped)

    def authorizer(self) -> None:
        token_event = {
            "type": "TOKEN",
            "authorizationToken": "Bearer not-a-token",
            "methodArn": "arn:aws:execute-api:eu-west-1:123456789012:abc/dev/GET/v1/orgs",
        }
        try:
            self.d.invoke("authorizer", token_event)
        except FunctionFailed as failed:
            assert "Unauthorized" in str(failed), failed


def play(deployment: Deployment, chat: Any, fake: Any) -> list[str]:
    """Every scenario, in order; the names of those that ran."""
    player = Player(deployment, chat, fake)
    for name in (
        "every_operation",
        "expired_cancelled_settled",
        "delivered_and_read",
        "large_call",
        "reasoning",
        "agent",
        "workflows",
        "mcp",
        "connections",
        "authorizer",
    ):
        player.step(name, getattr(player, name))
    return player.done
