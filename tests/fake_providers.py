"""A fake model provider for end-to-end tests: a Starlette app served by uvicorn on 127.0.0.1 (a free
port) in a thread of the test process, speaking the Anthropic Messages API and the OpenAI Chat
Completions API, each as the test scripts it.

- ``POST /v1/messages`` (Anthropic; base URL ``fake.url``), ``POST /v1/chat/completions`` (OpenAI; base
  URL ``fake.url + "/v1"``), and ``GET /v1/models``, which answers in Anthropic's shape to a request with
  an ``anthropic-version`` header and in OpenAI's otherwise. Any other path answers ``404``.
- Each route (:data:`MESSAGES`, :data:`CHAT_COMPLETIONS`, :data:`ANTHROPIC_MODELS`,
  :data:`OPENAI_MODELS`) answers from its queue of scripted responses (``fake.script(route, ...)``), then
  from its default (``fake.set_default(route, ...)``; at first a short text answer, or a list of one
  model). A scripted response is a :class:`Scripted` (status, JSON body, headers such as
  ``retry-after``, a delay before answering) or a function of the :class:`Recorded` request giving one.
- ``fake.requests``: every request, in order (method, path, lowercased headers, JSON body);
  ``fake.in_flight``: the requests received and not yet answered (a delayed answer still waiting);
  ``fake.most_at_once``: the most requests that were being answered at the same moment — so a test
  proves order and overlap without a clock;
  ``fake.sent_anywhere(text)`` says where a string (a key) appeared in what was sent, so a test can assert
  that a secret went only in its header.

Use ``with FakeProviders() as fake:``, or :func:`fake_providers` in a fixture. Builders for the usual
bodies: :func:`anthropic_text`, :func:`anthropic_tool_use`, :func:`anthropic_error`,
:func:`openai_text`, :func:`openai_tool_call`, :func:`openai_error`.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Final

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

MESSAGES: Final = "messages"
CHAT_COMPLETIONS: Final = "chat_completions"
ANTHROPIC_MODELS: Final = "anthropic_models"
OPENAI_MODELS: Final = "openai_models"
ROUTES: Final = (MESSAGES, CHAT_COMPLETIONS, ANTHROPIC_MODELS, OPENAI_MODELS)


@dataclass(frozen=True)
class Scripted:
    """One answer: ``body`` is sent as JSON (``None``: an empty body), after ``delay`` seconds."""

    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


@dataclass(frozen=True)
class Recorded:
    """A request as the fake received it; ``body`` is the parsed JSON (``None`` when there was none or
    it was not JSON), ``raw`` the bytes."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    raw: bytes
    query: str = ""


Response_ = Scripted | Callable[[Recorded], Scripted]


# --- bodies --------------------------------------------------------------------------------------


def anthropic_text(
    text: str,
    *,
    model: str = "claude-test",
    stop_reason: str = "end_turn",
    input_tokens: int = 10,
    output_tokens: int = 5,
    message_id: str = "msg_fake",
) -> dict[str, Any]:
    return {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": text}],
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        },
    }


def anthropic_tool_steps(*calls: tuple[str, dict[str, Any]], text: str = "") -> Scripted:
    """One Messages API step asking for ``calls`` (model-facing name, arguments), in order, after
    ``text`` when given."""
    import uuid

    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    for number, (name, arguments) in enumerate(calls, start=1):
        content.append(
            {
                "type": "tool_use",
                "id": f"toolu_{uuid.uuid4().hex[:8]}_{number}",
                "name": name,
                "input": arguments,
            }
        )
    body = anthropic_text("", stop_reason="tool_use")
    body["content"] = content
    return Scripted(body=body)


def anthropic_tool_use(
    name: str, arguments: dict[str, Any], *, tool_use_id: str = "toolu_fake", model: str = "claude-test"
) -> dict[str, Any]:
    body = anthropic_text("", model=model, stop_reason="tool_use")
    body["content"] = [{"type": "tool_use", "id": tool_use_id, "name": name, "input": arguments}]
    return body


