"""Reply rules: how the words of a reply become an answer ("Answering by reply").

A rule maps top-level string properties of ``output.schema`` to a *part* of the reply: ``word``
(the first word, one of the property's ``enum`` values or a word ``words`` lists for one), ``rest``
(what follows the first word) or ``text`` (the whole reply).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

Part = Literal["word", "rest", "text"]
PARTS: tuple[Part, ...] = ("word", "rest", "text")


@dataclass(frozen=True)
class RulePart:
    """Where one property's value comes from; ``words`` maps an ``enum`` value to its other words."""

    part: Part
    words: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class ReplyRule:
    """The reply rule of a function: written in ``reply``, or derived from the answer schema."""

    properties: Mapping[str, RulePart]
    derived: bool = False
