"""The run lifecycle's items in the one table (``parley.infrastructure.table``): their keys, and how
an item reads back as a run, a request or an event. ``parley.runs.store`` writes them, each under its
condition; its docstring lists the items and their attributes."""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Callable, Mapping
from typing import Any, Final

from parley.definitions.model import PlaybookRef
from parley.infrastructure.table import IndexDefinition, filter_index
from parley.runs.model import AnswerFact, CalledTool, Delivery, Event, Parent, Rejection, Request, Run


def playbook_key(playbook: PlaybookRef) -> str:
    return f"PB#{playbook.org}#{playbook.playbook}"


def run_key(run_id: str) -> str:
    return f"RUN#{run_id}"


def request_key(run_id: str) -> str:
    return f"REQ#{run_id}"


def event_key(event_id: str) -> str:
    return f"EVT#{event_id}"


def runs_list_key(playbook: PlaybookRef) -> str:
    return f"{playbook_key(playbook)}#RUN"


def requests_list_key(playbook: PlaybookRef) -> str:
    return f"{playbook_key(playbook)}#REQ"


def work_key(run_id: str) -> str:
    return f"WORK#{run_id}"


def history_key(playbook: PlaybookRef, run_id: str) -> str:
    return f"RUN#{playbook.org}#{playbook.playbook}#{run_id}"


#: The filters of each list (``http-api.md``), in the order that numbers their slots
#: (``parley.infrastructure.table.filter_index``).
RUN_FILTERS: Final = ("type", "name", "status")
REQUEST_FILTERS: Final = ("to", "type", "function")
EVENT_FILTERS: Final = ("type", "run_id")
#: An event's ``run_id`` alone is its run's history (``gsi2``): no slot of its own.
_EVENT_SLOTS: Final = (frozenset({"type"}), frozenset({"type", "run_id"}))

#: A slot's partition key longer than this (in bytes) is kept as a digest (DynamoDB allows 2,048).
_KEY_TEXT_MAX: Final = 512


def filter_key(list_key: str, names: tuple[str, ...], values: Mapping[str, Any]) -> str:
    """The partition key of the slot of ``names`` (a combination, in the list's order) holding items
    whose values are ``values``: the list's key and the values as JSON (no value can run into the next),
    or its digest when long. A list reads the same key from the filters it is given."""
    text = json.dumps([str(values[name]) for name in names], ensure_ascii=False, separators=(",", ":"))
    if len(text.encode("utf-8", "surrogatepass")) > _KEY_TEXT_MAX:
        text = "#" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    return f"{list_key}?{text}"


def combinations(names: tuple[str, ...]) -> list[tuple[str, ...]]:
    """Every combination of ``names`` that is not empty, each in the order of ``names``."""
    return [
        combination
        for size in range(1, len(names) + 1)
        for combination in itertools.combinations(names, size)
    ]


def slot_attributes(
    list_key: str, names: tuple[str, ...], values: Mapping[str, Any], sort: str, *, only: str | None = None
) -> dict[str, str]:
    """The slot attributes of an item of a list: for each combination of its filters (or only those
    holding ``only``), ``{index}pk`` and ``{index}sk``."""
    attributes: dict[str, str] = {}
    for combination in combinations(names):
        if only is not None and only not in combination:
            continue
        index = filter_index(names, set(combination))
        attributes[index.partition_key] = filter_key(list_key, combination, values)
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
    """A run's entries in ``list_runs``' slots (``only="status"``: those a status change moves)."""
    values = {"type": run_type, "name": name, "status": status}
    return slot_attributes(runs_list_key(playbook), RUN_FILTERS, values, f"{started_at}#{run_id}", only=only)


def request_slots(
    playbook: PlaybookRef, values: Mapping[str, Any], requested_at: str, run_id: str
) -> dict[str, str]:
    """An open request's entries in ``list_interactions``' slots (removed when it leaves the list)."""
    return slot_attributes(requests_list_key(playbook), REQUEST_FILTERS, values, f"{requested_at}#{run_id}")


def request_slot_names() -> list[str]:
    """The attributes of every slot a request may hold (removed, with the list's, when it leaves)."""
    names: list[str] = []
    for combination in combinations(REQUEST_FILTERS):
        index = filter_index(REQUEST_FILTERS, set(combination))
        names.extend((index.partition_key, index.sort_key))
    return names


def event_slots(playbook: PlaybookRef, event_type: str, run_id: str | None, event_id: str) -> dict[str, str]:
    """An event's entries in ``list_playbook_events``' slots: by ``type``, and by ``type`` and
    ``run_id`` for an event of a run."""
    values = {"type": event_type, "run_id": run_id}
    attributes: dict[str, str] = {}
    for chosen in _EVENT_SLOTS:
        if run_id is None and "run_id" in chosen:
            continue
        combination = tuple(name for name in EVENT_FILTERS if name in chosen)
        index = filter_index(EVENT_FILTERS, chosen)
        attributes[index.partition_key] = filter_key(events_list_key(playbook), combination, values)
        attributes[index.sort_key] = event_id
    return attributes


def list_slot(names: tuple[str, ...], filters: Mapping[str, str]) -> IndexDefinition:
    """The slot a list reads for the filters it is given (not empty)."""
    return filter_index(names, set(filters))


def events_list_key(playbook: PlaybookRef) -> str:
    return f"{playbook_key(playbook)}#EVT"


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


def with_listing_indexes(item: Mapping[str, Any]) -> dict[str, Any]:
    """``item`` (DynamoDB JSON) with the filter slots' attributes of a run, an open request or an event
    (issue 31), for items written before the slots were (a data folder's): a run lacking them is in
    ``list_runs`` unfiltered but in no filtered list until it is written again. Other items, and items
    that hold them, come back as they are."""
    if "gsi3pk" in item or "kind" not in item or "pk" not in item:
        return dict(item)
    kind = item["kind"].get("S")
    org_playbook = str(item["pk"]["S"]).removeprefix("PB#").split("#", 1)
    if len(org_playbook) != 2:
        return dict(item)
    playbook = PlaybookRef(org_playbook[0], org_playbook[1])

    def text(name: str) -> str:
        return str(item.get(name, {}).get("S", ""))

    if kind == "run":
        added = run_slots(
            playbook, text("type"), text("name"), text("status"), text("started_at"), text("run_id")
        )
    elif kind == "request" and text("state") == "open":
        values = {"to": text("to"), "type": text("type"), "function": text("function")}
        added = request_slots(playbook, values, text("requested_at"), text("run_id"))
    elif kind == "event":
        added = event_slots(playbook, text("type"), text("run_id") or None, text("event_id"))
    else:
        return dict(item)
    return {**item, **{name: {"S": value} for name, value in added.items()}}
