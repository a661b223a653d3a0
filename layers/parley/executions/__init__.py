"""The front door of the functions a waiting run's execution and the scheduler call (``wait``,
``settle``, ``timer``): each adapts its event to one call of the run lifecycle (``parley.runs``); and the
entries of the ``reason`` and ``workflow`` functions.

Offers: the Lambda entries (:func:`handle_wait`, :func:`handle_settle`, :func:`handle_timer`,
:func:`handle_reason`, :func:`handle_workflow`) and the handlers over a given runtime
(:func:`build_wait_handler`, :func:`build_settle_handler`, :func:`build_timer_handler`,
:func:`build_reason_handler`, :func:`build_workflow_handler`).

The face is lazy (PEP 562, ``parley.faces``): each name's module is imported on the name's first use, so
importing one module of the package loads no other.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from parley.faces import lazy_face

if TYPE_CHECKING:
    from parley.executions.entry import (
        build_settle_handler,
        build_timer_handler,
        build_wait_handler,
        handle_settle,
        handle_timer,
        handle_wait,
    )
    from parley.executions.reason import build_reason_handler, handle_reason
    from parley.executions.workflow import build_workflow_handler, handle_workflow

__all__ = [
    "build_reason_handler",
    "build_settle_handler",
    "build_timer_handler",
    "build_wait_handler",
    "build_workflow_handler",
    "handle_reason",
    "handle_settle",
    "handle_timer",
    "handle_wait",
    "handle_workflow",
]

if not TYPE_CHECKING:  # type checkers read the names above; a lookup of another is an error
    __getattr__, __dir__ = lazy_face(
        __name__,
        {
            "entry": (
                "build_settle_handler",
                "build_timer_handler",
                "build_wait_handler",
                "handle_settle",
                "handle_timer",
                "handle_wait",
            ),
            "reason": ("build_reason_handler", "handle_reason"),
            "workflow": ("build_workflow_handler", "handle_workflow"),
        },
    )
