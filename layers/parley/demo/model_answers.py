"""What the demo model answers, whatever API asked (``parley.demo.model`` reads the requests).

The answer is decided, in order:

1. a forced tool (``tool_choice`` naming one, or ``required``/``any``) is called, with arguments made to
   match its schema — how some providers are asked for a JSON answer;
2. when tools are offered (and not turned off), each tool the user's message names (``post_message``, or
   ``chat__post_message`` as the runtime names tools: ``server__tool``), in the order the message names
   them, is called once, one call a step; a JSON object right after the name (``call post_message
   {"channel": "maria", "text": "hi"}``) is taken as the arguments. A tool named without one is called
   with ``{}`` when its schema requires nothing; when the object written (or none) lacks an argument
   the schema requires, the demo model cannot tell it and says so in words instead
   (:func:`unclear_call`), naming what the tool requires and how to write it — it never makes arguments
   up (issue 29);
3. when JSON is asked for, a value made to match the schema (or, with no schema, ``{"answer": …}``);
4. after tool results, text that quotes them;
5. else text that restates the message, with the first line of the instructions.

``docs/demo-model.md`` says all of this for the people who write prompts for it.

Tokens are counted as words and punctuation marks (close to what a tokenizer gives for English), and an
answer longer than ``max_tokens`` is cut there, with the finish reason ``length``. The same request
always gives the same answer.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

from parley.demo.model_schema import UnsatisfiableSchema, example_value

#: How much of the user's message the text answer restates.
MAX_RESTATED: Final = 1_000
#: How much of a tool result the text answer quotes.
MAX_QUOTED: Final = 2_000

_TOKEN: Final = re.compile(r"\w+|[^\w\s]")

Finish = Literal["stop", "length", "tool_calls"]


@dataclass(frozen=True)
class Tool:
    name: str
    schema: Mapping[str, Any]


@dataclass(frozen=True)
class ToolResult:
    name: str
    text: str
    is_error: bool = False


@dataclass(frozen=True)
class Conversation:
    """A request as the demo model reads it, whichever API it came through.

    ``message``: the user's last message (its text). ``called``: the tools called since that message.
    ``results``: the tool results that end the conversation (none when the user spoke last).
    ``tool_choice``: ``auto``, ``none``, ``required``, or the name of the tool that must be called.
    ``json_schema``: the schema of a JSON answer (``{}`` for any JSON), ``None`` for text.
    ``prompt``: every text sent, for the token count.
    """

    message: str
    instructions: str = ""
    called: tuple[str, ...] = ()
    results: tuple[ToolResult, ...] = ()
    tools: tuple[Tool, ...] = ()
    tool_choice: str = "auto"
    json_schema: Mapping[str, Any] | None = None
    max_tokens: int | None = None
    stop: tuple[str, ...] = ()
    prompt: str = ""


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class Answer:
    """``text`` (prose or JSON) or one ``tool_call``; ``stop_sequence``: the one that ended the text."""

    text: str | None
    finish: Finish
    input_tokens: int
    output_tokens: int
    tool_call: ToolCall | None = None
    stop_sequence: str | None = None


def count_tokens(text: str) -> int:
    """Words and punctuation marks: the demo model's tokens."""
    return len(_TOKEN.findall(text))


def answer(conversation: Conversation) -> Answer:
    """The demo model's answer to ``conversation`` (see the module's docstring for the order)."""
    input_tokens = max(1, count_tokens(conversation.prompt or conversation.message))
    call = _tool_call(conversation)
    if call is not None:
        output = count_tokens(call.name) + count_tokens(json.dumps(call.arguments))
        return Answer(None, "tool_calls", input_tokens, output, tool_call=call)
    text = _text(conversation)
    stop_sequence = None
    for stop in conversation.stop:
        if stop and stop in text:
            text, stop_sequence = text[: text.index(stop)], stop
    finish: Finish = "stop"
    if conversation.max_tokens is not None and count_tokens(text) > conversation.max_tokens:
        text, finish, stop_sequence = _cut(text, conversation.max_tokens), "length", None
    return Answer(text, finish, input_tokens, count_tokens(text), stop_sequence=stop_sequence)


def restate(conversation: Conversation) -> str:
    """The text answer: what the user said, and the first line of the instructions."""
    said = " ".join(conversation.message.split())
    if len(said) > MAX_RESTATED:
        said = said[:MAX_RESTATED] + "…"
    text = f"You said: {said}" if said else "You said nothing."
    first_line = next((line.strip() for line in conversation.instructions.splitlines() if line.strip()), "")
    if first_line:
        if len(first_line) > 200:
            first_line = first_line[:200] + "…"
        text += f"\n(Instructions: {first_line})"
    return text


def _text(conversation: Conversation) -> str:
    if conversation.json_schema is not None:
        return json.dumps(_json_value(conversation), ensure_ascii=False)
    unclear = unclear_call(conversation)
    if unclear is not None:
        return unclear
    if conversation.results:
        return "\n".join(
            f"The tool {result.name} {'failed' if result.is_error else 'answered'}: {_shortened(result.text)}"
            for result in conversation.results
        )
    return restate(conversation)


