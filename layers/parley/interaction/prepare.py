"""From a saved interaction function to a rendered request (``interaction-format.md``, "How a run
ends", "Bounds", "Templates and pointers").

A function is prepared once per version (its templates compiled, its lines found) and cached by the
service; each run then checks its input and renders ``to``, ``from`` and the message with ``input``,
``today`` and ``now``, the run's own moment:

- the input is a JSON object that matches ``input.schema``, else ``invalid_input`` under ``/input``;
- a template that names a value the input lacks, or that reaches a render limit: ``invalid_input``,
  at the field's ``/input/...`` pointer (or ``/input``), its detail naming the line;
- a party (``to``, and ``from``, the answerer) rendered empty, as something that is not text, with a
  control character or past 256 bytes: ``conflict``, ``unworkable``; so is a message past 8 KiB.

A function with ``call`` (``interaction-format.md``, "Asking a system") has no party, message or
expiry: it is prepared as its :class:`~parley.interaction.call.CallBlock`, which
``parley.interaction.call`` renders and runs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Final

from liquid.template import BoundTemplate

from parley.clock import format_time
from parley.definitions.model import Definition
from parley.documents.definition import CheckedDocument
from parley.documents.durations import parse_duration
from parley.documents.front_matter import load_front_matter, split_document
from parley.documents.json_schema import validate_instance
from parley.errors import ErrorEntry, Problem
from parley.interaction.call import CallBlock
from parley.parties import checked_party
from parley.runs.model import invalid_input
from parley.templates.environment import compile_template
from parley.templates.render import RenderFailure, render_text

MESSAGE_MAX_BYTES: Final = 8 * 1024


@dataclass(frozen=True)
class Template:
    """A compiled template and the document line its text starts on."""

    compiled: BoundTemplate
    first_line: int


@dataclass(frozen=True)
class DeliverBlock:
    """A function's ``deliver``: ``arguments`` is ``with`` as written (rendered typed once per request);
    ``tools`` every tool of ``deliver.server`` the function names (sending, reading, telling), which a
    run checks before it sends anything."""

    server: str
    tool: str
    arguments: Any
    sent: dict[str, str] | None
    first_line: int
    tools: tuple[str, ...]
    #: ``replies`` and ``reply`` as written (``replies`` is ``None`` for a function that reads none).
    replies: dict[str, Any] | None = None
    reply: Any = None


@dataclass(frozen=True)
class PreparedFunction:
    """What a run of one version of an interaction function needs, read once from its document."""

    type: str
    name: str
    version: int
    #: Why this runtime cannot run the function at all (``deliver``, reasoning), as its problem.
    refusal: Problem | None
    input_schema: Any
    has_input_schema: bool
    #: ``output.schema``: the answer schema a request records; a function without one is a notification.
    output_schema: Any
    takes_answer: bool
    to: Template | None
    answerer: Template | None
    message: Template | None
    expires: timedelta
    #: ``call``: the tool a function that asks a system calls (``None`` for one that asks a person).
    call: CallBlock | None = None
    #: ``deliver``: the tool a request is sent through (``None`` for the inbox).
    deliver: DeliverBlock | None = None

    @property
    def expires_seconds(self) -> int:
        return math.ceil(self.expires.total_seconds())


@dataclass(frozen=True)
class RenderedRequest:
    to: str
    answerer: str
    message: str


def prepare_function(definition: Definition, checked: CheckedDocument) -> PreparedFunction:
    """Read a checked document's fields, compile its templates and find their lines."""
    front_matter = checked.front_matter
    refusal = _refusal(definition, front_matter)
    input_block = front_matter.get("input")
    output_block = front_matter.get("output")
    has_input_schema = isinstance(input_block, dict) and "schema" in input_block
    takes_answer = isinstance(output_block, dict) and "schema" in output_block
    to = answerer = message = None
    expires = timedelta(0)
    call = deliver = None
    if refusal is None and "call" in front_matter:
        block = front_matter["call"]
        call = CallBlock(
            server=str(block["server"]),
            tool=str(block["tool"]),
            arguments=block.get("with", {}),
            read=block.get("read"),
            first_line=_lines(definition.source).get("/call/with", 1),
        )
    elif refusal is None:
        lines = _lines(definition.source)
        to = _template(front_matter["to"], lines.get("/to", 1))
        if "from" in front_matter:
            answerer = _template(front_matter["from"], lines.get("/from", 1))
        message = _template(checked.body, lines.get("body", 1))
        expires = parse_duration(front_matter["expires"])
        if isinstance(front_matter.get("deliver"), dict):
            deliver = _deliver_block(front_matter, lines.get("/deliver/with", 1))
    return PreparedFunction(
        type=definition.type,
        name=definition.name,
        version=definition.version,
        refusal=refusal,
        input_schema=input_block["schema"] if has_input_schema else None,  # type: ignore[index]
        has_input_schema=has_input_schema,
        output_schema=output_block["schema"] if takes_answer else None,  # type: ignore[index]
        takes_answer=takes_answer,
        to=to,
        answerer=answerer,
        message=message,
        expires=expires,
        call=call,
        deliver=deliver,
    )


