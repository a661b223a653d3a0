"""What an agent run reports while it works (``agent-runs.md``, "Progress: ``report_progress``"): the
built-in tool the model is offered with ``ask.progress``, and Parley's own activity while a model call is
silent. Both become ``activity_updated`` under the run's one activity id; the loop writes the event
(``activity``, given here as a function of the message and who wrote it).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Final

from parley.models import ToolCall, ToolResult, ToolSpec

#: The built-in tool of ``ask.progress`` (``agent-runs.md``, "Progress: report_progress").
REPORT_PROGRESS: Final = "report_progress"
PROGRESS_MAX_CHARS: Final = 280
#: Parley's own activity: after this long a silent model call is reported, then every so often.
SILENT_FIRST_SECONDS: Final = 3.0
SILENT_EVERY_SECONDS: Final = 5.0

#: Writes one ``activity_updated``: the message, and who wrote it (``model`` or ``parley``).
Activity = Callable[[str, str], None]


def report_progress(call: ToolCall, activity: Activity) -> ToolResult:
    """``report_progress``: a ``message`` of 1 to 280 characters becomes ``activity_updated`` under
    the run's one activity id; anything else is a tool error. It changes nothing, and is not one of
    the run's 25 calls."""

    message = (call.arguments or {}).get("message")
    if not isinstance(message, str) or not 1 <= len(message) <= PROGRESS_MAX_CHARS:
        return ToolResult(
            call.id,
            call.name,
            f"report_progress takes a message of 1 to {PROGRESS_MAX_CHARS} characters.",
            True,
        )
    activity(message, "model")
    return ToolResult(call.id, call.name, "Reported.")


def watch_silence(run_id: str, model_label: str, step: int, activity: Activity) -> threading.Event:
    """Parley's own activity, from facts only: once a model call has been silent for 3 seconds,
    ``activity_updated`` names the model the run waits for, refreshed every 5 seconds until the call
    answers. The returned event stops it."""
    done = threading.Event()
    began = time.monotonic()

    def watch() -> None:
        wait = SILENT_FIRST_SECONDS
        while not done.wait(wait):
            seconds = round(time.monotonic() - began)
            try:
                activity(
                    f"Waiting for {model_label} to answer step {step} ({seconds} s so far).",
                    "parley",
                )
            except Exception:  # an activity that cannot be written never stops the run
                return
            wait = SILENT_EVERY_SECONDS

    threading.Thread(target=watch, name=f"parley-activity-{run_id}", daemon=True).start()
    return done


def progress_spec() -> ToolSpec:

    return ToolSpec(
        REPORT_PROGRESS,
        "Report a short public update on what you are doing, for the person who started the run. It changes "
        "nothing; call it beside real work, not instead of it.",
        {
            "type": "object",
            "properties": {"message": {"type": "string", "minLength": 1, "maxLength": PROGRESS_MAX_CHARS}},
            "required": ["message"],
            "additionalProperties": False,
        },
    )
