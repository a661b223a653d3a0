"""Runs of interaction functions: requests, answers, endings, and the run operations of http-api.md."""
