"""The tool-serving fixtures (``served``, ``http``: a real MCP server beside ``parley serve``), for the
modules of this folder that ask for them; see ``tests/tool_serving.py``."""

from tool_serving import http, served  # noqa: F401 - re-exported as this folder's fixtures
