"""Importing the providers' entry point loads no adapter, no httpx and no boto3 (the api function's cold
start carries no provider code), and an adapter is loaded only when a call names its provider."""

from __future__ import annotations

import json
import subprocess
import sys

ADAPTERS = [
    "parley.models.providers.anthropic",
    "parley.models.providers.openai",
    "parley.models.providers.google",
    "parley.models.providers.bedrock",
    "parley.models.providers.bedrock_runtime",
    "parley.models.providers.vertex_auth",
    "parley.models.providers.transport",
    "parley.models.providers.settings",
]
HEAVY = ["httpx", "boto3", "botocore", "google.auth"]


def loaded_after(code: str) -> set[str]:
    script = f"import json, sys\n{code}\nprint(json.dumps(sorted(sys.modules)))"
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    return set(json.loads(result.stdout))


def test_the_entry_point_loads_no_provider_code() -> None:
    loaded = loaded_after("import parley.models.providers")
    assert "parley.models.providers" in loaded
    assert loaded.isdisjoint(ADAPTERS + HEAVY)


def test_reading_the_settings_loads_no_adapter() -> None:
    loaded = loaded_after(
        "from parley.models.providers import provider_settings\n"
        "provider_settings('anthropic', None, {'ANTHROPIC_API_KEY': 'k'})"
    )
    assert loaded.isdisjoint(ADAPTERS[:-1] + HEAVY)


def test_a_call_loads_only_its_provider() -> None:
    code = """
import httpx
from pydantic import SecretStr
from parley.models.providers import ModelRequest, ProviderSettings, Settings, call_model
answer = {"id": "m", "model": "c", "content": [], "stop_reason": "end_turn", "usage": {}}
http = httpx.Client(transport=httpx.MockTransport(lambda request: httpx.Response(200, json=answer)))
request = ModelRequest("claude-sonnet-4-5", None, "hi", Settings(16), "text", None, {}, 10.0)
call_model(ProviderSettings("anthropic", "anthropic", api_key=SecretStr("k")), request, http=http)
"""
    loaded = loaded_after(code)
    assert "parley.models.providers.anthropic" in loaded
    assert loaded.isdisjoint(
        [
            "parley.models.providers.openai",
            "parley.models.providers.google",
            "boto3",
            "botocore",
        ]
    )
