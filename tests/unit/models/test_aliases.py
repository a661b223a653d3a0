"""Resolving a model reference (http-api.md, "Model providers") and the words of the two rejections
(reasoning-format.md, "How a run ends", "What the rejections say")."""

from __future__ import annotations

import pytest

from parley.config import ModelsConfig
from parley.models.aliases import (
    MODEL_NOT_ALLOWED,
    MODEL_NOT_OFFERED,
    PROVIDER_NOT_CONFIGURED,
    Resolved,
    UnknownModelReference,
    apply_alias,
    is_allowed,
    model_not_allowed,
    not_allowed_detail,
    not_configured_detail,
    provider_not_configured,
    resolve_reference,
)

SPEC = ModelsConfig(
    allowed=("anthropic/*", "demo/*"),
    aliases={"fast": "anthropic/claude-haiku-4-5", "anthropic/*": "bedrock-anthropic/us.anthropic.*"},
)


def test_a_reference_without_aliases_splits_at_the_first_slash() -> None:
    resolved = resolve_reference("internal/meta/llama-3.3-70b", ModelsConfig())

    assert resolved == Resolved(
        requested="internal/meta/llama-3.3-70b",
        resolved="internal/meta/llama-3.3-70b",
        provider="internal",
        model_id="meta/llama-3.3-70b",
    )


def test_an_exact_alias() -> None:
    assert resolve_reference("fast", SPEC) == Resolved(
        "fast", "anthropic/claude-haiku-4-5", "anthropic", "claude-haiku-4-5"
    )


def test_a_wildcard_alias_keeps_the_rest_of_the_reference() -> None:
    assert resolve_reference("anthropic/claude-sonnet-4-5", SPEC) == Resolved(
        "anthropic/claude-sonnet-4-5",
        "bedrock-anthropic/us.anthropic.claude-sonnet-4-5",
        "bedrock-anthropic",
        "us.anthropic.claude-sonnet-4-5",
    )


def test_one_hop_only() -> None:
    # fast -> anthropic/claude-haiku-4-5, which the wildcard alias would change again: it does not.
    assert resolve_reference("fast", SPEC).resolved == "anthropic/claude-haiku-4-5"
    looping = ModelsConfig(aliases={"a/*": "b/*", "b/*": "a/*"})
    assert resolve_reference("a/x", looping).resolved == "b/x"
    assert resolve_reference("b/x", looping).resolved == "a/x"


def test_the_exact_alias_wins_over_a_wildcard() -> None:
    config = ModelsConfig(
        aliases={"anthropic/*": "bedrock-anthropic/us.anthropic.*", "anthropic/x": "openai/y"}
    )

    assert resolve_reference("anthropic/x", config).resolved == "openai/y"
    assert resolve_reference("anthropic/z", config).resolved == "bedrock-anthropic/us.anthropic.z"


def test_the_longest_wildcard_prefix_wins_whatever_the_order() -> None:
    aliases = {
        "anthropic/*": "bedrock-anthropic/us.anthropic.*",
        "anthropic/claude-haiku-*": "vertex-anthropic/claude-haiku-*",
        "anthropic/claude-*": "anthropic/claude-*",
    }
    for ordered in (aliases, dict(reversed(aliases.items()))):
        config = ModelsConfig(aliases=ordered)
        assert resolve_reference("anthropic/claude-haiku-4-5", config).resolved == (
            "vertex-anthropic/claude-haiku-4-5"
        )
        assert resolve_reference("anthropic/claude-opus-4", config).resolved == "anthropic/claude-opus-4"
        assert resolve_reference("anthropic/other", config).resolved == "bedrock-anthropic/us.anthropic.other"


def test_a_wildcard_stands_for_at_least_one_character() -> None:
    assert apply_alias("anthropic/", SPEC.aliases) == "anthropic/"
    assert apply_alias("anthropic", SPEC.aliases) == "anthropic"
    assert apply_alias("openai/gpt-5", SPEC.aliases) == "openai/gpt-5"


@pytest.mark.parametrize("reference", ["slow", "anthropic/", "/claude", ""])
def test_a_reference_that_names_no_provider_and_model(reference: str) -> None:
    with pytest.raises(UnknownModelReference) as caught:
        resolve_reference(reference, SPEC)

    assert caught.value.reference == reference
    assert "fast → anthropic/claude-haiku-4-5" in str(caught.value)


