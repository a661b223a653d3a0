"""Checking a workflow document when it is saved (``workflow-format.md``, "A workflow document",
"Document fields", "Tasks", "Expressions", "Durations", "Schedules" and "Bounds").

The whole source is YAML, read as function documents' front matter is (YAML 1.2 core schema, no anchors,
aliases, tags or repeated keys), with the line and column of every place. Then, in one pass that keeps
every problem found:

- the document's own fields: ``document.dsl`` (``1.0.0`` to ``1.0.3``), ``evaluate`` (``jsonata`` and
  ``strict`` only), ``use`` (``errors``, ``retries`` and ``timeouts``; ``functions``, ``catalogs``,
  ``extensions``, ``secrets`` and ``authentications`` are refused), ``input`` and ``output``,
  ``timeout`` and ``schedule`` (``cron`` and ``every``; ``on`` and ``after`` are refused);
- the task lists (``parley.workflow.document_tasks``): each task, Parley's refusals, ``then``, the
  names of ``use`` that tasks refer to, and the bounds;
- every expression, parsed as JSONata, with the variables its place reads
  (``parley.workflow.expressions``);
- the DSL's own JSON Schema of the document's version (``parley.workflow.document_schema``); where
  Parley found a problem at a place, or above it, the schema's problems there are left out, since
  Parley's say more.

Each problem names its line, column and pointer, such as ``Line 14, column 22, /do/1/approval/with/
input/owner: The expression does not parse: Unexpected end of expression``; at most 20 in line order,
then one line counting the rest (``parley.documents.problems``). The source's size is the definitions
service's to bound.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from parley.documents.front_matter import MAX_NESTING, load_front_matter
from parley.documents.pointers import join_pointer
from parley.documents.problems import DocumentProblems
from parley.workflow.document_checks import Scope
from parley.workflow.document_schedule import cron_problem, every_problem
from parley.workflow.document_schema import DSL_VERSIONS, LATEST_DSL, document_problems
from parley.workflow.document_tasks import MAX_TASK_LIST_DEPTH, CalledFunction, TaskChecks

MEDIA_TYPE: Final = "application/yaml"
#: The YAML levels a workflow may nest: a task list 64 levels deep takes up to four YAML levels a list
#: (a task, its ``catch``, its ``do`` and the list's item), and its values as much as front matter may.
MAX_YAML_NESTING: Final = 4 * MAX_TASK_LIST_DEPTH + MAX_NESTING
TOP_LEVEL_FIELDS: Final = ("document", "input", "use", "do", "timeout", "output", "schedule", "evaluate")
USE_FIELDS: Final = ("errors", "retries", "timeouts")
#: What ``use`` may not hold, and why.
REFUSED_USE: Final = {
    "functions": "a workflow calls its playbook's functions with call: run_definition",
    "catalogs": "a workflow calls its playbook's functions with call: run_definition",
    "extensions": "a workflow runs its own tasks only",
    "secrets": "a workflow holds no secrets: its playbook's tool servers hold their own credentials",
    "authentications": "a workflow holds no credentials: its playbook's tool servers hold their own",
}
EVALUATE_FIELDS: Final = ("language", "mode")


@dataclass(frozen=True)
class WorkflowDocument:
    """A workflow document that passed every save-time check.

    ``data`` is the whole document as plain data; ``description`` its ``document.summary``, else its
    ``document.title``; ``calls`` its ``call: run_definition`` tasks in document order; ``schedule``,
    ``input_schema`` (``input.schema.document``) and ``output_schema`` (``output.schema.document``) as
    written, or ``None``; ``dsl`` the DSL version it is written in.
    """

    data: dict[str, Any]
    description: str | None
    calls: tuple[CalledFunction, ...]
    schedule: dict[str, Any] | None
    input_schema: dict[str, Any] | None
    output_schema: dict[str, Any] | None
    dsl: str = LATEST_DSL


def check_workflow_document(
    source: str, not_run: Callable[[dict[str, Any]], list[tuple[str, str]]] | None = None
) -> WorkflowDocument:
    """Check a workflow's source; raise ``invalid_input`` listing every problem under ``/source``.

    ``not_run`` names what a document that passed every other check uses that this version does not
    run yet, as ``(pointer, what)`` (the compiler's ``not_yet_compiled``): each is a problem too.

    Raises :class:`~parley.errors.Problem` as the other types' documents do (``DocumentProblems``):
    each problem names its line, column and pointer, once, at most 20 in line order, then one line
    counting the rest.
    """
    problems = DocumentProblems()
    text = source.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    loaded = load_front_matter(
        text, 1, columns=True, subject="The workflow document", max_nesting=MAX_YAML_NESTING
    )
    if isinstance(loaded, list):
        problems.extend(loaded)
        problems.raise_if_any()
        raise AssertionError("unreachable")  # pragma: no cover
    data, lines = loaded
    checks = _DocumentChecks(text, lines)
    checks.check(data)
    problems.extend(checks.all_problems())
    problems.raise_if_any()
    if not_run is not None:
        for pointer, what in not_run(data):
            checks.problem(pointer, f"This version of Parley does not run {what} yet")
        problems.extend(checks.all_problems())
        problems.raise_if_any()
    return WorkflowDocument(
        data=data,
        description=_description(data.get("document")),
        calls=tuple(checks.calls),
        schedule=data.get("schedule"),
        input_schema=_schema_document(data.get("input")),
        output_schema=_schema_document(data.get("output")),
        dsl=checks.version,
    )


class _DocumentChecks(TaskChecks):
    """The document's own fields, then its task lists and the DSL's schema."""

    def check(self, data: dict[str, Any]) -> None:
        for key in data:
            if key not in TOP_LEVEL_FIELDS:
                self.problem(
                    join_pointer("", key),
                    f"{key!r} is not a field of a workflow; expected {', '.join(TOP_LEVEL_FIELDS)}",
                )
        self.version = self.dsl(data.get("document"))
        for problem in document_problems(data, self.version):
            self.schema_problem(join_pointer("", *problem.path), problem.message)
        if "use" in data:
            self.use(data["use"])
        if "evaluate" in data:
            self.evaluate(data["evaluate"])
        scope = Scope()
        if "input" in data:
            self.data_block("/input", data["input"], "from", scope, object_root=True)
        if "output" in data:
            self.data_block("/output", data["output"], "as", scope)
        if "timeout" in data:
            self.timeout("/timeout", data["timeout"], scope)
        if "schedule" in data:
            self.schedule(data["schedule"])
        self.task_list("/do", data.get("do"), 1, scope)

    def dsl(self, document: Any) -> str:
        """The DSL version the document is written in: its ``document.dsl`` when it is one of those read,
        else the latest (the problem says so)."""
        if not isinstance(document, dict) or "dsl" not in document:
            return LATEST_DSL  # the DSL's schema says the field is required
        written = document["dsl"]
        if isinstance(written, str) and written in DSL_VERSIONS:
            return written
        if isinstance(written, str):
            shown = repr(written if len(written) <= 40 else written[:40] + "…")
        elif isinstance(written, int | float) and not isinstance(written, bool):
            shown = "a number"
        else:
            shown = "that"
        self.value_problem(
            "/document/dsl",
            f"The DSL versions read are {DSL_VERSIONS[0]} to {DSL_VERSIONS[-1]}, written as text such as "
            f"dsl: '{LATEST_DSL}'; not {shown}",
        )
        return LATEST_DSL

    def evaluate(self, value: Any) -> None:
        if not isinstance(value, dict):
            self.value_problem("/evaluate", "Expected a mapping: evaluate: {language: jsonata, mode: strict}")
            return
        for key in value:
            if key not in EVALUATE_FIELDS:
                self.problem(
                    join_pointer("/evaluate", key),
                    f"{key!r} is not a field of evaluate; expected language, mode",
                )
        if "language" in value and value["language"] != "jsonata":
            self.value_problem(
                "/evaluate/language",
                "Expressions are JSONata, the language Step Functions evaluates: write language: jsonata, or "
                "leave it out",
            )
        if "mode" in value and value["mode"] != "strict":
            self.value_problem(
                "/evaluate/mode",
                "Expressions are read in strict mode, written ${ … } where a value may be one: write mode: "
                "strict, or leave it out",
            )

    def use(self, value: Any) -> None:
        if not isinstance(value, dict):
            return  # the DSL's schema says use is a mapping
        for key in value:
            if key in REFUSED_USE:
                self.problem(join_pointer("/use", key), f"use.{key} is refused: {REFUSED_USE[key]}")
        named: dict[str, dict[str, Any]] = {}
        for name in USE_FIELDS:
            held = value.get(name)
            named[name] = held if isinstance(held, dict) else {}
        self.errors = frozenset(named["errors"])
        self.retries = frozenset(named["retries"])
        self.timeouts = frozenset(named["timeouts"])
        scope = Scope()
        for name, error in named["errors"].items():
            self.error(join_pointer("/use/errors", name), error, scope)
        for name, policy in named["retries"].items():
            self.retry_policy(join_pointer("/use/retries", name), policy, scope.with_error("error"))
        for name, timeout in named["timeouts"].items():
            if isinstance(timeout, dict) and "after" in timeout:
                self.duration(join_pointer("/use/timeouts", name, "after"), timeout["after"], scope)

    def schedule(self, value: Any) -> None:
        if not isinstance(value, dict):
            return  # the DSL's schema says schedule is a mapping
        for key in ("on", "after"):
            if key in value:
                reason = (
                    "a workflow starts on a schedule (cron, every) or when it is run, not on events"
                    if key == "on"
                    else "a schedule is cron or every: a run does not start again when the last one ends"
                )
                self.problem(join_pointer("/schedule", key), f"schedule.{key} is refused: {reason}")
        if "cron" in value:
            problem = cron_problem(value["cron"])
            if problem is not None:
                self.value_problem("/schedule/cron", problem)
        if "every" in value:
            every = value["every"]
            if isinstance(every, str) and every.lstrip().startswith("${"):
                self.value_problem(
                    "/schedule/every",
                    "every is a duration written out: it is read when the workflow is saved",
                )
                return
            read = self.duration("/schedule/every", every, Scope())
            if read is not None and read.length is not None:
                problem = every_problem(read.length)
                if problem is not None:
                    self.value_problem("/schedule/every", problem)


def _description(document: Any) -> str | None:
    if not isinstance(document, dict):
        return None
    for field in ("summary", "title"):
        text = document.get(field)
        if isinstance(text, str) and text.strip():
            return text
    return None


def _schema_document(block: Any) -> dict[str, Any] | None:
    schema = block.get("schema") if isinstance(block, dict) else None
    document = schema.get("document") if isinstance(schema, dict) else None
    return document if isinstance(document, dict) else None


__all__ = ["MEDIA_TYPE", "CalledFunction", "WorkflowDocument", "check_workflow_document"]
