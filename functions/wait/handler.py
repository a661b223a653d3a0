"""Lambda entry of the state machine's Wait task: keeps the task token on the request (parley.runs.entry)."""

from parley.runs.entry import handle_wait

handler = handle_wait
