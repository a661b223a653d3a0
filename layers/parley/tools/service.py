"""search, introspect, execute and dry_run (``http-api.md``, "Tool servers"; ``reasoning-format.md``,
"Find the tool names").

A playbook sees only the servers that serve it (the operator's, and the active connections of its org:
:mod:`parley.tools.connected`) and, on each, only the tools the operator allows. The
tool-server routes treat the rest as absent: a server that does not serve the playbook, a tool outside
``allowed`` and a tool the server does not list all answer ``404 not_found`` with the kind
``tool_not_offered`` and the page's ``because`` (``tool_server_not_configured``, ``tool_not_allowed``,
``tool_not_listed``), in words that name ``search``. (A *run* that names such a tool ends
``unavailable``, kind ``tool_not_offered``; here the resource itself is what the caller asked for, and
it does not exist for this playbook.) A connection of the org that serves the playbook but cannot be
used now answers ``503 unavailable``, kind ``tool_not_offered``, with its ``because``
(``connection_pending``, ``connection_broken``, ``connection_not_allowed``), as a run does; ``search``
shows it with no tools, its ``because`` and ``detail``.

execute calls the tool once, as a run would, and records the call in the playbook's events (no
``run_id``: it belongs to no run) as the reasoning page's history records a call:

- ``tool_call_started`` before the call is sent: ``call_id`` (shared by the two events), ``server``,
  ``tool``, ``arguments_size``, ``read_only``, ``executed_by``, and, when the server's
  ``record_content`` is on, ``arguments`` (scrubbed) with their SHA-256 ``arguments_digest``;
- then ``tool_call_answered`` (``is_error``, ``result_size``, ``duration_ms``, ``jsonrpc_id``, and when
  kept ``result`` with ``result_digest``) or ``tool_call_failed`` (``because``: ``server_failure``,
  ``timed_out`` or ``arguments_refused``, the scrubbed ``message``, ``duration_ms``, ``jsonrpc_id``).

The digests are of the content as kept (canonical JSON), so a reader can check one against the other.

How execute fails (never a 500 for a tool server's failure):

- not offered (see above): ``404 not_found``, kind ``tool_not_offered``;
- arguments over 16 KiB as JSON, or not matching the tool's ``input_schema``: ``422 invalid_input``;
- the server fails before the call is sent: ``503 unavailable``, kind ``tool_server_failed``,
  ``because`` ``unreachable``, ``failing``, ``rate_limited`` (with ``Retry-After``) or ``key_refused``;
- the call was sent, then the server failed or did not respond within 30 s: for a read-only tool
  ``503 tools_unfinished``, for any other ``409 effect_unknown`` (the kind the same, ``because:
  server_failed``);
- the tool answered with ``isError``: ``200`` with ``outcome: tool_error`` (what a run's model sees).

A 429 or a refused key on the call itself is ``tool_server_failed`` too: the server refused the call,
so it had no effect.

dry_run makes the same checks without calling the tool: it lists the server's tools (listing calls no
tool and changes nothing), and records nothing.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from parley.clock import format_time
from parley.errors import ErrorEntry, Problem, capped_errors
from parley.ports.tools import ListedTool, ToolNotOffered, ToolServerFailure
from parley.runs.events import TOOL_CALL_ANSWERED, TOOL_CALL_FAILED, TOOL_CALL_STARTED, new_event_id
from parley.runs.model import Event
from parley.tools.connected import Unusable, server_for, servers_for
from parley.tools.recording import answered_data, failed_data, refused_call, server_failed, started_data
from parley.tools.servers import HeaderSecrets, ResolvedServer, SecretUnavailable, check_allowed, scrub

if TYPE_CHECKING:
    from parley.config import ToolServer
    from parley.definitions.model import PlaybookRef
    from parley.ports.runtime import Runtime
    from parley.runs.store import DynamoRunStore

#: ``reasoning-format.md``, "Limits on calls"; ``interaction-format.md``, "Bounds".
MAX_ARGUMENTS_BYTES: Final = 16 * 1024
MAX_TERMS_CHARACTERS: Final = 1000

#: Each type's step in its event id (``parley.runs.events``): started sorts before its end within a
#: millisecond, as a manual clock makes them.
_WORD: Final = re.compile(r"[a-z0-9]+")
_NOT_CHECKED: Final = "Not checked: an earlier check failed."


class ToolService:
    """The four operations over a runtime's operator configuration, tool client and events."""

    def __init__(
        self,
        runtime: Runtime,
        store: DynamoRunStore | None = None,
        header_secrets: HeaderSecrets | None = None,
    ) -> None:
        self._runtime = runtime
        self._given_store = store
        self._secrets = header_secrets or HeaderSecrets(lambda: runtime.secretsmanager)

    @property
    def store(self) -> DynamoRunStore:
        from parley.runs.service import runs_store_for

        return self._given_store or runs_store_for(self._runtime)

    # --- search and introspect ---------------------------------------------------------------------

    def search(self, playbook: PlaybookRef, terms: str | None) -> dict[str, Any]:
        """``{servers: [{server, tools: [{tool, description, read_only}]}]}``: the servers serving the
        playbook and their allowed tools. With ``terms``, only tools whose name or description holds one
        of its words, best first; servers left with none are left out. A server whose listing fails is
        shown with no tools, its ``because`` and ``detail``, so one failing server hides no other."""
        words = _words(terms)
        servers: list[dict[str, Any]] = []
        for server in servers_for(self._runtime, playbook):
            if isinstance(server, Unusable):  # a connection that cannot be used now, and why
                servers.append(_unusable_entry(server))
                continue
            try:
                resolved = self._resolved(server)
                tools = [
                    t for t in self._runtime.tool_client.list_tools(resolved.address) if _allows(server, t)
                ]
            except ToolServerFailure as failure:
                servers.append(_failed_entry(server, failure.because, failure.detail))
                continue
            except SecretUnavailable as unavailable:
                servers.append(_failed_entry(server, "failing", str(unavailable)))
                continue
            if words:
                scored = [(score, tool) for tool in tools if (score := _score(tool, words)) > 0]
                scored.sort(key=lambda pair: -pair[0])
                tools = [tool for _, tool in scored]
                if not tools:
                    continue
            shown = [
                {"tool": t.name, "description": resolved.scrub(t.description), "read_only": t.read_only}
                for t in tools
            ]
            servers.append({"server": server.name, "tools": shown})
        return {"servers": servers}

    def introspect(self, playbook: PlaybookRef, server_name: str, tool_name: str) -> dict[str, Any]:
        """``{server, tool, description, input_schema, read_only}`` of an offered tool."""
        server, resolved = self._offered(playbook, server_name, tool_name)
        try:
            tools = self._runtime.tool_client.list_tools(resolved.address)
        except ToolServerFailure as failure:
            raise _failed_before_call(failure, resolved) from None
        tool = _find(tools, tool_name, server.name)
        return {
            "server": server.name,
            "tool": tool.name,
            "description": resolved.scrub(tool.description),
            "input_schema": tool.input_schema,
            "read_only": tool.read_only,
        }

    # --- execute and dry_run -----------------------------------------------------------------------

    def execute(
        self, playbook: PlaybookRef, server_name: str, tool_name: str, arguments: dict[str, Any], *, by: str
    ) -> dict[str, Any]:
        """Call the tool once and record it: ``{outcome, answer, is_error, text, duration_ms}``."""
        server, resolved = self._offered(playbook, server_name, tool_name)
        size = _checked_size(arguments)
        call_id = str(uuid.uuid4())
        started: dict[str, ListedTool] = {}

        def before_call(tool: ListedTool) -> None:
            errors = schema_errors(arguments, tool.input_schema)
            if errors:
                raise _invalid_arguments(errors)
            data = started_data(server, resolved, call_id, tool, arguments, size) | {"executed_by": by}
            self._record(playbook, TOOL_CALL_STARTED, data)
            started["tool"] = tool

        try:
            answer = self._runtime.tool_client.call_tool(
                resolved.address, tool_name, arguments, before_call=before_call
            )
        except ToolNotOffered as not_offered:
            raise _not_offered(not_offered) from None
        except ToolServerFailure as failure:
            if "tool" not in started:
                raise _failed_before_call(failure, resolved) from None
            self._record(
                playbook, TOOL_CALL_FAILED, failed_data(server, resolved, call_id, tool_name, failure)
            )
            raise _failed_after_call(failure, started["tool"], resolved) from None
        self._record(playbook, TOOL_CALL_ANSWERED, answered_data(server, resolved, call_id, answer))
        return {
            "outcome": "tool_error" if answer.is_error else "answered",
            "answer": resolved.scrub(answer.answer),
            "is_error": answer.is_error,
            "text": resolved.scrub(answer.text),
            "duration_ms": answer.duration_ms,
        }

    def dry_run(
        self, playbook: PlaybookRef, server_name: str, tool_name: str, arguments: dict[str, Any]
    ) -> dict[str, Any]:
        """What execute would check, each with ``ok`` (``null`` when not reached), calling no tool:

        ``{server, tool, would_call, read_only, checks: [{check, ok, because?, detail}], calls_nothing}``
        with the checks ``tool_server_configured``, ``tool_allowed``, ``tool_listed`` (which lists the
        server's tools), ``arguments_size`` and ``arguments_match_schema``.
        """
        from parley.documents.json_schema import json_size

        checks: list[dict[str, Any]] = []
        read_only: bool | None = None
        server: ToolServer | None = None
        resolved: ResolvedServer | None = None
        tool: ListedTool | None = None
        try:
            server = server_for(self._runtime, playbook, server_name)
            checks.append(
                _passed("tool_server_configured", f"The tool server {server.name!r} serves this playbook.")
            )
        except ToolNotOffered as not_offered:
            checks.append(_failed_check("tool_server_configured", not_offered.because, not_offered.detail))
        if server is not None:
            try:
                check_allowed(server, tool_name)
                checks.append(_passed("tool_allowed", "The operator allows the tool."))
            except ToolNotOffered as not_offered:
                checks.append(_failed_check("tool_allowed", not_offered.because, not_offered.detail))
                server = None
        else:
            checks.append(_unchecked("tool_allowed"))
        if server is not None:
            try:
                resolved = self._resolved(server)
                tools = self._runtime.tool_client.list_tools(resolved.address)
                tool = _find(tools, tool_name, server.name)
                read_only = tool.read_only
                checks.append(_passed("tool_listed", "The server lists the tool.") | {"read_only": read_only})
            except ToolNotOffered as not_offered:
                checks.append(_failed_check("tool_listed", not_offered.because, not_offered.detail))
            except ToolServerFailure as failure:
                detail = scrub(failure.detail, resolved.secrets if resolved else ())
                checks.append(_failed_check("tool_listed", failure.because, detail))
            except SecretUnavailable as unavailable:
                checks.append(_failed_check("tool_listed", "failing", str(unavailable)))
        else:
            checks.append(_unchecked("tool_listed"))
        size = json_size(arguments)
        if size <= MAX_ARGUMENTS_BYTES:
            checks.append(
                _passed("arguments_size", f"{size:,} bytes as JSON, of at most {MAX_ARGUMENTS_BYTES:,}.")
            )
        else:
            checks.append(_failed_check("arguments_size", "too_large", _too_large(size)) | {"size": size})
        if tool is not None:
            errors = schema_errors(arguments, tool.input_schema)
            if errors:
                entry = _failed_check("arguments_match_schema", "invalid_input", _first(errors))
                checks.append(entry | {"errors": [e.as_json() for e in errors]})
            else:
                checks.append(
                    _passed("arguments_match_schema", "The arguments match the tool's input_schema.")
                )
        else:
            checks.append(_unchecked("arguments_match_schema"))
        shown = scrub(checks, resolved.secrets) if resolved else checks
        return {
            "server": server_name,
            "tool": tool_name,
            "would_call": all(check["ok"] is True for check in checks),
            "read_only": read_only,
            "checks": shown,
            "calls_nothing": (
                "A dry run lists the server's tools, as a call does first; "
                "it calls no tool and records nothing."
            ),
        }

    # --- plumbing ----------------------------------------------------------------------------------

    def _offered(
        self, playbook: PlaybookRef, server_name: str, tool_name: str
    ) -> tuple[ToolServer, ResolvedServer]:
        try:
            server = server_for(self._runtime, playbook, server_name)
            check_allowed(server, tool_name)
        except ToolNotOffered as not_offered:
            raise _not_offered(not_offered) from None
        try:
            return server, self._resolved(server)
        except SecretUnavailable as unavailable:
            raise Problem(
                "unavailable", str(unavailable), kind="tool_server_failed", because="failing"
            ) from None

    def _resolved(self, server: ToolServer) -> ResolvedServer:
        return self._secrets.resolve(server)

    def _record(self, playbook: PlaybookRef, event_type: str, data: dict[str, Any]) -> None:
        """Write one event into the playbook's events (the runs store keeps every event)."""
        moment = self._runtime.clock.now()
        event = Event(new_event_id(event_type, moment), event_type, format_time(moment), None, data)
        self.store.record_events(playbook, [event])


