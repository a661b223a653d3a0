"""Which tools a run has, checked before the model is called (``reasoning-format.md``, "Tools",
"Before the model is called"): once the model is offered, every server the function names must serve
the playbook (the operator's, or an active connection of its org: :mod:`parley.tools.connected`),
answer its list of tools within its bounds, and list and allow each tool named; ``server/*`` gives
every tool the server lists that its ``allowed`` names. A tool that cannot be used ends the run
``unavailable`` (kind ``tool_not_offered`` or ``tool_server_failed`` with the page's ``because``) and
the model is never called. Which of them wait for a person's approval is
``approvals.needing_approval``'s to say; the tools offered are ``offered.OfferedTool``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from parley.errors import Problem
from parley.ports.tools import ListedTool, ToolNotOffered, ToolServerFailure
from parley.reasoning.agent_runs.offered import OfferedTool

if TYPE_CHECKING:
    from collections.abc import Mapping

    from parley.config import ToolServer
    from parley.definitions.model import PlaybookRef
    from parley.ports.runtime import Runtime
    from parley.reasoning.agent_runs.offered import ApprovalRule
    from parley.reasoning.document import ToolReference
    from parley.tools.servers import HeaderSecrets, ResolvedServer


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
    from parley.reasoning.agent_runs.approvals import needing_approval
    from parley.reasoning.agent_runs.naming import model_names
    from parley.reasoning.agent_runs.offering import schema_warnings_for, tool_spec
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
    needing = needing_approval(chosen, approvals or {})
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
