"""Lambda entry of the state machine's Settle tasks: writes the run's ending (parley.executions.entry)."""

from parley.executions.entry import handle_settle

handler = handle_settle