def tool_service(runtime: Runtime) -> ToolService:
    return ToolService(runtime)


def schema_errors(arguments: Any, schema: Mapping[str, Any]) -> list[ErrorEntry]:
    """How ``arguments`` break the tool's ``input_schema`` (pointers under ``/arguments``). A schema
    that cannot be used (not valid, a reference out of reach) checks nothing: the server is the judge."""
    from parley.documents.json_schema import validate_instance

    try:
        return validate_instance(arguments, dict(schema), "/arguments")
    except Exception:  # a server's schema is foreign input; jsonschema's errors have no common base
        return []


# --- helpers ----------------------------------------------------------------------------------------------


def _words(terms: str | None) -> list[str]:
    if terms is None:
        return []
    if len(terms) > MAX_TERMS_CHARACTERS:
        raise Problem("bad_request", f"terms is at most {MAX_TERMS_CHARACTERS:,} characters.")
    return list(dict.fromkeys(_WORD.findall(terms.lower())))[:32]


def _score(tool: ListedTool, words: list[str]) -> int:
    text = f"{tool.name} {tool.name.replace('_', ' ').replace('-', ' ')} {tool.description}".lower()
    return sum(1 for word in words if word in text)


def _allows(server: ToolServer, tool: ListedTool) -> bool:
    return server.allowed is None or tool.name in server.allowed


