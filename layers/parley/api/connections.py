"""Operations of ``http-api.md`` "Connections" (issue 32): add_connection, list_connections,
get_connection, approve_connection and remove_connection, relative to the org
(``/v1/orgs/{org}/connections``).

Who may do what (the page's grants), checked after the org's ``404`` (a principal with no grant in the
org, :func:`parley.api.operation.authorize_call`):

- see (list, get): any grant in the org — ``read`` or ``write`` on one of its playbooks, or its
  ``admin``; a response never holds a header or a token;
- add: the ``write`` role on any playbook of the org, else ``403``;
- approve: the org's ``admin`` grant, else ``403``;
- remove: the org's ``admin``, or the person who added it (only an admin removes another's), else ``403``.

A connection another principal may not see does not exist: ``404`` for a name the org has not.

``add_connection`` checks every field and answers every problem at once, each with its pointer
(``422 invalid_input``: ``/name``, ``/url`` naming the rule that refused it, ``/headers/<name>``,
``/playbooks/<i>``), then the name: one of the org's tool servers, or a connection it has, is ``409
conflict``. The record is kept first (under its condition), then its headers as a secret
(``parley.connections.secrets``): a secret that cannot be kept takes the record back. ``status`` is
``pending``, or ``active`` when the operator's ``connections.require_approval`` is false; every
response shows it as :func:`parley.connections.rules.status_under` reads it (``not_allowed`` once a
rule no longer allows the URL).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from parley.api.operation import Answer, Call, Hints, Operation, Param, Services
from parley.api.shapes import CONNECTION, CONNECTIONS, NO_CONTENT
from parley.config.models import HEADER_NAME
from parley.config.principals import IDENTIFIER
from parley.connections.model import (
    CONNECTION_NAME,
    CONNECTION_NAME_RULE,
    HEADER_NAME_MAX,
    HEADER_VALUE_MAX,
    MAX_CONNECTION_HEADERS,
    MAX_CONNECTION_PLAYBOOKS,
    Connection,
)
from parley.errors import ErrorEntry, Problem, capped_errors

if TYPE_CHECKING:
    from parley.config import Principal
    from parley.ports.runtime import Runtime

#: Headers the MCP client sets itself: a connection cannot replace them.
_CLIENT_HEADERS: Final = frozenset(
    {
        "host",
        "content-type",
        "content-length",
        "transfer-encoding",
        "connection",
        "accept",
        "mcp-session-id",
        "mcp-protocol-version",
    }
)


# --- who may -------------------------------------------------------------------------------------


def may_see(principal: Principal, org: str) -> bool:
    """Any grant in the org: a reader or writer of one of its playbooks, or its admin."""
    return any(grant.org == org for grant in principal.grants)


def may_add(principal: Principal, org: str) -> bool:
    """The write role on some playbook of the org."""
    return any(grant.org == org and grant.role == "write" for grant in principal.grants)


def may_approve(principal: Principal, org: str) -> bool:
    return principal.is_admin_of(org)


def may_remove_some(principal: Principal, org: str) -> bool:
    """The org's admin (any connection), or a writer (the connections they added)."""
    return principal.is_admin_of(org) or may_add(principal, org)


# --- the operations ------------------------------------------------------------------------------


def _shown(runtime: Runtime, connection: Connection) -> dict[str, Any]:
    from parley.connections.rules import status_under

    shown = connection.public()
    shown["status"] = status_under(connection, runtime.operator.connections)
    return shown


def _missing(org: str, name: str) -> Problem:
    return Problem("not_found", f"Org {org!r} has no connection {name!r}.")


def _found(runtime: Runtime, org: str, name: str) -> Connection:
    connection = runtime.connections.get(org, name) if CONNECTION_NAME.match(name) else None
    if connection is None:
        raise _missing(org, name)
    return connection


def add_connection(services: Services, call: Call) -> Answer:
    from parley.clock import format_time
    from parley.connections.store import ConnectionExists

    runtime = services.runtime
    if not may_add(call.principal, call.org):
        raise Problem(
            "forbidden",
            f"Adding a connection to org {call.org!r} takes the write role on one of its playbooks.",
        )
    body = call.body
    errors = _field_problems(runtime, body.name, body.url, body.headers, body.playbooks)
    if errors:
        first = errors[0]
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        raise Problem("invalid_input", f"{first.pointer}: {first.detail}{more}", errors=capped_errors(errors))
    if any(server.name == body.name and call.org in server.orgs for server in runtime.operator.tool_servers):
        raise _taken(
            body.name, f"{body.name!r} is the name of one of the org's tool servers; choose another."
        )
    headers: dict[str, str] = dict(body.headers or {})
    connection = Connection(
        org=call.org,
        name=body.name,
        url=body.url,
        status="pending" if runtime.operator.connections.require_approval else "active",
        playbooks=tuple(body.playbooks) if body.playbooks is not None else None,
        added_by=call.principal.id,
        added_at=format_time(runtime.clock.now()),
        approved_by=None,
        approved_at=None,
        auth="headers" if headers else "none",
    )
    try:
        runtime.connections.add(connection)
    except ConnectionExists:
        raise _taken(body.name, f"Org {call.org!r} already has a connection {body.name!r}.") from None
    if headers:
        try:
            runtime.connection_secrets.put(call.org, body.name, {"headers": headers})
        except BaseException:
            runtime.connections.remove(call.org, body.name)
            raise
    location = f"/v1/orgs/{call.org}/connections/{body.name}"
    return Answer(_shown(runtime, connection), 201, {"Location": location})


