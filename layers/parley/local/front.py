"""The local server's HTTP front: uvicorn, with timeouts and limits, every error a problem document.

``parley serve`` is an HTTP server people point tools, agents and load tests at, so it is served by a
well-kept one (uvicorn over h11, already installed with ``mcp``) rather than ``http.server``: h11 refuses
malformed request lines, conflicting ``Content-Length`` headers and oversized headers, and uvicorn closes
idle keep-alive connections. What the front adds:

- **Problem documents wherever the server lets the application answer.** A request h11 cannot read is
  answered ``400`` ``bad_request`` as ``application/problem+json`` (uvicorn's own answer is plain text);
  a body over the limit ``413`` ``content_too_large``; a body that stops arriving ``400``
  ``bad_request`` (the API's problems have no 408); a request the queue cannot take ``503``
  ``unavailable``.
- **Timeouts.** A connection must send its request line and headers within ``header_seconds`` of
  opening (or of its previous answer), and each part of a body within ``body_seconds``; otherwise it is
  closed (with that ``400`` when a body was under way). Idle keep-alive connections close after
  ``keep_alive_seconds``. A request being handled has no limit: a run call waits for its run.
- **Threads and a queue.** The handlers are blocking (the server serializes them under its lock), so
  each request is handed to a bounded pool of threads: ``max_in_flight`` (32) at once. A burst beyond
  that waits, first come first served, in a queue of at most ``max_queued`` (1,024) requests, each for at
  most ``queue_seconds`` (30 s); a request that finds the queue full, or waits that long, is answered
  ``503`` ``unavailable`` with ``Retry-After: 1`` (issue 27, "Bursts are queued, not refused").
- **Which requests it answers** (``parley.local.request_guard``): only a ``Host`` that names this server,
  and no credentials in a query string (both ``400`` ``bad_request``). The access log (one line a request,
  on stderr) drops the query parameters that carry credentials.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import socket
import sys
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from parley.front.asgi import title_case
from parley.local.events import HttpReply
from parley.local.request_guard import HostCheck, credential_parameters, loggable_target

if TYPE_CHECKING:
    import uvicorn

__all__ = ["Answer", "FrontLimits", "HttpFront", "listening_socket"]

#: ``answer(method, target, headers, body, client_ip)``: one request's reply (blocking).
Answer = Callable[[str, str, list[tuple[str, str]], bytes, str], HttpReply]

PROBLEM_TYPE: Final = b"application/problem+json"


@dataclass(frozen=True)
class FrontLimits:
    #: API Gateway refuses payloads over 10 MB before the function sees them; the front does the same.
    max_body: int = 10 * 1024 * 1024
    #: The request line and headers, at most (h11's limit on an incomplete event).
    max_header_bytes: int = 64 * 1024
    header_seconds: float = 10.0
    body_seconds: float = 30.0
    keep_alive_seconds: float = 5.0
    #: Requests handled at once (each on a thread of the pool); more wait in the queue.
    max_in_flight: int = 32
    #: Requests waiting for a thread, at most; one more is answered 503 at once.
    max_queued: int = 1024
    #: How long a request waits in the queue, at most, before it is answered 503.
    queue_seconds: float = 30.0


def listening_socket(host: str, port: int) -> socket.socket:
    """A socket bound and listening on ``host:port`` (``0``: a free port), IPv4 or IPv6 as ``host`` is.
    Listening first makes a port in use fail before anything else is set up."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    return socket.create_server((host, port), family=family, backlog=1024)


class HttpFront:
    """uvicorn serving :class:`FrontApp` on an already listening socket, on a thread of its own."""

    def __init__(
        self,
        sock: socket.socket,
        answer: Answer,
        limits: FrontLimits | None = None,
        *,
        names: tuple[str, ...] = (),
        allow_hosts: tuple[str, ...] = (),
    ) -> None:
        """``names``: what ``--host`` named (answered in ``Host`` beside the address); ``allow_hosts``:
        the ``--allow-host`` values (see :class:`parley.local.request_guard.HostCheck`)."""
        self.sock = sock
        self.limits = limits or FrontLimits()
        host, port = self.address
        self.app = FrontApp(answer, self.limits, HostCheck.of(host, port, names, allow_hosts))
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def address(self) -> tuple[str, int]:
        host, port = self.sock.getsockname()[:2]
        return str(host), int(port)

    def start(self) -> None:
        import uvicorn

        config = uvicorn.Config(
            self.app,
            http=_protocol_class(self.limits),
            ws="none",
            lifespan="off",
            interface="asgi3",
            loop="asyncio",
            log_config=None,
            access_log=False,
            server_header=False,
            proxy_headers=False,
            timeout_keep_alive=max(1, round(self.limits.keep_alive_seconds)),
            timeout_graceful_shutdown=2,
            h11_max_incomplete_event_size=self.limits.max_header_bytes,
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [self.sock]}, name="parley-http", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=5)
        self.sock.close()
        self.app.close()