def _find(tools: list[ListedTool], name: str, server: str) -> ListedTool:
    for tool in tools:
        if tool.name == name:
            return tool
    raise _not_offered(
        ToolNotOffered(
            "tool_not_listed",
            f"The tool server {server!r} does not list the tool {name!r}; "
            "call search for the tools it offers.",
        )
    )


def _unusable_entry(unusable: Unusable) -> dict[str, Any]:
    return {"server": unusable.name, "tools": [], "because": unusable.because, "detail": unusable.detail}


def _failed_entry(server: ToolServer, because: str, detail: str) -> dict[str, Any]:
    return {"server": server.name, "tools": [], "because": because, "detail": detail}


def _checked_size(arguments: Any) -> int:
    from parley.documents.json_schema import json_size

    size = json_size(arguments)
    if size > MAX_ARGUMENTS_BYTES:
        raise Problem("invalid_input", _too_large(size), errors=[ErrorEntry("/arguments", _too_large(size))])
    return size


def _too_large(size: int) -> str:
    return (
        f"The arguments take {size:,} bytes as JSON; a call sends at most {MAX_ARGUMENTS_BYTES:,} (16 KiB)."
    )


def _invalid_arguments(errors: list[ErrorEntry]) -> Problem:
    return Problem(
        "invalid_input",
        f"The arguments do not match the tool's input_schema: {_first(errors)}",
        errors=capped_errors(errors),
    )


