"""``parley answer RUN_ID`` without an answer: the answer asked for on the terminal, from the request
(issue 29: "or interactively, from the answer schema").

An agent run's question is asked as it was put (``agent-runs.md``, "Questions"): a text, a choice among
its options by number (its own words where ``allow_custom``, ``s`` to skip where ``allow_skip``), or a
form's questions one by one; an approval as its confirmation and the frozen call, then yes or no and a
note. Any other request is asked from its ``answer_schema``: an ``enum`` by number, a boolean as yes or
no, numbers and texts with their bounds, lengths, patterns and formats, an array of an ``enum`` as
numbers, objects property by property (Enter leaves an optional one out), and anything else as JSON.
Each value is checked as it is typed and asked again until it fits; the server checks the whole answer
all the same. Prompts go to standard error, so standard output keeps only the result.
"""

from __future__ import annotations

import json
import math
import operator
import re
from collections.abc import Callable, Mapping, Sequence
from datetime import date, datetime
from typing import Any, Final

from parley.client.exits import USAGE, CommandError
from parley.client.printing import compact

_LEFT_OUT: Final = object()
_EMAIL: Final = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


class Prompter:
    """Questions on ``write``, answers from ``read`` (a line without its end, or ``None`` at the end of
    the input, which stops the command: nothing is sent)."""

    def __init__(self, read: Callable[[], str | None], write: Callable[[str], None]) -> None:
        self._read = read
        self.write = write

    def line(self, prompt: str) -> str:
        self.write(prompt)
        got = self._read()
        if got is None:
            raise CommandError(USAGE, "The input ended before the answer was whole: nothing was sent.")
        return got.strip()

    def ask(self, prompt: str, parse: Callable[[str], Any]) -> Any:
        """Ask until ``parse`` takes the line; ``parse`` raises ``ValueError`` with words to show."""
        while True:
            typed = self.line(prompt)
            try:
                return parse(typed)
            except ValueError as exc:
                self.write(f"  {exc}\n")

    def yes_no(self, prompt: str, default: bool | None = None) -> bool:
        hint = {True: "[Y/n]", False: "[y/N]", None: "[y/n]"}[default]

        def parse(typed: str) -> bool:
            word = typed.lower()
            if not word and default is not None:
                return default
            if word in ("y", "yes", "true"):
                return True
            if word in ("n", "no", "false"):
                return False
            raise ValueError("Type y or n.")

        answer: bool = self.ask(f"{prompt} {hint} ", parse)
        return answer


def ask_answer(request: Mapping[str, Any], prompter: Prompter) -> Any:
    """The answer to ``request`` (an open request as ``list_interactions`` shows it), asked on the
    terminal."""
    write = prompter.write
    asker = f"{request.get('type')} {request.get('function')}"
    write(f"{asker} asks {request.get('to')} (run {request.get('run_id')}):\n")
    message = str(request.get("message") or "").strip()
    if message:
        write("".join(f"  | {line}".rstrip() + "\n" for line in message.splitlines()))
    approval = request.get("approval")
    if isinstance(approval, Mapping):
        call = f"{approval.get('server')}/{approval.get('tool')}"
        write(f"  The call: {call} {compact(approval.get('arguments'), 400)}\n")
        answer: dict[str, Any] = {"approved": prompter.yes_no("Approve this call?")}
        note = prompter.line("Note (Enter for none): ")
        if note:
            answer["note"] = note
        return answer
    question = request.get("question")
    if isinstance(question, Mapping):
        return _question(question, prompter)
    schema = request.get("answer_schema")
    if not isinstance(schema, Mapping):
        raise CommandError(USAGE, "This request takes no answer (it is a notification).")
    return _value(schema, "answer", prompter, required=True)


# --- an agent run's questions ------------------------------------------------------------------------


def _question(question: Mapping[str, Any], prompter: Prompter) -> Any:
    kind = question.get("kind")
    if kind == "form":
        answers: dict[str, Any] = {}
        for each in question.get("questions") or ():
            required = bool(each.get("required", True))
            prompter.write(f"{each.get('prompt')}{'' if required else ' (optional)'}\n")
            got = (
                _choice(each, prompter, required)
                if each.get("kind") == "choice"
                else _text(prompter, required)
            )
            if got is not _LEFT_OUT:
                answers[str(each.get("id"))] = got
        return {"answers": answers}
    if kind == "choice":
        return _choice(question, prompter, required=True)
    return _text(prompter, required=True)


def _text(prompter: Prompter, required: bool) -> Any:
    def parse(typed: str) -> Any:
        if typed:
            return typed
        if not required:
            return _LEFT_OUT
        raise ValueError("An answer is some text.")

    return prompter.ask("> ", parse)


