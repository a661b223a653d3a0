"""The fake provider of ``tests/fake_providers.py``, over real HTTP: its scripts, its defaults and what it
records."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from fake_providers import (
    ANTHROPIC_MODELS,
    CHAT_COMPLETIONS,
    MESSAGES,
    OPENAI_MODELS,
    FakeProviders,
    Recorded,
    Scripted,
    anthropic_error,
    anthropic_text,
    anthropic_tool_use,
    fake_providers,
    openai_error,
    openai_text,
    openai_tool_call,
)

ANTHROPIC_HEADERS = {"x-api-key": "sk-ant-secret", "anthropic-version": "2023-06-01"}


@pytest.fixture(scope="module")
def server() -> Iterator[FakeProviders]:
    with fake_providers() as fake:
        yield fake


@pytest.fixture
def fake(server: FakeProviders) -> FakeProviders:
    server.reset()
    return server


def test_default_answers_in_each_api(fake: FakeProviders) -> None:
    messages = httpx.post(f"{fake.url}/v1/messages", json={"model": "m"}, headers=ANTHROPIC_HEADERS)
    completions = httpx.post(f"{fake.openai_base_url}/chat/completions", json={"model": "m"})

    assert messages.json()["content"] == [{"type": "text", "text": "Hello from the fake provider."}]
    assert completions.json()["choices"][0]["message"]["content"] == "Hello from the fake provider."
    assert httpx.get(f"{fake.openai_base_url}/models").json()["data"][0]["id"] == "gpt-test"
    anthropic_models = httpx.get(f"{fake.url}/v1/models", headers=ANTHROPIC_HEADERS).json()
    assert anthropic_models["data"][0] == {
        "type": "model",
        "id": "claude-test",
        "display_name": "Claude Test",
        "created_at": "2026-01-01T00:00:00Z",
    }


def test_scripted_answers_come_in_order_then_the_default(fake: FakeProviders) -> None:
    fake.script(
        MESSAGES,
        anthropic_error(429, "rate_limit_error", "Slow down", **{"retry-after": "3"}),
        Scripted(body=anthropic_tool_use("lookup", {"q": "x"})),
    )

    first = httpx.post(f"{fake.url}/v1/messages", json={}, headers=ANTHROPIC_HEADERS)
    second = httpx.post(f"{fake.url}/v1/messages", json={}, headers=ANTHROPIC_HEADERS)
    third = httpx.post(f"{fake.url}/v1/messages", json={}, headers=ANTHROPIC_HEADERS)

    assert (first.status_code, first.headers["retry-after"]) == (429, "3")
    assert first.json() == {"type": "error", "error": {"type": "rate_limit_error", "message": "Slow down"}}
    assert second.json()["content"] == [
        {"type": "tool_use", "id": "toolu_fake", "name": "lookup", "input": {"q": "x"}}
    ]
    assert second.json()["stop_reason"] == "tool_use"
    assert third.json()["content"][0]["text"] == "Hello from the fake provider."


def test_a_default_a_function_of_the_request_and_an_empty_body(fake: FakeProviders) -> None:
    fake.set_default(
        CHAT_COMPLETIONS, lambda request: Scripted(body=openai_text(f"to {request.body['model']}"))
    )
    fake.script(CHAT_COMPLETIONS, Scripted(status=503))

    unavailable = httpx.post(f"{fake.openai_base_url}/chat/completions", json={"model": "a"})
    answered = httpx.post(f"{fake.openai_base_url}/chat/completions", json={"model": "b"})

    assert (unavailable.status_code, unavailable.content) == (503, b"")
    assert answered.json()["choices"][0]["message"]["content"] == "to b"


def test_openai_bodies(fake: FakeProviders) -> None:
    fake.script(
        CHAT_COMPLETIONS,
        Scripted(body=openai_tool_call("lookup", {"q": "x"})),
        openai_error(400, "too long", code="context_length_exceeded"),
    )

    call = httpx.post(f"{fake.openai_base_url}/chat/completions", json={}).json()["choices"][0]
    error = httpx.post(f"{fake.openai_base_url}/chat/completions", json={})

    assert call["finish_reason"] == "tool_calls"
    assert call["message"]["tool_calls"][0]["function"] == {"name": "lookup", "arguments": '{"q": "x"}'}
    assert error.status_code == 400
    assert error.json()["error"]["code"] == "context_length_exceeded"


def test_the_models_lists_can_be_scripted(fake: FakeProviders) -> None:
    fake.script(OPENAI_MODELS, Scripted(status=500, body={"error": {"message": "down"}}))
    fake.set_default(ANTHROPIC_MODELS, Scripted(body={"data": [], "has_more": False}))

    assert httpx.get(f"{fake.openai_base_url}/models").status_code == 500
    assert httpx.get(f"{fake.url}/v1/models", headers=ANTHROPIC_HEADERS).json()["data"] == []


def test_a_delayed_answer(fake: FakeProviders) -> None:
    fake.script(MESSAGES, Scripted(body=anthropic_text("late"), delay=3.0))

    with pytest.raises(httpx.ReadTimeout):
        httpx.post(f"{fake.url}/v1/messages", json={}, timeout=0.05)
    assert (
        httpx.post(f"{fake.url}/v1/messages", json={}).json()["content"][0]["text"]
        == "Hello from the fake provider."
    )
    # Not held behind the delayed answer: that one was still waiting when this one came back.
    [waiting] = fake.in_flight
    assert waiting is fake.requests[0]


def test_every_request_is_recorded(fake: FakeProviders) -> None:
    httpx.post(f"{fake.url}/v1/messages", json={"model": "m", "messages": []}, headers=ANTHROPIC_HEADERS)
    httpx.get(f"{fake.url}/v1/models?limit=5", headers=ANTHROPIC_HEADERS)
    missing = httpx.post(f"{fake.url}/v2/elsewhere", content=b"not json")

    assert missing.status_code == 404
    first, second, third = fake.requests
    assert isinstance(first, Recorded)
    assert (first.method, first.path, first.body) == ("POST", "/v1/messages", {"model": "m", "messages": []})
    assert first.headers["x-api-key"] == "sk-ant-secret"
    assert (second.method, second.path, second.query, second.body) == ("GET", "/v1/models", "limit=5", None)
    assert (third.path, third.body, third.raw) == ("/v2/elsewhere", None, b"not json")
    assert fake.requests_to("/v1/models") == [second]


def test_where_a_secret_was_sent(fake: FakeProviders) -> None:
    httpx.post(f"{fake.url}/v1/messages", json={"model": "m"}, headers=ANTHROPIC_HEADERS)
    httpx.post(f"{fake.url}/v1/messages", json={"note": "sk-ant-secret"})
    httpx.get(f"{fake.url}/v1/models?key=sk-ant-secret")

    assert fake.sent_anywhere("sk-ant-secret") == ["0 header x-api-key", "1 body", "2 path"]
    assert fake.sent_anywhere("never-sent") == []


def test_an_unknown_route_name_is_refused(fake: FakeProviders) -> None:
    with pytest.raises(ValueError, match="unknown route 'completions'"):
        fake.script("completions", Scripted())


def test_stopping_frees_the_port() -> None:
    fake = FakeProviders()
    with fake:
        url = fake.url
        assert httpx.get(f"{url}/v1/models").status_code == 200

    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{url}/v1/models")
