"""The one Liquid environment of the runtime, its limits, and the save-time template checks.

Offers: rendering (:func:`render_text`, :func:`render_typed`, :func:`render_prompt`, and
:class:`RenderFailure` when a template cannot render), compiling (:func:`compile_template`), and the
checks made when a document is saved (:func:`check_template`, :class:`PlaceNames`,
:func:`place_names`). Liquid loads with the first of these used, never with the package.

The face is lazy (PEP 562, ``parley.faces``): each name's module is imported on the name's first use, so
importing one module of the package loads no other.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from parley.faces import lazy_face

if TYPE_CHECKING:
    from parley.templates.checks import PlaceNames, check_template, place_names
    from parley.templates.environment import compile_template
    from parley.templates.render import RenderFailure, render_prompt, render_text, render_typed

__all__ = [
    "PlaceNames",
    "RenderFailure",
    "check_template",
    "compile_template",
    "place_names",
    "render_prompt",
    "render_text",
    "render_typed",
]

if not TYPE_CHECKING:  # type checkers read the names above; a lookup of another is an error
    __getattr__, __dir__ = lazy_face(
        __name__,
        {
            "render": ("RenderFailure", "render_prompt", "render_text", "render_typed"),
            "environment": ("compile_template",),
            "checks": ("PlaceNames", "check_template", "place_names"),
        },
    )
