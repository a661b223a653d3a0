"""What keeps other websites from driving ``parley serve`` (issue 27, "A local server no other website
can drive"): the ``Host`` check and the refusal of credentials in a query string.

- **Host.** A page the developer visits can make the browser send requests to ``127.0.0.1:8000``; with
  DNS rebinding (a name of the attacker's that first resolves to their server, then to 127.0.0.1) it can
  even read the answers, as the page and the server then share an origin. The browser still sends the
  attacker's name in ``Host``, so the server answers only a ``Host`` that names it: the address it
  listens on, ``localhost``, ``127.0.0.1`` or ``[::1]`` (with the port it listens on, or none), any IP
  address when it listens on all of them (``0.0.0.0``, ``::``: an address cannot be rebound), and the
  names ``--allow-host`` gives (``NAME``: any port, ``NAME:PORT``: that port only). Any other is answered
  ``400 bad_request``: the contract's problems (``http-api.md``, "Problems") have no ``421``, and HTTP
  answers a missing or unusable ``Host`` with 400 (RFC 9112, section 3.2).
- **Credentials in a query string.** URLs are written to logs, browser history and ``Referer``
  headers, so a query parameter named like a credential (``token``, ``access_token``, ``api_key``,
  ``password``, …) is refused with ``400 bad_request``, and the access log drops such parameters from the
  line it writes.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final
from urllib.parse import unquote_plus

__all__ = [
    "HostCheck",
    "allow_host_value",
    "carries_credential",
    "credential_parameters",
    "loggable_target",
    "parse_host",
]

#: Names that always name this machine's own server (with its port, or none).
LOOPBACK_NAMES: Final = frozenset({"localhost", "127.0.0.1", "[::1]"})
#: Query parameter names that carry credentials (compared in lower case, ``-`` read as ``_``); any
#: name that ends in ``token`` or ``secret`` does too. No route of the API takes one of these names.
CREDENTIAL_NAMES: Final = frozenset(
    {
        "access_token",
        "api_key",
        "apikey",
        "auth",
        "authorization",
        "bearer",
        "client_secret",
        "jwt",
        "key",
        "password",
        "passwd",
        "pwd",
        "secret",
        "sig",
        "signature",
        "token",
    }
)


#: Query parameters a route takes that must not be logged either: the OAuth callback's ``code`` and
#: ``state`` (``GET /v1/oauth/callback``, ``parley.api.oauth``); the log keeps their names only.
UNLOGGED_NAMES: Final = frozenset({"code", "state"})


def carries_credential(name: str) -> bool:
    """Whether a query parameter of this name (decoded) carries a credential."""
    folded = name.strip().lower().replace("-", "_")
    return folded in CREDENTIAL_NAMES or folded.endswith(("token", "secret"))


def _parameters(query: str) -> list[tuple[str, str]]:
    """Each ``name=value`` segment of a raw query string, with its decoded name."""
    return [(segment, unquote_plus(segment.partition("=")[0])) for segment in query.split("&") if segment]


def credential_parameters(target: str) -> list[str]:
    """The names (decoded, in order, once each) of the query parameters of ``target`` that carry
    credentials."""
    _, _, query = target.partition("?")
    found: list[str] = []
    for _, name in _parameters(query):
        if carries_credential(name) and name not in found:
            found.append(name)
    return found


def loggable_target(target: str) -> str:
    """``target`` (path and raw query) without the query parameters that carry credentials, and without
    the values of :data:`UNLOGGED_NAMES`."""
    path, mark, query = target.partition("?")
    if not mark:
        return target
    kept = [
        segment.partition("=")[0] + "=…" if name.strip().lower() in UNLOGGED_NAMES else segment
        for segment, name in _parameters(query)
        if not carries_credential(name)
    ]
    return f"{path}?{'&'.join(kept)}" if kept else path


def parse_host(value: str) -> tuple[str, int | None] | None:
    """A ``Host`` value's name (lower case; an IPv6 address in brackets) and port (``None``: none
    given); ``None`` when it is not a host (RFC 3986's ``host [":" port]``)."""
    text = value.strip().lower()
    if text.startswith("["):
        end = text.find("]")
        if end < 0:
            return None
        name, rest = text[: end + 1], text[end + 1 :]
        try:
            ipaddress.IPv6Address(name[1:-1])
        except ValueError:
            return None
        if rest and not rest.startswith(":"):
            return None
        port_text = rest[1:] if rest else None
    else:
        name, colon, port_text_or_empty = text.partition(":")
        port_text = port_text_or_empty if colon else None
        if not name or ":" in port_text_or_empty or not all(c.isalnum() or c in "-._~" for c in name):
            return None
    if port_text is None:
        return name, None
    if not port_text.isascii() or not port_text.isdigit() or len(port_text) > 5 or int(port_text) > 65535:
        return None
    return name, int(port_text)


def _is_address(name: str) -> bool:
    try:
        ipaddress.ip_address(name[1:-1] if name.startswith("[") else name)
    except ValueError:
        return False
    return True


@dataclass(frozen=True)
class HostCheck:
    """Which ``Host`` values the server answers (see the module's words)."""

    #: The port the server listens on.
    port: int
    #: Names answered with this port or none: the listening address, the loopback names, the ``--host``.
    own: frozenset[str]
    #: ``--allow-host`` names without a port: answered with any port.
    any_port: frozenset[str] = frozenset()
    #: ``--allow-host NAME:PORT``: answered with that port only.
    pinned: frozenset[tuple[str, int]] = frozenset()
    #: Listening on every address (``0.0.0.0``, ``::``): any IP address is the server's own.
    every_address: bool = False

    @classmethod
    def of(cls, address: str, port: int, names: Iterable[str] = (), allowed: Iterable[str] = ()) -> HostCheck:
        """The check of a server listening on ``address:port``, started with ``--host`` names ``names``
        and ``--allow-host`` values ``allowed`` (each already checked by :func:`allow_host_value`)."""
        own = set(LOOPBACK_NAMES)
        for name in (address, *names):
            parsed = parse_host(f"[{name}]" if ":" in name and not name.startswith("[") else name)
            if parsed is not None:
                own.add(parsed[0])
        any_port: set[str] = set()
        pinned: set[tuple[str, int]] = set()
        for value in allowed:
            parsed = parse_host(value)
            if parsed is None:
                raise ValueError(f"--allow-host {value!r} is not a host name (NAME or NAME:PORT)")
            if parsed[1] is None:
                any_port.add(parsed[0])
            else:
                pinned.add((parsed[0], parsed[1]))
        unspecified = address in ("0.0.0.0", "::")
        return cls(port, frozenset(own), frozenset(any_port), frozenset(pinned), unspecified)

    def refusal(self, host: str | None) -> str | None:
        """Why a request with this ``Host`` value is refused (the problem's detail), or ``None``."""
        if host is None:
            return f"Send a Host header naming this server, such as Host: 127.0.0.1:{self.port}."
        parsed = parse_host(host)
        if parsed is None:
            return f"The Host header {host[:200]!r} is not a host name."
        name, port = parsed
        if name in self.any_port or (port is not None and (name, port) in self.pinned):
            return None
        own = name in self.own or (self.every_address and _is_address(name))
        if own and (port is None or port == self.port):
            return None
        return (
            f"This server does not answer for Host {host[:200]!r}: only for the address it listens on, "
            f"localhost or 127.0.0.1 (port {self.port}), so that another website cannot drive it. "
            "Start it with --allow-host NAME to answer another name."
        )


def allow_host_value(value: str) -> str:
    """An ``--allow-host`` value, checked (argparse's ``type``)."""
    if parse_host(value) is None:
        raise ValueError(f"{value!r} is not a host name (NAME or NAME:PORT)")
    return value.strip().lower()
