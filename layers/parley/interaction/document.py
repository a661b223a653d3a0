"""The interaction-format document checker (``interaction-format.md``).

Saving an interaction function runs every check of the page on its document and lists every problem
found, each with its line and pointer: the fields and "Fields by shape", the template places
("Templates and pointers"), the tool blocks ("Tool blocks"), reply rules ("Answering by reply") and the
schema rules shared with reasoning functions ("Answers that are JSON").
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from enum import Enum
from typing import Any, Final

from parley.documents.asking import template_problems
from parley.documents.definition import CheckedDocument
from parley.documents.durations import expires_problem, parse_duration
from parley.documents.front_matter import LineIndex, read_document
from parley.documents.json_schema import check_schema, json_size
from parley.documents.pointers import pointer_problem
from parley.documents.problems import DocumentProblems
from parley.interaction.overview import write_overview
from parley.interaction.reply_rule import ReplyRule, reply_rule_problems, resolve_reply_rule
from parley.templates.checks import PlaceNames, check_template, place_names, template_roots

MEDIA_TYPE: Final = "text/markdown"
MAX_DESCRIPTION: Final = 1_000
MAX_CALL_ARGUMENTS: Final = 16 * 1024
SERVER_NAME: Final = re.compile(r"[a-z][a-z0-9-]{0,31}")
TOOL_NAME: Final = re.compile(r"[A-Za-z0-9_.-]{1,128}")
WAIT_BOUNDS: Final = (timedelta(seconds=5), timedelta(hours=1))

# "Templates and pointers": the names each place reads.
TO_PLACE: Final = place_names("to")
FROM_PLACE: Final = place_names("from")
MESSAGE_PLACE: Final = place_names("message")
CALL_PLACE: Final = place_names("call.with")
DELIVER_PLACE: Final = place_names("deliver.with")
CONVERSATION_PLACE: Final = place_names("replies.conversation")
REPLIES_PLACE: Final = place_names("replies.with")
TELL_PLACE: Final = place_names("tell.with")


class Shape(Enum):
    """The three shapes of the page's first table."""

    ASKS_A_SYSTEM = "asks a system"
    THROUGH_THE_INBOX = "asks a person through the inbox"
    THROUGH_A_TOOL = "asks a person through a tool"


TOP_LEVEL_FIELDS: Final = (
    "description",
    "call",
    "to",
    "from",
    "expires",
    "deliver",
    "replies",
    "input",
    "output",
    "reply",
)


