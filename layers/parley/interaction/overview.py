"""The overview of an interaction function: the function in plain words (``interaction-format.md``,
"The overview").

``get_definition`` shows it before the document, for a person who reads neither Liquid nor YAML. It is
written once, from the document, when the document is saved, so it says only what the document says.
Templates read as the instructions of a reasoning function read (``reasoning-format.md``, "The
overview"): each value a template reads is its name in bold, a condition or loop over several lines
becomes italic lines, one within a line becomes a phrase of that line, comments are left out, ``raw``
keeps its text and any other tag stays as written.

Everything here reads front matter that has already been checked, but it never raises on any JSON-like
value: an odd but valid schema (a boolean, a ``type`` list, no ``type``) still gets a sentence.

**Used by** is not written here: the definitions that use a function are read each time it is returned.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from parley.documents.durations import duration_in_words, parse_duration
from parley.documents.schema_words import Schemas, schema_in_words
from parley.documents.template_words import cut_template_in_words, template_in_words
from parley.documents.words import (
    MAX_LISTED,
    as_mapping,
    bold,
    capped_series,
    code,
    counted,
    one_line,
    section,
    series,
    text_in_words,
    value_in_words,
)
from parley.interaction.reply_rule import ReplyRule

_MAX_DEPTH: Final = 8  # how deep a schema or an argument is followed before it is summarized

# --------------------------------------------------------------------------------------------------
# The overview


def _template_line(value: Any) -> str:
    """A short template such as ``to`` read in words on one line."""
    if not isinstance(value, str):
        return code(text_in_words(value))
    return one_line(template_in_words(value)) or "nobody"


def _tool(block: Mapping[str, Any], key: str = "tool") -> str:
    return code(text_in_words(block.get(key, "")))


def _duration(value: Any, fallback: str) -> str:
    if not isinstance(value, str):
        return fallback
    try:
        return duration_in_words(parse_duration(value))
    except (ValueError, OverflowError):
        return code(value)


def _is_plain(value: Any) -> bool:
    """A value with no template in it and no structure within, shown as JSON on one line."""
    if isinstance(value, str):
        return "{{" not in value and "{%" not in value
    return not isinstance(value, Mapping | list)


def _arguments(value: Mapping[str, Any] | list[Any], indent: str = "", depth: int = 0) -> list[str]:
    """The arguments of ``call.with`` as bullets, their templates read in words."""
    lines: list[str] = []
    entries = (
        [(code(str(key)), argument) for key, argument in value.items()]
        if isinstance(value, Mapping)
        else [(f"item {index:,}", argument) for index, argument in enumerate(value, 1)]
    )
    for label, argument in entries[:MAX_LISTED]:
        if isinstance(argument, list) and all(_is_plain(item) for item in argument):
            lines.append(f"{indent}- {label}: {value_in_words(argument)}")
        elif isinstance(argument, Mapping | list) and argument and depth < 2:
            lines.append(f"{indent}- {label}:")
            lines.extend(_arguments(argument, indent + "  ", depth + 1))
        elif isinstance(argument, str):
            lines.append(f"{indent}- {label}: {_template_line(argument) if argument else '(empty text)'}")
        else:
            lines.append(f"{indent}- {label}: {value_in_words(argument)}")
    if len(entries) > MAX_LISTED:
        lines.append(f"{indent}- and {counted(len(entries) - MAX_LISTED, 'argument', 'arguments')} more")
    return lines


def _quote(text: str) -> list[str]:
    """The message as a block quote; trailing spaces stay, since they may be the author's line breaks."""
    lines = text.strip("\n").split("\n")
    return [f"> {line}" if line.strip() else ">" for line in lines]


def _asks_a_system(front_matter: Mapping[str, Any]) -> list[str]:
    call = as_mapping(front_matter.get("call"))
    input_schema = as_mapping(front_matter.get("input")).get("schema")
    output_schema = as_mapping(front_matter.get("output")).get("schema")
    lines = section(
        "Who it asks",
        f"The tool {_tool(call)} on the server {_tool(call, 'server')}, called once in each run. "
        "It asks no person and sends no message.",
    )
    sends: list[str | list[str]] = []
    if input_schema is None:
        sends.append("The document gives no input schema, so its input may hold any fields.")
    else:
        sends += ["What its input holds:", schema_in_words(input_schema, "It takes no input fields.")]
    with_ = call.get("with")
    if isinstance(with_, Mapping) and with_:
        sends += ["The call's arguments:", _arguments(with_)]
    else:
        sends.append("The call takes no arguments.")
    lines += section("What it sends", *sends)
    read = call.get("read")
    if isinstance(read, str) and read:
        where = f"The part of the tool's answer at {code(read)}, which becomes the run's output."
    else:
        where = "The tool's whole answer, which becomes the run's output."
    if output_schema is None:
        lines += section("What it reads", where)
    else:
        lines += section("What it reads", where, schema_in_words(output_schema, "An object."))
    return lines


