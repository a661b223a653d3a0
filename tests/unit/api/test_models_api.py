"""list_models through the API's Lambda handler (http-api.md, "Models", "Model providers"), with moto and a
fake model provider on 127.0.0.1 (``tests/fake_providers.py``) configured twice: as the gateway ``internal``
(OpenAI-compatible, its key a Secrets Manager reference) and as ``anthropic`` (through
``ANTHROPIC_BASE_URL``/``ANTHROPIC_API_KEY`` in the environment, set per test)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pytest
from fake_providers import ANTHROPIC_MODELS, OPENAI_MODELS, FakeProviders, Scripted, openai_error

from parley.api.app import build_handler
from parley.clock import ManualClock
from parley.config import PROVIDER_SETTINGS, parse_operator_config
from parley.definitions.store import DynamoDefinitionStore
from parley.local.aws import local_session
from parley.models.listing import model_list_cache
from parley.ports.runtime import Runtime

MODELS = "/v1/orgs/acme/models"
ANTHROPIC_KEY = "sk-ant-env-3f9a0c21"
GATEWAY_KEY = "sk-gw-store-81d2e7b4"
TENANT_SECRET = "tenant-secret-5c0d"
START = datetime(2026, 10, 17, 10, 18, 42, tzinfo=UTC)
CREATED = int(datetime(2026, 1, 1, tzinfo=UTC).timestamp())


def operator_yaml(fake: FakeProviders) -> str:
    return f"""
principals:
  - {{ id: dev, token: dev-token, grants: [{{ org: acme, playbook: campaigns, role: write }}] }}
  - {{ id: viewer, token: viewer-token, grants: [{{ org: acme, playbook: campaigns, role: read }}] }}
  - {{ id: launcher, token: launcher-token, grants: [{{ org: acme, playbook: launches, role: write }}] }}
  - {{ id: outsider, token: outsider-token, grants: [{{ org: globex, playbook: campaigns, role: write }}] }}
