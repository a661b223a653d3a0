"""list_models end to end: a real ``parley serve`` whose operator configuration names a fake model provider
(``tests/fake_providers.py``, on 127.0.0.1) as the gateway ``internal`` (http-api.md, "Models", "Model
providers"). What a client sees: the gateway's models, the catalog's entries, the aliases, and no key."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest
from fake_providers import FakeProviders
from tool_serving import serving_with

from parley.config import PROVIDER_SETTINGS

pytestmark = pytest.mark.http

GATEWAY_KEY = "sk-gw-http-6a91d03e"
MODELS = "/v1/orgs/acme/models"


@dataclass
class Served:
    url: str
    fake: FakeProviders


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    tmp = tmp_path_factory.mktemp("serve-models")
    with FakeProviders() as fake, pytest.MonkeyPatch.context() as environment:
        for names in PROVIDER_SETTINGS.values():  # no built-in provider: only the gateway is configured
            for name in names:
                environment.delenv(name, raising=False)
        operator = f"""
principals:
  - {{ id: dev, token: dev-token, grants: [{{ org: acme, playbook: campaigns, role: write }}] }}
  - {{ id: viewer, token: viewer-token, grants: [{{ org: acme, playbook: launches, role: read }}] }}
  - {{ id: outsider, token: outsider-token, grants: [{{ org: globex, playbook: campaigns, role: write }}] }}
models:
  aliases: {{ smart: internal/gpt-test }}
  gateways:
    - {{ name: internal, base_url: "{fake.openai_base_url}", api_key: "{GATEWAY_KEY}" }}
  catalog:
    - {{ id: internal/llama-3.3-70b, context_window: 131072, max_tokens: 8192 }}
"""
        with serving_with(tmp, operator) as url:
            yield Served(url, fake)


def get(served: Served, token: str | None, **params: str) -> httpx.Response:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx.get(served.url + MODELS, headers=headers, params=params, timeout=60)


def test_the_gateways_models_and_the_catalog(served: Served) -> None:
    reply = get(served, "dev-token")

    assert reply.status_code == 200, reply.text
    assert reply.headers["cache-control"] == "no-store"
    body = reply.json()
    assert (body["object"], body["catalog_status"]) == ("list", "complete")
    assert [entry["id"] for entry in body["data"]] == ["internal/gpt-test", "internal/llama-3.3-70b", "smart"]
    gpt, llama, smart = body["data"]
    assert gpt == {"id": "internal/gpt-test", "object": "model", "created": 1_767_225_600, "owned_by": "fake"}
    assert (llama["context_window"], llama["max_tokens"]) == (131072, 8192)
    assert smart["resolved_to"] == "internal/gpt-test"
    assert GATEWAY_KEY not in reply.text

    sent = served.fake.requests_to("/v1/models")
    assert sent and sent[0].headers["authorization"] == f"Bearer {GATEWAY_KEY}"

    assert [entry["id"] for entry in get(served, "viewer-token", provider="internal").json()["data"]] == [
        "internal/gpt-test",
        "internal/llama-3.3-70b",
        "smart",
    ]


def test_who_may_not_read_it(served: Served) -> None:
    assert get(served, None).status_code == 401
    hidden = get(served, "outsider-token")
    assert hidden.status_code == 404
    assert hidden.headers["content-type"] == "application/problem+json"
    unknown = get(served, "dev-token", provider="anthropic")
    assert unknown.status_code == 400
    assert "internal" in unknown.json()["detail"]
