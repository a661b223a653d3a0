"""Security review of the HTTP API, through the Lambda handler (http-api.md, "Base and auth",
"Operator configuration", "Problems").

Every route is called as each kind of caller, in both ways a caller is named:

- ``local``: the bearer token of the operator configuration (``parley serve``);
- ``aws``: the principal the JWT authorizer put in the request's authorizer context, with the grants of
  a deployed configuration (no tokens; tool server secrets in Secrets Manager).

It checks that a playbook the caller holds no role on is not found (another org's principal, a token
granted on another playbook, a JWT nobody granted), a reader's writes are forbidden, no or a bad token is
``401`` with ``WWW-Authenticate: Bearer``, bodies over 1 MiB are ``413`` on every route that takes one,
and that no secret (a principal's token, a tool server's header) is ever in a response, a problem or a
log line.
"""

from __future__ import annotations

import base64
import json
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

import pytest
from mcp_servers import LocalToolServer

from parley.api.app import build_handler, build_resolver
from parley.clock import ManualClock
from parley.config import OperatorConfig, parse_operator_config
from parley.definitions.store import DynamoDefinitionStore
from parley.ports.runtime import Runtime
from parley.ports.tools import Bounds
from parley.tools.client import McpToolClient

Mode = Literal["local", "aws"]
MODES: tuple[Mode, ...] = ("local", "aws")
QUICK = Bounds(open_seconds=3, list_seconds=3, respond_seconds=1.5)
MAX_BODY = 1_048_576

#: The principals' tokens (local mode): none may ever be shown back.
TOKENS = {
    "writer": "tok-writer-5b1f0c9e7d",
    "reader": "tok-reader-a83e61f2c4",
    "other-org": "tok-otherorg-19c4d7e0ab",
    "other-playbook": "tok-otherpb-7e2a90c3f1",
}
GRANTS = {
    "writer": "{ org: acme, playbook: campaigns, role: write }",
    "reader": "{ org: acme, playbook: campaigns, role: read }",
    "other-org": "{ org: globex, playbook: campaigns, role: write }",
    "other-playbook": "{ org: acme, playbook: launches, role: write }",
}
#: The tool server's header credential: in the local file as is, on AWS in Secrets Manager.
CREDENTIAL = "sk-live-4f0d2a9c71e85b36"
SECRET_NAME = "parley/dev/tool-servers/chat"

BASE = "/v1/orgs/acme/playbooks/campaigns"


@dataclass(frozen=True)
class Route:
    operation: str
    method: str
    path: str
    needs: Literal["read", "write"]
    body: dict[str, Any] | None = None


#: Every route of http-api.md (``test_the_routes_here_are_every_route_of_the_api`` keeps this whole).
ROUTES = (
    Route(
        "create_definition", "POST", "/definitions/interaction", "write", {"name": "ask-x", "source": "---\n"}
    ),
    Route("list_definitions", "GET", "/definitions/interaction", "read"),
    Route("get_definition", "GET", "/definitions/interaction/ask-x", "read"),
    Route("update_definition", "PUT", "/definitions/interaction/ask-x", "write", {"source": "---\n"}),
    Route("retire_definition", "POST", "/definitions/interaction/ask-x/retire", "write", {}),
    Route("run_definition", "POST", "/definitions/interaction/ask-x/run", "write", {"input": {}}),
    Route("list_runs", "GET", "/runs", "read"),
    Route("get_run", "GET", "/runs/r-1", "read"),
    Route("get_run_history", "GET", "/runs/r-1/history", "read"),
    Route("cancel_run", "POST", "/runs/r-1/cancel", "write", {}),
    Route("answer_interaction", "POST", "/runs/r-1/answer", "write", {"answer": "yes"}),
    Route("list_interactions", "GET", "/interactions", "read"),
    Route("send_run_event", "POST", "/runs/r-1/events", "write", {"type": "brief.approved"}),
    Route("list_playbook_events", "GET", "/events", "read"),
    Route("get_event", "GET", "/events/e-1", "read"),
    Route("search", "GET", "/tool-servers/search", "read"),
    Route("introspect", "GET", "/tool-servers/chat/tools/whoami", "read"),
    Route("execute", "POST", "/tool-servers/chat/tools/whoami/execute", "write", {"arguments": {}}),
    Route("dry_run", "POST", "/tool-servers/chat/tools/whoami/dry-run", "write", {"arguments": {}}),
)
WRITES = [r for r in ROUTES if r.needs == "write"]
READS = [r for r in ROUTES if r.needs == "read"]
WITH_BODY = [r for r in ROUTES if r.body is not None]