models:
  allowed: [anthropic/*, internal/*, fast, smart]
  aliases:
    fast: anthropic/claude-test
    smart: internal/gpt-test
    anthropic/*: bedrock-anthropic/us.anthropic.*
  gateways:
    - name: internal
      base_url: {fake.openai_base_url}
      api_key: "{{{{resolve:secretsmanager:gateway-key}}}}"
      headers: {{ x-tenant: "{TENANT_SECRET}" }}
  catalog:
    - {{ id: internal/llama-3.3-70b, context_window: 131072, max_tokens: 8192 }}
    - {{ id: internal/gpt-test, context_window: 64000, max_tokens: 4096, name: GPT Test }}
"""


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: Any
    text: str


Call = Callable[..., Reply]


@pytest.fixture(scope="module")
def provider() -> Iterator[FakeProviders]:
    with FakeProviders() as fake:
        yield fake


@pytest.fixture
def fake(provider: FakeProviders, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeProviders]:
    """The fake provider, forgotten; the environment configuring ``anthropic`` and no other built-in
    provider; no list kept from another test."""
    provider.reset()
    for names in PROVIDER_SETTINGS.values():
        for name in names:
            monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("AWS_DEFAULT_REGION", raising=False)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", provider.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
    model_list_cache().clear()
    yield provider
    model_list_cache().clear()


@pytest.fixture
def secretsmanager(dynamodb: tuple[Any, str]) -> Any:
    client = local_session().client("secretsmanager")
    client.create_secret(Name="gateway-key", SecretString=GATEWAY_KEY)
    return client


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(START)


@pytest.fixture
def runtime(
    dynamodb: tuple[Any, str], clock: ManualClock, fake: FakeProviders, secretsmanager: Any
) -> Runtime:
    return Runtime(
        definitions=DynamoDefinitionStore(*dynamodb),
        clock=clock,
        operator=parse_operator_config(operator_yaml(fake), "test", environ={}),
        secretsmanager=secretsmanager,
    )


@pytest.fixture
def call(runtime: Runtime, load_event: Callable[[str], dict[str, Any]]) -> Call:
    handler = build_handler(runtime)

    def invoke(
        query: dict[str, str] | None = None,
        *,
        token: str | None = "dev-token",
        path: str = MODELS,
        method: str = "GET",
        authorizer: dict[str, Any] | None = None,
    ) -> Reply:
        event = load_event("api/get_definition")
        event["httpMethod"] = event["requestContext"]["httpMethod"] = method
        event["path"] = path
        event["pathParameters"] = {"proxy": path.removeprefix("/v1/")}
        event["requestContext"]["path"] = "/prod" + path
        event["queryStringParameters"] = query
        event["multiValueQueryStringParameters"] = {k: [v] for k, v in query.items()} if query else None
        del event["headers"]["Authorization"], event["multiValueHeaders"]["Authorization"]
        if token is not None:
            event["headers"]["Authorization"] = f"Bearer {token}"
            event["multiValueHeaders"]["Authorization"] = [f"Bearer {token}"]
        if authorizer is not None:
            event["requestContext"]["authorizer"] = authorizer
        result = handler(event, None)
        headers = {k: ", ".join(v) for k, v in (result.get("multiValueHeaders") or {}).items()}
        text = result["body"]
        return Reply(result["statusCode"], headers, json.loads(text) if text else None, text)

    return invoke


def problem(reply: Reply, status: int, reason: str) -> dict[str, Any]:
    assert reply.status == status, reply.body
    assert reply.headers["Content-Type"] == "application/problem+json"
    assert reply.body["reason"] == reason
    body: dict[str, Any] = reply.body
    return body


def ids(reply: Reply) -> list[str]:
    assert reply.status == 200, reply.body
    return [entry["id"] for entry in reply.body["data"]]


def listed(fake: FakeProviders) -> list[str]:
    """Which lists the fake was asked for: ``anthropic`` or ``openai`` (the gateway), in order."""
    return [
        "anthropic" if "anthropic-version" in request.headers else "openai"
        for request in fake.requests_to("/v1/models")
    ]


def test_the_list(call: Call, fake: FakeProviders) -> None:
    reply = call()

    assert reply.status == 200, reply.body
    assert reply.headers["Content-Type"] == "application/json"
    assert reply.headers["Cache-Control"] == "no-store"
    assert reply.body["object"] == "list"
    assert reply.body["catalog_status"] == "complete"
    assert reply.body["listed_at"] == "2026-10-17T10:18:42.000Z"
    model = {"object": "model"}
    assert reply.body["data"] == [
        {**model, "id": "anthropic/*", "created": 0, "owned_by": "anthropic", "pattern": True,
         "resolved_to": "bedrock-anthropic/us.anthropic.*"},
        {**model, "id": "anthropic/claude-test", "created": CREATED, "owned_by": "anthropic",
         "name": "Claude Test"},
        {**model, "id": "fast", "created": CREATED, "owned_by": "anthropic",
         "resolved_to": "anthropic/claude-test", "name": "Claude Test"},
        {**model, "id": "internal/*", "created": 0, "owned_by": "internal", "pattern": True},
        # listed by the gateway; the catalog's window, limit and name win
        {**model, "id": "internal/gpt-test", "created": 1_767_225_600, "owned_by": "fake",
         "context_window": 64000, "max_tokens": 4096, "name": "GPT Test"},
        # only in the catalog
        {**model, "id": "internal/llama-3.3-70b", "created": 0, "owned_by": "internal",
         "context_window": 131072, "max_tokens": 8192},
        {**model, "id": "smart", "created": 1_767_225_600, "owned_by": "fake",
         "resolved_to": "internal/gpt-test", "name": "GPT Test", "context_window": 64000,
         "max_tokens": 4096},
    ]  # fmt: skip
    assert sorted(listed(fake)) == ["anthropic", "openai"]


def test_the_secrets_reach_the_providers_headers_and_nothing_else(call: Call, fake: FakeProviders) -> None:
    reply = call()

    assert reply.status == 200, reply.body
    for secret in (ANTHROPIC_KEY, GATEWAY_KEY, TENANT_SECRET, "gateway-key", "resolve:secretsmanager"):
        assert secret not in reply.text
    assert fake.sent_anywhere(ANTHROPIC_KEY) == [f"{listed(fake).index('anthropic')} header x-api-key"]
    gateway = listed(fake).index("openai")
    assert fake.sent_anywhere(GATEWAY_KEY) == [f"{gateway} header authorization"]
    assert fake.requests[gateway].headers["authorization"] == f"Bearer {GATEWAY_KEY}"
    assert fake.sent_anywhere(TENANT_SECRET) == [f"{gateway} header x-tenant"]


def test_the_provider_query(call: Call, fake: FakeProviders) -> None:
    assert ids(call({"provider": "internal"})) == [
        "internal/*",
        "internal/gpt-test",
        "internal/llama-3.3-70b",
        "smart",
    ]
    assert listed(fake) == ["openai"]  # only the provider asked for is read
    assert ids(call({"provider": "anthropic"})) == ["anthropic/*", "anthropic/claude-test", "fast"]
    assert listed(fake) == ["openai", "anthropic"]


@pytest.mark.parametrize("value", ["openai", "bedrock-anthropic", "nobody", "x" * 300])
def test_a_provider_that_is_not_configured_is_a_bad_request(
    call: Call, fake: FakeProviders, value: str
) -> None:
    detail = problem(call({"provider": value}), 400, "bad_request")["detail"]
    assert "anthropic, internal" in detail
    assert len(detail) < 200
    assert listed(fake) == []


def test_an_empty_provider_is_a_bad_request(call: Call) -> None:
    problem(call({"provider": ""}), 400, "bad_request")


def test_the_lists_are_kept_five_minutes(call: Call, fake: FakeProviders, clock: ManualClock) -> None:
    first = call()
    clock.advance(299)
    assert call().body == first.body
    assert sorted(listed(fake)) == ["anthropic", "openai"]

    fake.set_default(
        OPENAI_MODELS,
        Scripted(body={"object": "list", "data": [{"id": "gpt-next", "object": "model", "created": 7}]}),
    )
    clock.advance(1)
    again = call()
    assert sorted(listed(fake)) == ["anthropic", "anthropic", "openai", "openai"]
    assert "internal/gpt-next" in ids(again)
    assert again.body["listed_at"] == "2026-10-17T10:23:42.000Z"


def test_a_provider_that_fails_makes_the_list_partial(
    call: Call, fake: FakeProviders, clock: ManualClock
) -> None:
    fake.set_default(OPENAI_MODELS, openai_error(401, "Incorrect API key provided"))

    reply = call()

    assert reply.status == 200, reply.body
    assert reply.body["catalog_status"] == "partial"
    # what the gateway would have listed is missing; the catalog, the patterns and the aliases remain
    assert ids(reply) == [
        "anthropic/*",
        "anthropic/claude-test",
        "fast",
        "internal/*",
        "internal/gpt-test",
        "internal/llama-3.3-70b",
        "smart",
    ]
    assert reply.body["data"][4]["created"] == 0
    assert "Incorrect API key" not in reply.text and GATEWAY_KEY not in reply.text

    assert call({"provider": "anthropic"}).body["catalog_status"] == "complete"

    fake.reset()  # the gateway is back; it is asked again once the failure is 30 seconds old
    assert call().body["catalog_status"] == "partial"
    clock.advance(30)
    assert call().body["catalog_status"] == "complete"


def test_the_last_good_list_serves_while_a_provider_fails(
    call: Call, fake: FakeProviders, clock: ManualClock
) -> None:
    call()
    clock.advance(600)
    fake.set_default(
        ANTHROPIC_MODELS, Scripted(401, {"type": "error", "error": {"type": "authentication_error"}})
    )
    fake.set_default(OPENAI_MODELS, openai_error(403, "forbidden"))

    reply = call()

    assert reply.body["catalog_status"] == "complete"
    assert "anthropic/claude-test" in ids(reply) and "internal/gpt-test" in ids(reply)
    assert reply.body["listed_at"] == "2026-10-17T10:18:42.000Z"  # the time of the lists used


def test_a_gateway_secret_that_cannot_be_read_makes_the_list_partial(
    call: Call, fake: FakeProviders, secretsmanager: Any
) -> None:
    secretsmanager.delete_secret(SecretId="gateway-key", ForceDeleteWithoutRecovery=True)

    reply = call()

    assert reply.status == 200, reply.body
    assert reply.body["catalog_status"] == "partial"
    assert "gateway-key" not in reply.text
    assert listed(fake) == ["anthropic"]


def test_a_reader_and_a_writer_of_another_playbook_may_read_it(call: Call) -> None:
    everything = ids(call())
    assert ids(call(token="viewer-token")) == everything
    assert ids(call(token="launcher-token")) == everything
    assert ids(call(token=None, authorizer={"principalId": "launcher"})) == everything


def test_a_principal_of_another_org_finds_nothing(call: Call, fake: FakeProviders) -> None:
    hidden = problem(call(token="outsider-token"), 404, "not_found")
    absent = problem(call(path="/v1/orgs/nobody/models"), 404, "not_found")
    assert (hidden["detail"], absent["detail"]) == ("There is no org 'acme'.", "There is no org 'nobody'.")
    problem(call(token=None, authorizer={"principalId": "someone-unknown"}), 404, "not_found")
    assert listed(fake) == []

    assert ids(call(token="outsider-token", path="/v1/orgs/globex/models"))  # its own org


def test_no_token_or_a_wrong_one_is_unauthenticated(call: Call, fake: FakeProviders) -> None:
    for token in (None, "not-a-token"):
        reply = call(token=token)
        problem(reply, 401, "unauthenticated")
        assert reply.headers["WWW-Authenticate"] == "Bearer"
    assert listed(fake) == []


def test_other_methods_are_not_allowed(call: Call) -> None:
    reply = call(method="POST")
    problem(reply, 405, "method_not_allowed")
    assert reply.headers["Allow"] == "GET, HEAD"


def test_the_api_module_loads_no_listing_and_no_provider_code() -> None:
    script = (
        "import json, sys\nimport parley.api.app, parley.api.models\nprint(json.dumps(sorted(sys.modules)))"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    loaded = set(json.loads(result.stdout))
    assert "parley.api.models" in loaded
    assert loaded.isdisjoint(
        [
            "parley.models.listing",
            "parley.models.catalog",
            "parley.models.providers",
            "parley.models.secrets",
            "httpx",
            "boto3",
        ]
    )