@dataclass
class _Checker:
    """One document's check: the front matter, where each pointer is, and the problems found."""

    front_matter: dict[str, Any]
    lines: LineIndex
    problems: DocumentProblems
    input_schema: Mapping[str, Any] | None = None

    # -- reporting -------------------------------------------------------------------------------

    def problem(self, pointer: str, message: str) -> None:
        self.problems.add(self.lines.line_of(pointer), pointer, message)

    def get(self, pointer: str) -> Any:
        value: Any = self.front_matter
        for token in pointer.split("/")[1:]:
            if not isinstance(value, dict):
                return None
            value = value.get(token.replace("~1", "/").replace("~0", "~"))
        return value

    # -- small checks ----------------------------------------------------------------------------

    def mapping(
        self, pointer: str, value: Any, required: tuple[str, ...], optional: tuple[str, ...]
    ) -> dict[str, Any] | None:
        """A mapping with exactly these keys: unknown ones and missing required ones are problems."""
        if not isinstance(value, dict):
            self.problem(pointer, "Expected a mapping")
            return None
        allowed = (*required, *optional)
        for key in value:
            if key not in allowed:
                self.problem(
                    f"{pointer}/{_escape(key)}",
                    f"{key!r} is not a key here; expected {_one_of(allowed)}",
                )
        for key in required:
            if key not in value:
                self.problem(pointer, f"{key!r} is required")
        return value

    def text(self, pointer: str, value: Any) -> str | None:
        if not isinstance(value, str):
            self.problem(pointer, f"Expected text, found {_json_type(value)}")
            return None
        return value

    def name(self, pointer: str, value: Any, pattern: re.Pattern[str], rule: str) -> None:
        text = self.text(pointer, value)
        if text is not None and not pattern.fullmatch(text):
            self.problem(pointer, f"{text!r} is not a valid name: {rule}")

    def server(self, pointer: str, value: Any) -> None:
        self.name(
            pointer,
            value,
            SERVER_NAME,
            "1 to 32 lowercase letters, digits and hyphens, starting with a letter",
        )

    def tool(self, pointer: str, value: Any) -> None:
        self.name(pointer, value, TOOL_NAME, "1 to 128 letters, digits, underscores, hyphens and dots")

    def pointer(self, pointer: str, value: Any, *, allow_empty: bool = True) -> None:
        text = self.text(pointer, value)
        if text is None:
            return
        issue = pointer_problem(text, allow_empty=allow_empty)
        if issue is not None:
            self.problem(pointer, issue)

    def duration(self, pointer: str, value: Any, bounds: tuple[timedelta, timedelta], words: str) -> None:
        text = self.text(pointer, value)
        if text is None:
            return
        try:
            duration = parse_duration(text)
        except ValueError as exc:
            self.problem(pointer, str(exc))
            return
        if not bounds[0] <= duration <= bounds[1]:
            self.problem(pointer, f"{text} is outside {words}")

    def template(self, pointer: str, value: Any, place: PlaceNames, *, whole_value: bool = False) -> None:
        source = self.text(pointer, value)
        if source is None:
            return
        self.problems.extend(
            template_problems(
                source,
                pointer,
                place,
                input_schema=self.input_schema,
                lines=self.lines,
                whole_value=whole_value,
            )
        )

    def arguments(self, pointer: str, value: Any, place: PlaceNames) -> None:
        """Typed arguments (``with``): every string inside is a template of ``place``."""
        if not isinstance(value, dict):
            self.problem(pointer, f"Expected a mapping of the tool's arguments, found {_json_type(value)}")
            return
        self._typed(pointer, value, place)

    def _typed(self, pointer: str, value: Any, place: PlaceNames) -> None:
        # Iterative: the loader already bounds nesting at 72 levels, but a stack keeps this obviously safe.
        stack: list[tuple[str, Any]] = [(pointer, value)]
        while stack:
            at, item = stack.pop()
            if isinstance(item, str):
                self.template(at, item, place, whole_value=True)
            elif isinstance(item, dict):
                stack.extend((f"{at}/{_escape(k)}", v) for k, v in reversed(item.items()))
            elif isinstance(item, list):
                stack.extend((f"{at}/{i}", v) for i, v in reversed(list(enumerate(item))))

    # -- the document ----------------------------------------------------------------------------

    def check(self, body: str, body_first_line: int) -> tuple[Shape, ReplyRule | None]:
        fm = self.front_matter
        for key in fm:
            if key not in TOP_LEVEL_FIELDS:
                self.problem(f"/{_escape(key)}", f"{key!r} is not a field of interaction functions")

        if "description" in fm:
            description = self.text("/description", fm["description"])
            if description is not None and not 1 <= len(description) <= MAX_DESCRIPTION:
                self.problem("/description", "A description is 1 to 1,000 characters")

        self.schemas()
        shape = (
            Shape.ASKS_A_SYSTEM
            if "call" in fm
            else (Shape.THROUGH_A_TOOL if "deliver" in fm else Shape.THROUGH_THE_INBOX)
        )
        self.fields_by_shape(shape, body)
        if shape is Shape.ASKS_A_SYSTEM:
            self.call(fm["call"])
            return shape, None

        for field, place in (("to", TO_PLACE), ("from", FROM_PLACE)):
            if field in fm:
                self.template(f"/{field}", fm[field], place)
        if "expires" in fm:
            expiry = expires_problem(fm["expires"])
            if expiry is not None:
                self.problem("/expires", expiry)
        if body.strip():
            for line, message in check_template(
                body, place=MESSAGE_PLACE, input_schema=self.input_schema, first_line=body_first_line
            ):
                self.problems.add(line, "", message)
        if "deliver" in fm:
            self.deliver(fm["deliver"])
        if "replies" in fm:
            self.replies(fm["replies"])
        return shape, self.reply_rule()

    def schemas(self) -> None:
        for field in ("input", "output"):
            if field not in self.front_matter:
                continue
            block = self.mapping(f"/{field}", self.front_matter[field], (), ("schema",))
            if block is None or "schema" not in block:
                if block is not None:
                    self.problem(f"/{field}", "'schema' is required")
                continue
            schema = block["schema"]
            issues = check_schema(schema, f"/{field}/schema", self.lines)
            self.problems.extend(issues)
            if field == "input":
                if not isinstance(schema, dict) or schema.get("type") != "object":
                    self.problem("/input/schema", 'The input schema\'s root is "type": "object"')
                elif not issues:
                    self.input_schema = schema

    def fields_by_shape(self, shape: Shape, body: str) -> None:
        """The "Fields by shape" table."""
        fm = self.front_matter
        has_output = isinstance(self.get("/output"), dict) and "schema" in fm["output"]
        if shape is Shape.ASKS_A_SYSTEM:
            for field in ("to", "expires", "deliver", "replies", "from", "reply"):
                if field in fm:
                    self.problem(
                        f"/{field}", f"'{field}' is refused with 'call': a function that asks a system"
                    )
            if body.strip():
                self.problem(
                    "", "A function with 'call' has no message: remove the text after the front matter"
                )
            if not has_output:
                self.problem(
                    "" if "output" not in fm else "/output", "'output.schema' is required with 'call'"
                )
            return
        if "to" not in fm:
            self.problem("", "'to' is required: the party the request goes to (or write 'call')")
        if "expires" not in fm:
            self.problem("", "'expires' is required, such as PT4H or P2D")
        if not body.strip():
            self.problem("", "The message is required: write it after the front matter")
        if "replies" in fm:
            if "deliver" not in fm:
                self.problem(
                    "/replies", "'replies' is only read with 'deliver': a request in the inbox has no replies"
                )
            elif not isinstance(self.get("/deliver"), dict) or "sent" not in fm["deliver"]:
                self.problem(
                    "/replies", "'replies' needs 'deliver.sent', which names the message the replies answer"
                )
            if not has_output:
                self.problem("/replies", "'replies' needs 'output.schema': a notification takes no answer")
        if "reply" in fm and not has_output:
            self.problem("/reply", "'reply' needs 'output.schema': a notification takes no reply rule")

    def call(self, value: Any) -> None:
        block = self.mapping("/call", value, ("server", "tool"), ("with", "read"))
        if block is None:
            return
        if "server" in block:
            self.server("/call/server", block["server"])
        if "tool" in block:
            self.tool("/call/tool", block["tool"])
        if "read" in block:
            self.pointer("/call/read", block["read"], allow_empty=False)
        arguments = block.get("with", {})
        self.arguments("/call/with", arguments, CALL_PLACE)
        too_large = isinstance(arguments, dict) and json_size(arguments) > MAX_CALL_ARGUMENTS
        if too_large and "input" not in _roots_read(arguments):
            self.problem(
                "/call/with",
                "The arguments pass 16 KiB as JSON and read no input, so every run would refuse them",
            )

    def deliver(self, value: Any) -> None:
        block = self.mapping("/deliver", value, ("server", "tool", "with"), ("sent",))
        if block is None:
            return
        if "server" in block:
            self.server("/deliver/server", block["server"])
        if "tool" in block:
            self.tool("/deliver/tool", block["tool"])
        if "with" in block:
            self.arguments("/deliver/with", block["with"], DELIVER_PLACE)
        if "sent" in block:
            sent = self.mapping("/deliver/sent", block["sent"], ("conversation", "id"), ())
            for key in ("conversation", "id"):
                if sent is not None and key in sent:
                    self.pointer(f"/deliver/sent/{key}", sent[key])

    def replies(self, value: Any) -> None:
        block = self.mapping("/replies", value, ("tool", "with", "read"), ("conversation", "wait", "tell"))
        if block is None:
            return
        if "conversation" in block:
            self.template("/replies/conversation", block["conversation"], CONVERSATION_PLACE)
        if "tool" in block:
            self.tool("/replies/tool", block["tool"])
        if "with" in block:
            self.arguments("/replies/with", block["with"], REPLIES_PLACE)
        if "read" in block:
            read = self.mapping("/replies/read", block["read"], ("list", "order", "each"), ())
            if read is not None:
                if "list" in read:
                    self.pointer("/replies/read/list", read["list"])
                if "order" in read and read["order"] not in ("oldest_first", "newest_first"):
                    self.problem("/replies/read/order", "Expected oldest_first or newest_first")
                if "each" in read:
                    each = self.mapping("/replies/read/each", read["each"], ("id", "sender", "text"), ("to",))
                    for key, pointer in (each or {}).items():
                        if key in ("id", "sender", "text", "to"):
                            self.pointer(f"/replies/read/each/{key}", pointer)
        if "wait" in block:
            self.duration("/replies/wait", block["wait"], WAIT_BOUNDS, "PT5S to PT1H")
        if "tell" in block:
            tell = self.mapping("/replies/tell", block["tell"], ("with",), ("tool",))
            if tell is not None:
                if "tool" in tell:
                    self.tool("/replies/tell/tool", tell["tool"])
                if "with" in tell:
                    self.arguments("/replies/tell/with", tell["with"], TELL_PLACE)

    def reply_rule(self) -> ReplyRule | None:
        """The written rule checked against the answer schema, or the one made from it."""
        fm = self.front_matter
        output = self.get("/output/schema")
        written = fm.get("reply")
        for pointer, message in reply_rule_problems(written, output) if "reply" in fm else ():
            self.problem(pointer, message)
        rule = resolve_reply_rule(written if "reply" in fm else None, output)
        if "replies" in fm and rule is None and "reply" not in fm:
            self.problem(
                "/replies",
                "A function that reads replies needs a reply rule: write 'reply', or give the answer schema "
                "one required property that is a string",
            )
        return rule if "replies" in fm else None


