"""The run lifecycle's items in the one table (``parley.infrastructure.table``): their filter slots
(their keys are built in ``parley.infrastructure.keys``, re-exported here), and how an item reads back
as a run, a request or an event. ``parley.runs.store`` writes them, each under its
condition; its docstring lists the items and their attributes."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final

from parley.definitions.model import PlaybookRef
from parley.infrastructure.keys import (
    event_key,
    events_list_key,
    filter_key,
    history_key,
    list_position,
    playbook_key,
    playbook_of,
    request_key,
    requests_list_key,
    run_key,
    runs_list_key,
    work_key,
)
from parley.infrastructure.table import FILTER_INDEXES, IndexDefinition
from parley.runs.model import AnswerFact, CalledTool, Delivery, Event, Parent, Rejection, Request, Run

__all__ = [
    "EVENT_SLOTS",
    "REQUEST_SLOTS",
    "RUN_SLOTS",
    "chosen_slot",
    "event_from",
    "event_key",
    "event_slots",
    "events_list_key",
    "filter_key",
    "history_key",
    "holds_listing_indexes",
    "kept_value",
    "playbook_key",
    "request_from",
    "request_key",
    "request_slot_names",
    "request_slots",
    "requests_list_key",
    "run_from",
    "run_key",
    "run_slots",
    "runs_list_key",
    "slot_index",
    "with_listing_indexes",
    "work_key",
]

#: The filters of each list (``http-api.md``) that have a slot of their own (issue 31), in the order a
#: listing prefers them when it is given several (the most selective first): the i-th is kept in
#: ``FILTER_INDEXES[i]``. A listing given filters reads the slot of the first of them here and checks the
#: others on the items it reads; given none of them (``list_interactions`` by ``type`` or ``function``
#: only), it reads the unfiltered list and checks them there. Either read stops at its page or at the
#: store's bounded read (``parley.runs.store.READ_BOUND_PAGES``). Each slot costs a write unit an item that
#: enters it, two an item that moves in it; so a run has three (a ``status`` that moves when it ends),
#: an open request one (``to``: whose inbox; left when the request leaves the list), an event one.
RUN_SLOTS: Final = ("name", "status", "type")
REQUEST_SLOTS: Final = ("to",)
#: An event's ``run_id`` is its run's history (``gsi2``), preferred to the ``type`` slot when given.
EVENT_SLOTS: Final = ("type",)

#: An attribute of a filter slot, of these indexes or of the seven an earlier layout had.
_SLOT_ATTRIBUTE: Final = re.compile(r"gsi([3-9]|[1-9]\d+)(pk|sk)")


def slot_index(slots: tuple[str, ...], name: str) -> IndexDefinition:
    """The index of the slot of filter ``name`` of a list whose slots are ``slots``."""
    return FILTER_INDEXES[slots.index(name)]


def chosen_slot(slots: tuple[str, ...], filters: Mapping[str, Any]) -> str | None:
    """The filter, of those given, whose slot a listing reads; ``None`` when none has a slot."""
    return next((name for name in slots if name in filters), None)


def _slot_attributes(
    list_key: str, slots: tuple[str, ...], values: Mapping[str, Any], sort: str, *, only: str | None = None
) -> dict[str, str]:
    attributes: dict[str, str] = {}
    for name in slots:
        if only is not None and name != only:
            continue
        index = slot_index(slots, name)
        attributes[index.partition_key] = filter_key(list_key, [values[name]])
        attributes[index.sort_key] = sort
    return attributes


def run_slots(
    playbook: PlaybookRef,
    run_type: str,
    name: str,
    status: str,
    started_at: str,
    run_id: str,
    *,
    only: str | None = None,
) -> dict[str, str]:
    """A run's entries in ``list_runs``' slots (``only="status"``: the one a status change moves)."""
    values = {"type": run_type, "name": name, "status": status}
    position = list_position(started_at, run_id)
    return _slot_attributes(runs_list_key(playbook), RUN_SLOTS, values, position, only=only)


def request_slots(playbook: PlaybookRef, to: str, requested_at: str, run_id: str) -> dict[str, str]:
    """An open request's entries in ``list_interactions``' slots (removed when it leaves the list)."""
    position = list_position(requested_at, run_id)
    return _slot_attributes(requests_list_key(playbook), REQUEST_SLOTS, {"to": to}, position)


def request_slot_names() -> list[str]:
    """The attributes of every slot a request may hold (removed, with the list's, when it leaves)."""
    names: list[str] = []
    for name in REQUEST_SLOTS:
        index = slot_index(REQUEST_SLOTS, name)
        names.extend((index.partition_key, index.sort_key))
    return names


def event_slots(playbook: PlaybookRef, event_type: str, event_id: str) -> dict[str, str]:
    """An event's entries in ``list_playbook_events``' slots."""
    return _slot_attributes(events_list_key(playbook), EVENT_SLOTS, {"type": event_type}, event_id)


def run_from(data: Mapping[str, Any], load: Callable[[str], str] | None) -> Run:
    """The run of an item; ``load`` reads an output kept in the content store (``None`` in lists, which
    show such an output as its size)."""
    rejection = data.get("rejection")
    output: Any = None
    omitted_size = None
    if "output" in data:
        output = json.loads(data["output"])
    elif "output_ref" in data:
        if load is None:
            omitted_size = int(data["output_size"])
        else:
            output = json.loads(load(data["output_ref"]))
    return Run(
        record=kept_value(data, "record", load),
        input=kept_value(data, "input", load),
        run_id=data["run_id"],
        type=data["type"],
        name=data["name"],
        definition_version=int(data["definition_version"]),
        status=data["status"],
        started_at=data["started_at"],
        started_by=data["started_by"],
        input_digest=data["input_digest"],
        attempt=int(data.get("attempt", 1)),
        takes_answer=bool(data.get("takes_answer", False)),
        output=output,
        omitted_output_size=omitted_size,
        rejection=Rejection.from_json(json.loads(rejection)) if rejection else None,
        finished_at=data.get("finished_at"),
        called=CalledTool.from_json(json.loads(data["called"])) if data.get("called") else None,
        calls=(
            tuple(CalledTool.from_json(json.loads(text)) for text in data["calls"])
            if "calls" in data
            else None
        ),
        parent=Parent.from_json(json.loads(data["parent"])) if data.get("parent") else None,
        execution=data.get("execution"),
    )


def kept_value(data: Mapping[str, Any], name: str, load: Callable[[str], str] | None) -> Any:
    """A value kept by :meth:`DynamoRunStore._kept`, read only with the run itself (``load``), never
    in lists."""
    if load is None:
        return None
    if name in data:
        return json.loads(data[name])
    if f"{name}_ref" in data:
        return json.loads(load(data[f"{name}_ref"]))
    return None


def request_from(data: Mapping[str, Any]) -> Request:
    fact = None
    if "answer_id" in data:
        fact = AnswerFact(
            run_id=data["run_id"],
            answer_id=data["answer_id"],
            answer=json.loads(data["answer"]),
            claimed_for=data.get("claimed_for"),
            answered_by=data["answered_by"],
            answered_at=data["answered_at"],
        )
    return Request(
        run_id=data["run_id"],
        type=data["type"],
        function=data["function"],
        version=int(data["version"]),
        to=data["to"],
        answerer=data["answerer"],
        message=data["message"],
        takes_answer=bool(data["takes_answer"]),
        requested_at=data["requested_at"],
        expires_at=data["expires_at"],
        answer_schema=json.loads(data["answer_schema"]),
        state=data["state"],
        token=data.get("token"),
        fact=fact,
        ended_at=data.get("ended_at"),
        delivery=Delivery.from_json(json.loads(data["delivery"])) if data.get("delivery") else None,
        attempts=int(data.get("attempts", 0)),
        standing=data.get("standing", "in_inbox"),
        attempt_started_at=data.get("attempt_started_at"),
        sent=json.loads(data["sent"]) if data.get("sent") else None,
        conversation=data.get("conversation"),
        reply_refusals=int(data.get("reply_refusals", 0)),
        tellings=int(data.get("tellings", 0)),
        asked=json.loads(data["asked"]) if data.get("asked") else None,
        number=int(data.get("number", 1)),
    )


def event_from(data: Mapping[str, Any], load: Callable[[str], str] | None) -> Event:
    """The event of an item; ``load`` reads data kept in the content store (``None`` in lists, which
    read the data as a list shows it)."""
    omitted: tuple[str, ...] = ()
    if "data" in data:
        content = json.loads(data["data"])
    elif load is not None:
        content = json.loads(load(data["data_ref"]))
    else:
        content = json.loads(data["data_listed"])
        omitted = tuple(data.get("omitted") or ())
    return Event(
        id=data["event_id"],
        type=data["type"],
        at=data["at"],
        run_id=data.get("run_id"),
        data=content,
        omitted=omitted,
    )


def holds_listing_indexes(kind: str | None, state: str | None, names: Iterable[str]) -> bool:
    """Whether an item of ``kind`` (a request's ``state``) whose attributes are ``names`` holds the
    filter slots it should and no other (a name-only look: an item from before the slots, or from their
    earlier layout, does not)."""
    wanted = {"run": RUN_SLOTS, "event": EVENT_SLOTS}.get(kind or "", ())
    if kind == "request" and state == "open":
        wanted = REQUEST_SLOTS
    held = {name for name in names if _SLOT_ATTRIBUTE.fullmatch(name)}
    expected = {
        attribute
        for index in FILTER_INDEXES[: len(wanted)]
        for attribute in (index.partition_key, index.sort_key)
    }
    return held == expected


def with_listing_indexes(item: Mapping[str, Any]) -> dict[str, Any]:
    """``item`` (DynamoDB JSON) with the filter slots' attributes a run, an open request or an event
    holds (issue 31), for items a data folder kept from before the slots or from an earlier layout of
    them: slot attributes it should not hold are left out, those it should are (re)made from its own
    attributes. Other items come back as they are."""
    kind = item.get("kind", {}).get("S")
    found = playbook_of(str(item.get("pk", {}).get("S", "")))
    if kind not in ("run", "request", "event") or found is None:
        return dict(item)
    playbook = PlaybookRef(*found)

    def text(name: str) -> str:
        return str(item.get(name, {}).get("S", ""))

    if kind == "run":
        added = run_slots(
            playbook, text("type"), text("name"), text("status"), text("started_at"), text("run_id")
        )
    elif kind == "request" and text("state") == "open":
        added = request_slots(playbook, text("to"), text("requested_at"), text("run_id"))
    elif kind == "event":
        added = event_slots(playbook, text("type"), text("event_id"))
    else:
        added = {}
    kept = {name: value for name, value in item.items() if not _SLOT_ATTRIBUTE.fullmatch(name)}
    return {**kept, **{name: {"S": value} for name, value in added.items()}}
