"""Who is offered which connection operation (issue 32): the MCP front door lists a tool only to a
principal who may call it (``parley.api.operation.may_call`` with an operation's ``permits``)."""

from __future__ import annotations

import pytest

from parley.api.operation import may_call
from parley.api.registry import BY_NAME
from parley.config import parse_operator_config

CONFIG = parse_operator_config(
    """
principals:
  - { id: root, token: t1, grants: [{ org: acme, role: admin }] }
  - { id: dev, token: t2, grants: [{ org: acme, playbook: campaigns, role: write }] }
  - { id: viewer, token: t3, grants: [{ org: acme, playbook: campaigns, role: read }] }
  - { id: outsider, token: t4, grants: [{ org: globex, playbook: campaigns, role: write }] }
""",
    "test",
)
SEE = {"list_connections", "get_connection"}


@pytest.mark.parametrize(
    ("principal", "offered"),
    [
        ("root", SEE | {"approve_connection", "authorize_connection", "remove_connection"}),
        ("dev", SEE | {"add_connection", "authorize_connection", "remove_connection"}),
        ("viewer", SEE),
        ("outsider", set()),
    ],
)
def test_each_principal_is_offered_what_it_may_call_in_acme(principal: str, offered: set[str]) -> None:
    who = CONFIG.principal_named(principal)
    names = {name for name in BY_NAME if name.endswith("_connection") or name == "list_connections"}

    assert {name for name in names if may_call(BY_NAME[name], who, "acme", None)} == offered
    # On /mcp (no org given): any org of the principal's grants.
    anywhere = {name for name in names if may_call(BY_NAME[name], who, None, None)}
    assert anywhere == (
        offered
        if principal != "outsider"
        else SEE | {"add_connection", "authorize_connection", "remove_connection"}
    )


def test_the_admin_grant_gives_no_playbook_tool() -> None:
    root = CONFIG.principal_named("root")
    assert root.role_on("acme", "campaigns") is None
    assert not may_call(BY_NAME["get_run"], root, None, None)
    assert not may_call(BY_NAME["list_runs"], root, "acme", "campaigns")