def check_interaction_source(source: str) -> CheckedDocument:
    """Check an interaction function's source; raise ``invalid_input`` listing every problem."""
    problems = DocumentProblems()
    split, front_matter, lines = read_document(source, problems)
    if not isinstance(front_matter, dict):
        problems.add(split.front_matter_first_line, "", "The front matter is a mapping of fields")
        problems.raise_if_any()
        raise AssertionError("unreachable")  # pragma: no cover

    checker = _Checker(front_matter, lines, problems)
    _shape, rule = checker.check(split.body, split.body_first_line)
    problems.raise_if_any()

    warnings: list[str] = []
    if "reply" in front_matter and "replies" not in front_matter:
        warnings.append(
            f"Line {lines.line_of('/reply')}, /reply: nothing reads the reply rule, since the function "
            "reads no replies; answers come through answer_interaction"
        )
    description = front_matter.get("description")
    return CheckedDocument(
        media_type=MEDIA_TYPE,
        description=description if isinstance(description, str) else None,
        front_matter=front_matter,
        body=split.body,
        overview=write_overview(
            front_matter, split.body, body_first_line=split.body_first_line, reply_rule=rule
        ),
        warnings=warnings,
    )


def _roots_read(arguments: Any) -> set[str]:
    """The root names every template inside a typed ``with`` reads."""
    roots: set[str] = set()
    stack = [arguments]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            roots |= template_roots(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return roots


def _escape(key: object) -> str:
    return str(key).replace("~", "~0").replace("/", "~1")


def _one_of(names: tuple[str, ...]) -> str:
    return ", ".join(names)


_JSON_TYPES: Final[Mapping[type, str]] = {
    dict: "a mapping",
    list: "a list",
    str: "text",
    bool: "true or false",
    int: "a number",
    float: "a number",
    type(None): "nothing (null)",
}


def _json_type(value: object) -> str:
    return _JSON_TYPES.get(type(value), type(value).__name__)


__all__ = ["MEDIA_TYPE", "Shape", "check_interaction_source"]
