"""No credential shows in a failure's detail or in the ``repr`` of anything the adapters give back, even
when a provider echoes it in its error message."""

from __future__ import annotations

import httpx
import pytest
from pydantic import SecretStr
from unit.models.providers.provider_doubles import Exchange, call, failure_of, model_request

from parley.models.providers import ProviderSettings

KEY = "sk-live-9f8e7d6c5b4a3928"
HEADER = "tenant-secret-7a6b5c4d"
RESOLVED = "resolved-secret-1a2b3c4d"

PROVIDERS = [
    ProviderSettings("anthropic", "anthropic", api_key=SecretStr(KEY)),
    ProviderSettings("openai", "openai", api_key=SecretStr(KEY)),
    ProviderSettings("openai", "openai", api_key=SecretStr(KEY), api="chat_completions"),
    ProviderSettings("azure", "azure", api_key=SecretStr(KEY), base_url="https://acme.openai.azure.com"),
    ProviderSettings("google", "google", api_key=SecretStr(KEY)),
    ProviderSettings(
        "internal",
        "gateway",
        api_key=SecretStr(KEY),
        base_url="http://127.0.0.1:9100/v1",
        headers={"x-tenant": SecretStr(HEADER), "Authorization-Extra": SecretStr(f"Bearer {HEADER}x")},
    ),
]


def echoing(status: int, secret: str) -> httpx.Response:
    text = f"bad request with key {secret} and header {HEADER}; {HEADER}x"
    body = {
        "type": "error",
        "error": {
            "type": "invalid_request_error",
            "message": text,
            "code": None,
            "status": "INVALID_ARGUMENT",
        },
    }
    return httpx.Response(status, json=body)


@pytest.mark.parametrize("settings", PROVIDERS, ids=lambda s: f"{s.kind}-{s.api}")
@pytest.mark.parametrize("status", [400, 401, 403, 404, 413, 422, 429, 500, 529])
def test_no_secret_in_a_failure(settings: ProviderSettings, status: int) -> None:
    exchange = Exchange()
    for _ in range(3):
        exchange.answers.append(echoing(status, KEY))

    failure = failure_of(settings, model_request("some-model"), exchange)

    secrets = [KEY, HEADER] if settings.headers else [KEY]
    for shown in (failure.detail, str(failure), repr(failure), repr(settings)):
        for secret in secrets:
            assert secret not in shown
    assert failure.detail.startswith(f"{settings.provider} answered HTTP {status}")


@pytest.mark.parametrize("settings", PROVIDERS[:2], ids=lambda s: s.kind)
def test_a_resolved_secret_is_scrubbed_too(settings: ProviderSettings) -> None:
    exchange = Exchange()
    exchange.answers.append(echoing(400, RESOLVED))

    failure = failure_of(settings, model_request("some-model"), exchange, resolve=lambda value: RESOLVED)

    assert RESOLVED not in failure.detail
    assert "[secret]" in failure.detail


def test_no_secret_in_an_answer() -> None:
    exchange = Exchange()
    exchange.answer(
        body={"id": "m", "model": "c", "content": [{"type": "text", "text": "hi"}], "stop_reason": "end_turn"}
    )

    answer = call(PROVIDERS[0], model_request("claude-sonnet-4-5"), exchange)

    assert KEY not in repr(answer)
    assert KEY not in repr(model_request("claude-sonnet-4-5"))
