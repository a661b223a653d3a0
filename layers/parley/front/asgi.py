"""An API Gateway REST proxy event (payload 1.0) through an ASGI application, and the application's
answer back as a proxy result.

Small on purpose, rather than an adapter package such as Mangum: the MCP server's session manager must
be run per request (its ``run()`` may be entered once per instance, while an adapter runs the ASGI
lifespan around every invocation), and a process-wide event loop bound to one thread does not suit the
local server, which answers on a thread per connection. Each event runs on its own event loop
(``asyncio.run``) in the calling thread, so the synchronous services the tools call see the thread
they were called from.

The whole body is read before the application runs and the whole answer is collected (API Gateway
neither streams a request nor a response through a Lambda proxy integration). ``asyncio`` is imported
when an application runs: a request answered without one (``parley.front.direct``) never loads it.
"""

from __future__ import annotations

import base64
from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from dataclasses import dataclass, field
from typing import Any, Final
from urllib.parse import urlencode

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

#: Media types answered as text (the rest is base64, as API Gateway expects binary bodies).
_TEXT_TYPES: Final = ("text/", "application/json", "application/problem+json")


@dataclass
class Reply:
    """What the application answered."""

    status: int = 500
    headers: list[tuple[str, str]] = field(default_factory=list)
    body: bytearray = field(default_factory=bytearray)


def http_scope(event: Mapping[str, Any], body: bytes) -> Scope:
    """The ASGI HTTP scope of a REST proxy event (header names lowercased, as ASGI wants them)."""
    headers: list[tuple[bytes, bytes]] = []
    multi = event.get("multiValueHeaders") or {}
    if multi:
        for name, values in multi.items():
            headers.extend((name.lower().encode("latin-1"), str(v).encode("latin-1")) for v in values or ())
    else:
        for name, value in (event.get("headers") or {}).items():
            headers.append((name.lower().encode("latin-1"), str(value).encode("latin-1")))
    query = event.get("multiValueQueryStringParameters") or event.get("queryStringParameters") or {}
    identity = (event.get("requestContext") or {}).get("identity") or {}
    path = str(event.get("path") or "/")
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": str(event.get("httpMethod") or "GET").upper(),
        "scheme": "https",
        "path": path,
        "raw_path": path.encode("utf-8"),
        "root_path": "",
        "query_string": urlencode(query, doseq=True).encode("ascii"),
        "headers": headers,
        "client": (str(identity.get("sourceIp") or "0.0.0.0"), 0),
        "server": None,
        "state": {},
        "aws.event": event,
        "aws.body_size": len(body),
    }


def request_body(event: Mapping[str, Any]) -> bytes:
    """The event's body as bytes (``ValueError`` when it claims base64 and is not)."""
    body = event.get("body")
    if not body:
        return b""
    if event.get("isBase64Encoded"):
        return base64.b64decode(body, validate=True)
    return str(body).encode("utf-8")


def run(app: App, event: Mapping[str, Any], body: bytes) -> Reply:
    """Run ``app`` on the event (on a fresh event loop) and collect its answer.

    Lambda and the local server call it from a thread that runs no loop. A caller that runs one in
    its thread (a test under an async framework) has the exchange run on a thread of its own."""
    from parley.coroutines import run_sync

    scope = http_scope(event, body)
    return run_sync(lambda: exchange(app, scope, body), thread_name="parley-mcp-exchange")


async def exchange(app: App, scope: Scope, body: bytes) -> Reply:
    import asyncio

    reply = Reply()
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        # Nothing more comes: the request is whole, and the client waits for the whole answer.
        await asyncio.Event().wait()
        return {"type": "http.disconnect"}  # pragma: no cover - the wait above never ends

    async def send(message: Message) -> None:
        if message["type"] == "http.response.start":
            reply.status = int(message["status"])
            reply.headers = [
                (bytes(name).decode("latin-1"), bytes(value).decode("latin-1"))
                for name, value in message.get("headers") or ()
            ]
        elif message["type"] == "http.response.body":
            reply.body.extend(message.get("body") or b"")

    await app(scope, receive, send)
    return reply


def proxy_result(reply: Reply, extra_headers: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The REST proxy result of ``reply`` (text bodies as text, others base64)."""
    multi: dict[str, list[str]] = {}
    for name, value in reply.headers:
        if name.lower() in ("content-length", "transfer-encoding", "connection"):
            continue
        multi.setdefault(title_case(name), []).append(value)
    for name, value in (extra_headers or {}).items():
        multi[title_case(name)] = [value]
    content_type = next(iter(multi.get("Content-Type", [])), "")
    raw = bytes(reply.body)
    if not raw or content_type.lower().startswith(_TEXT_TYPES):
        try:
            text, encoded = raw.decode("utf-8"), False
        except UnicodeDecodeError:
            text, encoded = base64.b64encode(raw).decode("ascii"), True
    else:
        text, encoded = base64.b64encode(raw).decode("ascii"), True
    return {"statusCode": reply.status, "multiValueHeaders": multi, "body": text, "isBase64Encoded": encoded}


def title_case(name: str) -> str:
    """``content-type`` → ``Content-Type``: a header's name as HTTP/1.1 clients write it (HTTP/2 and h11
    lower them; API Gateway's events keep the client's)."""
    return "-".join(part[:1].upper() + part[1:] for part in name.split("-"))
