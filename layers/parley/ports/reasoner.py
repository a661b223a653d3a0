"""The reasoner port: where a reasoning run works (``architecture.md``, "Reasoning runs on AWS").

The api function starts a run and waits for its end up to the run wait; the run itself works in the
``reason`` function, which :meth:`Reasoner.start` invokes (asynchronously: the api function never waits
on the invocation). An agent run whose request was answered or expired is taken up the same way, by
whoever wrote that ending (``resume``). Locally the same handler runs on a thread of ``parley serve``.
"""

from __future__ import annotations

from typing import Protocol

from parley.ports.waiting import RunKey


class Reasoner(Protocol):
    def start(self, run: RunKey, *, resume: bool = False) -> None:
        """Have the run's work done (at least once: the work ends the run under a condition, so a
        second invocation changes nothing); ``resume``: an agent run's work after its request ended
        (claimed once, so a second invocation changes nothing either)."""
