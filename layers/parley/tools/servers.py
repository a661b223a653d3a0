"""Which tool servers serve a playbook, which of their tools it may use, and the servers' secrets
(``http-api.md``, "Operator configuration"; ``reasoning-format.md``, "Before the model is called").

A server that does not serve the playbook (another org, another playbook) is invisible to it: it is
reported as ``tool_server_not_configured``, the same as a name nobody configured.

Header values are secrets. They are sent to the server and nowhere else: never in a ``repr``, a log
line, an event, a response or a problem. Text and JSON that may echo them (a server's error text, a
tool's result, the arguments) pass through :func:`scrub`, which writes ``[secret]`` for each.

On AWS a header value may take its secret from Secrets Manager with a reference in the form of a
CloudFormation dynamic reference, alone or inside the value::

    headers:
      Authorization: "Bearer {{resolve:secretsmanager:chat-token}}"
      X-Key: "{{resolve:secretsmanager:arn:aws:secretsmanager:eu-west-1:1234:secret:k:SecretString:chat}}"

``{{resolve:secretsmanager:<name or ARN>}}`` is the secret's whole ``SecretString``;
``…:SecretString:<json key>`` is one key of a secret holding a JSON object. The operator's
configuration thus never holds the secret itself; the values read are kept for five minutes.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from parley.errors import SecretUnavailable as SecretUnavailable
from parley.ports.tools import ServerAddress, ToolNotOffered

if TYPE_CHECKING:
    from parley.config import OperatorConfig, ToolServer
    from parley.definitions.model import PlaybookRef

SECRET_SHOWN: Final = "[secret]"
#: Shorter values are not scrubbed (they would blank out ordinary words); they still never get recorded
#: as header values, since headers are never recorded.
MIN_SCRUBBED_LENGTH: Final = 4
SECRET_CACHE_SECONDS: Final = 300.0

_REFERENCE: Final = re.compile(r"\{\{resolve:secretsmanager:(?P<body>[^{}]+)\}\}")
_ARN_PARTS: Final = 7  # arn:aws:secretsmanager:<region>:<account>:secret:<name>
_AUTH_SCHEME: Final = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*\s+(?P<credential>\S.*)$")


def servers_serving(operator: OperatorConfig, playbook: PlaybookRef) -> list[ToolServer]:
    """The servers the operator configured for the playbook, in the configuration's order."""
    return [server for server in operator.tool_servers if server.serves(playbook.org, playbook.playbook)]


def server_serving(operator: OperatorConfig, playbook: PlaybookRef, name: str) -> ToolServer:
    """The server ``name`` when it serves the playbook; :class:`ToolNotOffered` otherwise."""
    for server in servers_serving(operator, playbook):
        if server.name == name:
            return server
    raise ToolNotOffered(
        "tool_server_not_configured",
        f"No tool server {shown(name)} is configured for this playbook; "
        "call search for the servers it may use.",
    )


def allowed(server: ToolServer, tool: str) -> bool:
    """Whether the operator allows ``tool`` on ``server`` (every tool when ``allowed`` is left out)."""
    return server.allowed is None or tool in server.allowed


def check_allowed(server: ToolServer, tool: str) -> None:
    """:class:`ToolNotOffered` (``tool_not_allowed``) unless the operator allows the tool."""
    if not allowed(server, tool):
        raise ToolNotOffered(
            "tool_not_allowed",
            f"The operator does not allow the tool {shown(tool)} of the tool server {server.name!r}; "
            "call search for the tools this playbook may use.",
        )


# --- secrets ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ResolvedServer:
    """A server with its header values read: the address to call, and the values to scrub."""

    address: ServerAddress
    secrets: tuple[str, ...] = field(repr=False)

    def scrub(self, value: Any) -> Any:
        return scrub(value, self.secrets)

    def __repr__(self) -> str:
        return f"ResolvedServer(address={self.address!r})"


