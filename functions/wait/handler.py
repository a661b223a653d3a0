"""Lambda entry of the state machine's Wait task: keeps the task token on the request
(parley.executions.entry)."""

from parley.executions.entry import handle_wait

handler = handle_wait
