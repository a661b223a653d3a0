"""Which tools a run has, checked before the model is called (``reasoning-format.md``, "Tools",
"Before the model is called"): once the model is offered, every server the function names must serve
the playbook (the operator's, or an active connection of its org: :mod:`parley.tools.connected`),
answer its list of tools within its bounds, and list and allow each tool named; ``server/*`` gives
every tool the server lists that its ``allowed`` names. A tool that cannot be used ends the run
``unavailable`` (kind ``tool_not_offered`` or ``tool_server_failed`` with the page's ``because``) and
the model is never called.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from parley.errors import Problem
from parley.ports.tools import ListedTool, ToolNotOffered, ToolServerFailure

if TYPE_CHECKING:
    from collections.abc import Mapping

    from parley.config import ToolServer
    from parley.definitions.model import PlaybookRef
    from parley.ports.runtime import Runtime
    from parley.reasoning.asking.approvals import ApprovalRule
    from parley.reasoning.document import ToolReference
    from parley.reasoning.models.providers.base import ToolSpec
    from parley.tools.servers import HeaderSecrets, ResolvedServer


@dataclass(frozen=True)
class OfferedTool:
    """A tool the run may call: its server (as configured and with its secrets read), the tool as the
    server lists it, and the name the model knows it by."""

    server: ToolServer
    resolved: ResolvedServer
    tool: ListedTool
    name: str
    spec: ToolSpec
    #: How a person approves each call of it, when the operator or the function requires approval.
    approval: ApprovalRule | None = None
    #: Every tool its server lists (a continuation of a tool that asks is looked up here).
    listing: Mapping[str, ListedTool] | None = None


def tools_for_run(
    runtime: Runtime,
    secrets: HeaderSecrets,
    playbook: PlaybookRef,
    references: tuple[ToolReference, ...],
    provider_kind: str,
    *,
    approvals: Mapping[str, ApprovalRule] | None = None,
    asks: bool = False,
) -> tuple[dict[str, OfferedTool], list[str]]:
    """The run's tools by the name the model knows them by, and the warnings of their input schemas;
    or the problem that ends the run before the model is called. ``approvals`` are the function's
    ``approve`` rules by ``server/tool``; with the operator's (which win), they wait for a person's
    approval, which needs ``ask`` (``asks``)."""
    from parley.reasoning.tools.naming import model_names
    from parley.reasoning.tools.offering import schema_warnings_for, tool_spec
    from parley.tools.connected import server_for
    from parley.tools.servers import SecretUnavailable, allowed, check_allowed

    chosen: dict[tuple[str, str], tuple[ToolServer, ResolvedServer, ListedTool]] = {}
    listings: dict[str, tuple[ToolServer, ResolvedServer, dict[str, ListedTool]]] = {}
    for reference in references:
        scrub: Any = None
        try:
            if reference.server not in listings:
                server = server_for(runtime, playbook, reference.server)  # operator's, or a connection
                resolved = secrets.resolve(server)
                scrub = resolved.scrub
                listed = runtime.tool_client.list_tools(resolved.address)
                listings[reference.server] = (server, resolved, {tool.name: tool for tool in listed})
            server, resolved, by_name = listings[reference.server]
            if reference.every_tool:
                for tool in by_name.values():
                    if allowed(server, tool.name):
                        chosen.setdefault((server.name, tool.name), (server, resolved, tool))
                continue
            check_allowed(server, reference.tool)
            if reference.tool not in by_name:
                raise ToolNotOffered(
                    "tool_not_listed",
                    f"The tool server {server.name!r} does not list the tool {reference.tool!r}; call search "
                    "for the tools it lists.",
                )
            chosen.setdefault((server.name, reference.tool), (server, resolved, by_name[reference.tool]))
        except ToolNotOffered as not_offered:
            raise Problem(
                "unavailable",
                f"{not_offered.detail} The model was not called.",
                kind="tool_not_offered",
                because=not_offered.because,
            ) from None
        except SecretUnavailable as unavailable:
            raise Problem(
                "unavailable",
                f"{unavailable} The model was not called.",
                kind="tool_server_failed",
                because="failing",
            ) from None
        except ToolServerFailure as failure:
            words = scrub(failure.detail) if scrub is not None else failure.detail
            raise Problem(
                "unavailable",
                f"{words} The model was not called.",
                kind="tool_server_failed",
                because=failure.because,
            ) from None
    needing = _needing_approval(chosen, approvals or {})
    if needing and not asks:
        raise Problem(
            "conflict",
            "The operator requires a person's approval before each call of "
            + ", ".join(sorted(needing))
            + ', and this function has no ask to get one (agent-runs.md, "Turning it on: ask"); the model '
            "was not called. Add ask, or leave the tool out of tools.",
            kind="unworkable",
        )
    names = model_names(list(chosen))
    offered: dict[str, OfferedTool] = {}
    warnings: list[str] = []
    for key, (server, resolved, tool) in sorted(chosen.items()):
        name = names[key]
        offered[name] = OfferedTool(
            server,
            resolved,
            tool,
            name,
            tool_spec(name, tool),
            needing.get(f"{server.name}/{tool.name}"),
            listings[server.name][2] if server.name in listings else None,
        )
        warnings.extend(schema_warnings_for(name, tool.input_schema, provider_kind))
    return offered, warnings


def _needing_approval(
    chosen: dict[tuple[str, str], tuple[ToolServer, ResolvedServer, ListedTool]],
    approvals: Mapping[str, ApprovalRule],
) -> dict[str, ApprovalRule]:
    """The chosen tools (``server/tool``) that wait for approval, with their rule: the operator's (which
    a function cannot waive, and whose confirmation wins) and the function's own."""
    from parley.reasoning.asking.approvals import ApprovalRule

    needing = {
        reference: rule for reference, rule in approvals.items() if tuple(reference.split("/", 1)) in chosen
    }
    for (server_name, tool_name), (server, _, _) in chosen.items():
        for entry in server.approve:
            if entry.tool == tool_name:
                needing[f"{server_name}/{tool_name}"] = ApprovalRule(entry.confirmation, entry.preview)
    return needing
