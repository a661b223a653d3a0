"""Provider options (reasoning-format.md, "Provider options" and "Options for a gateway")."""

from __future__ import annotations

from typing import Any

import pytest

from parley.errors import Problem
from parley.reasoning.provider_options import (
    NEVER_OFFERED,
    OFFERED,
    camel_case,
    check_provider_options,
    gateway_options,
    namespaces_read,
    options_for,
    unread_namespaces,
)


def refusals(options: Any) -> list[tuple[str, str]]:
    return check_provider_options(options)


# --- saving ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("namespace", "options"),
    [
        ("anthropic", {"thinking": {"type": "enabled", "budgetTokens": 2000, "display": "summarized"}}),
        ("openai", {"textVerbosity": "low", "reasoningMode": "auto", "logitBias": {"50256": -100}}),
        ("azure", {"textVerbosity": "high"}),
        ("google", {"thinkingConfig": {"thinkingBudget": 1024}, "safetySettings": [], "threshold": "x"}),
        ("vertex", {"thinkingConfig": {}}),
        ("googleVertex", {"thinkingConfig": {}, "thinking": {"type": "disabled"}}),
        ("amazonBedrock", {"reasoningConfig": {"type": "enabled"}}),
        ("bedrock", {"reasoningConfig": {}}),
    ],
)
def test_the_offered_options_are_saved(namespace: str, options: dict[str, Any]) -> None:
    assert refusals({namespace: options}) == []


def test_the_table_of_offered_options() -> None:
    assert set(OFFERED) == {
        "anthropic",
        "openai",
        "azure",
        "google",
        "vertex",
        "googleVertex",
        "amazonBedrock",
        "bedrock",
    }
    assert not set(NEVER_OFFERED) & set().union(*OFFERED.values())


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("effort", "the front matter sets it"),
        ("reasoningEffort", "the front matter sets it"),
        ("maxOutputTokens", "the front matter sets it"),
        ("structuredOutputMode", "the front matter sets it"),
        ("user", "credentials, endpoints and attribution are the operator's, not a function's"),
        ("metadata", "credentials, endpoints and attribution are the operator's, not a function's"),
        ("labels", "credentials, endpoints and attribution are the operator's, not a function's"),
        ("apiKey", "credentials, endpoints and attribution are the operator's, not a function's"),
        ("store", "it stores or reuses state on the operator's account"),
        ("previousResponseId", "it stores or reuses state on the operator's account"),
        ("conversation", "it stores or reuses state on the operator's account"),
        ("container", "it stores or reuses state on the operator's account"),
        ("cacheControl", "it stores or reuses state on the operator's account"),
        ("cachedContent", "it stores or reuses state on the operator's account"),
        ("promptCacheKey", "it stores or reuses state on the operator's account"),
        ("promptCacheRetention", "it stores or reuses state on the operator's account"),
        ("serviceTier", "routing, fallbacks, capacity and service tiers are the operator's"),
        ("fallbacks", "routing, fallbacks, capacity and service tiers are the operator's"),
        ("anthropicBeta", "request headers and betas are the runtime's to send"),
        ("mcpServers", "a function names its tools in tools, and the runtime sends them"),
        ("additionalModelRequestFields", "raw request fields would reach the provider unchecked"),
        ("prediction", "raw request fields would reach the provider unchecked"),
        ("truncation", "the runtime manages the run's conversation"),
        ("logprobs", "the runtime does not read that output"),
        ("reasoningSummary", "the runtime does not read that output"),
        ("systemMessageMode", "it changes how the runtime sends the prompt"),
        ("forceReasoning", "it changes how the runtime sends the prompt"),
    ],
)
def test_what_is_never_offered_is_refused_with_its_reason(name: str, reason: str) -> None:
    for namespace in OFFERED:
        assert refusals({namespace: {name: 1}}) == [
            (f"/provider_options/{namespace}/{name}", f"{name} is not offered: {reason}")
        ]


def test_the_pages_example_refusal() -> None:
    assert refusals({"anthropic": {"effort": "high"}}) == [
        ("/provider_options/anthropic/effort", "effort is not offered: the front matter sets it")
    ]


def test_an_option_not_yet_reviewed() -> None:
    assert refusals({"anthropic": {"topK": 5}, "openai": {"thinking": {}}}) == [
        (
            "/provider_options/anthropic/topK",
            "topK is not offered: an option is offered only once it is reviewed and listed; "
            "anthropic offers thinking",
        ),
        (
            "/provider_options/openai/thinking",
            "thinking is not offered: an option is offered only once it is reviewed and listed; "
            "openai offers logitBias, reasoningMode and textVerbosity",
        ),
    ]


