"""Interaction functions (``interaction-format.md``): a function that asks a system (one MCP call), or
asks a person through the inbox or a chat tool and waits for the answer.

- ``document``, ``reply_rule``, ``overview``: checking a document when it is saved, and its overview;
- ``prepare``: the checked document made ready to run, the input checked, the request rendered;
- ``call``: a function that asks a system ("Asking a system");
- ``delivery``: sending a request through a tool ("Attempts");
- ``replies``: answering by reply ("Answering by reply": the cadence, the reply rule, telling);
- ``kind``: the type as the run lifecycle (``parley.runs``) sees it, through its registry.
"""
