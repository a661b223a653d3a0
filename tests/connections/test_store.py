"""The connection store on moto's DynamoDB (issue 32): the one item per connection under its org, the
conditional add, status and auth changes, removal, and a listing that pages."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from parley.connections.model import Connection
from parley.connections.store import ConnectionExists, ConnectionMissing, ConnectionStore, org_key

NOTES = Connection(
    org="acme",
    name="notes",
    url="https://mcp.acme.com/notes",
    status="pending",
    playbooks=None,
    added_by="alice",
    added_at="2026-12-02T03:00:00Z",
    approved_by=None,
    approved_at=None,
    auth="headers",
)


@pytest.fixture
def store(dynamodb: tuple[Any, str]) -> ConnectionStore:
    client, table = dynamodb
    return ConnectionStore(client, table)


def test_a_connection_added_reads_back_as_it_was(store: ConnectionStore) -> None:
    store.add(NOTES)
    assert store.get("acme", "notes") == NOTES
    assert store.get("acme", "other") is None
    assert store.get("globex", "notes") is None


def test_the_item_sits_under_the_org(store: ConnectionStore, dynamodb: tuple[Any, str]) -> None:
    client, table = dynamodb
    store.add(NOTES)
    item = client.get_item(
        TableName=table, Key={"pk": {"S": org_key("acme")}, "sk": {"S": "CONNECTION#notes"}}
    )
    assert item["Item"]["url"] == {"S": NOTES.url}
    assert "approved_by" not in item["Item"]


def test_a_name_is_taken_once(store: ConnectionStore) -> None:
    store.add(NOTES)
    with pytest.raises(ConnectionExists):
        store.add(replace(NOTES, url="https://other.acme.com/"))
    assert store.get("acme", "notes") == NOTES
    store.add(replace(NOTES, org="globex"))  # another org's name space


def test_approval_records_who_and_when(store: ConnectionStore) -> None:
    store.add(replace(NOTES, playbooks=("campaigns", "support")))
    approved = store.set_status("acme", "notes", "active", approved_by="root", at="2026-12-02T03:05:00Z")
    assert approved.status == "active"
    assert (approved.approved_by, approved.approved_at) == ("root", "2026-12-02T03:05:00Z")
    assert approved.playbooks == ("campaigns", "support")
    assert store.get("acme", "notes") == approved
    broken = store.set_status("acme", "notes", "broken")
    assert broken.approved_by == "root"
    assert store.set_auth("acme", "notes", "oauth").auth == "oauth"


def test_changing_a_missing_connection_says_so(store: ConnectionStore) -> None:
    with pytest.raises(ConnectionMissing):
        store.set_status("acme", "notes", "active")
    with pytest.raises(ConnectionMissing):
        store.set_auth("acme", "notes", "oauth")
    with pytest.raises(ValueError):
        store.set_status("acme", "notes", "not_allowed")
    assert store.get("acme", "notes") is None


def test_removing_forgets_it(store: ConnectionStore) -> None:
    store.add(NOTES)
    store.remove("acme", "notes")
    assert store.get("acme", "notes") is None
    store.remove("acme", "notes")  # twice: nothing happens
    store.add(NOTES)  # the name is free again
    assert store.list("acme") == [NOTES]


def test_the_list_is_the_orgs_by_name_across_pages(store: ConnectionStore, dynamodb: tuple[Any, str]) -> None:
    names = [f"server-{number:03d}" for number in range(40)]
    padding = "x" * 30_000  # about 30 KB an item: a query page (1 MB) holds fewer than 40
    for name in reversed(names):
        store.add(replace(NOTES, name=name, url=f"https://mcp.acme.com/{padding}"))
    store.add(replace(NOTES, org="globex"))
    client, table = dynamodb
    client.put_item(TableName=table, Item={"pk": {"S": "ORG#acme"}, "sk": {"S": "OTHER#thing"}})
    assert [c.name for c in store.list("acme")] == names
    assert store.list("nobody") == []
    assert store.list("globex") == [replace(NOTES, org="globex")]


def test_a_connection_serves_its_playbooks_and_shows_no_org() -> None:
    assert NOTES.serves("anything")
    limited = replace(NOTES, playbooks=("campaigns",))
    assert limited.serves("campaigns") and not limited.serves("support")
    assert limited.public() == {
        "name": "notes",
        "url": "https://mcp.acme.com/notes",
        "status": "pending",
        "playbooks": ["campaigns"],
        "added_by": "alice",
        "added_at": "2026-12-02T03:00:00Z",
        "approved_by": None,
        "approved_at": None,
        "auth": "headers",
    }