def test_the_names_inside_thinking() -> None:
    assert refusals({"googleVertex": {"thinking": {"type": "enabled", "budget_tokens": 1}}}) == [
        (
            "/provider_options/googleVertex/thinking/budget_tokens",
            "budget_tokens is not offered: thinking takes only type, budgetTokens and display",
        )
    ]
    assert refusals({"anthropic": {"thinking": "enabled"}}) == [
        ("/provider_options/anthropic/thinking", "Expected a mapping of type, budgetTokens and display")
    ]


@pytest.mark.parametrize(
    "namespace", ["My_Gateway", "Gateway", "9lives", "my gateway", "a" * 33, "my_gateway", ""]
)
def test_a_namespace_neither_a_providers_nor_a_gateways(namespace: str) -> None:
    [(pointer, message)] = refusals({namespace: {}})
    assert pointer == "/provider_options/" + namespace
    assert message == (
        f"{namespace} is not offered: a namespace is a provider's, such as anthropic, or a gateway's name, "
        "a lowercase letter then up to 31 letters, digits and hyphens"
    )


@pytest.mark.parametrize("namespace", ["internal", "my-gateway", "myGateway", "openaiCompatible", "a" * 32])
def test_a_gateway_namespace_is_saved_whatever_it_holds(namespace: str) -> None:
    assert refusals({namespace: {"user": "x", "metadata": {}, "temperature": 1}}) == []


def test_a_namespace_holds_a_mapping() -> None:
    assert refusals({"anthropic": [1], "internal": "x"}) == [
        ("/provider_options/anthropic", "Expected a mapping of the options under anthropic"),
        ("/provider_options/internal", "Expected a mapping of the options under internal"),
    ]
    assert refusals([]) == [
        ("/provider_options", "Expected a mapping of namespaces, such as anthropic, each holding its options")
    ]


# --- which namespaces a model reads ----------------------------------------------------------------------

EVERY: dict[str, Any] = {
    "anthropic": {"thinking": {"type": "enabled"}},
    "openai": {"textVerbosity": "low"},
    "azure": {"textVerbosity": "high"},
    "google": {"threshold": "g"},
    "vertex": {"threshold": "v"},
    "googleVertex": {"threshold": "gv"},
    "amazonBedrock": {"reasoningConfig": "ab"},
    "bedrock": {"reasoningConfig": "b"},
}


def without(*names: str) -> dict[str, Any]:
    return {key: value for key, value in EVERY.items() if key not in names}


@pytest.mark.parametrize(
    ("kind", "options", "read"),
    [
        ("anthropic", EVERY, ["anthropic"]),
        ("openai", EVERY, ["openai"]),
        ("azure", EVERY, ["azure"]),
        ("azure", without("azure"), ["openai"]),
        ("azure", {**EVERY, "azure": {}}, ["openai"]),
        ("google", EVERY, ["google"]),
        ("vertex", EVERY, ["vertex", "googleVertex"]),
        ("vertex", without("vertex"), ["vertex", "googleVertex"]),
        ("vertex", without("vertex", "googleVertex"), ["google"]),
        ("vertex-anthropic", EVERY, ["anthropic", "googleVertex"]),
        ("vertex-anthropic", {}, ["anthropic", "googleVertex"]),
        ("bedrock", EVERY, ["amazonBedrock"]),
        ("bedrock", without("amazonBedrock"), ["bedrock"]),
        ("bedrock-anthropic", EVERY, ["anthropic", "bedrock"]),
        ("gateway", EVERY, ["my-gateway", "myGateway", "openaiCompatible"]),
    ],
)
def test_the_namespaces_each_kind_reads(kind: str, options: dict[str, Any], read: list[str]) -> None:
    assert namespaces_read(kind, "my-gateway" if kind == "gateway" else kind, options) == read


def test_an_unknown_kind() -> None:
    with pytest.raises(ValueError, match="no provider kind"):
        namespaces_read("mistral", "mistral", {})


