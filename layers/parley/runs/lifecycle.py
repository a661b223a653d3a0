"""What the lifecycle's parts see of it (issue 30: no module imports the one that imports it).

``parley.runs.service.RunService`` makes methods of the functions of ``answering``, ``endings``,
``waiting``, ``reading`` and ``retries``; each takes the lifecycle as its first argument. They type it
with :class:`Lifecycle`, what they use of it — the runtime, the store, the types bound to it, the ports a
wait needs, the retrying of a contended write, a run's wait started — so none of them imports
``service``, which imports them. ``RunService`` is a ``Lifecycle``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol, TypeVar

if TYPE_CHECKING:
    from parley.definitions.model import PlaybookRef
    from parley.ports.runtime import Runtime
    from parley.ports.waiting import Scheduler, Waits
    from parley.runs.kinds import FunctionKind
    from parley.runs.model import Request
    from parley.runs.store import DynamoRunStore

Result = TypeVar("Result")


class Lifecycle(Protocol):
    """The run lifecycle as its parts use it (``RunService`` is one)."""

    @property
    def write_attempts(self) -> int:
        """How often a write that met a concurrent one is tried again."""
        ...

    @property
    def runtime(self) -> Runtime: ...

    @property
    def store(self) -> DynamoRunStore: ...

    def kind(self, definition_type: str) -> FunctionKind:
        """The type ``definition_type`` bound to this lifecycle."""
        ...

    def ports(self) -> tuple[Waits, Scheduler]:
        """The waits and the scheduler (a ``503`` problem when the runtime has none)."""
        ...

    def retrying(self, work: Callable[[], Result]) -> Result:
        """``work``, tried again while another transaction holds its items."""
        ...

    def back_off(self, attempt: int) -> None: ...

    def start_waiting(self, playbook: PlaybookRef, request: Request, *, execution: bool = True) -> None:
        """Schedule the request's expiry and start its wait (``parley.runs.waiting``)."""
        ...


__all__ = ["Lifecycle"]
