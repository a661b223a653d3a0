"""Lambda entry of the workflow function: a workflow's calls and its end (parley.executions.workflow)."""

from parley.executions.workflow import handle_workflow

handler = handle_workflow
