"""Operations of ``http-api.md`` "Tool servers": search, introspect, execute and dry_run.

search and introspect read (role ``read``); execute and dry_run are POSTs (role ``write``). A server
or tool the playbook may not use answers ``404 not_found`` with the kind ``tool_not_offered`` and a
``because`` (see ``parley.tools.service``); a tool server's failure is a ``503``/``409`` problem with
a ``because``, never a ``500``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from parley.api.operation import Answer, Call, Hints, Operation, Param, Services
from parley.api.shapes import DRY_RUN, EXECUTED, INTROSPECTED, SEARCH

if TYPE_CHECKING:
    from parley.api.bodies import ArgumentsBody

TAG: Final = "Tool servers"

SERVER = Param("server", "path", "The tool server's name, as search lists it.")
TOOL = Param("tool", "path", "The tool's name on that server, as search lists it.")


def search(services: Services, call: Call) -> Answer:
    return Answer(services.tools.search(call.ref, call.values["terms"]))


def _searched(services: Services, call: Call, body: dict[str, Any]) -> str:
    servers = body.get("servers") or []
    tools = sum(len(server.get("tools") or []) for server in servers)
    failing = sum(1 for server in servers if server.get("because"))
    shown = f"{_count(tools, 'tool')} on {_count(len(servers), 'tool server')}"
    matching = " match" if call.values.get("terms") else " are offered to this playbook"
    cannot = f"; {_count(failing, 'server')} could not be listed" if failing else ""
    return f"{shown}{matching}{cannot}."


def _count(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def introspect(services: Services, call: Call) -> Answer:
    return Answer(services.tools.introspect(call.ref, call.values["server"], call.values["tool"]))


def _introspected(services: Services, call: Call, body: dict[str, Any]) -> str:
    kind = "only reads" if body.get("read_only") else "may change things"
    return f"The tool {body.get('tool')} of {body.get('server')} {kind}; input_schema says what it takes."


def execute(services: Services, call: Call) -> Answer:
    body: ArgumentsBody = call.body
    answer = services.tools.execute(
        call.ref, call.values["server"], call.values["tool"], body.arguments, by=call.principal.id
    )
    return Answer(answer)


def _executed(services: Services, call: Call, body: dict[str, Any]) -> str:
    named = f"The tool {call.values['tool']} of {call.values['server']}"
    if body.get("is_error"):
        return f"{named} answered with an error (outcome tool_error) in {body.get('duration_ms')} ms."
    return f"{named} answered in {body.get('duration_ms')} ms."


def dry_run(services: Services, call: Call) -> Answer:
    body: ArgumentsBody = call.body
    return Answer(
        services.tools.dry_run(call.ref, call.values["server"], call.values["tool"], body.arguments)
    )


def _dry_ran(services: Services, call: Call, body: dict[str, Any]) -> str:
    named = f"a call of {call.values['tool']} on {call.values['server']}"
    if body.get("would_call"):
        return f"Every check passes: {named} would be sent. Nothing was called."
    failed: dict[str, Any] = next((c for c in body.get("checks") or [] if c.get("ok") is False), {})
    detail = failed.get("detail", "a check fails.")
    return f"{named[0].upper()}{named[1:]} would not be sent: {detail} Nothing was called."


OPERATIONS: Final = (
    Operation(
        name="search",
        title="Search the tools",
        method="GET",
        route="/tool-servers/search",
        scope="playbook",
        role="read",
        tag=TAG,
        summary="Find the tools the playbook's tool servers offer.",
        description=(
            "List the tool servers that serve the playbook and the tools each offers, best match first "
            "when terms are given. Use it to find a tool's exact server and name before writing a "
            "function that calls it, or before introspect and execute."
        ),
        hints=Hints(read_only=True, idempotent=True, open_world=True),
        invoke=search,
        summarize=_searched,
        params=(Param("terms", "query", "Words to look for in the tools' names and descriptions."),),
        output=SEARCH,
    ),
    Operation(
        name="introspect",
        title="Describe a tool",
        method="GET",
        route="/tool-servers/{server}/tools/{tool}",
        scope="playbook",
        role="read",
        tag=TAG,
        summary="Read a tool's description and input schema.",
        description=(
            "Read one tool's description, its input_schema and whether it only reads. Use it before "
            "writing a function that calls the tool, or before execute, to send arguments that match."
        ),
        hints=Hints(read_only=True, idempotent=True, open_world=True),
        invoke=introspect,
        summarize=_introspected,
        params=(SERVER, TOOL),
        output=INTROSPECTED,
        problems=("unavailable",),
    ),
    Operation(
        name="execute",
        title="Call a tool",
        method="POST",
        route="/tool-servers/{server}/tools/{tool}/execute",
        scope="playbook",
        role="write",
        tag=TAG,
        summary="Call a tool once, and record the call.",
        description=(
            "Call a tool once with arguments, as a run would, and record the call in the playbook's "
            "events. A tool that writes (posts a message, books a room) does so for real and it cannot "
            "be undone: call it only when a person asked for that effect, and try dry_run first."
        ),
        hints=Hints(read_only=False, destructive=True, open_world=True),
        invoke=execute,
        summarize=_executed,
        params=(SERVER, TOOL),
        body_model="ArgumentsBody",
        output=EXECUTED,
        problems=("effect_unknown", "invalid_input", "unavailable", "tools_unfinished"),
    ),
    Operation(
        name="dry_run",
        title="Check a tool call",
        method="POST",
        route="/tool-servers/{server}/tools/{tool}/dry-run",
        scope="playbook",
        role="write",
        tag=TAG,
        summary="Check what a tool call would check, calling nothing.",
        description=(
            "Make every check execute would make (the server serves the playbook, the tool is allowed "
            "and listed, the arguments match its input_schema) without calling the tool or recording "
            "anything. Use it before execute, or to check the arguments a function would send."
        ),
        hints=Hints(read_only=True, idempotent=True, open_world=True),
        invoke=dry_run,
        summarize=_dry_ran,
        params=(SERVER, TOOL),
        body_model="ArgumentsBody",
        output=DRY_RUN,
    ),
)
