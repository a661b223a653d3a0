"""Lambda entry of the MCP front door (API Gateway REST proxy events for ``/mcp`` and
``/v1/orgs/{org}/playbooks/{playbook}/mcp``); the server lives in ``parley.front``."""

from parley.front.handler import handle

handler = handle
