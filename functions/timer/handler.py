"""Lambda entry of every EventBridge Scheduler schedule: runs the timed work (parley.executions.entry)."""

from parley.executions.entry import handle_timer

handler = handle_timer
