"""The operator configuration's ``connections`` section: the operator's rules for connections
(``http-api.md``, "Connections" and "Operator configuration"; issue 32): ``connections.allowed_urls`` and
``connections.require_approval``.

**Patterns.** Each entry of ``allowed_urls`` is a URL pattern ``scheme://host[:port][/path]`` whose
only wildcard is ``*``:

- ``scheme`` is ``https`` or ``http``, matched exactly;
- ``host`` is matched without regard to case, ``*`` standing for any characters of a host name
  (``https://*.acme.com/*`` allows ``https://mcp.acme.com/…`` and ``https://a.b.acme.com/…``, never
  ``https://acme.com.evil.example/…``: a host is compared as a whole, so no ``*`` reaches past it);
- ``port``: left out, the scheme's default port (443, 80); ``*``, any port; else that port;
- ``path`` (with the query): left out, any path; else matched as a whole, ``*`` standing for any
  characters, ``/`` included (``https://mcp.acme.com/notes/*``).

A URL is matched on its parts (``urllib.parse``), so ``user@`` tricks and encoded hosts cannot slip past
a pattern, and a URL with user information or a fragment is refused outright.

**Without ``allowed_urls``** no URL may be connected: the page has people connect only URLs "that the
operator's ``connections.allowed_urls`` allows", so an operator who set no rule allowed nothing (an
empty list says the same). A rule that no longer allows a connection's URL makes it ``not_allowed``
(``parley.connections.rules.status_under``), read against the configuration as it stands at each use.

**Schemes.** A connection's URL is ``https``; ``http`` only to ``127.0.0.1`` and only on the local server
(``loopback``), where test and demo servers listen.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Final
from urllib.parse import urlsplit

from parley.errors import ParleyError
from parley.reading import flag, items, optional, reads, text, then

__all__ = [
    "LOOPBACK_HOST",
    "URL_MAX_LENGTH",
    "ConnectionRules",
    "UrlRefused",
    "allowed_by",
    "check_pattern",
    "check_url",
    "url_allowed",
]

#: The longest URL a connection may have (``add_connection``'s ``url``).
URL_MAX_LENGTH: Final = 2048

_PATTERN: Final = re.compile(
    r"^(?P<scheme>https?)://(?P<host>[A-Za-z0-9*._-]+)(?::(?P<port>\*|[0-9]{1,5}))?(?P<path>[/?].*)?$"
)
_DEFAULT_PORTS: Final = {"https": 443, "http": 80}
LOOPBACK_HOST: Final = "127.0.0.1"


def _url_pattern(pattern: str) -> str:
    check_pattern(pattern)
    return pattern


@dataclass(frozen=True)
class ConnectionRules:
    """The operator configuration's ``connections`` section (``parley.config.OperatorConfig``): which URLs
    people may connect (``allowed_urls``; none when left out) and whether a new connection waits for the
    org's admin (``require_approval``, true by default)."""

    allowed_urls: tuple[str, ...] | None = field(
        default=None, metadata=reads(optional(items(then(text, _url_pattern))))
    )
    require_approval: bool = field(default=True, metadata=reads(flag))


class UrlRefused(ParleyError, ValueError):
    """A URL that cannot be connected; the message says which rule refused it."""


@dataclass(frozen=True)
class _Pattern:
    scheme: str
    host: re.Pattern[str]
    port: int | None  # None: any port
    path: re.Pattern[str] | None  # None: any path


def _glob(text: str, *, ignore_case: bool = False) -> re.Pattern[str]:
    """``text`` matched as a whole, ``*`` standing for any characters and nothing else special."""
    flags = re.IGNORECASE if ignore_case else 0
    return re.compile("^" + ".*".join(re.escape(part) for part in text.split("*")) + "$", flags)


def check_pattern(pattern: str) -> None:
    """Raise ``ValueError`` (worded for the configuration's reader) unless ``pattern`` is a URL pattern."""
    _parsed(pattern)