def _taken(name: str, detail: str) -> Problem:
    return Problem("conflict", detail, errors=[ErrorEntry("/name", detail)])


def _field_problems(
    runtime: Runtime,
    name: str,
    url: str,
    headers: dict[str, str] | None,
    playbooks: list[str] | None,
) -> list[ErrorEntry]:
    from parley.connections.rules import UrlRefused, allowed_by

    errors: list[ErrorEntry] = []
    if not CONNECTION_NAME.match(name):
        errors.append(ErrorEntry("/name", CONNECTION_NAME_RULE[0].upper() + CONNECTION_NAME_RULE[1:] + "."))
    try:
        allowed_by(url, runtime.operator.connections, loopback=runtime.loopback_connections)
    except UrlRefused as refused:
        errors.append(ErrorEntry("/url", str(refused)))
    if headers is not None:
        if len(headers) > MAX_CONNECTION_HEADERS:
            errors.append(ErrorEntry("/headers", f"At most {MAX_CONNECTION_HEADERS} headers."))
        seen: set[str] = set()
        for header, value in list(headers.items())[:MAX_CONNECTION_HEADERS]:
            at = "/headers/" + header.replace("~", "~0").replace("/", "~1")
            lowered = header.lower()
            if not HEADER_NAME.match(header):
                errors.append(
                    ErrorEntry(at, f"A header name is 1 to {HEADER_NAME_MAX} of HTTP's token characters.")
                )
            elif lowered in _CLIENT_HEADERS:
                errors.append(ErrorEntry(at, "The MCP client sets this header itself."))
            elif lowered in seen:
                errors.append(ErrorEntry(at, "The same header twice (names are compared without case)."))
            # The value is a secret: a problem says what is wrong with it, never what it is.
            elif not value or len(value) > HEADER_VALUE_MAX:
                errors.append(ErrorEntry(at, f"A header's value is 1 to {HEADER_VALUE_MAX:,} characters."))
            elif any(ch in value for ch in "\r\n\0"):
                errors.append(ErrorEntry(at, "A header's value is one line (no CR, LF or NUL)."))
            seen.add(lowered)
    if playbooks is not None:
        if not playbooks:
            errors.append(
                ErrorEntry("/playbooks", "Name at least one playbook, or leave playbooks out for all.")
            )
        if len(playbooks) > MAX_CONNECTION_PLAYBOOKS:
            errors.append(ErrorEntry("/playbooks", f"At most {MAX_CONNECTION_PLAYBOOKS} playbooks."))
        named: set[str] = set()
        for index, playbook in enumerate(playbooks[:MAX_CONNECTION_PLAYBOOKS]):
            if not IDENTIFIER.match(playbook):
                errors.append(
                    ErrorEntry(
                        f"/playbooks/{index}",
                        "A playbook id is 1 to 128 of A-Z, a-z, 0-9, '.', '_' and '-', starting with a "
                        "letter or digit.",
                    )
                )
            elif playbook in named:
                errors.append(ErrorEntry(f"/playbooks/{index}", f"{playbook!r} is named twice."))
            named.add(playbook)
    return errors


def list_connections(services: Services, call: Call) -> Answer:
    runtime = services.runtime
    return Answer({"connections": [_shown(runtime, c) for c in runtime.connections.list(call.org)]})


def get_connection(services: Services, call: Call) -> Answer:
    runtime = services.runtime
    return Answer(_shown(runtime, _found(runtime, call.org, call.values["name"])))


def approve_connection(services: Services, call: Call) -> Answer:
    from parley.clock import format_time
    from parley.connections.rules import status_under
    from parley.connections.store import ConnectionMissing

    runtime = services.runtime
    name = call.values["name"]
    if not may_approve(call.principal, call.org):
        _found(runtime, call.org, name)  # a name the org has not is 404 first
        raise Problem("forbidden", f"Approving a connection takes the admin grant of org {call.org!r}.")
    connection = _found(runtime, call.org, name)
    if status_under(connection, runtime.operator.connections) == "not_allowed":
        raise Problem(
            "conflict",
            f"Connection {name!r} is not allowed: the operator's connections.allowed_urls no longer allows "
            "its URL.",
        )
    if connection.status == "active":
        return Answer(_shown(runtime, connection))  # approving twice changes nothing
    if connection.status == "broken":
        raise Problem(
            "conflict",
            f"Connection {name!r} is broken (its credential cannot be read): remove it and add it again.",
        )
    try:
        approved = runtime.connections.set_status(
            call.org, name, "active", approved_by=call.principal.id, at=format_time(runtime.clock.now())
        )
    except ConnectionMissing:
        raise _missing(call.org, name) from None
    return Answer(_shown(runtime, approved))


