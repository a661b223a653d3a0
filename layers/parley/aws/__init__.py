"""The AWS adapters behind the ports (Step Functions, EventBridge Scheduler and the timer queue, the
boto3 error translation) and the wiring of a deployed function's runtime from its environment.

Offers: :func:`runtime_from_environment` (and :func:`operator_from_environment`,
:func:`run_wait_from_environment`), and the adapters: :class:`StepFunctionsWaits`,
:class:`EventBridgeScheduler`, :class:`StepFunctionsWorkflows`, :class:`S3ContentStore`,
:class:`LambdaReasoner`. boto3 loads with the first client made, never with the package.

The face is lazy (PEP 562, ``parley.faces``): each name's module is imported on the name's first use, so
importing one module of the package loads no other.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from parley.faces import lazy_face

if TYPE_CHECKING:
    from parley.aws.content import S3ContentStore
    from parley.aws.environment import (
        operator_from_environment,
        run_wait_from_environment,
        runtime_from_environment,
    )
    from parley.aws.eventbridge import EventBridgeScheduler
    from parley.aws.reasoner import LambdaReasoner
    from parley.aws.stepfunctions import StepFunctionsWaits
    from parley.aws.workflows import StepFunctionsWorkflows

__all__ = [
    "EventBridgeScheduler",
    "LambdaReasoner",
    "S3ContentStore",
    "StepFunctionsWaits",
    "StepFunctionsWorkflows",
    "operator_from_environment",
    "run_wait_from_environment",
    "runtime_from_environment",
]

if not TYPE_CHECKING:  # type checkers read the names above; a lookup of another is an error
    __getattr__, __dir__ = lazy_face(
        __name__,
        {
            "environment": (
                "operator_from_environment",
                "run_wait_from_environment",
                "runtime_from_environment",
            ),
            "stepfunctions": ("StepFunctionsWaits",),
            "eventbridge": ("EventBridgeScheduler",),
            "workflows": ("StepFunctionsWorkflows",),
            "content": ("S3ContentStore",),
            "reasoner": ("LambdaReasoner",),
        },
    )
