"""Lambda entry of the state machine's Settle tasks: writes the run's ending (parley.runs.entry)."""

from parley.runs.entry import handle_settle

handler = handle_settle
