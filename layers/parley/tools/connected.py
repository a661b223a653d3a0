"""The tool servers a playbook sees: the operator's, then the connections people added to its org
(``reasoning-format.md``, "Tools", "Before the model is called"; ``http-api.md``, "Connections";
issue 32).

A connection serves the playbooks of its org it names (every one when it names none). It is served as
the operator's servers are, in the same shape (:class:`ConnectionServer`, a
:class:`~parley.config.ToolServer`): every tool it lists (no ``allowed``), no tool waiting for an
operator's approval, content recorded (``record_content``), scrubbed of its header values as any
server's is, with the run id in each call's ``_meta``, and the same limits and endings.

Only an ``active`` connection is offered. Its status is read at each lookup against the operator's
*current* rules (:func:`parley.connections.rules.status_under`), so a change of
``connections.allowed_urls`` shows at the next read of the configuration; its headers are read from
its secret at each lookup too (:func:`parley.connections.credentials.headers_for`). A connection that
exists but cannot be used is not offered, with the table's ``because``:

- ``connection_pending``: nobody with the org's ``admin`` role approved it yet;
- ``connection_broken``: stored ``broken``, or its credential cannot be read now;
- ``connection_not_allowed``: the operator's ``allowed_urls`` no longer allow its URL.

A run meets these before its model is called (``503 unavailable``, kind ``tool_not_offered``); the
tool-server routes answer them the same way (``503``, not the ``404`` of a server that does not exist
for the playbook: the connection is there, it cannot be used now).

Names: the operator's servers win. Adding a connection under the name of a server the operator
configured for the org is refused; should the operator later configure a server of a connection's
name for the org, the connection is hidden (not offered, not searched) and the name means the
operator's server, for the playbooks that server serves.

Only reasoning functions' ``tools`` and ``search``, ``introspect``, ``execute`` and ``dry_run`` reach
connections; the runtime's own calls of an interaction function's tools (deliveries, reads, tellings)
stay with the operator's servers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, cast

from parley.config import ToolServer
from parley.ports.tools import NotOfferedBecause, ToolNotOffered
from parley.tools.servers import server_serving, servers_serving, shown

if TYPE_CHECKING:
    from collections.abc import Mapping

    from parley.connections.model import Connection
    from parley.connections.store import ConnectionStore
    from parley.definitions.model import PlaybookRef
    from parley.ports.runtime import Runtime


@dataclass(frozen=True, repr=False)
class ConnectionServer(ToolServer):
    """A connection served as a tool server, its headers read from its secret (never expanded: a
    header value a person gave that looks like a Secrets Manager reference is sent as written)."""

    connection_headers: Mapping[str, str] = field(default_factory=dict, compare=False)

    def __repr__(self) -> str:
        return f"ConnectionServer(name={self.name!r}, url={self.url!r})"


@dataclass(frozen=True)
class Unusable:
    """A connection that serves the playbook but cannot be used now, and why."""

    name: str
    because: NotOfferedBecause
    detail: str


def server_for(runtime: Runtime, playbook: PlaybookRef, name: str) -> ToolServer:
    """The server ``name`` for ``playbook``: the operator's, else an active connection of the org that
    serves it. :class:`ToolNotOffered` otherwise, with the connection's ``because`` when one is there."""
    try:
        return server_serving(runtime.operator, playbook, name)
    except ToolNotOffered:
        pass  # not the operator's: perhaps a connection's
    if name not in _operator_names(runtime, playbook):
        store = _store(runtime)
        connection = store.get(playbook.org, name) if store is not None else None
        if connection is not None and connection.serves(playbook.playbook):
            served = _served(runtime, connection)
            if isinstance(served, Unusable):
                raise ToolNotOffered(served.because, served.detail)
            return served
    raise ToolNotOffered(
        "tool_server_not_configured",
        f"No tool server {shown(name)} is configured for this playbook, and the org has no connection of "
        "that name that serves it; call search for the servers it may use.",
    )


def servers_for(runtime: Runtime, playbook: PlaybookRef) -> list[ToolServer | Unusable]:
    """Every server the playbook sees, for ``search``: the operator's in the configuration's order, then
    the org's connections that serve it by name, each an active :class:`ConnectionServer` or an
    :class:`Unusable` one."""
    found: list[ToolServer | Unusable] = list(servers_serving(runtime.operator, playbook))
    taken = _operator_names(runtime, playbook)
    connections = [
        connection
        for connection in _listed(runtime, playbook)
        if connection.serves(playbook.playbook) and connection.name not in taken
    ]
    found.extend(_served(runtime, connection) for connection in sorted(connections, key=lambda c: c.name))
    return found


def connection_names(runtime: Runtime, playbook: PlaybookRef) -> list[str]:
    """The names of the org's connections that serve ``playbook``, whatever their status (a save does
    not warn of a function naming one: it is there, an admin may approve it before the run)."""
    listed = _listed(runtime, playbook)
    return [connection.name for connection in listed if connection.serves(playbook.playbook)]


def _served(runtime: Runtime, connection: Connection) -> ConnectionServer | Unusable:
    from parley.connections.credentials import headers_for
    from parley.connections.rules import status_under
    from parley.connections.secrets import SecretUnreadable

    status = status_under(connection, runtime.operator.connections)
    name = connection.name
    if status == "pending":
        return Unusable(
            name,
            "connection_pending",
            f"The connection {name!r} waits for the approval of someone with the org's admin role "
            "(approve_connection).",
        )
    if status == "not_allowed":
        return Unusable(
            name,
            "connection_not_allowed",
            f"The operator's connections.allowed_urls no longer allow the URL of the connection {name!r}; "
            "ask the operator, or remove it.",
        )
    if status == "broken":
        return _broken(name)
    try:
        headers = headers_for(connection, runtime.connection_secrets, runtime.clock.now(), _store(runtime))
    except SecretUnreadable:
        return _broken(name)
    return ConnectionServer(
        name=name,
        url=connection.url,
        orgs=(connection.org,),
        playbooks=connection.playbooks,
        allowed=None,
        record_content=True,
        headers={},
        approve=(),
        connection_headers=headers,
    )


def _broken(name: str) -> Unusable:
    return Unusable(
        name,
        "connection_broken",
        f"The credential of the connection {name!r} cannot be read; remove it and add it again.",
    )


def _store(runtime: Runtime) -> ConnectionStore | None:
    """The runtime's connections; none where its definitions are not kept in the table (some tests)."""
    return cast("ConnectionStore | None", runtime.connections)


def _listed(runtime: Runtime, playbook: PlaybookRef) -> list[Connection]:
    store = _store(runtime)
    return store.list(playbook.org) if store is not None else []


def _operator_names(runtime: Runtime, playbook: PlaybookRef) -> set[str]:
    """The names of the operator's servers for the org (any of its playbooks): a connection of one of
    these names is hidden."""
    return {server.name for server in runtime.operator.tool_servers if playbook.org in server.orgs}