def _choice(question: Mapping[str, Any], prompter: Prompter, required: bool) -> Any:
    options = [each for each in question.get("options") or () if isinstance(each, Mapping)]
    multiple = bool(question.get("multiple"))
    custom = bool(question.get("allow_custom"))
    skip = bool(question.get("allow_skip"))
    for number, option in enumerate(options, 1):
        tail = " (recommended)" if option.get("recommended") else ""
        prompter.write(f"  {number}) {option.get('label')}{tail}\n")
    hints = ["numbers, such as 1,3" if multiple else "a number"]
    if custom:
        hints.append("or your own words")
    if skip:
        hints.append(f"or s to skip ({question.get('skip_label') or 'skip'})")
    if not required:
        hints.append("or Enter to leave it out")

    def parse(typed: str) -> Any:
        if not typed:
            if not required:
                return _LEFT_OUT
            raise ValueError("Choose " + ("at least one" if multiple else "one") + ".")
        if skip and typed.lower() == "s":
            return {"selected": [], "skipped": True}
        picked = _numbers(typed, len(options))
        if picked is None:
            if custom and not re.fullmatch(r"[\d,\s]+", typed):
                return {"selected": [], "custom": typed}
            raise ValueError(f"Type {hints[0]} from 1 to {len(options)}.")
        if len(picked) > 1 and not multiple:
            raise ValueError("Choose one.")
        return {"selected": [str(options[i]["id"]) for i in picked]}

    return prompter.ask(f"Your choice ({', '.join(hints)}): ", parse)


def _numbers(typed: str, count: int) -> list[int] | None:
    """The 0-based indexes of ``1,3`` or ``1 3``; ``None`` when it is not such a list."""
    words = [word for word in re.split(r"[,\s]+", typed) if word]
    if not words or not all(word.isdigit() and 1 <= int(word) <= count for word in words):
        return None
    return list(dict.fromkeys(int(word) - 1 for word in words))


# --- any other request: its answer schema ------------------------------------------------------------


def _type(schema: Mapping[str, Any]) -> str | None:
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((each for each in kind if each != "null"), None)
    return kind if isinstance(kind, str) else None


def _value(schema: Mapping[str, Any], label: str, prompter: Prompter, required: bool) -> Any:
    if "const" in schema:
        return schema["const"]
    kind = _type(schema)
    if kind == "object" and isinstance(schema.get("properties"), Mapping):
        return _object(schema, label, prompter)
    title = schema.get("title") or label
    about = f" — {schema['description']}" if schema.get("description") else ""
    optional = "" if required else ", Enter to leave out"
    if isinstance(schema.get("enum"), list):
        return _enum(schema["enum"], f"{title}{about}", prompter, required)
    if (
        kind == "array"
        and isinstance(schema.get("items"), Mapping)
        and isinstance(schema["items"].get("enum"), list)
    ):
        return _enum_array(schema, f"{title}{about}", prompter, required)
    if kind == "boolean":
        if required:
            return prompter.yes_no(f"{title}{about}?")
        choice = prompter.ask(f"{title}{about}? [y/n, Enter to leave out] ", _optional_bool)
        return choice
    if kind in ("integer", "number"):
        return prompter.ask(
            f"{title}{about}{_bounds(schema)}{optional}: ", lambda typed: _number(schema, typed, required)
        )
    if kind == "string":
        return prompter.ask(
            f"{title}{about}{_string_hint(schema)}{optional}: ",
            lambda typed: _string(schema, typed, required),
        )
    return prompter.ask(f"{title}{about} (JSON{optional}): ", lambda typed: _json(typed, required))


def _object(schema: Mapping[str, Any], label: str, prompter: Prompter) -> Any:
    needed = set(schema.get("required") or ())
    result: dict[str, Any] = {}
    for name, each in schema["properties"].items():
        if not isinstance(each, Mapping):
            continue
        inner = name if label == "answer" else f"{label}.{name}"
        got = _value(each, inner, prompter, required=name in needed)
        if got is not _LEFT_OUT:
            result[name] = got
    return result


def _enum(values: Sequence[Any], label: str, prompter: Prompter, required: bool) -> Any:
    prompter.write(f"{label}:\n")
    for number, value in enumerate(values, 1):
        prompter.write(f"  {number}) {value if isinstance(value, str) else json.dumps(value)}\n")

    def parse(typed: str) -> Any:
        if not typed and not required:
            return _LEFT_OUT
        if typed.isdigit() and 1 <= int(typed) <= len(values):
            return values[int(typed) - 1]
        for value in values:
            if typed == (value if isinstance(value, str) else json.dumps(value)):
                return value
        raise ValueError(f"Type a number from 1 to {len(values)}.")

    return prompter.ask(f"Choose one{', Enter to leave out' if not required else ''}: ", parse)


