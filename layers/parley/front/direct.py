"""The requests the MCP front door answers itself, without the mcp package: ``initialize``,
``notifications/initialized``, ``ping`` and ``tools/list`` of the handshake era (protocol revisions
2024-11-05 to 2025-11-25), sent plainly.

Why: importing the mcp package takes over a second (its types are pydantic models of every protocol
revision, and the package brings its client, starlette and an SSE server) — twice a bare function's
whole cold start — for answers that are fixed text and the caller's tools (issue 20). These four are
what an agent sends first, often to a function that has just started.

The answers are the package's own (``tests/unit/front/test_direct.py`` compares the two for each method,
revision, principal and endpoint): the same status, headers and JSON — envelope, tools
(``parley.front.server.tools_listed``) and instructions — but for the order of a schema's keys, which
the package writes its own keywords first. Anything else goes to the package as before —
:func:`answer_directly` answers ``None`` — so it alone judges what it might refuse or weigh: another
method, a 2026-07-28 request, ``params`` beyond the plain ones (``_meta``, a cursor, an unknown
capability), a batch, a header or body it checks (``Accept``, ``Content-Type``, ``Content-Length``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from parley.config import Principal
    from parley.front.target import Target

#: The revisions of the ``initialize`` handshake, oldest first (``mcp_types.version``).
HANDSHAKE_VERSIONS: Final = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
#: What the package answers a client offering a revision it does not know.
LATEST_HANDSHAKE_VERSION: Final = HANDSHAKE_VERSIONS[-1]
#: What the server declares: tools and resources (guides), neither of which changes or is subscribed to.
CAPABILITIES: Final = {
    "resources": {"listChanged": False, "subscribe": False},
    "tools": {"listChanged": False},
}

_MESSAGE_KEYS: Final = frozenset({"jsonrpc", "id", "method", "params"})
_CLIENT_INFO_KEYS: Final = frozenset({"name", "version", "title", "description", "websiteUrl"})
#: A JSON-RPC id the package reads as it is: text, or a whole number a JSON parser keeps exactly.
_LARGEST_ID: Final = 2**53


def answer_directly(
    event: Mapping[str, Any], body: bytes, principal: Principal, target: Target
) -> dict[str, Any] | None:
    """The proxy result of a plain handshake-era request this module answers, else ``None`` (the mcp
    package answers it). ``body`` is the request's, already under the front door's limit."""
    from parley.front import asgi

    headers = asgi.http_scope(event, body)["headers"]
    if not _plain_json_post(headers):
        return None
    message = _message(body)
    if message is None:
        return None
    method = message["method"]
    if "id" not in message:
        if method == "notifications/initialized" and not message.get("params"):
            return _reply(202, b"")
        return None
    params = message.get("params")
    result: dict[str, Any]
    if method in ("ping", "tools/list") and params in (None, {}):
        result = {} if method == "ping" else _tools(principal, target)
    elif method == "initialize":
        offered = _offered_version(params)
        if offered is None:
            return None
        result = _initialized(offered, principal, target)
    else:
        return None
    envelope = {"jsonrpc": "2.0", "id": message["id"], "result": result}
    return _reply(200, json.dumps(envelope, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))


def _tools(principal: Principal, target: Target) -> dict[str, Any]:
    from parley.front.server import tools_listed

    return tools_listed(principal, target)


def _initialized(offered: str, principal: Principal, target: Target) -> dict[str, Any]:
    from parley.api.openapi import api_version
    from parley.front.server import DESCRIPTION, NAME, TITLE, instructions

    return {
        "capabilities": CAPABILITIES,
        "instructions": instructions(principal, target),
        "protocolVersion": offered if offered in HANDSHAKE_VERSIONS else LATEST_HANDSHAKE_VERSION,
        "serverInfo": {"description": DESCRIPTION, "name": NAME, "title": TITLE, "version": api_version()},
    }


def _reply(status: int, body: bytes) -> dict[str, Any]:
    from parley.front import asgi

    reply = asgi.Reply(status, [("content-type", "application/json")], bytearray(body))
    return asgi.proxy_result(reply, {"Cache-Control": "no-store"})


# --- what the package would check first -------------------------------------------------------------


def _plain_json_post(headers: Sequence[tuple[bytes, bytes]]) -> bool:
    """Whether the headers pass the package's checks of a stateless, JSON-answered POST (each header
    read as the package reads it: its first value), at a handshake revision."""
    from parley.api.requests import MAX_BODY_BYTES

    content_type = _first(headers, b"content-type")
    if content_type is None or not content_type.lower().startswith("application/json"):
        return False
    if "application/json" not in [part.strip() for part in content_type.split(";")[0].split(",")]:
        return False
    version = _first(headers, b"mcp-protocol-version")
    if version is not None and version not in HANDSHAKE_VERSIONS:
        return False
    length = _first(headers, b"content-length")
    if length is not None:
        try:
            if int(length) > MAX_BODY_BYTES:
                return False
        except ValueError:
            pass
    accepted = [
        kind.strip().split(";")[0].strip().lower() for kind in (_first(headers, b"accept") or "").split(",")
    ]
    return any(kind in ("*/*", "application/json", "application/*") for kind in accepted)


def _first(headers: Sequence[tuple[bytes, bytes]], name: bytes) -> str | None:
    return next((value.decode("latin-1") for key, value in headers if key == name), None)


def _message(body: bytes) -> dict[str, Any] | None:
    """One JSON-RPC request or notification, plainly written (no batch, no key twice, no NaN, a text or
    whole-number id), else ``None``."""
    try:
        message = json.loads(body.decode("utf-8"), object_pairs_hook=_once, parse_constant=_no_constant)
    except ValueError:
        return None
    if not isinstance(message, dict) or not message.keys() <= _MESSAGE_KEYS:
        return None
    if message.get("jsonrpc") != "2.0" or not isinstance(message.get("method"), str):
        return None
    if "id" in message and not _plain_id(message["id"]):
        return None
    return message


def _once(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found = dict(pairs)
    if len(found) != len(pairs):
        raise ValueError("a key twice")
    return found


def _no_constant(name: str) -> Any:
    raise ValueError(name)


def _plain_id(value: Any) -> bool:
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate
            return False
        return True
    return isinstance(value, int) and not isinstance(value, bool) and -_LARGEST_ID < value < _LARGEST_ID


def _offered_version(params: Any) -> str | None:
    """The revision an ``initialize`` offers, when its params are plainly what the package reads
    (``protocolVersion``, ``capabilities`` of the known kinds, a ``clientInfo`` of texts)."""
    if not isinstance(params, dict) or params.keys() != {"protocolVersion", "capabilities", "clientInfo"}:
        return None
    offered, capabilities, client = params["protocolVersion"], params["capabilities"], params["clientInfo"]
    if not isinstance(offered, str) or not _plain_capabilities(capabilities):
        return None
    if not isinstance(client, dict) or not client.keys() <= _CLIENT_INFO_KEYS:
        return None
    if "name" not in client or "version" not in client:
        return None
    return offered if all(isinstance(value, str) for value in client.values()) else None


def _plain_capabilities(capabilities: Any) -> bool:
    if not isinstance(capabilities, dict):
        return False
    for name, value in capabilities.items():
        if not isinstance(value, dict):
            return False
        if name == "roots":
            if not value.keys() <= {"listChanged"} or not all(isinstance(v, bool) for v in value.values()):
                return False
        elif name in ("sampling", "elicitation"):
            allowed = {"context", "tools"} if name == "sampling" else {"form", "url"}
            if not value.keys() <= allowed or not all(isinstance(v, dict) for v in value.values()):
                return False
        elif name == "experimental":
            if not all(isinstance(v, dict) for v in value.values()):
                return False
        else:  # tasks, or one the package may read in a way of its own
            return False
    return True
