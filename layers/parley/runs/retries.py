"""Retrying under a run id (``http-api.md``, "Runs"; ``reasoning-format.md``: "Supply a run_id to read a
run later or to retry it"): what a run recorded answers a retry with the same id, definition and
input, and when the definition runs again instead."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from parley.definitions.model import PlaybookRef
from parley.errors import Problem
from parley.runs.model import Run

if TYPE_CHECKING:
    from parley.runs.service import RunService


def recorded(
    runs: RunService, playbook: PlaybookRef, run: Run, definition_type: str, name: str, digest: str
) -> Run | None:
    """The recorded answer to a retry under ``run``'s id; ``None`` when the definition runs again."""
    if (run.type, run.name) != (definition_type, name) or run.input_digest != digest:
        other = "other input" if (run.type, run.name) == (definition_type, name) else "its own input"
        raise Problem(
            "conflict",
            f"The run id {run.run_id} is taken by a run of the {run.type} function {run.name!r} with "
            f"{other}; a run id names one run. Use a new run id for a new run.",
        )
    if run.called is not None and run.status != "succeeded":
        raise tools_called(run)
    shown = replace(run, record=None, input=None)  # as run_definition shows a run: get_run adds the record
    if run.status == "started":
        request = runs.store.get_request(playbook, run.run_id)
        if request is not None and request.state == "open":
            runs.start_waiting(playbook, request)
        return shown
    if run.status == "succeeded":
        return shown
    if run.rejection is not None and run.rejection.reason not in ("conflict", "unavailable"):
        raise run.rejection.problem()
    return None


def tools_called(run: Run) -> Problem:
    """The answer to running again under the id of a run that called a tool and did not succeed."""
    called = run.called
    assert called is not None
    what = f"the tool {called.tool!r} of the tool server {called.server!r}"
    if run.status == "started":
        return Problem(
            "conflict",
            f"The run {run.run_id} is calling {what} and may still be in progress, so it does not run "
            "again under its id. Read its history, then start a new run under a new run id.",
            kind="tools_called",
        )
    if called.read_only:
        return Problem(
            "conflict",
            f"The run {run.run_id} called {what} and did not succeed, so it does not run again under its "
            "id. The server marks the tool read-only: nothing was changed. Start a new run under a new "
            "run id to call it again.",
            kind="tools_called",
            because="only_read",
        )
    return Problem(
        "conflict",
        f"The run {run.run_id} called {what} and did not succeed, so it does not run again under its id: "
        "the tool is not marked read-only and may have changed something. Read the run's history and "
        "check the external system before starting a new run under a new run id.",
        kind="tools_called",
    )
