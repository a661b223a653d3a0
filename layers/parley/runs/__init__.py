"""The run lifecycle every function type shares (``http-api.md``, "Runs"; the format pages' "How a run
ends"), knowing no type: a type is reached through the registry (``kinds``).

Offers: the lifecycle (:class:`RunService`, :func:`run_service`; :class:`Lifecycle`, what its parts see
of it), the registry of types (:class:`FunctionKind`, :class:`RunStart`, :func:`kind_module`,
:func:`definition_saved`, :func:`work_kind`), the shapes (:class:`Run`, :class:`Request`,
:class:`Event`, :class:`Rejection`, :class:`Parent`, :class:`Delivery`, :class:`CalledTool`), the
history's events (:func:`run_event`, :func:`new_event_id`), run ids (:func:`normalized_run_id`,
:func:`is_run_id`, :func:`input_digest`), and the store (:class:`DynamoRunStore`, :func:`runs_store_for`,
its errors :class:`RequestsFull` and :class:`RunTaken`).

The face is lazy (PEP 562, ``parley.faces``): each name's module is imported on the name's first use, so
importing one module of the package loads no other.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from parley.faces import lazy_face

if TYPE_CHECKING:
    from parley.runs.events import new_event_id, run_event
    from parley.runs.ids import input_digest, is_run_id, normalized_run_id
    from parley.runs.kinds import KINDS, FunctionKind, RunStart, definition_saved, kind_module, work_kind
    from parley.runs.lifecycle import Lifecycle
    from parley.runs.model import CalledTool, Delivery, Event, Parent, Rejection, Request, Run, invalid_input
    from parley.runs.service import RunService, run_service, runs_store_for
    from parley.runs.status import RUN_STATUSES
    from parley.runs.store import DynamoRunStore, RequestsFull, RunTaken
    from parley.runs.versions import PerVersion

__all__ = [
    "KINDS",
    "RUN_STATUSES",
    "CalledTool",
    "Delivery",
    "DynamoRunStore",
    "Event",
    "FunctionKind",
    "Lifecycle",
    "Parent",
    "PerVersion",
    "Rejection",
    "Request",
    "RequestsFull",
    "Run",
    "RunService",
    "RunStart",
    "RunTaken",
    "definition_saved",
    "input_digest",
    "invalid_input",
    "is_run_id",
    "kind_module",
    "new_event_id",
    "normalized_run_id",
    "run_event",
    "run_service",
    "runs_store_for",
    "work_kind",
]

if not TYPE_CHECKING:  # type checkers read the names above; a lookup of another is an error
    __getattr__, __dir__ = lazy_face(
        __name__,
        {
            "service": ("RunService", "run_service", "runs_store_for"),
            "lifecycle": ("Lifecycle",),
            "kinds": ("KINDS", "FunctionKind", "RunStart", "definition_saved", "kind_module", "work_kind"),
            "model": (
                "CalledTool",
                "Delivery",
                "Event",
                "Parent",
                "Rejection",
                "Request",
                "Run",
                "invalid_input",
            ),
            "events": ("new_event_id", "run_event"),
            "ids": ("input_digest", "is_run_id", "normalized_run_id"),
            "store": ("DynamoRunStore", "RequestsFull", "RunTaken"),
            "versions": ("PerVersion",),
            "status": ("RUN_STATUSES",),
        },
    )
