"""The reasoner port on AWS: each reasoning run the api function starts is one asynchronous invocation
of the ``reason`` function (``Event``: the api function never waits on it; Lambda keeps the event and
delivers it at least once, and the run's conditional ending makes a second delivery harmless); an agent
run's next step after its request ended is one more (``{"run", "resume": true}``)."""

from __future__ import annotations

import json
from typing import Any

from parley.aws.edge import translated
from parley.ports.waiting import RunKey


class LambdaReasoner:
    def __init__(self, functions: Any, function_arn: str) -> None:
        self._functions = functions
        self.function_arn = function_arn

    def start(self, run: RunKey, *, resume: bool = False) -> None:
        event: dict[str, Any] = {"run": run.as_json()}
        if resume:
            event["resume"] = True
        with translated("The reason function", "start the run", ignore=frozenset(), unavailable=frozenset()):
            self._functions.invoke(
                FunctionName=self.function_arn,
                InvocationType="Event",
                Payload=json.dumps(event).encode("utf-8"),
            )
