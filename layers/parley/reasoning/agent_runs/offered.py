"""A tool offered to the model, as the run holds it (``reasoning-format.md``, "Tools", "Before the model
is called"): its server, the tool as the server lists it, the name the model knows it by, its spec, and
how a person approves its calls (``agent-runs.md``, "Approvals").

The approval's rule is plain data here (a confirmation template or a preview tool), so that ``before``
(which builds the offered tools) and ``approvals`` (which asks for an approval and sends the frozen call)
both read it without importing each other; everything done with the rule is in ``approvals``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping

    from parley.config import ToolServer
    from parley.models import ToolSpec
    from parley.ports.tools import ListedTool
    from parley.tools.servers import ResolvedServer


@dataclass(frozen=True)
class ApprovalRule:
    """How a tool's calls are approved: exactly one of ``confirmation`` (a template over ``arguments``)
    and ``preview`` (a tool of the same server)."""

    confirmation: str | None = None
    preview: str | None = None


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
