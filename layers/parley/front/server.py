"""The mcp package's (low-level) server for one caller of one endpoint: its instructions, the tools
its principal may call and the guides.

A server is made per request — cheap, and it lets ``tools/list`` and the instructions speak of the
caller's own grants; the tools themselves are made once per process (``parley.front.tools``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from parley.front.guides import BY_URI, GUIDES, MEDIA_TYPE, GuideReader
from parley.front.target import Target
from parley.front.tools import call_tool, offered, tool_json

if TYPE_CHECKING:
    from mcp.server.lowlevel import Server

    from parley.api.operation import Services
    from parley.config import Principal

NAME: Final = "parley"
TITLE: Final = "Parley"
DESCRIPTION: Final = "Build, run and answer Parley functions."
#: JSON-RPC's "resource not found" (MCP): a guide:// URI that names no guide, or one not shipped.
RESOURCE_NOT_FOUND: Final = -32002

_INSTRUCTIONS: Final = """\
Parley runs functions that ask people and systems, and functions that reason with a model.

- A playbook is one team's or purpose's space: its definitions, runs and requests. {where}
- A definition is a function, saved as a Markdown document with front matter. An interaction function \
asks a person (or a system, through a tool) and waits for the answer; a reasoning function calls a \
model, maybe with tools. How to write them: the resources guide://interaction-format, \
guide://reasoning-format and guide://agent-runs (guide://output-shapes for output schemas, \
guide://http-api for every operation). A workflow (type workflow, a YAML document, \
guide://workflow-format) runs functions of the playbook one after another and decides what to do when \
one fails or goes unanswered. Read the guide before create_definition or update_definition.
- A run is one execution of a definition with an input (run_definition). It starts, then succeeds \
with an output, is rejected (with a reason) or fails; get_run shows where it stands.
- A request is what a run asks and waits for: list_interactions lists the open ones, each with its \
message and the answer_schema an answer must match. A person's answer or approval goes to \
answer_interaction, in the shape of that answer_schema; it starts no new run (the run that asked goes \
on). Send only what the person decided, never an answer of your own making.
- Lists come a page at a time: pass a page's next_cursor as cursor for the next; it is null on the last.
- A failed call answers isError with the problem's detail and its document (reason, status, errors \
with pointers): fix what it names and try again.
{grants}"""


def instructions(principal: Principal, target: Target) -> str:
    if target.scoped:
        where = (
            f"This endpoint is scoped to the playbook {target.playbook} of the org {target.org}: "
            "the tools take no org or playbook."
        )
    else:
        where = "Every playbook tool takes its org and playbook; list_models takes the org."
    grants = [
        f"{grant.org}/{grant.playbook} ({grant.role})"
        for grant in principal.playbook_grants()
        if not target.scoped or (grant.org == target.org and grant.playbook == target.playbook)
    ]
    shown = (
        f"You are {principal.id}, with these playbooks (org/playbook and role): {', '.join(grants)}. "
        "The read role calls the tools that only read; write calls every tool."
        if grants
        else f"You are {principal.id}, with no playbook."
    )
    return _INSTRUCTIONS.format(where=where, grants=shown)


def tools_listed(principal: Principal, target: Target) -> dict[str, Any]:
    """The ``tools/list`` result: the tools the principal may call through the endpoint, as JSON (the mcp
    package's server reads it into its types and writes it as the protocol revision says;
    ``parley.front.direct`` sends it as it is)."""
    return {"tools": [dict(tool_json(op.name, target.scoped)) for op in offered(principal, target)]}


def build_server(
    services: Services, principal: Principal, target: Target, guides: GuideReader
) -> Server[Any]:
    from mcp.server.lowlevel import Server
    from mcp.shared.exceptions import MCPError
    from mcp_types import (
        CallToolRequestParams,
        CallToolResult,
        ListResourcesResult,
        ListToolsResult,
        PaginatedRequestParams,
        ReadResourceRequestParams,
        ReadResourceResult,
        Resource,
        TextResourceContents,
    )

    from parley.api.openapi import api_version

    listed = ListToolsResult.model_validate(tools_listed(principal, target))

    async def list_tools(ctx: Any, params: PaginatedRequestParams | None) -> ListToolsResult:
        return listed

    async def call(ctx: Any, params: CallToolRequestParams) -> CallToolResult:
        return call_tool(services, principal, target, params.name, dict(params.arguments or {}))

    async def list_resources(ctx: Any, params: PaginatedRequestParams | None) -> ListResourcesResult:
        return ListResourcesResult(
            resources=[
                Resource(
                    uri=guide.uri,
                    name=guide.name,
                    title=guide.title,
                    description=guide.description,
                    mime_type=MEDIA_TYPE,
                )
                for guide in GUIDES
            ]
        )

    async def read_resource(ctx: Any, params: ReadResourceRequestParams) -> ReadResourceResult:
        uri = str(params.uri)
        guide = BY_URI.get(uri)
        text = guides(guide.name) if guide is not None else None
        if text is None:
            raise MCPError(RESOURCE_NOT_FOUND, f"There is no resource {uri}; resources/list lists them.")
        return ReadResourceResult(contents=[TextResourceContents(uri=uri, mime_type=MEDIA_TYPE, text=text)])

    return Server(
        NAME,
        version=api_version(),
        title=TITLE,
        description=DESCRIPTION,
        instructions=instructions(principal, target),
        on_list_tools=list_tools,
        on_call_tool=call,
        on_list_resources=list_resources,
        on_read_resource=read_resource,
    )
