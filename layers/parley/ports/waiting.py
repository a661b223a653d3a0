"""The ports a run waits and is timed through; adapters: Step Functions and EventBridge Scheduler on
AWS (``parley.aws``), and their local twins in ``parley.local``.

The store is the truth and executions only wait (``architecture.md``): a run's execution parks on a
``.waitForTaskToken`` task whose token is kept on the request item; an answer ends the wait with
``succeed``, an expiry or a cancel with ``fail`` under one of the errors below.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final, Protocol

#: SendTaskFailure errors (the state machine's Catch names them).
EXPIRED_ERROR: Final = "Parley.Expired"
CANCELLED_ERROR: Final = "Parley.Cancelled"
#: A notification whose every delivery attempt failed.
UNDELIVERED_ERROR: Final = "Parley.Undelivered"


@dataclass(frozen=True)
class RunKey:
    """Where a run lives: its playbook and its id. Serialized as ``{"org", "playbook", "run_id"}``."""

    org: str
    playbook: str
    run_id: str

    def as_json(self) -> dict[str, str]:
        return {"org": self.org, "playbook": self.playbook, "run_id": self.run_id}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RunKey:
        return cls(str(data["org"]), str(data["playbook"]), str(data["run_id"]))

    @property
    def scoped_id(self) -> str:
        """The run id made unique across playbooks: callers choose run ids, so two playbooks may use
        the same one, while execution and schedule names are unique per state machine and group."""
        digest = hashlib.sha256(f"{self.org}/{self.playbook}".encode()).hexdigest()[:12]
        return f"{digest}-{self.run_id}"

    @property
    def execution_name(self) -> str:
        """The Step Functions execution name: one per run, so a start is idempotent (80 chars max)."""
        return f"run-{self.scoped_id}"


class Waits(Protocol):
    """Executions that hold waiting runs."""

    def start(self, run: RunKey, *, timeout_seconds: int) -> None:
        """Start the run's execution (named ``run.execution_name``; starting it twice is harmless).

        The execution parks on a task token until ``succeed``/``fail``, or until ``timeout_seconds``
        (``expires`` plus one minute: the backstop when an expiry schedule is lost)."""

    def succeed(self, token: str, output: Mapping[str, Any]) -> None:
        """SendTaskSuccess. A token that already ended is not an error (handlers run at least once)."""

    def fail(self, token: str, error: str, cause: str) -> None:
        """SendTaskFailure with ``error`` (``EXPIRED_ERROR`` or ``CANCELLED_ERROR``). Idempotent as above."""


class Scheduler(Protocol):
    """Everything timed: "call this work at that time" (expiries now; deliveries and reads later)."""

    def schedule(self, name: str, at: datetime, work: Mapping[str, Any]) -> None:
        """Call the timer function with ``work`` at ``at`` (at least once). Scheduling a name twice is
        harmless. ``work`` is ``{"work": "expire", "run": RunKey.as_json()}`` and the like."""

    def cancel(self, name: str) -> None:
        """Forget a schedule that has not fired; an unknown name is not an error."""