@pytest.mark.parametrize(
    ("kind", "options", "expected"),
    [
        ("anthropic", EVERY, {"thinking": {"type": "enabled"}}),
        ("azure", EVERY, {"textVerbosity": "high"}),
        ("azure", without("azure"), {"textVerbosity": "low"}),
        ("vertex", EVERY, {"threshold": "gv"}),
        ("vertex", without("vertex", "googleVertex"), {"threshold": "g"}),
        ("vertex-anthropic", EVERY, {"thinking": {"type": "enabled"}, "threshold": "gv"}),
        ("bedrock", EVERY, {"reasoningConfig": "ab"}),
        ("bedrock", without("amazonBedrock"), {"reasoningConfig": "b"}),
        ("bedrock-anthropic", EVERY, {"thinking": {"type": "enabled"}, "reasoningConfig": "b"}),
        ("openai", {}, {}),
    ],
)
def test_options_for_each_kind(kind: str, options: dict[str, Any], expected: dict[str, Any]) -> None:
    assert options_for(kind, kind, options) == expected


# --- gateways --------------------------------------------------------------------------------------------


def test_camel_case() -> None:
    assert camel_case("my-gateway") == "myGateway"
    assert camel_case("internal") == "internal"
    assert camel_case("a-b-c2") == "aBC2"


def test_a_gateways_fields_under_its_name_its_camel_case_and_user_from_openai_compatible() -> None:
    options = {
        "my-gateway": {"metadata": {"team": "x"}},
        "myGateway": {"budget": 3},
        "openaiCompatible": {"user": "ana"},
        "anthropic": {"thinking": {}},
    }
    fields = gateway_options("my-gateway", ["metadata", "budget", "user"], options)
    assert fields == {"metadata": {"team": "x"}, "budget": 3, "user": "ana"}
    assert options_for("gateway", "my-gateway", options) == fields


def test_a_field_the_gateway_does_not_allow() -> None:
    with pytest.raises(Problem) as caught:
        gateway_options(
            "internal", [], {"internal": {"models": ["a", "b"]}, "openaiCompatible": {"user": "ana"}}
        )
    problem = caught.value
    assert (problem.reason, problem.kind, problem.status) == ("conflict", "unworkable", 409)
    assert problem.detail == (
        "The provider options cannot be sent: the gateway internal does not allow models; "
        "the gateway internal does not allow user. The gateway's operator lists the fields a function "
        "may set in allowed_provider_options."
    )


def test_a_field_the_runtime_sets_cannot_be_allowed() -> None:
    with pytest.raises(Problem, match="temperature is set by the runtime"):
        gateway_options("internal", ["temperature"], {"internal": {"temperature": 2}})


def test_other_fields_of_openai_compatible_are_not_read() -> None:
    with pytest.raises(
        Problem, match=r"openaiCompatible\.reasoningEffort is not read: a gateway reads only user"
    ):
        gateway_options("internal", ["user"], {"openaiCompatible": {"user": "x", "reasoningEffort": "low"}})


def test_a_field_set_twice_differently() -> None:
    with pytest.raises(Problem, match="budget is set under both my-gw and myGw"):
        gateway_options("my-gw", ["budget"], {"my-gw": {"budget": 1}, "myGw": {"budget": 2}})


def test_no_options_for_a_gateway() -> None:
    assert gateway_options("internal", [], {"anthropic": {"thinking": {}}}) == {}


# --- namespaces nothing reads ----------------------------------------------------------------------------


def test_unread_namespaces() -> None:
    options = {
        "anthropic": {"thinking": {}},
        "openai": {"textVerbosity": "low"},
        "internal": {"user": "x"},
        "myGateway": {"budget": 1},
        "typo-gateway": {"x": 1},
    }
    assert unread_namespaces(options, ["bedrock-anthropic", "my-gateway"]) == [
        "openai",
        "internal",
        "typo-gateway",
    ]
    assert unread_namespaces(options, ["anthropic", "azure", "internal", "my-gateway", "typo-gateway"]) == []


def test_openai_options_beside_azure_options_are_unread_by_azure() -> None:
    options = {"openai": {"textVerbosity": "low"}, "azure": {"textVerbosity": "high"}}
    assert unread_namespaces(options, ["azure"]) == ["openai"]
    assert unread_namespaces(options, ["azure", "openai"]) == []
    assert unread_namespaces({"openai": {"textVerbosity": "low"}, "azure": {}}, ["azure"]) == []


def test_openai_compatible_is_read_by_any_gateway() -> None:
    assert unread_namespaces({"openaiCompatible": {"user": "x"}}, ["anthropic"]) == ["openaiCompatible"]
    assert unread_namespaces({"openaiCompatible": {"user": "x"}}, ["anthropic", "demo"]) == []
