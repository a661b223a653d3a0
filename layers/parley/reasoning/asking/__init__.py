"""Agent runs asking a person (agent-runs.md)."""