def test_allowed_as_written_or_as_the_alias_made_it() -> None:
    resolved = resolve_reference("anthropic/claude-sonnet-4-5", SPEC)
    assert is_allowed(resolved.requested, resolved.resolved, SPEC)  # as written: anthropic/*

    only_bedrock = ModelsConfig(allowed=("bedrock-anthropic/*",), aliases=SPEC.aliases)
    assert is_allowed(resolved.requested, resolved.resolved, only_bedrock)  # as resolved

    fast = resolve_reference("fast", SPEC)
    only_fast = ModelsConfig(allowed=("fast",), aliases=SPEC.aliases)
    assert is_allowed(fast.requested, fast.resolved, only_fast)  # the alias itself
    only_haiku = ModelsConfig(allowed=("anthropic/claude-haiku-4-5",), aliases=SPEC.aliases)
    assert is_allowed(fast.requested, fast.resolved, only_haiku)


def test_outside_the_allowed_models() -> None:
    assert not is_allowed("openai/gpt-5", "openai/gpt-5", SPEC)
    assert not is_allowed("demo", "demo", SPEC)
    assert not is_allowed("demo/", "demo/", SPEC)
    assert not is_allowed("demo-2/echo", "demo-2/echo", SPEC)  # demo/* is not a prefix of demo-2/…
    assert is_allowed("demo/echo", "demo/echo", SPEC)
    exact = ModelsConfig(allowed=("openai/gpt-5",))
    assert is_allowed("openai/gpt-5", "openai/gpt-5", exact)
    assert not is_allowed("openai/gpt-5-mini", "openai/gpt-5-mini", exact)
    assert not is_allowed("openai/gpt-5", "openai/gpt-5", ModelsConfig(allowed=()))


def test_without_allowed_everything_is_allowed() -> None:
    assert is_allowed("anything/at-all", "anything/at-all", ModelsConfig())


def test_a_prefix_wildcard_that_is_not_a_whole_provider() -> None:
    config = ModelsConfig(allowed=("openai/gpt-5*",))

    assert is_allowed("openai/gpt-5-mini", "openai/gpt-5-mini", config)
    assert not is_allowed("openai/gpt-4o", "openai/gpt-4o", config)


def test_the_not_allowed_rejection() -> None:
    problem = model_not_allowed("fast", "anthropic/claude-haiku-4-5")

    assert (problem.reason, problem.status, problem.kind, problem.because) == (
        "unavailable", 503, MODEL_NOT_OFFERED, MODEL_NOT_ALLOWED
    )  # fmt: skip
    assert problem.detail == not_allowed_detail("fast", "anthropic/claude-haiku-4-5")
    assert "'fast' (resolved to 'anthropic/claude-haiku-4-5')" in problem.detail
    assert "nothing was sent" in problem.detail
    assert "resolved to" not in not_allowed_detail("openai/gpt-5", "openai/gpt-5")
    assert problem.as_json()["because"] == "model_not_allowed"


def test_the_not_configured_rejection_names_the_provider_the_configured_ones_and_the_aliases() -> None:
    detail = not_configured_detail("openai", ["demo", "anthropic", "demo"], SPEC.aliases)

    assert detail == (
        "The provider 'openai' is not configured here. Configured providers: anthropic, demo. "
        "Aliases: anthropic/* → bedrock-anthropic/us.anthropic.*, fast → anthropic/claude-haiku-4-5."
    )
    problem = provider_not_configured("openai", ["anthropic"], SPEC.aliases)
    assert (problem.reason, problem.kind, problem.because) == (
        "unavailable", MODEL_NOT_OFFERED, PROVIDER_NOT_CONFIGURED
    )  # fmt: skip


def test_with_no_provider_configured_the_rejection_is_plain_unavailable() -> None:
    problem = provider_not_configured("openai", [], {})

    assert (problem.reason, problem.kind, problem.because) == ("unavailable", None, None)
    assert (
        problem.detail
        == "The provider 'openai' is not configured here. Configured providers: none. Aliases: none."
    )


@pytest.mark.parametrize(
    "setting", ["OPENAI_API_KEY", "ANTHROPIC", "API_KEY", "models.", "gateways", "providers.", "environment"]
)
def test_neither_rejection_names_a_setting(setting: str) -> None:
    words = [
        not_configured_detail("openai", ["anthropic", "demo"], SPEC.aliases),
        not_configured_detail("openai", [], {}),
        not_allowed_detail("fast", "anthropic/claude-haiku-4-5"),
    ]

    assert all(setting not in detail for detail in words)
