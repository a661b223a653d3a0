"""What a party whose reply was refused is told (``interaction-format.md``, ``replies.tell``), and
whether a refusal is recorded and told ("Bounds": refused replies of a request, 10 recorded, 3 told).

A telling always says how to answer, such as ``To answer, reply with one of approve, revise; what
follows is kept as the note.`` Before that it says why the reply was not taken: the answer schema's
problems, that it answered no single request (so reply to the message of the request you answer), or
the 8 KiB limit. A telling never repeats the reply's words.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from parley.documents.pointers import split_pointer
from parley.errors import ErrorEntry
from parley.interaction.replies.rule import ANSWER_AT, REPLY_MAX_BYTES, values_listing
from parley.interaction.replies.taking import Refusal
from parley.interaction.reply_rule import ReplyRule, _enum, _property_schemas

#: A request is told at most three times.
TELLS_MAX: Final = 3
#: At most ten refused replies of a request are recorded; further ones leave no trace.
REFUSALS_RECORDED_MAX: Final = 10
#: Problems named in one telling; the rest are counted.
PROBLEMS_TOLD: Final = 5

NOT_TAKEN: Final = "Your reply was not taken as an answer"


@dataclass(frozen=True)
class RefusalFate:
    """Whether a refusal is recorded as ``reply_refused``, and whether the party is told."""

    recorded: bool
    told: bool


def refusal_fate(refusals_recorded: int, tellings: int, *, tells: bool = True) -> RefusalFate:
    """The fate of a request's next refused reply, from the refusals recorded and the tellings sent
    for it before. ``tells`` is whether the function writes ``tell``.

    Past ten recorded, a refusal leaves no trace, so nobody is told either; past three tellings, it is
    recorded and nobody is told.
    """
    recorded = refusals_recorded < REFUSALS_RECORDED_MAX
    return RefusalFate(recorded, recorded and tells and tellings < TELLS_MAX)


def telling_text(refusal: Refusal, rule: ReplyRule, answer_schema: Any) -> str:
    """The telling for ``refusal``: why the reply was not taken, then how to answer."""
    how = how_to_answer(rule, answer_schema)
    if refusal.why == "several_open":
        return (
            f"{NOT_TAKEN}: several requests wait for your answer here. "
            f"Reply to the message of the request you answer. {how}"
        )
    if refusal.why == "too_long":
        kib = REPLY_MAX_BYTES // 1024
        return f"{NOT_TAKEN}: a reply takes at most {kib} KiB ({REPLY_MAX_BYTES:,} bytes). {how}"
    if refusal.problems:
        return f"{NOT_TAKEN}: {problems_text(refusal.problems)}. {how}"
    return f"{NOT_TAKEN}. {how}"


def problems_text(problems: tuple[ErrorEntry, ...]) -> str:
    """``for the note, expected at most 2000 characters; …``: at most five, then how many more."""
    told = [_problem_text(problem) for problem in problems[:PROBLEMS_TOLD]]
    if len(problems) > PROBLEMS_TOLD:
        rest = len(problems) - PROBLEMS_TOLD
        told.append(f"and {rest} more problem{'s' if rest > 1 else ''}")
    return "; ".join(told)


def _problem_text(problem: ErrorEntry) -> str:
    detail = problem.detail.rstrip(".")
    if len(detail) > 1 and detail[0].isupper() and detail[1].islower():
        detail = detail[0].lower() + detail[1:]
    if problem.pointer == ANSWER_AT or not problem.pointer.startswith(ANSWER_AT + "/"):
        return detail
    try:
        names = split_pointer(problem.pointer[len(ANSWER_AT) :])
    except ValueError:
        return detail
    return f"for the {_spoken(' '.join(names))}, {detail}"


def how_to_answer(rule: ReplyRule, answer_schema: Any) -> str:
    """How to answer under ``rule``, in one sentence, such as ``To answer, reply with one of approve,
    revise; what follows is kept as the note.``"""
    properties = _property_schemas(answer_schema)
    required = answer_schema.get("required", []) if isinstance(answer_schema, dict) else []
    words = [name for name, part in rule.properties.items() if part.part == "word"]
    rests = [name for name, part in rule.properties.items() if part.part == "rest"]
    texts = [name for name, part in rule.properties.items() if part.part == "text"]

    opening: list[str] = []
    for name in words:
        enum = _enum(properties.get(name))
        if enum is None:
            opening.append(f"the {_spoken(name)} as your first word")
        elif len(words) > 1:
            opening.append(
                f"one of {values_listing(enum, rule.properties[name].words)} for the {_spoken(name)}"
            )
        else:
            opening.append(f"one of {values_listing(enum, rule.properties[name].words)}")
    needed = [name for name in rests if name in required]
    kept = [name for name in rests if name not in required]

    if opening:
        start = "To answer, reply with " + _and(opening)
        if needed:
            start += ", then the " + _and([_spoken(name) for name in needed])
    elif rests:
        start = "To answer, reply with a first word, then the " + _and([_spoken(name) for name in rests])
        kept = []
    elif texts:
        start = "To answer, reply with your " + _and([_spoken(name) for name in texts])
    else:
        start = "To answer, reply"

    clauses: list[str] = []
    if kept:
        clauses.append("what follows is kept as the " + _and([_spoken(name) for name in kept]))
    if texts and (opening or rests):
        whole = "the whole reply is kept as the " + _and([_spoken(name) for name in texts])
        clauses.append(whole if not clauses else "and " + whole.replace(" is kept", ""))
    elif texts:
        clauses.append("the whole reply is kept as the " + _and([_spoken(name) for name in texts]))
    return start + ("; " + ", ".join(clauses) if clauses else "") + "."


def _spoken(name: str) -> str:
    """A property's name as words: ``due_date`` reads ``due date``."""
    return name.replace("_", " ").strip() or name


def _and(items: list[str]) -> str:
    if len(items) <= 2:
        return " and ".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]
