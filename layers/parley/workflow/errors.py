"""A workflow's errors (``workflow-format.md``, "Errors, retries and timeouts"), and a called run's
ending as one of them (the table of "Calling a function").

An error is ``{type, status, instance, title?, detail?, kind?, because?}``. The DSL's short types
(``runtime``, ``timeout``, …) stand for ``https://open-workflow-specification.org/spec/1.0.0/errors/<name>``;
a ``catch`` may name them under the specification's former address too (:func:`canonical_type`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Final

#: Where the DSL's own error types live, and where they lived before.
SPEC_ERRORS: Final = "https://open-workflow-specification.org/spec/1.0.0/errors/"
FORMER_SPEC_ERRORS: Final = "https://serverlessworkflow.io/spec/1.0.0/errors/"
#: Parley's own problem types a called run's rejection raises.
PROBLEMS: Final = "https://on.auto/problems/"
#: The short types of the DSL.
SHORT_TYPES: Final = (
    "configuration",
    "validation",
    "expression",
    "authentication",
    "authorization",
    "timeout",
    "communication",
    "runtime",
)


def spec_type(name: str) -> str:
    """The full type of a short one (``runtime`` → ``https://open-workflow-specification.org/…/runtime``)."""
    return SPEC_ERRORS + name


def canonical_type(error_type: str) -> str:
    """A type as errors are compared: the former address read as the current one; a short name as its
    full type."""
    if error_type.startswith(FORMER_SPEC_ERRORS):
        return SPEC_ERRORS + error_type[len(FORMER_SPEC_ERRORS) :]
    if error_type in SHORT_TYPES:
        return SPEC_ERRORS + error_type
    return error_type


@dataclass(frozen=True)
class WorkflowError:
    """One error, as a ``catch`` sees it in ``$error``."""

    type: str
    status: int
    instance: str | None = None
    title: str | None = None
    detail: str | None = None
    kind: str | None = None
    because: str | None = None

    def as_json(self) -> dict[str, Any]:
        shown: dict[str, Any] = {"type": self.type, "status": self.status}
        for name in ("instance", "title", "detail", "kind", "because"):
            value = getattr(self, name)
            if value is not None:
                shown[name] = value
        return shown

    def cause(self) -> str:
        """The error as the cause of a ``SendTaskFailure`` or a Fail state."""
        return json.dumps(self.as_json(), separators=(",", ":"))

    @classmethod
    def from_json(cls, data: Any) -> WorkflowError:
        if not isinstance(data, dict):
            return runtime_error(f"An error that is not an object: {data!r}")
        status = data.get("status")
        return cls(
            type=canonical_type(str(data.get("type") or spec_type("runtime"))),
            status=status if isinstance(status, int) and not isinstance(status, bool) else 500,
            instance=_text(data.get("instance")),
            title=_text(data.get("title")),
            detail=_text(data.get("detail")),
            kind=_text(data.get("kind")),
            because=_text(data.get("because")),
        )


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def runtime_error(detail: str, *, instance: str | None = None, title: str | None = None) -> WorkflowError:
    return WorkflowError(spec_type("runtime"), 500, instance=instance, title=title, detail=detail)


#: A called run's rejection reason (and kind) → the error's type and status.
_BY_REASON: Final[dict[str, tuple[str, int]]] = {
    "invalid_input": (spec_type("validation"), 400),
    "not_found": (spec_type("configuration"), 404),
    "conflict": (spec_type("runtime"), 409),
    "unavailable": (spec_type("communication"), 503),
    "cancelled": (PROBLEMS + "cancelled", 409),
    "unanswered": (PROBLEMS + "unanswered", 410),
}
_BY_KIND: Final[dict[tuple[str, str], tuple[str, int]]] = {
    ("conflict", "tools_called"): (PROBLEMS + "tools_called", 409),
    ("conflict", "effect_unknown"): (PROBLEMS + "effect_unknown", 409),
    ("unavailable", "tools_unfinished"): (PROBLEMS + "tools_unfinished", 503),
}
_REASON_TITLES: Final = {
    "invalid_input": "was given input it refused",
    "not_found": "does not exist",
    "conflict": "met a conflict",
    "unavailable": "was unavailable",
    "cancelled": "was cancelled",
    "unanswered": "went unanswered",
}


def error_of_rejection(
    rejection: dict[str, Any], *, definition_type: str, name: str, task: str
) -> WorkflowError:
    """A called run's rejection (``{reason, kind?, because?, detail}``) as the error its task raises."""
    reason = str(rejection.get("reason", ""))
    kind = rejection.get("kind")
    found = _BY_KIND.get((reason, str(kind))) or _BY_REASON.get(reason) or (spec_type("runtime"), 500)
    error_type, status = found
    what = _REASON_TITLES.get(reason, f"was rejected ({reason})")
    return WorkflowError(
        type=error_type,
        status=status,
        instance=task,
        title=f"The {definition_type} {name!r} {what}",
        detail=_text(rejection.get("detail")),
        kind=_text(kind),
        because=_text(rejection.get("because")),
    )


def error_of_failure(detail: str, *, definition_type: str, name: str, task: str) -> WorkflowError:
    """A called run that ``failed`` (the runtime broke down): ``runtime`` (500)."""
    return runtime_error(detail, instance=task, title=f"The {definition_type} {name!r} failed")
