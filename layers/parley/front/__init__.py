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
"""
