"""The ports a run waits and is timed through; adapters: Step Functions and EventBridge Scheduler on
AWS (``parley.aws``), and their local twins in ``parley.local``.

The store is the truth and executions only wait (``architecture.md``): a run's execution parks on a
``.waitForTaskToken`` task whose token is kept on the request item. Whatever ends the request writes the
run's ending (or, for an agent run, the request's) first, in the write that decides it, then ends the wait
with ``succeed`` and the ending's name: the execution has nothing left to do, so every ending answers the
token the same way (``parley.infrastructure.state_machine``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final, Protocol

#: How a request ended, as the wait's ``succeed`` tells it (the execution's output, for its history).
ANSWERED: Final = "answered"
EXPIRED: Final = "expired"
CANCELLED: Final = "cancelled"
#: A notification delivered, or every attempt to deliver it failed.
DELIVERED: Final = "delivered"
UNDELIVERED: Final = "undelivered"


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
        """The Step Functions execution name of the run's first wait: one per run, so a start is
        idempotent (80 characters at most)."""
        return f"run-{self.scoped_id}"

    def wait_execution_name(self, number: int) -> str:
        """The execution name of the run's ``number``-th wait (an agent run asks again and again, each
        wait its own execution, since a name is never used twice): the first is :attr:`execution_name`."""
        return self.execution_name if number <= 1 else f"{self.execution_name}-{number}"


class Waits(Protocol):
    """Executions that hold waiting runs."""

    def start(self, run: RunKey, *, timeout_seconds: int, number: int = 1) -> None:
        """Start the execution of the run's ``number``-th wait (named ``run.wait_execution_name(number)``;
        starting it twice is harmless).

        The execution parks on a task token until ``succeed``, or until ``timeout_seconds`` (``expires``
        plus one minute: the backstop when an expiry schedule is lost, or a ``succeed`` never came)."""

    def succeed(self, token: str, output: Mapping[str, Any]) -> None:
        """SendTaskSuccess. A token that already ended is not an error (handlers run at least once)."""


class Scheduler(Protocol):
    """Everything timed: "call this work at that time" (expiries now; deliveries and reads later)."""

    def schedule(self, name: str, at: datetime, work: Mapping[str, Any]) -> None:
        """Call the timer function with ``work`` at ``at`` (at least once). Scheduling a name twice is
        harmless. ``work`` is ``{"work": "expire", "run": RunKey.as_json()}`` and the like."""

    def cancel(self, name: str) -> None:
        """Forget a schedule that has not fired; an unknown name is not an error."""
