"""What the command line gives as text: JSON values (``JSON``, ``@FILE``, ``@-`` for standard input)
and definition files, whose name and type ``parley save`` works out (issue 29: the name from the file's
name, ``approve-campaign-brief.md`` → ``approve-campaign-brief``; the type from the file: front matter →
an interaction or a reasoning function by its fields, YAML with ``document:`` → a workflow).

A reasoning function is told by the fields only it has (``model``, ``config``, ``provider_options``,
``tools``, ``ask``, ``approve``); any other front matter is an interaction function's, whose problems the
server then names with their lines. Front matter that is not YAML is sent as an interaction function's
too, so that the server's problem, with its line, says what is wrong.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Final

from parley.client.exits import USAGE, CommandError

TYPES: Final = ("interaction", "reasoning", "workflow")
REASONING_FIELDS: Final = frozenset({"model", "config", "provider_options", "tools", "ask", "approve"})


def json_value(text: str, what: str) -> Any:
    """``text`` as JSON; ``@FILE`` reads the file, ``@-`` standard input. A usage error says where the
    JSON breaks."""
    source = what
    if text.startswith("@"):
        source = text[1:] or "-"
        text = read_text(source)
        source = "standard input" if source == "-" else source
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise CommandError(
            USAGE, f"{source} is not JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}."
        ) from None


def read_text(path: str) -> str:
    if path == "-":
        return sys.stdin.read()
    try:
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CommandError(USAGE, f"There is no file {path}.") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CommandError(USAGE, f"{path} cannot be read: {exc}") from None


def name_of(path: str) -> str:
    """The definition's name from its file's name: the name without its last suffix, such as
    ``approve-campaign-brief`` for ``examples/approve-campaign-brief.md``."""
    return Path(path).stem


def type_of(source: str, path: str) -> str:
    """The definition type of a document, from its front matter or its ``document:``; a usage error
    when it is neither."""
    import yaml

    lines = source.lstrip("\ufeff").splitlines()
    if lines and lines[0].strip() == "---":
        end = next((i for i, line in enumerate(lines[1:], 1) if line.strip() in ("---", "...")), None)
        try:
            front = yaml.safe_load("\n".join(lines[1:end])) if end is not None else None
        except yaml.YAMLError:
            front = None
        if isinstance(front, dict) and REASONING_FIELDS & set(front):
            return "reasoning"
        if end is not None and not (isinstance(front, dict) and "document" in front):
            return "interaction"
    try:
        loaded = yaml.safe_load(source)
    except yaml.YAMLError:
        loaded = None
    if isinstance(loaded, dict) and "document" in loaded:
        return "workflow"
    if path.endswith((".yaml", ".yml")):
        return "workflow"
    raise CommandError(
        USAGE,
        f"Cannot tell what {path} defines: a function is Markdown that starts with front matter (---), "
        "a workflow is YAML with document:. Give --type interaction, reasoning or workflow.",
    )
