"""The one table's keys (``parley.infrastructure.table``), built here and nowhere else (issue 30: "the
table's keys built in one module"): every partition key, sort key and index key an item is written or
read under. A store names its item with these functions; ``tests/unit/infrastructure/test_keys.py``
checks that no other module spells a key's prefix.

Every item of a playbook shares its partition, ``pk = PB#{org}#{playbook}`` (:func:`playbook_key`), so a
playbook is one key range. The sort keys, by item:

- definition head ``DEF#{type}#{name}``, version ``DEFV#{type}#{name}#{version:08d}``; ``gsi1pk``
  ``PB#…#DEF#{type}``, ``gsi1sk`` ``{created_at}#{name}``;
- run ``RUN#{run_id}``; ``gsi1pk`` ``PB#…#RUN``, ``gsi1sk`` ``{started_at}#{run_id}``;
- request ``REQ#{run_id}``; while open ``gsi1pk`` ``PB#…#REQ``, ``gsi1sk`` ``{requested_at}#{run_id}``;
- event ``EVT#{event_id}``; ``gsi2pk`` ``RUN#{org}#{playbook}#{run_id}`` (a run's history), ``gsi2sk``
  ``{event_id}``;
- a list's filter slot (issue 31): ``{list key}?["{value}"]`` (:func:`filter_key`);
- the open-requests counter ``COUNTER#open_requests``; a run's waiting work ``WORK#{run_id}``;
- a conversation (replies) ``CONV#{id}``;
- a workflow's events: ``SENTCOUNT#``, ``LISTENED#``, ``SENT#``, ``KEPT#``, ``LISTEN#``,
  ``LISTENTYPE#``, ``EMITTED#``.

An org's own items (its connections, issue 32) share the org's partition, ``pk = ORG#{org}``
(:func:`org_key`), sort key ``CONNECTION#{name}`` (:func:`connection_key`).

This module imports nothing of Parley's (it is the foundation every part may import): a playbook is
anything with ``org`` and ``playbook``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Final, Protocol


class PlaybookLike(Protocol):
    """What a key needs of a playbook (``parley.definitions.model.PlaybookRef``)."""

    @property
    def org(self) -> str: ...

    @property
    def playbook(self) -> str: ...


PLAYBOOK_PREFIX: Final = "PB#"
EVENT_PREFIX: Final = "EVT#"
#: The open-requests counter's sort key.
COUNTER_KEY: Final = "COUNTER#open_requests"


# --- the playbook's partition ------------------------------------------------------------------------


def playbook_key(playbook: PlaybookLike) -> str:
    return f"{PLAYBOOK_PREFIX}{playbook.org}#{playbook.playbook}"


def playbook_of(pk: str) -> tuple[str, str] | None:
    """``(org, playbook)`` of a partition key made by :func:`playbook_key`; ``None`` for another key."""
    if not pk.startswith(PLAYBOOK_PREFIX):
        return None
    parts = pk.removeprefix(PLAYBOOK_PREFIX).split("#", 1)
    return (parts[0], parts[1]) if len(parts) == 2 else None


# --- definitions ---------------------------------------------------------------------------------------


def definition_head_key(definition_type: str, name: str) -> str:
    return f"DEF#{definition_type}#{name}"


def definition_version_key(definition_type: str, name: str, version: int) -> str:
    return f"DEFV#{definition_type}#{name}#{version:08d}"


def definitions_list_key(playbook: PlaybookLike, definition_type: str) -> str:
    return f"{playbook_key(playbook)}#DEF#{definition_type}"


def definitions_list_sort_key(created_at: str, name: str) -> str:
    return f"{created_at}#{name}"


# --- runs, requests, events ----------------------------------------------------------------------------


def run_key(run_id: str) -> str:
    return f"RUN#{run_id}"


def request_key(run_id: str) -> str:
    return f"REQ#{run_id}"


def event_key(event_id: str) -> str:
    return f"{EVENT_PREFIX}{event_id}"


def event_id_of(sk: str) -> str:
    """The event id of an event's sort key."""
    return sk.removeprefix(EVENT_PREFIX)


def work_key(run_id: str) -> str:
    return f"WORK#{run_id}"


def history_key(playbook: PlaybookLike, run_id: str) -> str:
    """``gsi2pk`` of a run's events (its history, in order)."""
    return f"RUN#{playbook.org}#{playbook.playbook}#{run_id}"


def runs_list_key(playbook: PlaybookLike) -> str:
    return f"{playbook_key(playbook)}#RUN"


def requests_list_key(playbook: PlaybookLike) -> str:
    return f"{playbook_key(playbook)}#REQ"


def events_list_key(playbook: PlaybookLike) -> str:
    return f"{playbook_key(playbook)}#EVT"


def list_position(at: str, run_id: str) -> str:
    """The sort key of a run or request in a newest-first list (and a cursor's position)."""
    return f"{at}#{run_id}"


def position_run_id(position: str) -> str:
    """The run id of a :func:`list_position`."""
    return position.rsplit("#", 1)[1]


#: A slot's partition key longer than this (in bytes) is kept as a digest (DynamoDB allows 2,048).
_KEY_TEXT_MAX: Final = 512


def filter_key(list_key: str, values: Sequence[object]) -> str:
    """The partition key, in a list's filter slot, of the items whose filter values are ``values``: the
    list's key and the values as JSON (no value can run into the next), or its digest when long. A list
    reads the same key from the filters it is given."""
    text = json.dumps([str(value) for value in values], ensure_ascii=False, separators=(",", ":"))
    if len(text.encode("utf-8", "surrogatepass")) > _KEY_TEXT_MAX:
        text = "#" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    return f"{list_key}?{text}"


# --- conversations (``parley.interaction.replies``) --------------------------------------------------------


def conversation_key(conversation_id: str) -> str:
    return f"CONV#{conversation_id}"


# --- a workflow's events (``parley.workflow.event_store``) -------------------------------------------------


def sent_count_key(run_id: str) -> str:
    return f"SENTCOUNT#{run_id}"


def listened_key(run_id: str) -> str:
    return f"LISTENED#{run_id}"


def sent_key(run_id: str, sent_id: str) -> str:
    return f"SENT#{run_id}#{sent_id}"


def kept_prefix(run_id: str) -> str:
    return f"KEPT#{run_id}#"


def kept_key(run_id: str, event_id: str) -> str:
    return f"{kept_prefix(run_id)}{event_id}"


def listen_prefix(run_id: str) -> str:
    return f"LISTEN#{run_id}#"


def listen_key(run_id: str, listen_id: str) -> str:
    return f"{listen_prefix(run_id)}{listen_id}"


def listen_type_prefix(event_type: str) -> str:
    return f"LISTENTYPE#{event_type}#"


def listen_type_key(event_type: str, run_id: str, listen_id: str) -> str:
    return f"{listen_type_prefix(event_type)}{run_id}#{listen_id}"


def emitted_key(emitted_id: str) -> str:
    return f"EMITTED#{emitted_id}"


CONNECTION_PREFIX: Final = "CONNECTION#"


def org_key(org: str) -> str:
    """The partition of an org's own items (its connections)."""
    return f"ORG#{org}"


def connection_key(name: str) -> str:
    return f"{CONNECTION_PREFIX}{name}"
