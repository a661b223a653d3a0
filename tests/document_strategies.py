"""Hypothesis strategies shared by the checker's and the API's fuzz tests."""

from __future__ import annotations

from pathlib import Path

from hypothesis import strategies as st

EXAMPLES = [
    p.read_text()
    for p in sorted((Path(__file__).resolve().parent.parent / "examples" / "definitions").glob("*.md"))
]

FRAGMENTS = [
    "{{",
    "}}",
    "{%",
    "%}",
    "${",
    "&a",
    "*a",
    "!!str",
    "---",
    ":",
    "- ",
    "[",
    "]",
    "{",
    "}",
    "'",
    '"',
    "\t",
    "\n",
    "  ",
    "yes",
    "P2D",
    "PT5S",
    "~1",
    "/",
    "input.owner",
    "sent.id",
    "| json",
    "| date",
    "{% include 'x' %}",
    "pattern: x",
    "$ref: '#/$defs/a'",
    "\x00",
    "\u2028",
    "é",
    "0x1F",
    ".inf",
    "9" * 400,
]


@st.composite
def mutated(draw: st.DrawFn) -> str:
    lines = draw(st.sampled_from(EXAMPLES)).split("\n")
    for _ in range(draw(st.integers(1, 6))):
        op = draw(st.sampled_from(["delete", "duplicate", "insert", "splice", "swap"]))
        i = draw(st.integers(0, max(len(lines) - 1, 0)))
        if op == "delete" and len(lines) > 1:
            del lines[i]
        elif op == "duplicate":
            lines.insert(i, lines[i])
        elif op == "insert":
            lines.insert(i, draw(st.text(max_size=40)))
        elif op == "splice":
            line = lines[i]
            at = draw(st.integers(0, len(line)))
            lines[i] = line[:at] + draw(st.sampled_from(FRAGMENTS)) + line[at:]
        elif op == "swap":
            j = draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
    return "\n".join(lines)