def anthropic_error(status: int, kind: str, message: str, **headers: str) -> Scripted:
    """Such as ``anthropic_error(429, "rate_limit_error", "slow down", **{"retry-after": "3"})``."""
    body = {"type": "error", "error": {"type": kind, "message": message}}
    return Scripted(status, body, dict(headers))


def openai_text(
    text: str,
    *,
    model: str = "gpt-test",
    finish_reason: str = "stop",
    prompt_tokens: int = 10,
    completion_tokens: int = 5,
    completion_id: str = "chatcmpl-fake",
) -> dict[str, Any]:
    return {
        "id": completion_id,
        "object": "chat.completion",
        "created": 1_767_225_600,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text, "refusal": None},
                "logprobs": None,
                "finish_reason": finish_reason,
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def openai_tool_call(
    name: str, arguments: dict[str, Any], *, call_id: str = "call_fake", model: str = "gpt-test"
) -> dict[str, Any]:
    body = openai_text("", model=model, finish_reason="tool_calls")
    message = body["choices"][0]["message"]
    message["content"] = None
    message["tool_calls"] = [
        {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}
    ]
    return body


def openai_error(
    status: int, message: str, *, kind: str = "invalid_request_error", code: str | None = None, **headers: str
) -> Scripted:
    """Such as ``openai_error(400, "too long", code="context_length_exceeded")``."""
    body = {"error": {"message": message, "type": kind, "param": None, "code": code}}
    return Scripted(status, body, dict(headers))


def _defaults() -> dict[str, Response_]:
    return {
        MESSAGES: Scripted(body=anthropic_text("Hello from the fake provider.")),
        CHAT_COMPLETIONS: Scripted(body=openai_text("Hello from the fake provider.")),
        ANTHROPIC_MODELS: Scripted(
            body={
                "data": [
                    {
                        "type": "model",
                        "id": "claude-test",
                        "display_name": "Claude Test",
                        "created_at": "2026-01-01T00:00:00Z",
                    }
                ],
                "has_more": False,
                "first_id": "claude-test",
                "last_id": "claude-test",
            }
        ),
        OPENAI_MODELS: Scripted(
            body={
                "object": "list",
                "data": [{"id": "gpt-test", "object": "model", "created": 1_767_225_600, "owned_by": "fake"}],
            }
        ),
    }


# --- the server ----------------------------------------------------------------------------------