def _first(errors: list[ErrorEntry]) -> str:
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{errors[0].pointer}: {errors[0].detail}{more}"


def _not_offered(not_offered: ToolNotOffered) -> Problem:
    # A connection that is there and cannot be used now is unavailable, not absent.
    reason = "unavailable" if not_offered.because.startswith("connection_") else "not_found"
    return Problem(reason, not_offered.detail, kind="tool_not_offered", because=not_offered.because)


def _failed_before_call(failure: ToolServerFailure, resolved: ResolvedServer) -> Problem:
    return server_failed(failure, resolved)


def _failed_after_call(failure: ToolServerFailure, tool: ListedTool, resolved: ResolvedServer) -> Problem:
    if refused_call(failure):
        return _failed_before_call(failure, resolved)  # refused: the call had no effect
    detail = resolved.scrub(failure.detail)
    if tool.read_only:
        return Problem(
            "tools_unfinished",
            f"{detail} The call of {tool.name!r} was sent; the server marks it read-only, so calling it "
            "again is safe.",
            kind="tools_unfinished",
            because="server_failed",
        )
    return Problem(
        "effect_unknown",
        f"{detail} The call of {tool.name!r} was sent and the tool is not marked read-only, so it may "
        "have changed something; check the events and the external system before calling it again.",
        kind="effect_unknown",
        because="server_failed",
    )


def _passed(check: str, detail: str) -> dict[str, Any]:
    return {"check": check, "ok": True, "detail": detail}


def _failed_check(check: str, because: str, detail: str) -> dict[str, Any]:
    return {"check": check, "ok": False, "because": because, "detail": detail}


def _unchecked(check: str) -> dict[str, Any]:
    return {"check": check, "ok": None, "detail": _NOT_CHECKED}
