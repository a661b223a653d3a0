"""``parley connections`` and ``parley connection add|show|approve|authorize|remove`` (issue 32: the
README shows the flow; ``http-api.md``, "Connections": add_connection, list_connections, get_connection,
approve_connection, authorize_connection, remove_connection), relative to the org of the settings.

A header's value is a secret, so ``connection add`` takes it three ways: ``--header 'Name: value'`` (it
lands in the shell's history: for values that are no secret), ``--header-from-env Name=VAR`` (read from
the environment variable ``VAR``) and ``--header-prompt Name`` (typed at the terminal, not echoed). A
value is never printed: the server answers a connection without its headers, and a problem with a header
names its pointer (``/headers/Authorization``), never its value.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final
from urllib.parse import quote

from parley.client import printing
from parley.client.connection import Connection
from parley.client.exits import OK, USAGE, CommandError

HEADERS: Final = ("NAME", "STATUS", "AUTH", "URL", "PLAYBOOKS")
#: What each status means, for ``connection show`` and ``add`` (``http-api.md``, "Connections").
STATUS_MEANS: Final = {
    "pending": "waits for an admin of the org to approve it (parley connection approve {name})",
    "active": "the org's functions may use its tools",
    "broken": "its credential cannot be read or refreshed: remove it and add it again",
    "not_allowed": "the operator's connections.allowed_urls no longer allows its URL",
}


def _route(connection: Connection, name: str | None = None) -> str:
    base = f"/v1/orgs/{quote(connection.settings.org, safe='')}/connections"
    return base if name is None else f"{base}/{quote(name, safe='')}"


def _playbooks(item: Mapping[str, Any]) -> str:
    named = item.get("playbooks")
    return ", ".join(str(each) for each in named) if named else "all"


def connections(args: argparse.Namespace, connection: Connection) -> int:
    listed: dict[str, Any] = connection.get(_route(connection))
    found = listed.get("connections") or []
    if args.json:
        printing.dump_json(listed)
    elif args.quiet:
        for each in found:
            printing.out(str(each.get("name")))
    elif not found:
        printing.out(f"The org {connection.settings.org} has no connections: parley connection add NAME URL")
    else:
        printing.table(
            HEADERS,
            (
                (
                    str(each.get("name")),
                    str(each.get("status")),
                    str(each.get("auth")),
                    printing.clip(str(each.get("url")), printing.CELL_MAX),
                    printing.clip(_playbooks(each), 40),
                )
                for each in found
            ),
        )
    return OK


def connection(args: argparse.Namespace, connection: Connection) -> int:
    actions: dict[str, Callable[[argparse.Namespace, Connection], int]] = {
        "add": add,
        "show": show,
        "approve": approve,
        "authorize": authorize,
        "remove": remove,
    }
    return actions[args.action](args, connection)


def add(args: argparse.Namespace, connection: Connection) -> int:
    headers = headers_given(args.header or (), args.header_from_env or (), args.header_prompt or ())
    body: dict[str, Any] = {"name": args.name, "url": args.server_url}
    if headers:
        body["headers"] = headers
    if args.playbook_of:
        body["playbooks"] = list(args.playbook_of)
    added: dict[str, Any] = connection.post(_route(connection), body)
    if args.json:
        printing.dump_json(added)
        return OK
    status = str(added.get("status"))
    printing.out(
        f"Added the connection {added.get('name')} to the org {connection.settings.org}: {status}, "
        + STATUS_MEANS.get(status, "").format(name=added.get("name"))
        + "."
    )
    return OK


def show(args: argparse.Namespace, connection: Connection) -> int:
    item: dict[str, Any] = connection.get(_route(connection, args.name))
    if args.json:
        printing.dump_json(item)
        return OK
    _fields(item)
    return OK


def _fields(item: Mapping[str, Any]) -> None:
    status = str(item.get("status"))
    means = STATUS_MEANS.get(status, "").format(name=item.get("name"))
    approved = item.get("approved_by")
    printing.fields(
        [
            ("Name", str(item.get("name"))),
            ("URL", str(item.get("url"))),
            ("Status", f"{status}: {means}" if means else status),
            ("Auth", str(item.get("auth"))),
            ("Playbooks", _playbooks(item)),
            ("Added", f"by {item.get('added_by')}, {printing.when(item.get('added_at'))}"),
            ("Approved", f"by {approved}, {printing.when(item.get('approved_at'))}" if approved else None),
        ]
    )


def approve(args: argparse.Namespace, connection: Connection) -> int:
    item: dict[str, Any] = connection.post(_route(connection, args.name) + "/approve", None)
    if args.json:
        printing.dump_json(item)
        return OK
    printing.out(
        f"Approved the connection {item.get('name')}: {item.get('status')}, the org's functions may use "
        "its tools."
    )
    return OK


def authorize(args: argparse.Namespace, connection: Connection) -> int:
    answer: dict[str, Any] = connection.post(_route(connection, args.name) + "/authorize", None)
    url = str(answer.get("authorization_url"))
    if args.json:
        printing.dump_json(answer)
    elif args.open:
        printing.err(
            "Sign in and allow Parley in the browser; it comes back to Parley, which keeps the tokens."
        )
        printing.out(url)
    else:
        printing.err("Open this in a browser within 10 minutes, sign in and allow Parley (once):")
        printing.out(url)
    if args.open:
        import webbrowser

        if not webbrowser.open(url):
            printing.err("No browser could be opened: open the URL above yourself.")
    return OK


def remove(args: argparse.Namespace, connection: Connection) -> int:
    connection.request("DELETE", _route(connection, args.name))
    if args.json:
        printing.dump_json({"removed": args.name})
    else:
        printing.out(f"Removed the connection {args.name}, and its secrets with it.")
    return OK


# --- headers -------------------------------------------------------------------------------------


def headers_given(
    literal: Sequence[str],
    from_env: Sequence[str],
    prompted: Sequence[str],
    environ: Mapping[str, str] | None = None,
    ask: Callable[[str], str] | None = None,
) -> dict[str, str]:
    """The headers of ``--header 'Name: value'``, ``--header-from-env Name=VAR`` and ``--header-prompt
    Name``, in that order; ``CommandError`` (``USAGE``, nothing sent) for one that cannot be read. A
    message names the option and the header, never a value."""
    env = os.environ if environ is None else environ
    headers: dict[str, str] = {}
    for given in literal:
        name, colon, value = given.partition(":")
        if not colon or not name.strip():
            raise CommandError(USAGE, f"--header {name.strip() or given!r}: give it as 'Name: value'.")
        headers[name.strip()] = value.strip()
    for given in from_env:
        name, equals, variable = given.partition("=")
        if not equals or not name.strip() or not variable.strip():
            raise CommandError(USAGE, f"--header-from-env {given!r}: give it as Name=VARIABLE.")
        read = env.get(variable.strip())
        if not read:
            raise CommandError(
                USAGE, f"--header-from-env {given}: the environment variable {variable.strip()} is not set."
            )
        headers[name.strip()] = read
    for name in prompted:
        if not name.strip() or ":" in name:
            raise CommandError(USAGE, f"--header-prompt {name!r}: give the header's name only.")
        value = (ask or _secret_input)(f"{name.strip()} (not shown): ")
        if not value:
            raise CommandError(USAGE, f"--header-prompt {name.strip()}: nothing was typed; nothing was sent.")
        headers[name.strip()] = value
    return headers


def _secret_input(prompt: str) -> str:
    import getpass

    try:
        return getpass.getpass(prompt)
    except EOFError:
        return ""
