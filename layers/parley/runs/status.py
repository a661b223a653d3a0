"""The statuses a run goes through (``http-api.md``, "Runs"): their own module, so that the API's route
table and shapes name them without loading the runs' model (``parley.runs.model``) on every first event."""

from __future__ import annotations

from typing import Final, Literal

RunStatus = Literal["started", "succeeded", "rejected", "failed"]
RUN_STATUSES: Final = ("started", "succeeded", "rejected", "failed")
