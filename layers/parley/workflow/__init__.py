"""The workflow type (``workflow-format.md``): Open Workflow Specification documents compiled to Step
Functions state machines in the JSONata query language.

- ``document``: checking a document when it is saved (YAML with lines, the DSL's JSON Schema, Parley's
  refusals, names that must exist, every expression parsed);
- ``expressions``: what is an expression, where, and which variables its place may read;
- ``compiler``: a checked document becomes the ASL of its state machine;
- ``engine``: what a compiled machine and Parley's workflow entry say to each other (the execution's
  input, the entry's payloads, the one error name every workflow error travels under);
- ``errors``: the workflow's errors, and a called run's ending as one of them;
- ``overview``: the Mermaid flowchart and the functions a workflow calls;
- ``kind``, ``running``: the type as the run lifecycle sees it.

Offers: the type as the lifecycle reaches it through ``parley.runs.kinds`` (:func:`check`, :func:`bind`,
:func:`saved`), the running of workflow runs (:class:`Workflows`) and what a run's events tell a
workflow listening for them (:class:`RunEvents`). JSONata and the DSL's schema load when a document
is checked or an expression evaluated, never with the package.

The face is lazy (PEP 562, ``parley.faces``): each name's module is imported on the name's first use, so
importing one module of the package loads no other.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from parley.faces import lazy_face

if TYPE_CHECKING:
    from parley.workflow.kind import bind, check, saved
    from parley.workflow.listening import RunEvents
    from parley.workflow.running import Workflows

__all__ = [
    "RunEvents",
    "Workflows",
    "bind",
    "check",
    "saved",
]

if not TYPE_CHECKING:  # type checkers read the names above; a lookup of another is an error
    __getattr__, __dir__ = lazy_face(
        __name__,
        {
            "kind": ("bind", "check", "saved"),
            "running": ("Workflows",),
            "listening": ("RunEvents",),
        },
    )