def _parsed(pattern: str) -> _Pattern:
    found = _PATTERN.match(pattern)
    if found is None:
        raise ValueError(
            f"{pattern!r}: a URL pattern is scheme://host[:port][/path] with https or http, where * stands "
            "for any characters (https://*.acme.com/*, http://127.0.0.1:*/*)"
        )
    scheme = found["scheme"]
    port_text = found["port"]
    if port_text is None:
        port: int | None = _DEFAULT_PORTS[scheme]
    elif port_text == "*":
        port = None
    else:
        port = int(port_text)
        if not 0 < port < 65536:
            raise ValueError(f"{pattern!r}: the port is from 1 to 65535 (or *)")
    path = found["path"]
    return _Pattern(
        scheme=scheme,
        host=_glob(found["host"].lower()),
        port=port,
        path=_glob(path) if path is not None else None,
    )


def _matches(pattern: _Pattern, scheme: str, host: str, port: int, rest: str) -> bool:
    return (
        pattern.scheme == scheme
        and pattern.host.match(host) is not None
        and (pattern.port is None or pattern.port == port)
        and (pattern.path is None or pattern.path.match(rest) is not None)
    )


def check_url(url: str, *, loopback: bool = False) -> tuple[str, str, int, str]:
    """The parts of a connection's URL (scheme, lower-case host, port, path with query), or
    :class:`UrlRefused` saying why it cannot be one: not ``https`` (``http`` only to 127.0.0.1 when
    ``loopback``), no host, user information, a fragment, too long."""
    if len(url) > URL_MAX_LENGTH:
        raise UrlRefused(f"A connection's URL is at most {URL_MAX_LENGTH} characters.")
    if any(ch.isspace() or ord(ch) < 0x20 for ch in url):
        raise UrlRefused("A connection's URL has no spaces or control characters.")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise UrlRefused(
            "A connection's URL is an https URL with a host, such as https://mcp.acme.com/mcp."
        ) from None
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if scheme not in ("https", "http") or not host:
        raise UrlRefused("A connection's URL is an https URL with a host, such as https://mcp.acme.com/mcp.")
    if scheme == "http" and not (loopback and host == LOOPBACK_HOST):
        where = (
            "http is allowed only to 127.0.0.1"
            if loopback
            else "http is allowed only to 127.0.0.1, on the local server"
        )
        raise UrlRefused(f"A connection's URL is https ({where}).")
    if parts.username is not None or parts.password is not None or "@" in parts.netloc:
        raise UrlRefused("A connection's URL carries no user name or password: give credentials as headers.")
    if parts.fragment or url.endswith("#"):
        raise UrlRefused("A connection's URL has no fragment (#…).")
    rest = parts.path or "/"
    if parts.query:
        rest += "?" + parts.query
    return scheme, host, port if port is not None else _DEFAULT_PORTS[scheme], rest


def allowed_by(url: str, rules: ConnectionRules, *, loopback: bool = False) -> str:
    """The pattern of ``connections.allowed_urls`` that allows ``url``, or :class:`UrlRefused` naming the
    rule that does not (the URL's own form first: :func:`check_url`)."""
    scheme, host, port, rest = check_url(url, loopback=loopback)
    patterns = rules.allowed_urls or ()
    if not patterns:
        raise UrlRefused(
            "No URL may be connected: the operator's connections.allowed_urls is not set "
            "(it lists the URL patterns people may connect)."
        )
    for pattern in patterns:
        if _matches(_parsed(pattern), scheme, host, port, rest):
            return pattern
    shown = ", ".join(patterns[:5]) + (f" and {len(patterns) - 5} more" if len(patterns) > 5 else "")
    raise UrlRefused(f"The operator's connections.allowed_urls does not allow this URL (it allows {shown}).")


def url_allowed(url: str, rules: ConnectionRules, *, loopback: bool = True) -> bool:
    """Whether the rules allow ``url`` now. ``loopback`` defaults to true: a stored URL was checked for its
    scheme when it was added, so only the patterns decide here."""
    try:
        allowed_by(url, rules, loopback=loopback)
    except UrlRefused:
        return False
    return True
