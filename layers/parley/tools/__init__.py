"""Tool servers over MCP: the client layer (``client``), which servers serve a playbook and their secrets
(``servers``), and the operations search, introspect, execute and dry_run (``service``).

Offers: :class:`ToolService` (the routes' logic), one call for a playbook (:func:`call_for_playbook`,
:class:`CallAnswer`, :class:`CallFailure`), the servers a playbook sees and their secrets
(:func:`servers_serving`, :func:`server_serving`, :func:`check_allowed`, :class:`HeaderSecrets`,
:class:`ResolvedServer`), the MCP client (:class:`McpToolClient`, :func:`reusing_listings`), and what a
tool call records (:func:`content_digest`). The mcp package loads with the first client call.

The face is lazy (PEP 562, ``parley.faces``): each name's module is imported on the name's first use, so
importing one module of the package loads no other.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from parley.faces import lazy_face

if TYPE_CHECKING:
    from parley.tools.calling import CallAnswer, CallFailure, call_for_playbook
    from parley.tools.client import McpToolClient, reusing_listings
    from parley.tools.recording import content_digest
    from parley.tools.servers import (
        HeaderSecrets,
        ResolvedServer,
        check_allowed,
        server_serving,
        servers_serving,
    )
    from parley.tools.service import ToolService

__all__ = [
    "CallAnswer",
    "CallFailure",
    "HeaderSecrets",
    "McpToolClient",
    "ResolvedServer",
    "ToolService",
    "call_for_playbook",
    "check_allowed",
    "content_digest",
    "reusing_listings",
    "server_serving",
    "servers_serving",
]

if not TYPE_CHECKING:  # type checkers read the names above; a lookup of another is an error
    __getattr__, __dir__ = lazy_face(
        __name__,
        {
            "service": ("ToolService",),
            "calling": ("CallAnswer", "CallFailure", "call_for_playbook"),
            "servers": (
                "HeaderSecrets",
                "ResolvedServer",
                "check_allowed",
                "server_serving",
                "servers_serving",
            ),
            "client": ("McpToolClient", "reusing_listings"),
            "recording": ("content_digest",),
        },
    )
