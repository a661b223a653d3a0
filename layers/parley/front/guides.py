"""Parley's reference pages as MCP resources: ``guide://<name>``, the Markdown of
``parley.reference/<name>.md`` (the same text ``docs/reference/`` shows)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

SCHEME: Final = "guide://"
MEDIA_TYPE: Final = "text/markdown"


@dataclass(frozen=True)
class Guide:
    name: str
    title: str
    description: str

    @property
    def uri(self) -> str:
        return SCHEME + self.name


GUIDES: Final = (
    Guide(
        "interaction-format",
        "Interaction functions",
        "How an interaction function is written: its front matter (to, expires, input, output, deliver, "
        "call, replies), its message, its bounds, how its run ends and what it records. Read it before "
        "creating or changing an interaction definition.",
    ),
    Guide(
        "reasoning-format",
        "Reasoning functions",
        "How a reasoning function is written: its model, prompt, input and output schemas and tools, and "
        "how its run ends and what it records. Read it before creating or changing a reasoning definition.",
    ),
    Guide(
        "agent-runs",
        "Agent runs",
        "Reasoning functions that work with tools and ask people: questions, approvals, and the waits "
        "of a run that asks.",
    ),
    Guide(
        "output-shapes",
        "Output shapes",
        "The JSON Schema a function's output may take, and how a model is held to it.",
    ),
    Guide(
        "workflow-format",
        "Workflows",
        "How a workflow is written: an Open Workflow Specification document (YAML) that calls the "
        "playbook's functions, its tasks, expressions, errors, retries and catches, how its run ends, what "
        "runs on AWS, and its bounds. Read it before creating or changing a workflow definition.",
    ),
    Guide(
        "http-api",
        "HTTP API",
        "Every operation (the tools of this server are the same), its routes, problems and grants.",
    ),
)

BY_URI: Final = {guide.uri: guide for guide in GUIDES}

#: Reads a guide's Markdown by name; ``None`` when it is not shipped.
GuideReader = Callable[[str], "str | None"]


def packaged_guide(name: str) -> str | None:
    """The page ``<name>.md`` shipped inside the package (``parley.reference``), or ``None``."""
    from importlib.resources import files

    try:
        page = files("parley.reference").joinpath(f"{name}.md")
        return page.read_text(encoding="utf-8")
    except (ModuleNotFoundError, FileNotFoundError, NotADirectoryError):
        return None