def operator_yaml(mode: Mode, tool_url: str) -> str:
    principals = "\n".join(
        f"  - id: {name}\n"
        + (f"    token: {TOKENS[name]}\n" if mode == "local" else "")
        + f"    grants: [{GRANTS[name]}]"
        for name in TOKENS
    )
    header = CREDENTIAL if mode == "local" else f"{{{{resolve:secretsmanager:{SECRET_NAME}}}}}"
    return f"""
principals:
{principals}
tool_servers:
  - name: chat
    url: {tool_url}
    orgs: [acme]
    headers: {{ Authorization: "Bearer {header}" }}
"""


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: Any
    raw: str


Caller = Literal["writer", "reader", "other-org", "other-playbook", "stranger", "nobody", "forged"]


class Api:
    """Calls the handler as someone, in a mode; keeps every reply for the secrets check."""

    def __init__(self, mode: Mode, runtime: Runtime, event: dict[str, Any]) -> None:
        self.mode = mode
        self.handler = build_handler(runtime)
        self.template = event
        self.replies: list[Reply] = []

    def __call__(
        self,
        route: Route,
        who: Caller = "writer",
        *,
        base: str = BASE,
        body: str | None = None,
        base64_body: bool = False,
    ) -> Reply:
        event = json.loads(json.dumps(self.template))
        path = base + route.path
        event["httpMethod"] = event["requestContext"]["httpMethod"] = route.method
        event["path"] = path
        event["pathParameters"] = {"proxy": path.removeprefix("/v1/")}
        event["requestContext"]["path"] = "/prod" + path
        for name in ("Authorization", "Content-Type"):
            event["headers"].pop(name, None)
            event["multiValueHeaders"].pop(name, None)
        self._name(event, who)
        text = body if body is not None else (json.dumps(route.body) if route.body is not None else None)
        if text is not None:
            event["headers"]["Content-Type"] = "application/json"
            event["multiValueHeaders"]["Content-Type"] = ["application/json"]
            if base64_body:
                text = base64.b64encode(text.encode()).decode()
            event["body"], event["isBase64Encoded"] = text, base64_body
        result = self.handler(event, None)
        headers = {k: ", ".join(v) for k, v in (result.get("multiValueHeaders") or {}).items()}
        headers.update(result.get("headers") or {})
        raw = result["body"] or ""
        reply = Reply(
            result["statusCode"], headers, json.loads(raw) if raw else None, raw + json.dumps(headers)
        )
        self.replies.append(reply)
        return reply

    def _name(self, event: dict[str, Any], who: Caller) -> None:
        def header(value: str) -> None:
            event["headers"]["Authorization"] = value
            event["multiValueHeaders"]["Authorization"] = [value]

        if who == "nobody":
            return  # no Authorization header, no authorizer context
        if self.mode == "local":
            header(f"Bearer {TOKENS.get(who, 'tok-nobody-has-this-one')}")
            return
        # On AWS the authorizer has checked the JWT; the function sees its principalId. The header is
        # still there, and must not matter: a local token in it names nobody.
        header(f"Bearer {TOKENS['writer']}")
        if who == "forged":
            event["requestContext"]["authorizer"] = {"principalId": ""}
        else:
            event["requestContext"]["authorizer"] = {"principalId": who, "integrationLatency": 3}


@pytest.fixture
def log_lines() -> Iterator[list[str]]:
    """Every log record of the ``parley`` loggers (powertools' included) and the root logger, whole."""
    lines: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(json.dumps({**record.__dict__, "message": record.getMessage()}, default=str))

    keep = Keep(level=logging.DEBUG)
    # Everything of ours, and INFO and up of everyone else (as Lambda's default; botocore's DEBUG lines
    # print whole AWS responses, secrets included, and are never on in a function).
    loggers = {logging.getLogger("parley"): logging.DEBUG, logging.getLogger(): logging.INFO}
    levels = {logger: logger.level for logger in loggers}
    for logger, level in loggers.items():
        logger.addHandler(keep)
        logger.setLevel(level)
    yield lines
    for logger, level in levels.items():
        logger.removeHandler(keep)
        logger.setLevel(level)