def _enum_array(schema: Mapping[str, Any], label: str, prompter: Prompter, required: bool) -> Any:
    values = schema["items"]["enum"]
    prompter.write(f"{label}:\n")
    for number, value in enumerate(values, 1):
        prompter.write(f"  {number}) {value}\n")
    least, most = schema.get("minItems", 0), schema.get("maxItems", len(values))

    def parse(typed: str) -> Any:
        if not typed:
            if not required:
                return _LEFT_OUT
            if least == 0:
                return []
            raise ValueError("Choose at least one." if least == 1 else f"Choose at least {least}.")
        picked = _numbers(typed, len(values)) if typed else None
        if picked is None:
            raise ValueError(f"Type numbers from 1 to {len(values)}, such as 1,2.")
        if not least <= len(picked) <= most:
            raise ValueError(f"Choose {least} to {most}." if most != least else f"Choose {least}.")
        return [values[i] for i in picked]

    return prompter.ask("Choose (numbers, such as 1,2): ", parse)


def _optional_bool(typed: str) -> Any:
    word = typed.lower()
    if not word:
        return _LEFT_OUT
    if word in ("y", "yes", "true"):
        return True
    if word in ("n", "no", "false"):
        return False
    raise ValueError("Type y or n, or Enter to leave it out.")


def _bounds(schema: Mapping[str, Any]) -> str:
    low, high = schema.get("minimum"), schema.get("maximum")
    kind = "a whole number" if schema.get("type") == "integer" else "a number"
    if low is not None and high is not None:
        return f" ({kind} from {low} to {high})"
    if low is not None:
        return f" ({kind}, at least {low})"
    if high is not None:
        return f" ({kind}, at most {high})"
    return f" ({kind})"


def _number(schema: Mapping[str, Any], typed: str, required: bool) -> Any:
    if not typed and not required:
        return _LEFT_OUT
    try:
        value: float | int = int(typed) if schema.get("type") == "integer" else float(typed.replace(",", ""))
    except ValueError:
        raise ValueError("Type " + _bounds(schema).strip(" ()") + ".") from None
    if isinstance(value, float) and (not math.isfinite(value)):
        raise ValueError("Type a finite number.")
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    checks: tuple[tuple[str, Callable[[float, float], bool], str], ...] = (
        ("minimum", operator.ge, "at least"),
        ("maximum", operator.le, "at most"),
        ("exclusiveMinimum", operator.gt, "more than"),
        ("exclusiveMaximum", operator.lt, "less than"),
    )
    for key, holds, words in checks:
        bound = schema.get(key)
        if isinstance(bound, int | float) and not holds(value, bound):
            raise ValueError(f"Type a number {words} {bound}.")
    return value


def _string_hint(schema: Mapping[str, Any]) -> str:
    hints = {
        "date": "a date, YYYY-MM-DD",
        "date-time": "a time, such as 2026-10-17T10:18:42Z",
        "email": "an email address",
        "uri": "an address, such as https://example.com",
    }
    parts = [hints[schema["format"]]] if schema.get("format") in hints else []
    if isinstance(schema.get("maxLength"), int):
        parts.append(f"at most {schema['maxLength']:,} characters")
    return f" ({', '.join(parts)})" if parts else ""


def _string(schema: Mapping[str, Any], typed: str, required: bool) -> Any:
    if not typed and not required:
        return _LEFT_OUT
    least, most = schema.get("minLength"), schema.get("maxLength")
    if isinstance(least, int) and len(typed) < least:
        raise ValueError("Type some text." if least == 1 else f"Type at least {least} characters.")
    if isinstance(most, int) and len(typed) > most:
        raise ValueError(f"At most {most:,} characters; this is {len(typed):,}.")
    pattern = schema.get("pattern")
    if isinstance(pattern, str):
        try:
            if re.search(pattern, typed) is None:
                raise ValueError(f"It must match {pattern}.")
        except re.error:
            pass
    form = schema.get("format")
    try:
        if form == "date":
            date.fromisoformat(typed)
        elif form == "date-time":
            datetime.fromisoformat(typed.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError("Type " + _string_hint(schema).strip(" ()").split(",")[0] + ".") from None
    if form == "email" and not _EMAIL.match(typed):
        raise ValueError("Type an email address, such as maria@example.com.")
    if form == "uri" and not re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:\S+$", typed):
        raise ValueError("Type an address, such as https://example.com.")
    return typed


def _json(typed: str, required: bool) -> Any:
    if not typed and not required:
        return _LEFT_OUT
    try:
        return json.loads(typed)
    except json.JSONDecodeError as exc:
        raise ValueError(f"That is not JSON: {exc.msg}.") from None
