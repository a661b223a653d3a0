"""The save-time warning about a reasoning function's model (issue 29, item 4): the run's own checks,
in the run's order, on what the server knows when the document is saved."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from parley.config import Gateway, ModelsConfig, OperatorConfig
from parley.reasoning.model_warnings import ModelsInUse, model_warning, model_warnings_here

GATEWAY = Gateway(name="internal", base_url="http://127.0.0.1:9/v1")


def warning(reference: str, config: ModelsConfig, environ: dict[str, str] | None = None) -> str | None:
    return model_warning(reference, ModelsInUse(config, environ or {}))


def test_a_provider_configured_by_the_environment_or_a_gateway_is_no_warning() -> None:
    config = ModelsConfig(gateways=(GATEWAY,))

    assert warning("anthropic/claude-sonnet-4-5", config, {"ANTHROPIC_API_KEY": "sk-ant-x"}) is None
    assert warning("internal/llama-3.3-70b", config) is None


def test_a_provider_not_configured_names_the_configured_ones_and_the_aliases() -> None:
    config = ModelsConfig(gateways=(GATEWAY,), aliases={"team/fast": "internal/llama-3.3-70b"})

    said = warning("openai/gpt-5", config, {"ANTHROPIC_API_KEY": "sk-ant-secret-1"})

    assert said == (
        "the provider 'openai' of the model 'openai/gpt-5' is not configured on this server; a run ends "
        "unavailable (model_not_offered, provider_not_configured) until the operator configures it. "
        "Configured providers: anthropic, internal. Aliases: team/fast → internal/llama-3.3-70b."
    )
    assert "sk-ant-secret-1" not in said and "ANTHROPIC_API_KEY" not in said


def test_an_alias_is_followed_before_the_provider_is_asked() -> None:
    config = ModelsConfig(aliases={"anthropic/*": "internal/*"})

    assert (
        warning(
            "anthropic/claude-x", ModelsConfig(aliases={"anthropic/*": "internal/*"}, gateways=(GATEWAY,))
        )
        is None
    )
    said = warning("anthropic/claude-x", config)
    assert said is not None
    assert said.startswith("the provider 'internal' of the model 'anthropic/claude-x' (the alias makes it ")
    assert "Configured providers: none. Aliases: anthropic/* → internal/*." in said


def test_a_model_outside_allowed_is_said_before_the_provider() -> None:
    config = ModelsConfig(allowed=("internal/*",), gateways=(GATEWAY,))

    assert warning("internal/llama-3.3-70b", config) is None
    assert warning("anthropic/claude-x", config) == (
        "the model 'anthropic/claude-x' is not among the models offered on this server; a run ends "
        "unavailable (model_not_offered, model_not_allowed) unless the operator offers it"
    )


@pytest.mark.parametrize(
    "source",
    ["not a document", "---\nmodel: [1]\n---\nHi\n", "---\ndescription: no model\n---\nHi\n"],
)
def test_a_document_without_a_model_reference_has_no_warning(source: str) -> None:
    runtime: Any = SimpleNamespace(operator=OperatorConfig(), environ={})

    assert model_warnings_here(runtime, source) == []


def test_the_warning_names_the_models_line() -> None:
    runtime: Any = SimpleNamespace(operator=OperatorConfig(), environ={})

    (found,) = model_warnings_here(runtime, "---\ndescription: Reviews\nmodel: openai/gpt-5\n---\nHi\n")

    assert (found.line, found.pointer) == (3, "/model")
    assert str(found).startswith("Line 3, /model: the provider 'openai' ")
