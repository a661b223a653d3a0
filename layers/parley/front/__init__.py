"""The MCP front door (``http-api.md``, "The MCP front door"): the operations of the HTTP API as MCP
tools, for agents a person asks to build, run and answer functions.

A front door, beside ``parley.api``: it makes its tools from the same registry
(``parley.api.registry``) and calls the same services, so nothing of the HTTP handlers is written
twice.

- ``handler``: the ``mcp`` Lambda function's entry (API Gateway REST proxy events for ``POST /mcp`` and
  ``POST /v1/orgs/{org}/playbooks/{playbook}/mcp``), also what ``parley serve`` calls for those paths;
- ``target``: which endpoint a path is;
- ``direct``: the plain first requests (``initialize``, ``tools/list``, ``ping``, the ``initialized``
  notification) answered as the mcp package would, without loading it;
- ``asgi``: an API Gateway proxy event through an ASGI application, and its answer back;
- ``server``: the mcp package's server for one caller: its instructions, tools and resources;
- ``tools``: an operation as a tool, and a tool call as the operation's call;
- ``guides``: Parley's reference pages (``parley.reference``) as ``guide://`` resources.

The ``mcp`` package (over a second to import) loads with the first request that needs it, never with
these modules and never for the requests ``direct`` answers (issue 20).

Offers: the ``mcp`` function's entry (:func:`handle`, :func:`build_mcp_handler`) and which paths are
the MCP front door's (:func:`is_mcp_path`).

The face is lazy (PEP 562, ``parley.faces``): each name's module is imported on the name's first use, so
importing one module of the package loads no other.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from parley.faces import lazy_face

if TYPE_CHECKING:
    from parley.front.handler import build_mcp_handler, handle
    from parley.front.target import is_mcp_path

__all__ = [
    "build_mcp_handler",
    "handle",
    "is_mcp_path",
]

if not TYPE_CHECKING:  # type checkers read the names above; a lookup of another is an error
    __getattr__, __dir__ = lazy_face(
        __name__,
        {
            "handler": ("build_mcp_handler", "handle"),
            "target": ("is_mcp_path",),
        },
    )
