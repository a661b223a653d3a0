"""Lambda entry of the reason function: one reasoning run's work (parley.executions.reason)."""

from parley.executions.reason import handle_reason

handler = handle_reason