def _deliver_block(front_matter: dict[str, Any], first_line: int) -> DeliverBlock:
    block = front_matter["deliver"]
    tools = [str(block["tool"])]
    replies = front_matter.get("replies")
    if isinstance(replies, dict):
        tools.append(str(replies["tool"]))
        tell = replies.get("tell")
        if isinstance(tell, dict) and "tool" in tell:
            tools.append(str(tell["tool"]))
    sent = block.get("sent")
    return DeliverBlock(
        server=str(block["server"]),
        tool=str(block["tool"]),
        arguments=block["with"],
        sent={"conversation": str(sent["conversation"]), "id": str(sent["id"])}
        if isinstance(sent, dict)
        else None,
        first_line=first_line,
        tools=tuple(dict.fromkeys(tools)),
        replies=replies if isinstance(replies, dict) else None,
        reply=front_matter.get("reply"),
    )


def check_input(function: PreparedFunction, value: Any) -> None:
    """``invalid_input`` unless ``value`` is a JSON object that matches ``input.schema``."""
    if not isinstance(value, dict):
        raise invalid_input([ErrorEntry("/input", "The input is a JSON object.")])
    if function.has_input_schema:
        errors = validate_instance(value, function.input_schema, "/input")
        if errors:
            raise invalid_input(errors)


def render_request(function: PreparedFunction, value: dict[str, Any], moment: datetime) -> RenderedRequest:
    """Render the request's party, answerer and message, and hold them to the bounds."""
    if function.to is None or function.message is None:  # pragma: no cover - refused functions never render
        raise AssertionError("a function this runtime refuses has no request to render")
    data = {"input": value, "today": moment.strftime("%Y-%m-%d"), "now": format_time(moment)}
    to = _party(_render(function.to, data, party=True), "to")
    answerer = to
    if function.answerer is not None:
        answerer = _party(_render(function.answerer, data, party=True), "from")
    message = _render(function.message, data, party=False)
    size = len(message.encode("utf-8", "surrogatepass"))
    if size > MESSAGE_MAX_BYTES:
        raise unworkable(
            f"The message renders {size:,} bytes; a message is at most {MESSAGE_MAX_BYTES:,} bytes (8 KiB)."
        )
    return RenderedRequest(to=to, answerer=answerer, message=message)


def unworkable(detail: str) -> Problem:
    return Problem("conflict", detail, kind="unworkable")


# --- helpers ---------------------------------------------------------------------------------------------


def _refusal(definition: Definition, front_matter: dict[str, Any]) -> Problem | None:
    if definition.type != "interaction":
        return unworkable(
            f"This runtime does not run {definition.type} functions yet; only interaction functions run."
        )
    return None


def _lines(source: str) -> dict[str, int]:
    """The document lines each template starts on: ``/to``, ``/from``, ``/call/with``, ``/deliver/with``
    and the ``body``."""
    split = split_document(source)
    if isinstance(split, list):  # pragma: no cover - a saved document always splits
        return {}
    found = {"body": split.body_first_line}
    loaded = load_front_matter(split.front_matter, split.front_matter_first_line)
    if not isinstance(loaded, list):
        for pointer in ("/to", "/from", "/call/with", "/deliver/with"):
            found[pointer] = loaded.lines.value_line_of(pointer)
    return found


def _template(source: Any, first_line: int) -> Template:
    return Template(compile_template(str(source)), first_line)


def _render(template: Template, data: dict[str, Any], *, party: bool) -> str:
    try:
        return render_text(template.compiled, data, first_line=template.first_line, refuse_structures=party)
    except RenderFailure as failure:
        if failure.structure_among_text:
            raise unworkable(f"{failure}: a party renders as text, not as a list or an object.") from None
        raise invalid_input([ErrorEntry(failure.pointer or "/input", str(failure))]) from None


def _party(text: str, field: str) -> str:
    return checked_party(text, "The party (to)" if field == "to" else "The answerer (from)")
