"""Offline doubles for the provider adapters' tests: an httpx transport that answers from a queue and keeps
every request, and a clock whose sleeps move it forward instantly."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import httpx

from parley.models.providers import (
    ModelAnswer,
    ModelCallFailed,
    ModelRequest,
    ProviderSettings,
    Settings,
    call_model,
)


@dataclass
class Exchange:
    """Answers queued in order (an ``httpx.Response`` or an exception to raise); the requests seen."""

    answers: list[httpx.Response | Exception] = field(default_factory=list)
    requests: list[httpx.Request] = field(default_factory=list)

    def answer(self, status: int = 200, body: Any = None, headers: dict[str, str] | None = None) -> None:
        self.answers.append(httpx.Response(status, json=body if body is not None else {}, headers=headers))

    def fail(self, error: Exception) -> None:
        self.answers.append(error)

    def handle(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        if not self.answers:
            raise AssertionError(f"no answer queued for {request.method} {request.url}")
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    def client(self) -> httpx.Client:
        return httpx.Client(transport=httpx.MockTransport(self.handle))

    @property
    def last(self) -> httpx.Request:
        return self.requests[-1]

    def body(self, index: int = -1) -> Any:
        return json.loads(self.requests[index].content)


@dataclass
class FakeClock:
    now: float = 1000.0
    waits: list[float] = field(default_factory=list)

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)
        self.now += seconds


def model_request(
    model: str,
    *,
    instructions: str | None = "Be brief.",
    message: str = "Say hello.",
    output_format: str = "text",
    output_schema: dict[str, Any] | None = None,
    provider_options: dict[str, Any] | None = None,
    timeout_seconds: float = 85.6,
    **settings: Any,
) -> ModelRequest:
    """A request with ``settings`` as the function's config (``max_output_tokens`` 1,024 unless given)."""
    settings.setdefault("max_output_tokens", 1024)
    return ModelRequest(
        model=model,
        instructions=instructions,
        message=message,
        settings=Settings(**settings),
        output_format=output_format,  # type: ignore[arg-type]
        output_schema=output_schema,
        provider_options=provider_options or {},
        timeout_seconds=timeout_seconds,
    )


SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"verdict": {"type": "string"}},
    "required": ["verdict"],
    "additionalProperties": False,
}


def call(
    settings: ProviderSettings,
    request: ModelRequest,
    exchange: Exchange,
    clock: FakeClock | None = None,
    **options: Any,
) -> ModelAnswer:
    """``call_model`` against the exchange, with the fake clock (a new one unless given)."""
    clock = clock or FakeClock()
    with exchange.client() as http:
        return call_model(settings, request, http=http, sleep=clock.sleep, clock=clock, **options)


def failure_of(
    settings: ProviderSettings,
    request: ModelRequest,
    exchange: Exchange,
    clock: FakeClock | None = None,
    **options: Any,
) -> ModelCallFailed:
    """The :class:`ModelCallFailed` the call raises."""
    try:
        call(settings, request, exchange, clock, **options)
    except ModelCallFailed as failure:
        return failure
    raise AssertionError("the call did not fail")
