"""Lambda entry of every EventBridge Scheduler schedule: runs the timed work (parley.runs.entry)."""

from parley.runs.entry import handle_timer

handler = handle_timer
