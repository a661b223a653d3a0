"""The reasoner port on one machine: each reasoning run works in the project's ``reason`` handler
(``parley.executions.reason``), invoked as its own function on a thread of ``parley serve``, as the
api function invokes it asynchronously on AWS; the grant is checked as the stack makes it."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from parley.infrastructure.functions import MAY_REASON
from parley.local.functions import require_grant
from parley.ports.waiting import RunKey

LOG = logging.getLogger("parley.local")


class LocalReasoner:
    def __init__(self, invoke: Callable[[str, Any], Any]) -> None:
        self._invoke = invoke

    def start(self, run: RunKey) -> None:
        require_grant(MAY_REASON, "invoke the reason function (lambda:InvokeFunction)")
        # A daemon thread: stopping the server does not wait for a model call (as an invocation that is
        # cut off, the run's backstop ends it).
        threading.Thread(
            target=self._work, args=(run,), name=f"parley-reason-{run.run_id}", daemon=True
        ).start()

    def _work(self, run: RunKey) -> None:
        try:
            self._invoke("reason", {"run": run.as_json()})
        except Exception:  # the invocation's failure is logged, as Lambda would; the run stays started
            LOG.exception("the reason function failed for run %s", run.run_id)