def _reply_rule_lines(rule: ReplyRule, output_schema: Any) -> list[str]:
    schemas = Schemas(output_schema)
    properties = {name: subschema for name, subschema, _ in schemas.fields(output_schema)}
    lines: list[str] = []
    for name, part in rule.properties.items():
        if part.part == "word":
            said = "the first word of the reply"
            body = schemas.resolve(properties.get(name, True)).schema
            written = as_mapping(body).get("enum")
            values = (
                [value for value in written if isinstance(value, str)] if isinstance(written, list) else []
            )
            values += [value for value in part.words if value not in values]
            if values:
                said += f", one of {capped_series([code(value) for value in values], 'or')}"
            meanings = [
                f"{series([chr(34) + word + chr(34) for word in words])} "
                f"{'also means' if len(words) == 1 else 'also mean'} {code(value)}"
                for value, words in part.words.items()
                if words
            ]
            if meanings:
                said += "; " + "; ".join(meanings)
        elif part.part == "rest":
            said = "what follows the first word"
        else:
            said = "the whole reply"
        lines.append(f"- {bold(name)}: {said}.")
    if rule.derived:
        lines.append("")
        lines.append("This rule is made from the answer schema, so it reads no other field of the answer.")
    return lines


def _asks_a_person(
    front_matter: Mapping[str, Any], body: str, body_first_line: int, rule: ReplyRule | None
) -> list[str]:
    input_schema = as_mapping(front_matter.get("input")).get("schema")
    output_schema = as_mapping(front_matter.get("output")).get("schema")
    deliver = front_matter.get("deliver")
    replies = front_matter.get("replies")
    lines: list[str] = []
    if input_schema is None:
        lines += section(
            "What it needs", "The document gives no input schema, so its input may hold any fields."
        )
    else:
        lines += section("What it needs", schema_in_words(input_schema, "It takes no input fields."))

    to = _template_line(front_matter.get("to", ""))
    answerer = to
    who = f"It asks {to}."
    if "from" in front_matter:
        answerer = _template_line(front_matter.get("from"))
        if answerer != to:
            who = f"It asks {to}, and only the answer of {answerer} counts."
    lines += section("Who it asks", who)

    message, line = cut_template_in_words(body, body_first_line)
    sends: list[str | list[str]] = [_quote(message) if message.strip() else "An empty message."]
    if line is not None:
        sends.append(f"_The message is cut here; it continues on line {line:,} of the document._")
    lines += section("What it sends", *sends)

    if isinstance(deliver, Mapping):
        where = (
            f"It is sent with the tool {_tool(deliver)} on the server {_tool(deliver, 'server')}. "
            "An attempt that fails is tried again, five attempts in all."
        )
    else:
        where = "It waits in the playbook's inbox."
    lines += section("Where", where)

    expires = _duration(front_matter.get("expires"), "")
    if output_schema is None:
        waits = f"Its request expires after {expires}." if expires else "The document gives no expiry."
    elif expires:
        waits = f"It waits {expires} for an answer. A request nobody answered by then ends unanswered."
    else:
        waits = "The document gives no expiry."
    lines += section("How long it waits", waits)

    if output_schema is None:
        delivered = (
            "once it is delivered" if isinstance(deliver, Mapping) else "as soon as it is in the inbox"
        )
        lines += section(
            "What answer it expects",
            f"None: it is a notification, which takes no answer and succeeds {delivered}.",
        )
    else:
        lines += section("What answer it expects", schema_in_words(output_schema, "An object."))

    if isinstance(replies, Mapping) or rule is not None:
        lines += section("How it reads replies", *_replies(front_matter, answerer, rule, output_schema))
    return lines


def _replies(
    front_matter: Mapping[str, Any], answerer: str, rule: ReplyRule | None, output_schema: Any
) -> list[str | list[str]]:
    deliver = as_mapping(front_matter.get("deliver"))
    replies = front_matter.get("replies")
    paragraphs: list[str | list[str]] = []
    if isinstance(replies, Mapping):
        wait = _duration(replies.get("wait", "PT5S"), "5 seconds")
        said = (
            f"It reads the replies to its message with the tool {_tool(replies)} on the server "
            f"{_tool(deliver, 'server')}, waiting at least {wait} between two reads. "
            f"Only a reply from {answerer} counts."
        )
        tell = replies.get("tell")
        if isinstance(tell, Mapping):
            tool = _tool(tell) if "tool" in tell else _tool(deliver)
            said += (
                f" A reply that is not an answer is refused, and {answerer} is told how to answer"
                f" through {tool}."
            )
        else:
            said += " A reply that is not an answer is refused, and nobody is told."
        paragraphs.append(said)
    if rule is not None:
        paragraphs += [
            "It takes the answer from a reply this way; case and punctuation around a word do not matter:",
            _reply_rule_lines(rule, output_schema),
        ]
    else:
        paragraphs.append("It has no reply rule, so a reply is not read as an answer.")
    return paragraphs


def write_overview(
    front_matter: Mapping[str, Any], body: str, *, body_first_line: int, reply_rule: ReplyRule | None
) -> str:
    """The overview of an interaction function, in Markdown (``interaction-format.md``, "The overview").

    ``front_matter`` is the checked front matter as plain JSON-like values, ``body`` the message (empty
    for a function with ``call``) and ``body_first_line`` the line of the document the message starts
    on, so a message cut past 8,192 characters can say where it continues. ``reply_rule`` is the rule
    written in ``reply`` or made from the answer schema, ``None`` when the function reads no replies.
    """
    front_matter = as_mapping(front_matter)
    description = front_matter.get("description")
    if isinstance(description, str) and description.strip():
        lines = [description.strip(), ""]
    else:
        lines = ["This function has no description yet.", ""]
    if "call" in front_matter:
        lines += _asks_a_system(front_matter)
    else:
        lines += _asks_a_person(
            front_matter, body if isinstance(body, str) else "", body_first_line, reply_rule
        )
    return "\n".join(lines).rstrip("\n") + "\n"
