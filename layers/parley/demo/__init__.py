"""``parley demo-chat``: a chat tool server shipped with the project, to deliver to and answer from on
this machine (``docs/demo-chat.md``): the chat in memory (``chat``), the MCP server, page and JSON routes
(``server``, ``page``), the failure switch for tests (``failures``) and the terminal reply (``reply``)."""
