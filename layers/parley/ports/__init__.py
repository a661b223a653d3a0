"""The ports the core works through, and the bundle of them a handler is given (``runtime``).

Adapters live elsewhere: AWS's in ``parley.aws``, the local twins in ``parley.local``, the MCP client in
``parley.tools``. Nothing here imports an adapter.
"""