def remove_connection(services: Services, call: Call) -> Answer:
    runtime = services.runtime
    name = call.values["name"]
    connection = _found(runtime, call.org, name)
    principal = call.principal
    if not principal.is_admin_of(call.org) and not (
        connection.added_by == principal.id and may_add(principal, call.org)
    ):
        raise Problem(
            "forbidden",
            f"Removing another's connection takes the admin grant of org {call.org!r}.",
        )
    runtime.connections.remove(call.org, name)
    runtime.connection_secrets.delete(call.org, name)
    return Answer({}, 204)


# --- the declarations ----------------------------------------------------------------------------

NAME: Final = Param(
    "name",
    "path",
    "The connection's name, as functions name it in tools (notes/search).",
    max_length=32,
)


def _added(services: Services, call: Call, body: dict[str, Any]) -> str:
    if body.get("status") == "active":
        return (
            f"The connection {body.get('name')} is added and active: the org's functions may use its tools."
        )
    return f"The connection {body.get('name')} is added; it waits for the approval of an admin of the org."


def _listed(services: Services, call: Call, body: dict[str, Any]) -> str:
    count = len(body.get("connections") or [])
    return f"The org has {count} connection{'s' if count != 1 else ''}."


def _got(services: Services, call: Call, body: dict[str, Any]) -> str:
    return f"The connection {body.get('name')} is {body.get('status')}."


def _approved(services: Services, call: Call, body: dict[str, Any]) -> str:
    return f"The connection {body.get('name')} is approved: the org's functions may use its tools."


def _removed(services: Services, call: Call, body: dict[str, Any]) -> str:
    return f"The connection {call.values.get('name')} is removed, and its secrets with it."


_TAG: Final = "Connections"

OPERATIONS: Final = (
    Operation(
        name="add_connection",
        title="Add a connection",
        method="POST",
        route="/connections",
        scope="org",
        role="write",
        tag=_TAG,
        summary="Add an MCP server to the org.",
        description=(
            "Add an MCP server (its streamable-HTTP URL) to the org, so that its functions may name its "
            "tools as they name a tool server's (notes/search). headers (such as Authorization) are kept "
            "as a secret and never shown. It is pending until an admin of the org approves it, unless the "
            "operator approves every connection. The operator's connections.allowed_urls says which URLs "
            "may be connected."
        ),
        hints=Hints(read_only=False, open_world=False),
        invoke=add_connection,
        summarize=_added,
        body_model="AddConnectionBody",
        body_required=True,
        status=201,
        output=CONNECTION,
        problems=("forbidden", "conflict"),
        permits=may_add,
        who="It needs the write role on a playbook of the org.",
    ),
    Operation(
        name="list_connections",
        title="List the connections",
        method="GET",
        route="/connections",
        scope="org",
        role="read",
        tag=_TAG,
        summary="List the org's connections.",
        description=(
            "List the MCP servers people added to the org, each with its status (pending, active, broken, "
            "not_allowed), who added and approved it, and how it authenticates; never a secret."
        ),
        hints=Hints(read_only=True, idempotent=True),
        invoke=list_connections,
        summarize=_listed,
        output=CONNECTIONS,
        permits=may_see,
    ),
    Operation(
        name="get_connection",
        title="Get a connection",
        method="GET",
        route="/connections/{name}",
        scope="org",
        role="read",
        tag=_TAG,
        summary="Read one connection of the org.",
        description="Read one connection of the org: its URL, status, playbooks, who added and approved it.",
        hints=Hints(read_only=True, idempotent=True),
        invoke=get_connection,
        summarize=_got,
        params=(NAME,),
        output=CONNECTION,
        permits=may_see,
    ),
    Operation(
        name="approve_connection",
        title="Approve a connection",
        method="POST",
        route="/connections/{name}/approve",
        scope="org",
        role="write",
        tag=_TAG,
        summary="Approve a pending connection (the org's admin).",
        description=(
            "Approve a pending connection, so that the org's functions may use its tools. Only a "
            "principal with the org's admin grant may."
        ),
        hints=Hints(read_only=False, idempotent=True),
        invoke=approve_connection,
        summarize=_approved,
        params=(NAME,),
        output=CONNECTION,
        problems=("forbidden", "conflict"),
        permits=may_approve,
        who="It needs the org's admin grant.",
    ),
    Operation(
        name="remove_connection",
        title="Remove a connection",
        method="DELETE",
        route="/connections/{name}",
        scope="org",
        role="write",
        tag=_TAG,
        summary="Remove a connection and its secrets.",
        description=(
            "Remove a connection from the org, and forget its headers and tokens. Whoever added it may "
            "remove it; only an admin of the org removes another's."
        ),
        hints=Hints(read_only=False, destructive=True, idempotent=False),
        invoke=remove_connection,
        summarize=_removed,
        params=(NAME,),
        status=204,
        output=NO_CONTENT,
        problems=("forbidden",),
        permits=may_remove_some,
        who="The one who added it may remove it; another's takes the org's admin grant.",
    ),
)
