"""The ``models`` section of the operator configuration (http-api.md, "Operator configuration", "Model
providers")."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import pytest
from pydantic import SecretStr

from parley.config import (
    BUILT_IN_PROVIDERS,
    RUNTIME_SET_FIELDS,
    LiveOperatorConfig,
    ModelsConfig,
    OperatorConfigError,
    load_operator_config,
    parse_operator_config,
)

ROOT = Path(__file__).resolve().parents[3]
REFERENCE = "{{resolve:secretsmanager:parley/models}}"

#: The ``models`` block of http-api.md, "Operator configuration" (its ellipsis filled in).
SPEC_MODELS = """
models:                            # reasoning functions: see "Model providers" below
  allowed: [anthropic/*, demo/*]   # optional: only these references (or prefixes) may run
  aliases:                         # optional: one hop; the longest wildcard prefix wins
    fast: anthropic/claude-haiku-4-5
    anthropic/*: bedrock-anthropic/us.anthropic.*
  gateways:                        # OpenAI-compatible Chat Completions endpoints
    - name: internal               # the provider prefix: 1-32 of a-z, 0-9, '-'; not a built-in one
      base_url: http://127.0.0.1:9100/v1
      api_key: "sk-internal-secret"  # optional; secret
      headers: { x-tenant: acme-tenant-secret }  # optional; secret
      structured_outputs: true     # the endpoint takes response_format json_schema
      allowed_provider_options: [user]
  catalog:                         # optional: models the providers do not list, and their windows
    - { id: internal/llama-3.3-70b, context_window: 131072, max_tokens: 8192 }
  reasoning_max_input_tokens: 2000000   # REASONING_MAX_INPUT_TOKENS wins
"""


def models_of(text: str, environ: dict[str, str] | None = None, *, aws: bool = False) -> ModelsConfig:
    return parse_operator_config(
        text, "operator.yaml", environ={} if environ is None else environ, aws=aws
    ).models


def refusal(text: str, *, aws: bool = False, environ: dict[str, str] | None = None) -> str:
    with pytest.raises(OperatorConfigError) as caught:
        parse_operator_config(text, "operator.yaml", environ=environ or {}, aws=aws)
    return str(caught.value)


def test_the_spec_example_loads() -> None:
    models = models_of(SPEC_MODELS)

    assert models.allowed == ("anthropic/*", "demo/*")
    assert models.aliases == {
        "fast": "anthropic/claude-haiku-4-5",
        "anthropic/*": "bedrock-anthropic/us.anthropic.*",
    }
    (gateway,) = models.gateways
    assert (gateway.name, gateway.base_url, gateway.structured_outputs, gateway.allowed_provider_options) == (
        "internal", "http://127.0.0.1:9100/v1", True, ("user",)
    )  # fmt: skip
    assert gateway.api_key is not None and gateway.api_key.get_secret_value() == "sk-internal-secret"
    assert gateway.headers["x-tenant"].get_secret_value() == "acme-tenant-secret"
    (entry,) = models.catalog
    assert (entry.id, entry.context_window, entry.max_tokens, entry.name) == (
        "internal/llama-3.3-70b", 131072, 8192, None
    )  # fmt: skip
    assert models.reasoning_max_input_tokens == 2_000_000
    assert models.gateway_named("internal") is gateway
    assert models.gateway_named("other") is None


def test_defaults() -> None:
    models = models_of("")

    assert models == ModelsConfig()
    assert (models.allowed, models.aliases, models.gateways, models.catalog, models.providers) == (
        None, {}, (), (), {}
    )  # fmt: skip
    assert models.reasoning_max_input_tokens is None
    gateway = models_of("models: {gateways: [{name: g, base_url: 'https://g.example/v1'}]}").gateways[0]
    assert (gateway.api_key, gateway.headers, gateway.structured_outputs) == (None, {}, False)
    assert gateway.allowed_provider_options == ()
    assert models_of("models: {allowed: []}").allowed == ()


def test_catalog_names_and_provider_settings() -> None:
    models = models_of(
        """
models:
  catalog: [{id: internal/llama, context_window: 8192, max_tokens: 1024, name: Llama 3.3 70B}]
  providers:
    anthropic: {ANTHROPIC_API_KEY: sk-ant-file, ANTHROPIC_BASE_URL: 'http://127.0.0.1:9100/anthropic'}
    bedrock: {AWS_REGION: eu-west-1}
"""
    )

    assert models.catalog[0].name == "Llama 3.3 70B"
    assert models.providers["anthropic"]["ANTHROPIC_API_KEY"].get_secret_value() == "sk-ant-file"
    assert models.providers["bedrock"]["AWS_REGION"].get_secret_value() == "eu-west-1"


def test_the_environment_wins_over_the_file_for_provider_settings() -> None:
    models = models_of(
        "models: {providers: {anthropic: {ANTHROPIC_API_KEY: from-file, ANTHROPIC_BASE_URL: b}}}"
    )

    settings = models.provider_settings("anthropic", {"ANTHROPIC_API_KEY": "from-env", "OPENAI_API_KEY": "x"})

    assert {name: value.get_secret_value() for name, value in settings.items()} == {
        "ANTHROPIC_API_KEY": "from-env",
        "ANTHROPIC_BASE_URL": "b",
    }
    assert models.provider_settings("openai", {"OPENAI_API_KEY": "sk-o", "OPENAI_API": " "}) == {
        "OPENAI_API_KEY": SecretStr("sk-o")
    }
    assert models.provider_settings("internal", {"ANTHROPIC_API_KEY": "x"}) == {}


def test_the_environment_wins_for_reasoning_max_input_tokens() -> None:
    assert models_of(SPEC_MODELS, {"REASONING_MAX_INPUT_TOKENS": "1000"}).reasoning_max_input_tokens == 1000
    assert models_of("", {"REASONING_MAX_INPUT_TOKENS": " 42 "}).reasoning_max_input_tokens == 42
    assert models_of(SPEC_MODELS, {"REASONING_MAX_INPUT_TOKENS": ""}).reasoning_max_input_tokens == 2_000_000
    both = parse_operator_config(
        "", "x", environ={"REASONING_MAX_INPUT_TOKENS": "5", "INTERACTION_OPEN_REQUESTS": "6"}
    )
    assert (both.models.reasoning_max_input_tokens, both.limits.interaction_open_requests) == (5, 6)


@pytest.mark.parametrize("value", ["many", "0", "-3", "1.5"])
def test_a_bad_reasoning_max_input_tokens_variable_is_named(value: str) -> None:
    assert "$REASONING_MAX_INPUT_TOKENS" in refusal("", environ={"REASONING_MAX_INPUT_TOKENS": value})


def test_secrets_never_show() -> None:
    config = parse_operator_config(
        SPEC_MODELS.replace("  reasoning_max", "  providers: {openai: {OPENAI_API_KEY: sk-openai-secret}}\n"
                            "  reasoning_max"),
        "operator.yaml",
        environ={},
    )  # fmt: skip

    assert config.models.providers["openai"]["OPENAI_API_KEY"].get_secret_value() == "sk-openai-secret"
    for shown in (repr(config), str(config), json.dumps(asdict(config), default=str)):
        for secret in ("sk-internal-secret", "acme-tenant-secret", "sk-openai-secret"):
            assert secret not in shown


def test_errors_never_echo_secrets() -> None:
    message = refusal("models: {gateways: [{name: g, base_url: 'http://x', api_key: sk-hunter2, extra: 1}]}")
    assert "sk-hunter2" not in message
    message = refusal("models: {providers: {openai: {OPENAI_API_KEY: sk-hunter2, OPENAI_KEY: sk-hunter3}}}")
    assert "sk-hunter2" not in message and "sk-hunter3" not in message


def test_on_aws_every_secret_is_a_secrets_manager_reference() -> None:
    text = f"""
models:
  gateways:
    - {{name: internal, base_url: 'https://llm.internal/v1', api_key: '{REFERENCE}',
        headers: {{x-tenant: '{REFERENCE}'}}}}
  providers:
    anthropic: {{ANTHROPIC_API_KEY: '{REFERENCE}', ANTHROPIC_BASE_URL: 'https://proxy.internal'}}
    bedrock: {{AWS_REGION: us-east-1}}
"""
    models = models_of(text, aws=True)

    assert models.gateways[0].api_key == SecretStr(REFERENCE)
    # Settings that are not keys (a base URL, a region) may be written as they are.
    assert models.providers["anthropic"]["ANTHROPIC_BASE_URL"].get_secret_value() == "https://proxy.internal"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "models: {gateways: [{name: g, base_url: 'https://g/v1', api_key: sk-live}]}",
            "operator.yaml: models.gateways[0].api_key: on AWS the api_key takes its secret from Secrets "
            "Manager",
        ),
        (
            "models: {gateways: [{name: g, base_url: 'https://g/v1', headers: {x-tenant: acme}}]}",
            "operator.yaml: models.gateways[0].headers: on AWS the header 'x-tenant' takes its secret",
        ),
        (
            "models: {providers: {anthropic: {ANTHROPIC_AUTH_TOKEN: tok}}}",
            "operator.yaml: models.providers: on AWS anthropic.ANTHROPIC_AUTH_TOKEN takes its secret",
        ),
        (
            "models: {providers: {google: {GEMINI_API_KEY: AIza}}}",
            "on AWS google.GEMINI_API_KEY takes its secret from Secrets Manager",
        ),
    ],
)
def test_on_aws_a_secret_in_the_configuration_is_refused(text: str, message: str) -> None:
    assert message in refusal(text, aws=True)
    parse_operator_config(text, "operator.yaml", environ={})  # the same is fine locally


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "models: {gateway: []}",
            "operator.yaml: models: unknown key 'gateway' (allowed: allowed, aliases, gateways, catalog, "
            "providers, reasoning_max_input_tokens)",
        ),
        (
            "models: {gateways: [{name: g, base_url: 'http://x', api: chat}]}",
            "operator.yaml: models.gateways[0]: unknown key 'api' (allowed: name, base_url, api_key, "
            "headers, structured_outputs, allowed_provider_options)",
        ),
        (
            "models: {catalog: [{id: a/b, context_window: 1, max_tokens: 1, window: 2}]}",
            "operator.yaml: models.catalog[0]: unknown key 'window' (allowed: id, context_window, "
            "max_tokens, name)",
        ),
        ("models: []", "operator.yaml: models: Input should be a valid dictionary"),
        ("models: {allowed: demo/*}", "operator.yaml: models.allowed: Input should be a valid tuple"),
        ("models: {allowed: ['demo/ *']}", "models.allowed[0]: 'demo/ *': a model reference"),
        ("models: {allowed: ['a*b']}", "models.allowed[0]: 'a*b'"),
        ("models: {allowed: ['*']}", "models.allowed[0]: '*'"),
        ("models: {aliases: {'a b': x/y}}", "models.aliases: alias 'a b': a model reference"),
        (
            "models: {aliases: {fast: claude}}",
            "models.aliases: alias 'fast': its target 'claude' is provider/model",
        ),
        (
            "models: {aliases: {fast: 'Anthropic/x'}}",
            "alias 'fast': its target 'Anthropic/x' is provider/model",
        ),
        (
            "models: {aliases: {'anthropic/*': bedrock/x}}",
            "alias 'anthropic/*': a wildcard alias (ending in *)",
        ),
        ("models: {aliases: {fast: 'bedrock/x*'}}", "alias 'fast': a wildcard alias (ending in *) maps"),
        ("models: {aliases: {'a/*': 'b/*x*'}}", "alias 'a/*': a wildcard alias"),
        (
            "models: {gateways: [{name: Internal, base_url: 'http://x'}]}",
            "models.gateways[0].name: a gateway name",
        ),
        ("models: {gateways: [{name: 9x, base_url: 'http://x'}]}", "models.gateways[0].name: a gateway name"),
        (f"models: {{gateways: [{{name: {'g' * 33}, base_url: 'http://x'}}]}}", "models.gateways[0].name"),
        (
            "models: {gateways: [{name: bedrock-anthropic, base_url: 'http://x'}]}",
            "models.gateways[0].name: 'bedrock-anthropic' is a built-in provider; a gateway takes a name of "
            "its own",
        ),
        (
            "models: {gateways: [{name: g, base_url: 'ftp://x'}]}",
            "models.gateways[0].base_url: a gateway base_url",
        ),
        ("models: {gateways: [{name: g, base_url: '/v1'}]}", "models.gateways[0].base_url"),
        ("models: {gateways: [{name: g}]}", "models.gateways[0].base_url: Field required"),
        ("models: {gateways: [{name: g, base_url: 'http://x', api_key: ' '}]}", "an api_key cannot be empty"),
        (
            "models: {gateways: [{name: g, base_url: 'http://x', api_key: k, headers: {Authorization: b}}]}",
            "models.gateways[0]: the api_key is sent as Authorization: Bearer",
        ),
        (
            "models: {gateways: [{name: g, base_url: 'http://x', headers: {'x tenant': a}}]}",
            "'x tenant' is not an HTTP header name",
        ),
        (
            "models: {gateways: [{name: g, base_url: 'http://x', headers: {Content-Type: a}}]}",
            "header 'Content-Type' is set by the HTTP client",
        ),
        (
            "models: {gateways: [{name: g, base_url: 'http://x', structured_outputs: maybe}]}",
            "models.gateways[0].structured_outputs",
        ),
        (
            "models: {gateways: [{name: g, base_url: 'http://x', allowed_provider_options: [user, user]}]}",
            "duplicate allowed provider option 'user'",
        ),
        (
            "models: {gateways: [{name: g, base_url: 'http://x', allowed_provider_options: ['a b']}]}",
            "'a b' is not a request body field name",
        ),
        (
            "models: {gateways: [{name: g, base_url: 'http://x'}, {name: g, base_url: 'http://y'}]}",
            "operator.yaml: models.gateways: duplicate gateway name 'g'",
        ),
        (
            "models: {catalog: [{id: llama, context_window: 8, max_tokens: 4}]}",
            "models.catalog[0].id: 'llama'",
        ),
        ("models: {catalog: [{id: 'a/*', context_window: 8, max_tokens: 4}]}", "models.catalog[0].id: 'a/*'"),
        (
            "models: {catalog: [{id: a/b, context_window: 0, max_tokens: 1}]}",
            "models.catalog[0].context_window",
        ),
        ("models: {catalog: [{id: a/b, context_window: 8, max_tokens: 0}]}", "models.catalog[0].max_tokens"),
        ("models: {catalog: [{id: a/b, max_tokens: 1}]}", "models.catalog[0].context_window: Field required"),
        (
            "models: {catalog: [{id: a/b, context_window: 8, max_tokens: 16}]}",
            "models.catalog[0]: max_tokens (16) is more than the context_window (8)",
        ),
        (
            "models: {catalog: [{id: a/b, context_window: 8, max_tokens: 4, name: ''}]}",
            "models.catalog[0].name",
        ),
        (
            "models: {catalog: [{id: a/b, context_window: 8, max_tokens: 4}, {id: a/b, context_window: 9,"
            " max_tokens: 4}]}",
            "models.catalog: duplicate catalog id 'a/b'",
        ),
        (
            "models: {providers: {internal: {X: y}}}",
            "models.providers: 'internal' is not a built-in provider",
        ),
        (
            "models: {providers: {anthropic: {OPENAI_API_KEY: x}}}",
            "models.providers: anthropic: unknown setting 'OPENAI_API_KEY' (allowed: ANTHROPIC_API_KEY, "
            "ANTHROPIC_AUTH_TOKEN, ANTHROPIC_BASE_URL)",
        ),
        ("models: {providers: {openai: {OPENAI_API_KEY: ''}}}", "openai.OPENAI_API_KEY cannot be empty"),
        ("models: {providers: {openai: []}}", "models.providers.openai: Input should be a valid dictionary"),
        ("models: {reasoning_max_input_tokens: 0}", "models.reasoning_max_input_tokens"),
        ("models: {reasoning_max_input_tokens: lots}", "models.reasoning_max_input_tokens"),
    ],
)
def test_mistakes_name_the_field(text: str, message: str) -> None:
    assert message in refusal(text)


@pytest.mark.parametrize("option", sorted(RUNTIME_SET_FIELDS))
def test_a_gateway_cannot_allow_a_field_the_runtime_sets(option: str) -> None:
    gateway = f"{{name: g, base_url: 'http://x', allowed_provider_options: [user, {option}]}}"
    message = refusal(f"models: {{gateways: [{gateway}]}}")

    assert (
        f"models.gateways[0].allowed_provider_options: {option!r} cannot be allowed: the runtime sets it"
        in (message)
    )


def test_the_fields_the_runtime_sets_include_the_documented_ones() -> None:
    assert {
        "model", "messages", "max_tokens", "max_completion_tokens", "temperature", "top_p", "seed", "stop",
        "response_format", "tools", "tool_choice", "stream", "reasoning_effort",
    } <= RUNTIME_SET_FIELDS  # fmt: skip


@pytest.mark.parametrize("name", BUILT_IN_PROVIDERS)
def test_no_gateway_takes_a_built_in_name(name: str) -> None:
    assert "is a built-in provider" in refusal(
        f"models: {{gateways: [{{name: {name}, base_url: 'http://x'}}]}}"
    )


def test_the_example_operator_file_names_the_demo_gateway() -> None:
    models = load_operator_config(ROOT / "examples" / "operator.yaml", environ={}).models

    assert models.allowed == ("demo/*",)
    demo = models.gateway_named("demo")
    assert demo is not None
    assert (demo.base_url, demo.structured_outputs, demo.api_key) == ("http://127.0.0.1:9100/v1", True, None)
    assert [(e.id, e.context_window, e.max_tokens) for e in models.catalog] == [("demo/echo", 32768, 4096)]


def test_a_live_configuration_follows_its_models() -> None:
    configs = [
        parse_operator_config("", "x", environ={}),
        parse_operator_config(SPEC_MODELS, "x", environ={}),
    ]
    current = [configs[0]]
    live = LiveOperatorConfig.following(lambda: current[0])

    assert live.models.gateways == ()
    current[0] = configs[1]
    assert live.models.gateway_named("internal") is not None


# --- a tool server's approvals (agent-runs.md, "Turning it on: ask") -------------------------------------

TRIPS = """
tool_servers:
  - name: trips
    url: https://trips.example/mcp
    orgs: [acme]
    headers: { authorization: Bearer trips-secret }
    approve:
"""


def test_a_tool_servers_approvals_load() -> None:
    entries = """\
      - tool: remove_day
        confirmation: 'Delete day {{ arguments.day_number }} and move its places to the unplanned pool?'
      - tool: clear_day
        preview: preview_clear_day
"""
    (server,) = parse_operator_config(TRIPS + entries, "operator.yaml", environ={}).tool_servers
    assert [(entry.tool, entry.confirmation, entry.preview) for entry in server.approve] == [
        (
            "remove_day",
            "Delete day {{ arguments.day_number }} and move its places to the unplanned pool?",
            None,
        ),
        ("clear_day", None, "preview_clear_day"),
    ]
    assert server.headers["authorization"].get_secret_value() == "Bearer trips-secret"
    assert "trips-secret" not in repr(server) and "trips-secret" not in json.dumps(
        asdict(server), default=str
    )


def test_a_tool_server_approves_nothing_by_default() -> None:
    text = TRIPS.replace("    approve:\n", "")
    (server,) = parse_operator_config(text, "operator.yaml", environ={}).tool_servers
    assert server.approve == ()


@pytest.mark.parametrize(
    ("entries", "expected"),
    [
        (
            "      - { tool: remove_day }\n",
            "approve[0]: approval of 'remove_day': write exactly one of "
            "confirmation (a template over arguments) and preview (a tool of this server)",
        ),
        (
            "      - { tool: clear_day, confirmation: 'Clear?', preview: preview_clear_day }\n",
            "approve[0]: approval of 'clear_day': write exactly one of "
            "confirmation (a template over arguments) and preview (a tool of this server)",
        ),
        (
            "      - { confirmation: 'Clear?' }\n",
            "approve[0].tool: Field required",
        ),
        (
            "      - { tool: trips/remove_day, confirmation: 'Remove?' }\n",
            "approve[0].tool: 'trips/remove_day': write the tool's name alone, "
            "without a server: it is a tool of this server",
        ),
        (
            "      - { tool: 'remove day', confirmation: 'Remove?' }\n",
            "approve[0].tool: a tool name is 1 to 128 of A-Z, a-z, 0-9, '_', '.' and '-'",
        ),
        (
            "      - { tool: clear_day, preview: maps/preview_clear_day }\n",
            "approve[0].preview: 'maps/preview_clear_day': write the tool's name "
            "alone, without a server: it is a tool of this server",
        ),
        (
            "      - { tool: clear_day, preview: clear_day }\n",
            "approve[0]: approval of 'clear_day': preview names the tool itself; "
            "name another, read-only tool of this server",
        ),
        (
            "      - { tool: remove_day, confirmation: '  ' }\n",
            "approve[0].confirmation: a confirmation is the text the person approves; it cannot be empty",
        ),
        (
            "      - { tool: remove_day, confirmation: 'Remove {{ input.day }}?' }\n",
            "approve[0].confirmation: line 1 of the template: the confirmation "
            "reads 'input', which is not one of arguments",
        ),
        (
            "      - { tool: remove_day, confirmation: '{{ arguments.when | date: \"%Y\" }}' }\n",
            "approve[0].confirmation: line 1 of the template: the filter 'date' is not available",
        ),
        (
            "      - { tool: remove_day, confirmation: 'Remove?', when: always }\n",
            "approve[0]: unknown key 'when' (allowed: tool, confirmation, preview)",
        ),
        (
            "      - { tool: remove_day, confirmation: 'Remove?' }\n"
            "      - { tool: remove_day, preview: show }\n",
            "approve: duplicate approval of tool 'remove_day'",
        ),
    ],
)
def test_a_tool_servers_approval_that_breaks_a_rule(entries: str, expected: str) -> None:
    assert refusal(TRIPS + entries) == "operator.yaml: tool_servers[0]." + expected