@pytest.fixture
def make_api(
    dynamodb: tuple[Any, str],
    manual_clock: ManualClock,
    stub_check: Any,
    tools: LocalToolServer,
    load_event: Callable[[str], dict[str, Any]],
) -> Callable[[Mode], Api]:
    import boto3

    client, table = dynamodb
    # Under the same moto mock as the table.
    secrets = boto3.client("secretsmanager", region_name="us-east-1")
    secrets.create_secret(Name=SECRET_NAME, SecretString=CREDENTIAL)

    def make(mode: Mode) -> Api:
        runtime = Runtime(
            definitions=DynamoDefinitionStore(client, table),
            clock=manual_clock,
            operator=parse_operator_config(
                operator_yaml(mode, tools.url), "test", environ={}, aws=mode == "aws"
            ),
            check_document=stub_check,
            tool_client=McpToolClient(QUICK),
            secretsmanager=secrets,
        )
        return Api(mode, runtime, load_event("api/get_definition"))

    return make


@pytest.fixture(params=MODES)
def api(request: pytest.FixtureRequest, make_api: Callable[[Mode], Api]) -> Api:
    """The API in each mode."""
    return make_api(request.param)


@pytest.fixture
def aws_api(make_api: Callable[[Mode], Api]) -> Api:
    """The API as deployed: the authorizer names the caller."""
    return make_api("aws")


def problem_of(reply: Reply, status: int, reason: str) -> dict[str, Any]:
    assert reply.status == status, (reply.status, reply.body)
    assert reply.headers.get("Content-Type") == "application/problem+json"
    assert reply.body["reason"] == reason
    body: dict[str, Any] = reply.body
    return body


# --- the routes -----------------------------------------------------------------------------------------


def test_the_routes_here_are_every_route_of_the_api(
    dynamodb: tuple[Any, str], manual_clock: ManualClock
) -> None:
    client, table = dynamodb
    resolver = build_resolver(
        Runtime(
            definitions=DynamoDefinitionStore(client, table), clock=manual_clock, operator=OperatorConfig()
        )
    )
    # The routes of http-api.md's operations live under /v1 (the description, the docs and the inbox do not).
    registered = {
        (route.func.__name__, route.method)
        for route in [*resolver._dynamic_routes, *resolver._static_routes]
        if route.method != "HEAD" and route.path.startswith("/v1/")
    }

    # list_models is relative to the org, not a playbook: tests/unit/api/test_models_api.py guards it;
    # so are the connections' routes (tests/connections guards them);
    # GET /v1/me tells the web inbox who its token names (parley.inbox.routes); the OAuth callback takes
    # no token (tests/unit/api/test_authorize_connection.py guards it).
    assert registered == {(route.operation, route.method) for route in ROUTES} | {
        ("list_models", "GET"),
        ("who_am_i", "GET"),
        ("add_connection", "POST"),
        ("list_connections", "GET"),
        ("get_connection", "GET"),
        ("approve_connection", "POST"),
        ("authorize_connection", "POST"),
        ("remove_connection", "DELETE"),
        ("oauth_callback", "GET"),
    }


# --- who may call what ----------------------------------------------------------------------------------
# Each test walks every route it concerns and reports the routes that answer wrongly, all at once.


def wrong(replies: dict[str, Reply], check: Callable[[Reply], bool]) -> dict[str, Any]:
    return {operation: (reply.status, reply.body) for operation, reply in replies.items() if not check(reply)}


def is_problem(reply: Reply, status: int, reason: str) -> bool:
    return (
        reply.status == status
        and reply.headers.get("Content-Type") == "application/problem+json"
        and reply.body["reason"] == reason
    )


@pytest.mark.parametrize("who", ["other-org", "other-playbook"])
def test_a_playbook_the_caller_holds_no_role_on_is_not_found_as_if_it_did_not_exist(
    api: Api, who: Caller
) -> None:
    for route in ROUTES:
        refused = problem_of(api(route, who), 404, "not_found")
        # A playbook nobody has, asked by the writer: the very same answer, so nothing tells them apart.
        missing = problem_of(
            api(route, "writer", base="/v1/orgs/acme/playbooks/nobody-has-it"), 404, "not_found"
        )
        assert refused == {**missing, "detail": missing["detail"].replace("nobody-has-it", "campaigns")}, (
            route
        )


def test_a_jwt_principal_without_grants_finds_no_playbook(aws_api: Api) -> None:
    # (Locally a token nobody holds names nobody: 401, below.)
    replies = {route.operation: aws_api(route, "stranger") for route in ROUTES}

    assert wrong(replies, lambda reply: is_problem(reply, 404, "not_found")) == {}


def test_a_reader_writing_is_forbidden_and_nothing_happens(api: Api, tools: LocalToolServer) -> None:
    replies = {route.operation: api(route, "reader") for route in WRITES}

    assert wrong(replies, lambda reply: is_problem(reply, 403, "forbidden")) == {}
    assert tools.calls == []
    listed = api(Route("list_playbook_events", "GET", "/events", "read"), "reader")
    assert (listed.status, listed.body["events"]) == (200, [])


