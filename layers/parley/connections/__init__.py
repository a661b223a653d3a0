"""Connections (``http-api.md``, "Connections"; issue 32): MCP servers that people add to their org.

- :mod:`parley.connections.model`: the record (:class:`~parley.connections.model.Connection`).
- :mod:`parley.connections.rules`: the operator's ``connections`` rules (which URLs may be connected,
  whether a new connection waits for an admin) and ``status_under``.
- :mod:`parley.connections.store`: the records in the one table, under the org.
- :mod:`parley.connections.secrets`: a connection's headers and OAuth tokens, kept as secrets (Secrets
  Manager on AWS, encrypted in the data folder locally, in memory with ``--data none``).
- :mod:`parley.connections.routes`: the operations add, list, get, approve and remove.
"""
