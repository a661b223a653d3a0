"""Interaction functions (``interaction-format.md``): a function that asks a system (one MCP call), or
asks a person through the inbox or a chat tool and waits for the answer.

- ``document``, ``reply_rule``, ``overview``: checking a document when it is saved, and its overview;
- ``prepare``: the checked document made ready to run, the input checked, the request rendered;
- ``call``: a function that asks a system ("Asking a system");
- ``delivery``: sending a request through a tool ("Attempts"); ``sent``: what it was delivered as
  (``deliver.sent``);
- ``replies``: answering by reply ("Answering by reply": the cadence, the reply rule, telling);
- ``kind``: the type as the run lifecycle (``parley.runs``) sees it, through its registry.

Offers: the type as the lifecycle reaches it through ``parley.runs.kinds`` (:func:`check`, a document
checked when saved; :func:`bind`, the type over one lifecycle, an :class:`Interaction`).

The face is lazy (PEP 562, ``parley.faces``): each name's module is imported on the name's first use, so
importing one module of the package loads no other.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from parley.faces import lazy_face

if TYPE_CHECKING:
    from parley.interaction.kind import Interaction, bind, check

__all__ = [
    "Interaction",
    "bind",
    "check",
]

if not TYPE_CHECKING:  # type checkers read the names above; a lookup of another is an error
    __getattr__, __dir__ = lazy_face(
        __name__,
        {
            "kind": ("Interaction", "bind", "check"),
        },
    )
