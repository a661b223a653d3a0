"""Tool servers over MCP: the client layer (``client``), which servers serve a playbook and their secrets
(``servers``), and the operations search, introspect, execute and dry_run (``service``)."""