def test_a_reader_reads(api: Api) -> None:
    replies = {route.operation: api(route, "reader") for route in READS}

    # Some reads name things that do not exist (404 for the run, the event…), but never the playbook.
    assert (
        wrong(
            replies,
            lambda reply: (
                reply.status == 200 or (reply.status == 404 and "has no playbook" not in reply.body["detail"])
            ),
        )
        == {}
    )
    assert replies["list_runs"].status == replies["search"].status == 200


@pytest.mark.parametrize(
    ("mode", "who"),
    [
        ("local", "nobody"),  # no Authorization header
        ("local", "stranger"),  # a token no principal holds
        ("aws", "nobody"),  # no authorizer context (API Gateway never sends one without: belt and braces)
        ("aws", "forged"),  # an authorizer context naming no one
    ],
)
def test_no_token_or_one_that_names_nobody_is_unauthenticated_with_a_challenge(
    make_api: Callable[[Mode], Api], mode: Mode, who: Caller
) -> None:
    api = make_api(mode)
    replies = {route.operation: api(route, who) for route in ROUTES}

    assert (
        wrong(
            replies,
            lambda reply: (
                is_problem(reply, 401, "unauthenticated") and reply.headers["WWW-Authenticate"] == "Bearer"
            ),
        )
        == {}
    )


def test_on_aws_the_authorizers_principal_counts_and_the_header_does_not(aws_api: Api) -> None:
    # The reader's requests carry the writer's local token in their header (``Api._name``): still 403.
    replies = {route.operation: aws_api(route, "reader") for route in WRITES}

    assert wrong(replies, lambda reply: is_problem(reply, 403, "forbidden")) == {}


# --- bodies ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("encoded", [False, True], ids=["text", "base64"])
def test_a_body_over_one_mib_is_content_too_large_on_every_route_that_takes_one(
    api: Api, encoded: bool
) -> None:
    over = json.dumps({"padding": "x" * (MAX_BODY - 10), "more": "y" * 20})
    assert len(over.encode()) > MAX_BODY
    replies = {route.operation: api(route, "writer", body=over, base64_body=encoded) for route in WITH_BODY}

    assert (
        wrong(
            replies,
            lambda reply: is_problem(reply, 413, "content_too_large") and "1 MiB" in reply.body["detail"],
        )
        == {}
    )
    assert len(replies) == 9


def test_a_body_of_exactly_one_mib_is_not_too_large(api: Api) -> None:
    exact = json.dumps({"p": ""})
    exact = json.dumps({"p": "x" * (MAX_BODY - len(exact))})
    assert len(exact.encode()) == MAX_BODY
    replies = {route.operation: api(route, "writer", body=exact) for route in WITH_BODY}

    assert wrong(replies, lambda reply: reply.status != 413) == {}


# --- secrets --------------------------------------------------------------------------------------------


def test_secrets_are_never_in_responses_problems_or_logs(
    api: Api, tools: LocalToolServer, log_lines: list[str]
) -> None:
    execute = next(r for r in ROUTES if r.operation == "execute")
    for route in ROUTES:  # every route, as every kind of caller
        for who in ("writer", "reader", "other-org", "nobody"):
            api(route, who)
    # The tool echoes the Authorization header it received, in its text and its structured content.
    echoed = api(execute, "writer")
    assert echoed.status == 200, echoed.body
    assert echoed.body["answer"] == {"authorization": "[secret]"}
    # A key the server refuses: a problem, which names the reason and not the key.
    tools.require_headers({"Authorization": "Bearer rotated"})
    refused = api(execute, "writer")
    assert (refused.status, refused.body["because"]) == (503, "key_refused")
    # Arguments holding the credential, and a request body that does.
    api(
        Route("execute", "POST", "/tool-servers/chat/tools/post_message/execute", "write"),
        body=json.dumps({"arguments": {"text": CREDENTIAL}}),
    )
    events = api(Route("list_playbook_events", "GET", "/events", "read"), "writer").body["events"]
    for event in events:
        api(Route("get_event", "GET", f"/events/{event['id']}", "read"), "writer")

    # The server did receive the key: it is used, and shown nowhere.
    assert f"Bearer {CREDENTIAL}" in {headers.get("authorization") for headers in tools.received}
    shown = "\n".join(reply.raw for reply in api.replies)
    logged = "\n".join(log_lines)
    for secret in [CREDENTIAL, *TOKENS.values()]:
        assert secret not in shown
        assert secret not in logged
    assert log_lines, "the handler logs something (else this test would prove nothing about logs)"
