"""The ports the core works through, and the bundle of them a handler is given (``runtime``).

Adapters live elsewhere: AWS's in ``parley.aws``, the local twins in ``parley.local``, the MCP client in
``parley.tools``. Nothing here imports an adapter.

Offers: :class:`Runtime` (with :class:`LazyClient` and :class:`DueWork`), the waits and the scheduler
(:class:`Waits`, :class:`Scheduler`, :class:`RunKey`), content (:class:`ContentStore`,
``ITEM_CONTENT_MAX``), the tool client (:class:`ToolClient`, :class:`Bounds`, :class:`ServerAddress`,
:class:`ListedTool`, :class:`ToolAnswer`), the reasoner (:class:`Reasoner`) and the workflow engine
(:class:`WorkflowEngine`). Their errors live in ``parley.errors``.

The face is lazy (PEP 562, ``parley.faces``): each name's module is imported on the name's first use, so
importing one module of the package loads no other.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from parley.faces import lazy_face

if TYPE_CHECKING:
    from parley.ports.content import ITEM_CONTENT_MAX, ContentStore
    from parley.ports.reasoner import Reasoner
    from parley.ports.runtime import DueWork, LazyClient, Runtime
    from parley.ports.tools import Bounds, ListedTool, ServerAddress, ToolAnswer, ToolClient
    from parley.ports.waiting import RunKey, Scheduler, Waits
    from parley.ports.workflows import WorkflowEngine

__all__ = [
    "ITEM_CONTENT_MAX",
    "Bounds",
    "ContentStore",
    "DueWork",
    "LazyClient",
    "ListedTool",
    "Reasoner",
    "RunKey",
    "Runtime",
    "Scheduler",
    "ServerAddress",
    "ToolAnswer",
    "ToolClient",
    "Waits",
    "WorkflowEngine",
]

if not TYPE_CHECKING:  # type checkers read the names above; a lookup of another is an error
    __getattr__, __dir__ = lazy_face(
        __name__,
        {
            "runtime": ("DueWork", "LazyClient", "Runtime"),
            "waiting": ("RunKey", "Scheduler", "Waits"),
            "content": ("ITEM_CONTENT_MAX", "ContentStore"),
            "tools": ("Bounds", "ListedTool", "ServerAddress", "ToolAnswer", "ToolClient"),
            "reasoner": ("Reasoner",),
            "workflows": ("WorkflowEngine",),
        },
    )
