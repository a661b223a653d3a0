"""Retrying under a run id (``http-api.md``, "Runs"; ``reasoning-format.md``: "Supply a run_id to read a
run later or to retry it"): what a run recorded answers a retry with the same id, definition and
input, and when the definition runs again instead."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from parley.definitions.model import PlaybookRef
from parley.errors import Problem
from parley.runs.kinds import CALLER_TYPE
from parley.runs.model import Run

if TYPE_CHECKING:
    from parley.runs.lifecycle import Lifecycle


def recorded(
    runs: Lifecycle, playbook: PlaybookRef, run: Run, definition_type: str, name: str, digest: str
) -> Run | None:
    """The recorded answer to a retry under ``run``'s id; ``None`` when the definition runs again."""
    if (run.type, run.name) != (definition_type, name) or run.input_digest != digest:
        other = "other input" if (run.type, run.name) == (definition_type, name) else "its own input"
        raise Problem(
            "conflict",
            f"The run id {run.run_id} is taken by a run of the {run.type} function {run.name!r} with "
            f"{other}; a run id names one run. Use a new run id for a new run.",
        )
    if run.status != "succeeded" and _called_tools(run):
        raise tools_called(run)
    shown = replace(run, record=None, input=None)  # as run_definition shows a run: get_run adds the record
    if run.status == "started":
        if run.type == CALLER_TYPE:
            caller: Any = runs.kind(CALLER_TYPE)
            caller.rearm(playbook, run)
            return shown
        request = runs.store.get_request(playbook, run.run_id)
        if request is not None and request.state == "open":
            runs.start_waiting(playbook, request, execution=run.parent is None)
        return shown
    if run.status == "succeeded":
        return shown
    if run.rejection is not None and run.rejection.reason not in ("conflict", "unavailable"):
        raise run.rejection.problem()
    return None


def _called_tools(run: Run) -> bool:
    """Whether the run is a tool-calling run as retrying sees it: it called its tool (``call``), or it
    called tools (``tools``), or it may still be calling them (a started run of a function with
    ``tools``, even before its first recorded call)."""
    if run.called is not None:
        return True
    return run.calls is not None and (run.status == "started" or bool(run.calls))


def tools_called(run: Run) -> Problem:
    """The answer to running again under the id of a run that called tools and did not succeed."""
    called = run.calls if run.calls is not None else ((run.called,) if run.called is not None else ())
    tools = list(dict.fromkeys(f"{one.server}/{one.tool}" for one in called))
    if len(tools) == 1:
        server, _, tool = tools[0].partition("/")
        what = f"the tool {tool!r} of the tool server {server!r}"
    elif tools:
        what = "the tools " + ", ".join(tools[:-1]) + " and " + tools[-1]
    else:
        what = "its tools"
    if run.status == "started":
        return Problem(
            "conflict",
            f"The run {run.run_id} is calling {what} and may still be in progress, so it does not run "
            "again under its id. Read its history, then start a new run under a new run id.",
            kind="tools_called",
        )
    if all(one.read_only for one in called):
        return Problem(
            "conflict",
            f"The run {run.run_id} called {what} and did not succeed, so it does not run again under its "
            f"id. The server{'s mark the tools' if len(tools) > 1 else ' marks the tool'} read-only: "
            "nothing was changed. Start a new run under a new run id to call "
            f"{'them' if len(tools) > 1 else 'it'} again.",
            kind="tools_called",
            because="only_read",
        )
    return Problem(
        "conflict",
        f"The run {run.run_id} called {what} and did not succeed, so it does not run again under its id: "
        f"{'a tool' if len(tools) > 1 else 'the tool'} is not marked read-only and may have changed "
        "something. Read the run's history and check the external system before starting a new run under "
        "a new run id.",
        kind="tools_called",
    )
