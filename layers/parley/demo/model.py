"""``parley demo-model``: a deterministic model on this machine, to try reasoning functions offline
(``http-api.md``, "Model providers").

One process, one port (127.0.0.1:9100 by default), two APIs:

- OpenAI-compatible Chat Completions, base URL ``http://127.0.0.1:9100/v1``: ``POST
  /v1/chat/completions`` and ``GET /v1/models``. ``examples/operator.yaml`` names it as the gateway
  ``demo`` (``demo/echo``); ``OPENAI_BASE_URL`` with ``OPENAI_API=chat_completions`` reaches it too.
- Anthropic Messages, base URL ``http://127.0.0.1:9100/anthropic`` (``ANTHROPIC_BASE_URL``): ``POST
  /anthropic/v1/messages`` and ``GET /anthropic/v1/models``. ``POST /v1/messages`` answers as well, and
  ``GET /v1/models`` answers in Anthropic's shape to a request with an ``anthropic-version`` header,
  so the bare ``http://127.0.0.1:9100`` also works as an Anthropic base URL.

Any model name is answered (the list offers ``echo``), and any key or none is accepted. What it
answers (``parley.demo.model_answers``): text that restates the message, JSON made to match the
requested schema (``parley.demo.model_schema``), or a call of a tool the message names with the JSON
written after its name (words instead, when what the tool requires is not written). The same request
always gets the same answer; only ``created`` follows the clock. It does not stream.
``docs/demo-model.md`` is its page for people; ``make demo`` serves it beside Parley and the demo chat
(``parley.demo.together``, ``examples/operator-demo.yaml``).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any, Final

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from parley.demo import model_anthropic, model_openai
from parley.demo.model_answers import answer
from parley.demo.model_openai import BadRequest
from parley.listening import listen_failure

__all__ = ["DemoModel", "DemoModelOptions", "build_app", "running", "serve"]

DEFAULT_PORT: Final = 9100
MAX_BODY: Final = 8 * 1024 * 1024
ANTHROPIC_PREFIX: Final = "/anthropic"


@dataclass(frozen=True)
class DemoModelOptions:
    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT


@dataclass(frozen=True)
class DemoModel:
    """A demo model being served, and its base URLs."""

    host: str
    port: int

    @property
    def url(self) -> str:
        shown = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{shown}:{self.port}"

    @property
    def openai_base_url(self) -> str:
        """What a gateway's ``base_url`` (or ``OPENAI_BASE_URL``) is set to."""
        return self.url + "/v1"

    @property
    def anthropic_base_url(self) -> str:
        """What ``ANTHROPIC_BASE_URL`` is set to."""
        return self.url + ANTHROPIC_PREFIX


def build_app(clock: Callable[[], float] = time.time) -> Starlette:
    """The demo model's routes; ``clock`` gives ``created`` (Unix seconds)."""

    async def chat_completions(request: Request) -> Response:
        async def handle(body: Any) -> Response:
            conversation = model_openai.read_request(body)
            return JSONResponse(
                model_openai.completion(body, answer(conversation), _digest(body), int(clock()))
            )

        return await _answering(request, handle, model_openai.error_body)

    async def messages(request: Request) -> Response:
        async def handle(body: Any) -> Response:
            conversation = model_anthropic.read_request(body)
            return JSONResponse(model_anthropic.message(body, answer(conversation), _digest(body)))

        return await _answering(request, handle, lambda message, param: model_anthropic.error_body(message))

    async def models(request: Request) -> Response:
        if "anthropic-version" in request.headers:
            return JSONResponse(model_anthropic.model_list())
        return JSONResponse(model_openai.model_list())

    async def anthropic_models(request: Request) -> Response:
        return JSONResponse(model_anthropic.model_list())

    async def not_found(request: Request) -> Response:
        return JSONResponse(
            model_openai.error_body(
                f"no route {request.url.path}: the demo model serves /v1/chat/completions, /v1/models, "
                f"{ANTHROPIC_PREFIX}/v1/messages and {ANTHROPIC_PREFIX}/v1/models"
            ),
            status_code=404,
        )

    routes = [
        Route("/v1/chat/completions", chat_completions, methods=["POST"]),
        Route("/v1/models", models, methods=["GET"]),
        Route("/v1/messages", messages, methods=["POST"]),
        Route(f"{ANTHROPIC_PREFIX}/v1/messages", messages, methods=["POST"]),
        Route(f"{ANTHROPIC_PREFIX}/v1/models", anthropic_models, methods=["GET"]),
    ]
    app = Starlette(routes=routes)

    async def missing(request: Request, exc: Exception) -> Response:
        return await not_found(request)

    app.add_exception_handler(404, missing)
    return app


async def _answering(
    request: Request,
    handle: Callable[[Any], Awaitable[Response]],
    error_body: Callable[[str, str | None], dict[str, Any]],
) -> Response:
    """Read the JSON body and answer it; a body the demo model cannot read answers ``400`` in the API's
    own error shape."""
    raw = await request.body()
    if len(raw) > MAX_BODY:
        return JSONResponse(error_body(f"the body is at most {MAX_BODY:,} bytes", None), status_code=413)
    try:
        body = json.loads(raw)
    except ValueError:
        return JSONResponse(error_body("the body is not JSON", None), status_code=400)
    try:
        return await handle(body)
    except BadRequest as exc:
        return JSONResponse(error_body(str(exc), exc.param), status_code=400)
    except (AttributeError, TypeError, KeyError, ValueError):
        return JSONResponse(error_body("the request does not have the API's shape", None), status_code=400)


def _digest(body: Any) -> str:
    """An id that is the same for the same request."""
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()[:24]


@contextlib.contextmanager
def running(options: DemoModelOptions) -> Iterator[DemoModel]:
    """A demo model served from a background thread of this process (``port`` 0 picks one); stopped on
    exit. For tests; ``parley demo-model`` runs :func:`serve`."""
    from parley.demo.server import listen, uvicorn_server

    sock = listen(options.host, options.port)
    port = sock.getsockname()[1]
    server = uvicorn_server(build_app())
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, name="demo-model", daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the demo model did not start")
            time.sleep(0.01)
        yield DemoModel(options.host, port)
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


def serve(options: DemoModelOptions) -> int:
    """Serve the demo model until SIGTERM or Ctrl-C; returns the exit code (0 on a clean stop)."""
    from parley.demo.server import PORT_HINT, listen, uvicorn_server

    try:
        sock = listen(options.host, options.port)
    except OSError as exc:
        print(
            f"parley demo-model: {listen_failure(options.host, options.port, exc, PORT_HINT)}",
            file=sys.stderr,
        )
        return 1
    with sock:
        demo = DemoModel(options.host, sock.getsockname()[1])
        server = uvicorn_server(build_app())
        print(
            f"The demo model is serving {demo.url}: OpenAI-compatible base URL {demo.openai_base_url} "
            f"(the gateway demo of examples/operator.yaml), Anthropic base URL {demo.anthropic_base_url}. "
            "Ctrl-C stops it.",
            flush=True,
        )
        server.run(sockets=[sock])
    return 0
