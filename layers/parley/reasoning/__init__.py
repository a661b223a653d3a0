"""Reasoning functions (``reasoning-format.md``, ``output-shapes.md``, ``agent-runs.md``): a Liquid
prompt, a model through its provider's API (``parley.models``), a checked answer, MCP tools under strict
limits, a record.

- ``document``, ``overview``, ``schema_warnings``, ``model_warnings``, ``provider_options``: checking a
  document when it is saved, and its overview;
- ``prompt``, ``input``, ``offer``: the run made ready (the template rendered, the model offered);
- ``running``: how a run works; ``answer`` and ``shapes``: the checked answer; ``record``: what a run
  records; ``failures``: the problems a run ends with;
- ``agent_runs``: the tool loop and agent runs (questions, approvals, tools that ask, progress);
- ``kind``: the type as the run lifecycle (``parley.runs``) sees it, through its registry.

Offers: the type as the lifecycle reaches it through ``parley.runs.kinds`` (:func:`check`, a document
checked when saved; :func:`bind`, the type over one lifecycle, a :class:`Reasoning`), and the document
(:class:`ReasoningDocument`, :func:`check_reasoning_document`).

The face is lazy (PEP 562, ``parley.faces``): each name's module is imported on the name's first use, so
importing one module of the package loads no other.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from parley.faces import lazy_face

if TYPE_CHECKING:
    from parley.reasoning.document import ReasoningDocument, check_reasoning_document
    from parley.reasoning.kind import bind, check
    from parley.reasoning.running import Reasoning

__all__ = [
    "Reasoning",
    "ReasoningDocument",
    "bind",
    "check",
    "check_reasoning_document",
]

if not TYPE_CHECKING:  # type checkers read the names above; a lookup of another is an error
    __getattr__, __dir__ = lazy_face(
        __name__,
        {
            "document": ("ReasoningDocument", "check_reasoning_document"),
            "kind": ("bind", "check"),
            "running": ("Reasoning",),
        },
    )
