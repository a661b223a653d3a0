"""The run lifecycle's items in the one table (``parley.infrastructure.table``): their keys, and how
an item reads back as a run, a request or an event. ``parley.runs.store`` writes them, each under its
condition; its docstring lists the items and their attributes."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from parley.definitions.model import PlaybookRef
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
