"""A reasoning function whose model this server would not call is saved with a warning (issue 29, item
4), end to end through ``parley serve``: the provider not configured (naming the configured providers
and the aliases), the model outside ``allowed``; none for a model the server calls, also through an
alias or a provider configured by its environment; the run still decides."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from provider_settings import PROVIDER_SETTINGS
from tool_serving import BASE, WRITER, serving_with

pytestmark = pytest.mark.http


OPERATOR = """
principals:
  - { id: dev, token: dev-token, grants: [{ org: acme, playbook: campaigns, role: write }] }
models:
  allowed: [demo/*, team/fast, openai/*, anthropic/*]
  aliases: { team/fast: demo/echo }
  gateways:
    - { name: demo, base_url: 'http://127.0.0.1:9/v1' }
"""


def source(model: str) -> str:
    return f"""\
---
description: Reviews a brief
model: {model}
---
Review: {{{{ input.brief | default: "none" }}}}
"""


@pytest.fixture(scope="module")
def http(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    with pytest.MonkeyPatch.context() as env:
        for name in PROVIDER_SETTINGS:
            env.delenv(name, raising=False)
        env.setenv("OPENAI_API_KEY", "sk-model-warnings")  # openai configured by the environment
        with (
            serving_with(tmp_path_factory.mktemp("model-warnings"), OPERATOR) as url,
            httpx.Client(base_url=url + BASE, headers=WRITER, timeout=60) as client,
        ):
            yield client


def saved(http: httpx.Client, name: str, model: str) -> dict[str, Any]:
    reply = http.post("/definitions/reasoning", json={"name": name, "source": source(model)})
    assert reply.status_code == 201, reply.text
    body: dict[str, Any] = reply.json()
    return body


def test_a_provider_not_configured_here_is_a_warning_naming_the_configured_ones(http: httpx.Client) -> None:
    body = saved(http, "on-anthropic", "anthropic/claude-sonnet-4-5")

    assert body["warnings"] == [
        "Line 3, /model: the provider 'anthropic' of the model 'anthropic/claude-sonnet-4-5' is not "
        "configured on this server; a run ends unavailable (model_not_offered, provider_not_configured) "
        "until the operator configures it. Configured providers: demo, openai. "
        "Aliases: team/fast → demo/echo."
    ]
    read = http.get("/definitions/reasoning/on-anthropic").json()
    assert read["warnings"] == body["warnings"]
    assert "sk-model-warnings" not in str(body)


def test_the_run_still_decides(http: httpx.Client) -> None:
    saved(http, "still-decides", "anthropic/claude-sonnet-4-5")

    run = http.post("/definitions/reasoning/still-decides/run", json={"input": {}})

    assert run.status_code == 503, run.text
    assert (run.json()["kind"], run.json()["because"]) == ("model_not_offered", "provider_not_configured")


def test_a_model_outside_allowed_is_a_warning(http: httpx.Client) -> None:
    body = saved(http, "not-allowed", "google/gemini-2.5-pro")

    assert body["warnings"] == [
        "Line 3, /model: the model 'google/gemini-2.5-pro' is not among the models offered on this server; "
        "a run ends unavailable (model_not_offered, model_not_allowed) unless the operator offers it"
    ]


@pytest.mark.parametrize(
    ("name", "model"),
    [("by-gateway", "demo/echo"), ("by-alias", "team/fast"), ("by-environment", "openai/gpt-5")],
)
def test_a_model_the_server_calls_has_no_warning(http: httpx.Client, name: str, model: str) -> None:
    body = saved(http, name, model)

    assert body["warnings"] == []


def test_a_provider_configured_by_its_environment_has_no_warning(tmp_path: Path) -> None:
    with pytest.MonkeyPatch.context() as env:
        env.setenv("ANTHROPIC_API_KEY", "sk-ant-model-warnings")
        with (
            serving_with(tmp_path, OPERATOR) as url,
            httpx.Client(base_url=url + BASE, headers=WRITER, timeout=60) as client,
        ):
            assert saved(client, "keyed", "anthropic/claude-sonnet-4-5")["warnings"] == []