class _Gone(Exception):
    """The client went away before its request was whole."""


class FrontApp:
    """The ASGI application: checks the ``Host`` and the query, reads the body within the limits, waits
    its turn in the queue, answers on the pool, logs one line. Everything but the answer itself runs on
    the event loop's one thread, so the counts need no lock."""

    def __init__(self, answer: Answer, limits: FrontLimits, hosts: HostCheck) -> None:
        self.answer = answer
        self.limits = limits
        self.hosts = hosts
        self.pool = ThreadPoolExecutor(max_workers=limits.max_in_flight, thread_name_prefix="parley-request")
        self.in_flight = 0
        #: The requests waiting for a thread, first come first served; each is handed its place.
        self.waiting: collections.deque[asyncio.Future[None]] = collections.deque()

    def close(self) -> None:
        self.pool.shutdown(wait=False, cancel_futures=True)

    async def __call__(
        self, scope: dict[str, Any], receive: Callable[..., Any], send: Callable[..., Any]
    ) -> None:
        if scope["type"] != "http":
            return
        method, target = scope["method"], _target(scope)
        client = (scope.get("client") or ("127.0.0.1", 0))[0]
        try:
            reply = await self._reply(scope, receive, method, target, client)
        except _Gone:
            return
        except Exception as exc:  # never uvicorn's plain-text 500: the handlers' own errors are problems
            reply = _problem("internal", "The local server failed to answer this request.")
            print(f"parley serve: {method} {loggable_target(target)}: {exc!r}", file=sys.stderr)
        closing = isinstance(reply, _Unread)  # the rest of its body is not read: the connection closes
        headers = [
            (name.lower().encode("latin-1"), value.encode("latin-1"))
            for name, value in reply.headers
            if name.lower() not in ("content-length", "connection", "transfer-encoding")
        ]
        headers.append((b"content-length", str(len(reply.body)).encode("ascii")))
        if closing:
            headers.append((b"connection", b"close"))
        await send({"type": "http.response.start", "status": reply.status, "headers": headers})
        await send({"type": "http.response.body", "body": reply.body})
        sys.stderr.write(
            f'{client} "{method} {loggable_target(target)} HTTP/{scope.get("http_version", "1.1")}" '
            f"{reply.status}\n"
        )

    async def _reply(
        self, scope: dict[str, Any], receive: Callable[..., Any], method: str, target: str, client: str
    ) -> HttpReply:
        headers = [
            (title_case(bytes(name).decode("latin-1")), bytes(value).decode("latin-1"))
            for name, value in scope["headers"]
        ]
        refused = self._refusal(target, headers)
        if refused is not None:
            return _Unread.of("bad_request", refused)
        declared = next((value for name, value in headers if name.lower() == "content-length"), None)
        if declared is not None and declared.isdigit() and int(declared) > self.limits.max_body:
            return self._too_large()
        body = bytearray()
        more = True
        while more:
            try:
                message = await asyncio.wait_for(receive(), timeout=self.limits.body_seconds)
            except TimeoutError:
                return _Unread.of(
                    "bad_request",
                    f"The body stopped arriving: nothing came for {self.limits.body_seconds:g} seconds.",
                )
            if message["type"] == "http.disconnect":
                raise _Gone
            body.extend(message.get("body", b""))
            if len(body) > self.limits.max_body:
                return self._too_large()
            more = bool(message.get("more_body", False))
        full = await self._take_place()
        if full is not None:
            reply = _problem("unavailable", full)
            return HttpReply(reply.status, [*reply.headers, ("Retry-After", "1")], reply.body)
        try:
            loop = asyncio.get_running_loop()
            return await loop.run_in_executor(
                self.pool, self.answer, method, target, headers, bytes(body), client
            )
        finally:
            self._leave_place()

    def _refusal(self, target: str, headers: list[tuple[str, str]]) -> str | None:
        """Why the request is refused before it is read (a foreign ``Host``, a credential in the query),
        or ``None``."""
        hosts = [value for name, value in headers if name.lower() == "host"]
        if len(hosts) > 1:
            return "Send one Host header."
        refused = self.hosts.refusal(hosts[0] if hosts else None)
        if refused is not None:
            return refused
        carried = credential_parameters(target)
        if carried:
            names = ", ".join(repr(name[:100]) for name in carried)
            return (
                f"A credential is never sent in a URL (query parameter {names}): URLs are kept in logs and "
                "browser history. Send the header Authorization: Bearer <token>."
            )
        return None

    async def _take_place(self) -> str | None:
        """Wait for one of the ``max_in_flight`` places (first come first served); why not, or ``None``
        once this request holds a place."""
        if self.in_flight < self.limits.max_in_flight and not self.waiting:
            self.in_flight += 1
            return None
        if len(self.waiting) >= self.limits.max_queued:
            return (
                f"The local server is answering {self.limits.max_in_flight} requests and "
                f"{self.limits.max_queued:,} more are waiting; try again in a moment."
            )
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.waiting.append(turn)
        try:
            await asyncio.wait_for(turn, timeout=self.limits.queue_seconds)
        except TimeoutError:
            if turn.done() and not turn.cancelled():  # handed a place as the wait ended: keep it
                return None
            self._forget(turn)
            return (
                f"The local server is busy: this request waited {self.limits.queue_seconds:g} seconds for "
                f"one of the {self.limits.max_in_flight} requests it answers at once; try again in a moment."
            )
        except BaseException:  # the request's task was cancelled: give back a place it was handed
            if turn.done() and not turn.cancelled():
                self._leave_place()
            else:
                self._forget(turn)
            raise
        return None

    def _forget(self, turn: asyncio.Future[None]) -> None:
        with contextlib.suppress(ValueError):
            self.waiting.remove(turn)

    def _leave_place(self) -> None:
        """Hand this request's place to the first one waiting, or give it back."""
        while self.waiting:
            turn = self.waiting.popleft()
            if not turn.done():
                turn.set_result(None)
                return
        self.in_flight -= 1

    def _too_large(self) -> HttpReply:
        return _Unread.of("content_too_large", f"A body is at most {self.limits.max_body:,} bytes here.")