def _json_value(conversation: Conversation) -> Any:
    schema = conversation.json_schema or {}
    if not schema:
        return {"answer": restate(conversation)}
    try:
        return example_value(schema)
    except UnsatisfiableSchema as exc:
        return {"error": f"the demo model cannot write a value for this schema: {exc}"}


def _shortened(text: str) -> str:
    return text if len(text) <= MAX_QUOTED else text[:MAX_QUOTED] + "…"


def _tool_call(conversation: Conversation) -> ToolCall | None:
    tools = {tool.name: tool for tool in conversation.tools}
    choice = conversation.tool_choice
    if not tools or choice == "none":
        return None
    named = _named_tools(conversation.message, tools)
    if choice in tools:
        chosen: str | None = choice
    else:
        pending = [name for name, _ in named if name not in conversation.called]
        chosen = pending[0] if pending else None
        if chosen is None and choice == "required":
            chosen = named[0][0] if named else next(iter(tools))
    if chosen is None:
        return None
    given = dict(named).get(chosen)
    if choice != chosen and choice != "required":
        if _missing(tools[chosen].schema, given):
            return None  # the answer says, in words, what the call needs (unclear_call)
        given = given if given is not None else {}
    arguments = given if given is not None else _arguments(tools[chosen].schema)
    digest = _digest(chosen, arguments, len(conversation.called))
    return ToolCall(id=digest, name=chosen, arguments=arguments)


def unclear_call(conversation: Conversation) -> str | None:
    """The words the demo model answers with when the next tool the message names requires arguments the
    message does not write (no JSON object right after the name, or one without them); ``None`` when
    there is no such tool."""
    tools = {tool.name: tool for tool in conversation.tools}
    if not tools or conversation.tool_choice in ("none", "required") or conversation.tool_choice in tools:
        return None
    pending = [
        (name, given)
        for name, given in _named_tools(conversation.message, tools)
        if name not in conversation.called
    ]
    if not pending:
        return None
    name, given = pending[0]
    missing = _missing(tools[name].schema, given)
    if not missing:
        return None
    spelled = name.split("__", 1)[1] if "__" in name else name
    required = _required(tools[name].schema)
    sample = json.dumps({field: (given or {}).get(field, "…") for field in required}, ensure_ascii=False)
    said = "the message does not say" if given is None else f"the message leaves out {', '.join(missing)}"
    return (
        f"I cannot tell what {spelled} needs: it requires {', '.join(required)}, and {said}. "
        f"Write the arguments as a JSON object right after the tool's name, such as {spelled} {sample}."
    )


def _missing(schema: Mapping[str, Any], given: Mapping[str, Any] | None) -> list[str]:
    """The arguments ``schema`` requires that ``given`` (the JSON written after the tool's name; ``None``:
    none written) does not hold."""
    return [field for field in _required(schema) if given is None or field not in given]


def _required(schema: Mapping[str, Any]) -> list[str]:
    """The arguments a tool's schema requires, in its order."""
    required = schema.get("required")
    if not isinstance(required, list):
        return []
    return [field for field in required if isinstance(field, str)]


def _named_tools(message: str, tools: Mapping[str, Tool]) -> list[tuple[str, dict[str, Any] | None]]:
    """The tools the message names, in order, each once, with the JSON object written right after the
    name (``None`` when there is none)."""
    found: list[tuple[int, str, dict[str, Any] | None]] = []
    for name in tools:
        short = name.split("__", 1)[1] if "__" in name else None
        for spelling in filter(None, (name, short)):
            match = re.search(rf"(?<![\w-]){re.escape(spelling)}(?![\w-])", message)
            if match is not None:
                found.append((match.start(), name, _object_after(message, match.end())))
                break
    found.sort(key=lambda item: item[0])
    return [(name, arguments) for _, name, arguments in found]


def _object_after(message: str, index: int) -> dict[str, Any] | None:
    rest = message[index:].lstrip()
    if not rest.startswith("{"):
        return None
    try:
        value, _ = json.JSONDecoder().raw_decode(rest)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _arguments(schema: Mapping[str, Any]) -> dict[str, Any]:
    try:
        value = example_value(schema)
    except UnsatisfiableSchema:
        return {}
    return value if isinstance(value, dict) else {}


def _cut(text: str, max_tokens: int) -> str:
    """``text`` up to the end of its ``max_tokens``-th token."""
    if max_tokens <= 0:
        return ""
    for index, match in enumerate(_TOKEN.finditer(text), start=1):
        if index == max_tokens:
            return text[: match.end()]
    return text


def _digest(*parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:24]


def schema_in(text: str) -> Mapping[str, Any] | None:
    """The first JSON object in ``text`` that looks like a JSON Schema (``type``, ``properties`` or
    ``$schema``): what ``response_format: json_object`` leaves in the instructions."""
    decoder = json.JSONDecoder()
    start = text.find("{")
    tries = 0
    while start != -1 and tries < 200:
        tries += 1
        try:
            value, _ = decoder.raw_decode(text, start)
        except ValueError:
            value = None
        if isinstance(value, dict) and ({"type", "properties", "$schema"} & set(value)):
            return value
        start = text.find("{", start + 1)
    return None


def words(parts: Sequence[str]) -> str:
    """The texts of a request joined, for :attr:`Conversation.prompt`."""
    return "\n".join(part for part in parts if part)
