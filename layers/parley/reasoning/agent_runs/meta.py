"""The keys Parley writes in a tool call's ``_meta`` and reads in a result's (``reasoning-format.md``,
"Tools"; ``agent-runs.md``, "Questions" and "A tool that asks"), kept apart so that the loop and the
steps that ask read the same words without importing each other.
"""

from __future__ import annotations

from typing import Final

#: The key of the run id in each call's ``_meta``.
RUN_ID_META: Final = "auto.on/run_id"
#: A person's answer in each call's ``_meta`` after a question (``agent-runs.md``, "Questions").
RESPONSE_META: Final = "parley/interaction_response"
#: A tool's request in its result's ``_meta`` (``agent-runs.md``, "A tool that asks").
INTERACTION_META: Final = "parley/interaction"