def _target(scope: dict[str, Any]) -> str:
    """The request line's path and query, as the client sent them (still percent-encoded)."""
    raw = scope.get("raw_path") or scope["path"].encode("utf-8")
    path = bytes(raw).decode("latin-1")
    query = bytes(scope.get("query_string") or b"").decode("latin-1")
    return f"{path}?{query}" if query else path


def _problem(reason: str, detail: str) -> HttpReply:
    from parley.api.problems import problem_result
    from parley.errors import Problem
    from parley.local.events import http_reply

    return http_reply(problem_result(Problem(reason, detail)))


class _Unread(HttpReply):
    """A problem answered before the request's body was read to its end."""

    @classmethod
    def of(cls, reason: str, detail: str) -> _Unread:
        reply = _problem(reason, detail)
        return cls(reply.status, reply.headers, reply.body)


def _protocol_class(limits: FrontLimits) -> type[asyncio.Protocol]:
    """uvicorn's h11 protocol with a deadline for each request's line and headers and with problem
    documents for the requests h11 refuses."""
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class Protocol(H11Protocol):
        _deadline: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            # An answer's head and body go out as two writes; without TCP_NODELAY the body waits for the
            # client's delayed ACK of the head (about 40 ms on Linux) on every keep-alive request.
            sock = transport.get_extra_info("socket")
            if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing():
                self._arm()

        def _arm(self) -> None:
            self._disarm()
            self._deadline = self.loop.call_later(limits.header_seconds, self._headers_too_slow)

        def _disarm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _headers_too_slow(self) -> None:
            """The deadline passed: close unless a request is under way (its body has its own timeout;
            its handling none)."""
            self._deadline = None
            if self.cycle is not None and not self.cycle.response_complete:
                return
            if not self.transport.is_closing():
                self.transport.close()

        def send_400_response(self, msg: str) -> None:
            reply = _problem("bad_request", "The request is not HTTP/1.1 this server can read.")
            headers = [
                (b"content-type", PROBLEM_TYPE),
                (b"content-length", str(len(reply.body)).encode("ascii")),
                (b"connection", b"close"),
            ]
            try:
                self.transport.write(self.conn.send(h11.Response(status_code=400, headers=headers)) or b"")
                self.transport.write(self.conn.send(h11.Data(data=reply.body)) or b"")
                self.transport.write(self.conn.send(h11.EndOfMessage()) or b"")
            except h11.LocalProtocolError:  # h11 cannot answer in this state: the connection just closes
                pass
            self.transport.close()

    return Protocol