class HeaderSecrets:
    """Reads header values, following Secrets Manager references through an injected client (a boto3
    ``secretsmanager`` client, or a callable giving one; made on first need)."""

    def __init__(
        self,
        secretsmanager: Any | Callable[[], Any] | None = None,
        *,
        keep_seconds: float = SECRET_CACHE_SECONDS,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._source = secretsmanager
        self._client: Any = None
        self._keep = keep_seconds
        self._monotonic = monotonic
        self._cache: dict[str, tuple[float, str]] = {}
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return "HeaderSecrets()"

    def resolve(self, server: ToolServer) -> ResolvedServer:
        """The server's address with its headers' values read. :class:`SecretUnavailable` when a
        referenced secret cannot be read (its words name the header and the secret, never a value).

        A connection's headers (:class:`parley.tools.connected.ConnectionServer`) were read from its own
        secret and are sent as written: a person's value is never taken for a reference to the
        operator's secrets."""
        headers: dict[str, str] = {}
        secrets: list[str] = []
        # A connection's server carries its headers as read (``connected.ConnectionServer``); asked by
        # attribute, so this module does not import the one that imports it.
        connection_headers: Mapping[str, str] | None = getattr(server, "connection_headers", None)
        if connection_headers is not None:
            headers = dict(connection_headers)
            for value in headers.values():
                secrets.extend(secret_parts(value))
            address = ServerAddress(server.name, server.url, headers)
            return ResolvedServer(address, tuple(dict.fromkeys(secrets)))
        for name, secret in server.headers.items():
            raw = secret.get_secret_value()
            value, found = self.expand(raw, f"the header {name!r} of the tool server {server.name!r}")
            headers[name] = value
            secrets.extend(found)
            secrets.extend(secret_parts(value))
        return ResolvedServer(ServerAddress(server.name, server.url, headers), tuple(dict.fromkeys(secrets)))

    def expand(self, raw: str, where: str) -> tuple[str, list[str]]:
        """``raw`` with each ``{{resolve:secretsmanager:…}}`` reference in it replaced by its secret, and
        the secrets read. :class:`SecretUnavailable` when one cannot be read: its words name the secret
        and ``where`` the value is ("the header 'X-Key' of the tool server 'chat'"), never a value."""
        found: list[str] = []

        def replace(match: re.Match[str]) -> str:
            value = self._reference(match.group("body"), where)
            found.append(value)
            return value

        return _REFERENCE.sub(replace, raw), found

    def _reference(self, body: str, where: str) -> str:
        secret_id, key = _split_reference(body)
        text = self._secret_string(secret_id, where)
        if key is None:
            return text
        try:
            document = json.loads(text)
        except ValueError:
            document = None
        value = document.get(key) if isinstance(document, dict) else None
        if not isinstance(value, str):
            raise SecretUnavailable(
                f"{where[:1].upper()}{where[1:]} names the key {key!r} of the secret {secret_id!r}, which "
                "holds no such text key."
            )
        return value

    def _secret_string(self, secret_id: str, where: str) -> str:
        now = self._monotonic()
        with self._lock:
            kept = self._cache.get(secret_id)
            if kept is not None and now - kept[0] < self._keep:
                return kept[1]
        try:
            response = self._secrets_client().get_secret_value(SecretId=secret_id)
        except Exception as exc:  # botocore's errors: the words name the secret, never a value
            code = getattr(exc, "response", {}).get("Error", {}).get("Code", type(exc).__name__)
            raise SecretUnavailable(f"The secret {secret_id!r} of {where} cannot be read ({code}).") from None
        text = response.get("SecretString")
        if not isinstance(text, str):
            raise SecretUnavailable(f"The secret {secret_id!r} of {where} holds no text.")
        with self._lock:
            self._cache[secret_id] = (now, text)
        return text

    def _secrets_client(self) -> Any:
        if self._client is None:
            source = self._source
            if source is None:
                import boto3

                source = boto3.client("secretsmanager")
            elif callable(source) and not hasattr(source, "get_secret_value"):
                source = source()
            self._client = source
        return self._client


def _split_reference(body: str) -> tuple[str, str | None]:
    """``<name or ARN>`` or ``<name or ARN>:SecretString:<key>`` (an ARN holds colons of its own)."""
    parts = body.split(":")
    if body.startswith("arn:"):
        secret_id, rest = ":".join(parts[:_ARN_PARTS]), parts[_ARN_PARTS:]
    else:
        secret_id, rest = parts[0], parts[1:]
    if len(rest) >= 2 and rest[0] == "SecretString" and rest[1]:
        return secret_id, ":".join(rest[1:])
    return secret_id, None


def secret_parts(value: str) -> list[str]:
    """What to scrub for a header value: the whole value and, for ``<scheme> <credential>`` (``Bearer
    …``, ``Basic …``), the credential alone; values under 4 characters are left out."""
    parts = [value]
    match = _AUTH_SCHEME.match(value)
    if match:
        parts.append(match.group("credential"))
    return [part for part in parts if len(part) >= MIN_SCRUBBED_LENGTH]


def scrub(value: Any, secrets: Iterable[str]) -> Any:
    """``value`` (text, or JSON: dicts, lists, scalars) with every occurrence of each secret, in strings
    and keys, replaced by ``[secret]``. The longest secrets go first, so a credential inside a whole
    header value leaves no part of the value behind."""
    ordered = sorted({s for s in secrets if len(s) >= MIN_SCRUBBED_LENGTH}, key=len, reverse=True)
    if not ordered:
        return value
    pattern = re.compile("|".join(re.escape(s) for s in ordered))
    return _scrubbed(value, pattern)


def _scrubbed(value: Any, pattern: re.Pattern[str]) -> Any:
    if isinstance(value, str):
        return pattern.sub(SECRET_SHOWN, value)
    if isinstance(value, Mapping):
        return {_scrubbed(key, pattern): _scrubbed(item, pattern) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_scrubbed(item, pattern) for item in value]
    return value


def shown(text: str, most: int = 64) -> str:
    """A caller's text in a message: quoted and cut, so a long or odd path segment stays readable."""
    return repr(text if len(text) <= most else text[:most] + "…")