class FakeProviders:
    """The fake provider; see the module's docstring."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._queues: dict[str, deque[Response_]] = {route: deque() for route in ROUTES}
        self._defaults = _defaults()
        self._requests: list[Recorded] = []
        self._in_flight: list[Recorded] = []
        self._most_at_once = 0
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._socket: socket.socket | None = None
        self.port = 0

    # scripting -----------------------------------------------------------------------------------

    def script(self, route: str, *responses: Response_) -> None:
        """Answer the route's next requests with ``responses``, in order, then as before."""
        with self._lock:
            self._queues[_route(route)].extend(responses)

    def set_default(self, route: str, response: Response_) -> None:
        """Answer the route with ``response`` once its queue is empty."""
        with self._lock:
            self._defaults[_route(route)] = response

    def reset(self) -> None:
        """Forget the scripts, the defaults set, the recorded requests and those being answered."""
        with self._lock:
            for queue in self._queues.values():
                queue.clear()
            self._defaults = _defaults()
            self._requests.clear()
            self._in_flight, self._most_at_once = [], 0  # an answer still delayed from before is forgotten

    # what was sent -------------------------------------------------------------------------------

    @property
    def requests(self) -> list[Recorded]:
        with self._lock:
            return list(self._requests)

    @property
    def in_flight(self) -> list[Recorded]:
        """The requests received whose answer is not sent yet (in the order they came)."""
        with self._lock:
            return list(self._in_flight)

    @property
    def most_at_once(self) -> int:
        """The most requests being answered at the same moment (since the start or the last reset)."""
        with self._lock:
            return self._most_at_once

    def requests_to(self, path: str) -> list[Recorded]:
        return [request for request in self.requests if request.path == path]

    def sent_anywhere(self, text: str) -> list[str]:
        """Where ``text`` appeared in what was sent: ``"<n> header <name>"``, ``"<n> path"``, ``"<n>
        body"`` for the n-th request (from 0)."""
        places = []
        for index, request in enumerate(self.requests):
            if text in request.path or text in request.query:
                places.append(f"{index} path")
            places += [f"{index} header {name}" for name, value in request.headers.items() if text in value]
            if text.encode() in request.raw:
                places.append(f"{index} body")
        return places

    # urls ----------------------------------------------------------------------------------------

    @property
    def url(self) -> str:
        """The Anthropic base URL (the SDKs add ``/v1/messages``)."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_base_url(self) -> str:
        """The OpenAI base URL (the SDKs add ``/chat/completions``)."""
        return self.url + "/v1"

    # serving -------------------------------------------------------------------------------------

    def __enter__(self) -> FakeProviders:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        sock.listen(64)
        self._socket, self.port = sock, sock.getsockname()[1]
        config = uvicorn.Config(
            self.app(), log_level="warning", access_log=False, lifespan="off", timeout_graceful_shutdown=1
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run,
            kwargs={"sockets": [sock]},
            name=f"fake-providers-{self.port}",
            daemon=True,
        )
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the fake provider did not start")
            time.sleep(0.01)

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
        if self._socket is not None:
            self._socket.close()
        self._server = self._thread = self._socket = None

    def app(self) -> Starlette:
        async def messages(request: Request) -> Response:
            return await self._answer(MESSAGES, request)

        async def chat_completions(request: Request) -> Response:
            return await self._answer(CHAT_COMPLETIONS, request)

        async def models(request: Request) -> Response:
            anthropic = "anthropic-version" in request.headers
            return await self._answer(ANTHROPIC_MODELS if anthropic else OPENAI_MODELS, request)

        async def elsewhere(request: Request) -> Response:
            await self._record(request)
            return JSONResponse({"error": f"the fake provider has no {request.url.path}"}, status_code=404)

        methods = ["GET", "POST", "PUT", "PATCH", "DELETE"]
        return Starlette(
            routes=[
                Route("/v1/messages", messages, methods=["POST"]),
                Route("/v1/chat/completions", chat_completions, methods=["POST"]),
                Route("/v1/models", models, methods=["GET"]),
                Route("/{path:path}", elsewhere, methods=methods),
            ]
        )

    async def _record(self, request: Request) -> Recorded:
        raw = await request.body()
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        recorded = Recorded(
            method=request.method,
            path=request.url.path,
            headers={name.lower(): value for name, value in request.headers.items()},
            body=body,
            raw=raw,
            query=request.url.query,
        )
        with self._lock:
            self._requests.append(recorded)
        return recorded

    async def _answer(self, route: str, request: Request) -> Response:
        recorded = await self._record(request)
        with self._lock:
            queue = self._queues[route]
            response = queue.popleft() if queue else self._defaults[route]
            self._in_flight.append(recorded)
            self._most_at_once = max(self._most_at_once, len(self._in_flight))
        try:
            scripted = response(recorded) if callable(response) else response
            if scripted.delay:
                await asyncio.sleep(scripted.delay)
        finally:
            with self._lock:
                self._in_flight = [other for other in self._in_flight if other is not recorded]
        if scripted.body is None:
            return Response(status_code=scripted.status, headers=scripted.headers)
        return JSONResponse(scripted.body, status_code=scripted.status, headers=scripted.headers)


def _route(route: str) -> str:
    if route not in ROUTES:
        raise ValueError(f"unknown route {route!r}; one of {', '.join(ROUTES)}")
    return route


@contextmanager
def fake_providers() -> Iterator[FakeProviders]:
    """A started :class:`FakeProviders`, stopped at the end of the block (for a fixture)."""
    with FakeProviders() as fake:
        yield fake
