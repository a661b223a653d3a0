"""The reasoning-format document checker (``reasoning-format.md``, "Fields" and "How a document is checked").

Saving a reasoning function runs every check of the page on its document and lists every problem found,
each with its line and pointer, as for interaction documents: the fields of "Fields" with their types and
ranges, any other key at any level, the YAML rules of the front matter, the schema rules shared with
interaction functions ("Answers that are JSON"), ``provider_options`` ("Provider options"), ``tools``,
the template with its system block ("The template"), and an agent run's ``ask`` and ``approve``
(``agent-runs.md``, "Turning it on: ``ask``"). A setting is checked only against its type and
range: whether the provider accepts it, or offers the model, is found out when a run calls it.

``output.format`` left out is ``text``, except beside ``output.shape``: "the answer is JSON of that shape",
so a shape alone makes the format ``json``. ``output.schema`` with the format left out is refused, since
the format is then ``text``, which takes no schema; the problem says to write ``format: json``.

``ask.to`` is checked as an interaction function's ``to`` (the names ``input``, ``today`` and ``now``, and
``input.<field>`` against the input schema), ``ask.expires`` as its ``expires`` (``PT1M`` to ``P30D``), with
the checks of ``parley.documents``. An ``approve`` entry names one ``server/tool`` the function's ``tools``
give (by name, or through ``server/*``) and either a ``confirmation``, a template over ``arguments`` checked
as every template is (any ``arguments.<name>``, since the tool's schema is known only when a run lists it),
or a ``preview``, another tool of the same server whose text is the confirmation.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, Final, Literal, cast

from liquid.builtin.content import ContentNode
from liquid.builtin.tags.comment_tag import CommentNode

from parley.documents.asking import CONFIRMATION_PLACE, TOOL_NAME, template_problems
from parley.documents.durations import expires_problem, parse_duration
from parley.documents.front_matter import LineIndex, read_document
from parley.documents.json_schema import check_schema, validate_instance
from parley.documents.pointers import join_pointer
from parley.documents.problems import DocumentProblems
from parley.models import Effort, Settings
from parley.reasoning.provider_options import check_provider_options
from parley.reasoning.schema_warnings import capped_warnings, schema_warnings
from parley.reasoning.shapes import SHAPE_NAMES, ShapeName, shape_schema
from parley.templates.checks import check_template, place_names
from parley.templates.environment import SystemNode, compile_template

MEDIA_TYPE: Final = "text/markdown"
MAX_DESCRIPTION: Final = 1_000
MAX_OUTPUT_TOKENS: Final = 64_000
DEFAULT_MAX_OUTPUT_TOKENS: Final = 1_024

OutputFormat = Literal["text", "json"]
EFFORTS: Final[tuple[Effort, ...]] = ("none", "minimal", "low", "medium", "high", "xhigh")
OUTPUT_FORMATS: Final[tuple[OutputFormat, ...]] = ("text", "json")

MODEL_PROVIDER: Final = re.compile(r"[a-z0-9-]+")
#: A tool server's name, as the operator's ``tool_servers`` and the interaction format write it.
SERVER_NAME: Final = re.compile(r"[a-z][a-z0-9-]{0,31}")
EVERY_TOOL: Final = "*"
TEMPLATE_PLACE: Final = place_names("template")
TO_PLACE: Final = place_names("to")

TOP_LEVEL_FIELDS: Final = (
    "description",
    "model",
    "config",
    "input",
    "output",
    "provider_options",
    "tools",
    "ask",
    "approve",
)
CONFIG_FIELDS: Final = ("max_output_tokens", "temperature", "top_p", "seed", "stop_sequences", "reasoning")
INPUT_FIELDS: Final = ("schema", "default")
OUTPUT_FIELDS: Final = ("format", "schema", "shape")
ASK_FIELDS: Final = ("to", "expires", "progress")
APPROVE_FIELDS: Final = ("tool", "confirmation", "preview")

_MODEL_EXAMPLE: Final = "such as anthropic/claude-sonnet-4-5"
_TOOL_FORM: Final = (
    "write server/tool or server/*, the server's name 1 to 32 lowercase letters, digits and hyphens "
    "starting with a letter"
)
_ONE_TOOL_FORM: Final = (
    "write server/tool, the server's name 1 to 32 lowercase letters, digits and hyphens starting with a "
    "letter"
)
_TO_EXAMPLE: Final = "a template over input, today and now, such as '{{ input.owner }}'"


@dataclass(frozen=True)
class ModelReference:
    """``model``: the provider (before the first slash) and the model id it is sent unchanged."""

    provider: str
    model: str

    def __str__(self) -> str:
        return f"{self.provider}/{self.model}"


@dataclass(frozen=True)
class ToolReference:
    """One entry of ``tools``: ``server/tool``, or ``server/*`` (``tool == "*"``) for every allowed tool."""

    server: str
    tool: str

    @property
    def every_tool(self) -> bool:
        return self.tool == EVERY_TOOL

    def __str__(self) -> str:
        return f"{self.server}/{self.tool}"


@dataclass(frozen=True)
class AskBlock:
    """``ask``: whom the run may ask (``to``, the template's text), how long each question or approval
    waits, and whether the model is offered ``report_progress``."""

    to: str
    expires: timedelta
    progress: bool = False


@dataclass(frozen=True)
class ApproveEntry:
    """One entry of ``approve``: a tool that waits for approval before each call, with exactly one of
    ``confirmation`` (a template over ``arguments``) and ``preview`` (a tool's name on the same server)."""

    server: str
    tool: str
    confirmation: str | None = None
    preview: str | None = None

    def __str__(self) -> str:
        return f"{self.server}/{self.tool}"


@dataclass(frozen=True)
class ReasoningDocument:
    """A reasoning function's document that passed every save-time check.

    ``template`` is the text after the front matter (line ends as ``\\n``) and ``template_first_line`` the
    source line it starts on, so render failures name the document's lines. ``output_format`` is resolved
    (``json`` for a shape written without a format). ``warnings`` are the schema's, as text, at most 100.
    """

    model: ModelReference
    settings: Settings
    description: str | None
    input_schema: Mapping[str, Any] | None
    input_default: Mapping[str, Any]
    output_format: OutputFormat
    output_schema: Any
    output_shape: ShapeName | None
    provider_options: Mapping[str, Mapping[str, Any]]
    tools: tuple[ToolReference, ...]
    template: str
    template_first_line: int
    front_matter: Mapping[str, Any]
    warnings: tuple[str, ...] = field(default=())
    ask: AskBlock | None = None
    approve: tuple[ApproveEntry, ...] = ()

    @property
    def answer_schema(self) -> Any:
        """The schema a JSON answer must match: ``output.schema``, or the shape's; ``None`` for text."""
        if self.output_schema is not None:
            return self.output_schema
        return shape_schema(self.output_shape) if self.output_shape is not None else None


@dataclass
class _Checker:
    """One document's check: the front matter, where each pointer is, and the problems found."""

    front_matter: dict[str, Any]
    lines: LineIndex
    problems: DocumentProblems
    input_schema: Mapping[str, Any] | None = None
    output_schema_valid: bool = False

    def problem(self, pointer: str, message: str) -> None:
        self.problems.add(self.lines.line_of(pointer), pointer, message)

    # -- small checks ----------------------------------------------------------------------------

    def mapping(self, pointer: str, value: Any, allowed: tuple[str, ...]) -> dict[str, Any] | None:
        """A mapping whose keys are among ``allowed``; every other key is a problem at its own line."""
        if not isinstance(value, dict):
            self.problem(pointer, "Expected a mapping")
            return None
        for key in value:
            if key not in allowed:
                self.problem(
                    join_pointer(pointer, key), f"{key!r} is not a key here; expected {', '.join(allowed)}"
                )
        return value

    def text(self, pointer: str, value: Any) -> str | None:
        if not isinstance(value, str):
            self.problem(pointer, "Expected text")
            return None
        return value

    def whole_number(self, pointer: str, value: Any, least: int, most: int | None, words: str) -> None:
        if not _is_whole(value) or value < least or (most is not None and value > most):
            self.problem(pointer, f"Expected a whole number {words}")

    def number(self, pointer: str, value: Any) -> None:
        # the loader already refuses numbers that are not finite
        if not _is_number(value):
            self.problem(pointer, "Expected number")

    # -- the document ----------------------------------------------------------------------------

    def check(self, body: str, body_first_line: int) -> None:
        fm = self.front_matter
        for key in fm:
            if key not in TOP_LEVEL_FIELDS:
                self.problem(join_pointer("", key), f"{key!r} is not a field of reasoning functions")
        if "description" in fm:
            description = self.text("/description", fm["description"])
            if description is not None and not 1 <= len(description) <= MAX_DESCRIPTION:
                self.problem("/description", "A description is 1 to 1,000 characters")
        if "model" in fm:
            self.model(fm["model"])
        else:
            self.problem("/model", f"'model' is required: a model reference {_MODEL_EXAMPLE}")
        if "config" in fm:
            self.config(fm["config"])
        if "input" in fm:
            self.input(fm["input"])
        if "output" in fm:
            self.output(fm["output"])
        if "provider_options" in fm:
            for pointer, message in check_provider_options(fm["provider_options"]):
                self.problem(pointer, message)
        if "tools" in fm:
            self.tools(fm["tools"])
        if "ask" in fm:
            self.ask(fm["ask"])
        if "approve" in fm:
            self.approve(fm["approve"])
        self.template(body, body_first_line)

    def model(self, value: Any) -> None:
        if not isinstance(value, str):
            self.problem("/model", f"Expected text: a model reference {_MODEL_EXAMPLE}")
            return
        provider, slash, model = value.partition("/")
        if not slash or not MODEL_PROVIDER.fullmatch(provider) or not model:
            self.problem(
                "/model",
                f"{_shown(value)} is not a model reference: write provider/model, {_MODEL_EXAMPLE}, "
                "the provider in lowercase letters, digits and hyphens",
            )
        elif any(char.isspace() or not char.isprintable() for char in model):
            self.problem(
                "/model",
                f"{_shown(value)} is not a model reference: a model id has no spaces or control characters",
            )

    def config(self, value: Any) -> None:
        block = self.mapping("/config", value, CONFIG_FIELDS)
        if block is None:
            return
        if "max_output_tokens" in block:
            self.whole_number(
                "/config/max_output_tokens",
                block["max_output_tokens"],
                1,
                MAX_OUTPUT_TOKENS,
                "from 1 to 64,000",
            )
        for name in ("temperature", "top_p"):
            if name in block:
                self.number(f"/config/{name}", block[name])
        if "seed" in block:
            self.whole_number("/config/seed", block["seed"], 0, None, "of 0 or more")
        if "stop_sequences" in block:
            sequences = block["stop_sequences"]
            if not isinstance(sequences, list):
                self.problem("/config/stop_sequences", "Expected a list of strings")
            else:
                for index, item in enumerate(sequences):
                    self.text(f"/config/stop_sequences/{index}", item)
        if "reasoning" in block and block["reasoning"] not in EFFORTS:
            self.problem("/config/reasoning", f"Expected one of {', '.join(EFFORTS)}")

    def input(self, value: Any) -> None:
        block = self.mapping("/input", value, INPUT_FIELDS)
        if block is None:
            return
        if "schema" in block:
            schema = block["schema"]
            issues = check_schema(schema, "/input/schema", self.lines)
            self.problems.extend(issues)
            if not isinstance(schema, dict) or schema.get("type") != "object":
                self.problem("/input/schema", 'The input schema\'s root is "type": "object"')
            elif not issues:
                self.input_schema = schema
        if "default" in block:
            default = block["default"]
            if not isinstance(default, dict):
                self.problem("/input/default", "Expected a mapping of input fields and their default values")
            elif self.input_schema is not None:
                # "Required fields may be left for the input to supply."
                for entry in validate_instance(
                    default, self.input_schema, "/input/default", missing_at_root=True
                ):
                    self.problem(entry.pointer, entry.detail)

    def output(self, value: Any) -> None:
        block = self.mapping("/output", value, OUTPUT_FIELDS)
        if block is None:
            return
        written = block.get("format")
        if "format" in block and written not in OUTPUT_FORMATS:
            self.problem("/output/format", "Expected text or json")
            written = None
        has_schema, has_shape = "schema" in block, "shape" in block
        if has_schema:
            issues = check_schema(block["schema"], "/output/schema", self.lines)
            self.problems.extend(issues)
            self.output_schema_valid = not issues
            if written == "text":
                self.problem("/output/schema", "output.schema is not allowed with format text")
            elif "format" not in block:
                self.problem(
                    "/output/schema", "output.schema needs format: json; the format is text when left out"
                )
        if has_shape:
            if block["shape"] not in SHAPE_NAMES:
                self.problem("/output/shape", f"Expected one of {', '.join(SHAPE_NAMES)}")
            if has_schema:
                self.problem(
                    "/output/shape", "output.shape is not allowed beside output.schema: write one of them"
                )
            elif written == "text":
                self.problem(
                    "/output/shape", "output.shape is not allowed with format text: a shape's answer is JSON"
                )
        if written == "json" and not has_schema and not has_shape:
            self.problem("/output", "'schema' is required with format json, or name a shape")

    def tools(self, value: Any) -> None:
        if not isinstance(value, list):
            self.problem("/tools", "Expected a list of tools, each server/tool or server/*")
            return
        seen: set[str] = set()
        for index, item in enumerate(value):
            pointer = f"/tools/{index}"
            text = self.text(pointer, item)
            if text is None:
                continue
            if _tool_reference(text) is None:
                self.problem(pointer, f"{_shown(text)} is not a tool: {_TOOL_FORM}")
            elif text in seen:
                self.problem(pointer, f"{_shown(text)} is listed twice")
            seen.add(text)

    def ask(self, value: Any) -> None:
        block = self.mapping("/ask", value, ASK_FIELDS)
        if block is None:
            return
        if "to" in block:
            to = self.text("/ask/to", block["to"])
            if to is not None and not to.strip():
                self.problem("/ask/to", f"The party is empty: {_TO_EXAMPLE}")
            elif to is not None:
                self.problems.extend(
                    template_problems(
                        to, "/ask/to", TO_PLACE, input_schema=self.input_schema, lines=self.lines
                    )
                )
        else:
            self.problem("/ask", f"'to' is required: the party the run may ask, {_TO_EXAMPLE}")
        if "expires" in block:
            expiry = expires_problem(block["expires"])
            if expiry is not None:
                self.problem("/ask/expires", expiry)
        else:
            self.problem(
                "/ask", "'expires' is required: how long each question or approval waits, such as PT4H or P2D"
            )
        if "progress" in block and not isinstance(block["progress"], bool):
            self.problem("/ask/progress", "Expected true or false")

    def approve(self, value: Any) -> None:
        if "ask" not in self.front_matter:
            self.problem(
                "/approve",
                "'approve' needs 'ask': the party who approves and how long an approval waits come from it",
            )
        if not isinstance(value, list):
            self.problem(
                "/approve",
                "Expected a list of tools that wait for approval, each with tool and confirmation or preview",
            )
            return
        seen: set[str] = set()
        for index, item in enumerate(value):
            pointer = f"/approve/{index}"
            entry = self.mapping(pointer, item, APPROVE_FIELDS)
            if entry is None:
                continue
            tool = self.approved_tool(pointer, entry, seen)
            has_confirmation, has_preview = "confirmation" in entry, "preview" in entry
            if has_confirmation and has_preview:
                self.problem(pointer, "Write one of 'confirmation' and 'preview', not both")
            elif not has_confirmation and not has_preview:
                self.problem(
                    pointer,
                    "Write 'confirmation', the text the person approves, or 'preview', a tool that writes it",
                )
            if has_confirmation:
                self.confirmation(f"{pointer}/confirmation", entry["confirmation"])
            if has_preview:
                self.preview(f"{pointer}/preview", entry["preview"], tool)

    def approved_tool(self, pointer: str, entry: dict[str, Any], seen: set[str]) -> ToolReference | None:
        """The entry's ``tool``: one ``server/tool`` of ``tools``, listed once in ``approve``."""
        if "tool" not in entry:
            self.problem(pointer, "'tool' is required: the server/tool that waits for approval")
            return None
        text = self.text(f"{pointer}/tool", entry["tool"])
        if text is None:
            return None
        reference = self.one_tool(f"{pointer}/tool", text)
        if reference is None:
            return None
        if text in seen:
            self.problem(f"{pointer}/tool", f"{_shown(text)} is listed twice")
        seen.add(text)
        if not self.offers(reference):
            self.problem(
                f"{pointer}/tool",
                f"{_shown(text)} is not one of the function's tools: name it in tools, "
                f"or its server as {reference.server}/*",
            )
        return reference

    def one_tool(self, pointer: str, text: str) -> ToolReference | None:
        """``server/tool`` naming one tool; ``server/*`` and anything else is a problem."""
        reference = _tool_reference(text)
        if reference is None:
            self.problem(pointer, f"{_shown(text)} is not a tool: {_ONE_TOOL_FORM}")
            return None
        if reference.every_tool:
            self.problem(pointer, f"{_shown(text)} names every tool of a server: name one, server/tool")
            return None
        return reference

    def offers(self, reference: ToolReference) -> bool:
        """Whether ``tools`` names the tool, or covers it with ``server/*``."""
        tools = self.front_matter.get("tools")
        if not isinstance(tools, list):
            return False
        return str(reference) in tools or f"{reference.server}/{EVERY_TOOL}" in tools

    def confirmation(self, pointer: str, value: Any) -> None:
        text = self.text(pointer, value)
        if text is None:
            return
        if not text.strip():
            self.problem(pointer, "The confirmation is empty: write the text the person approves")
            return
        self.problems.extend(
            template_problems(text, pointer, CONFIRMATION_PLACE, input_schema=None, lines=self.lines)
        )

    def preview(self, pointer: str, value: Any, tool: ToolReference | None) -> None:
        text = self.text(pointer, value)
        if text is None:
            return
        reference = self.one_tool(pointer, text)
        if reference is None:
            return
        if tool is not None and reference.server != tool.server:
            self.problem(
                pointer,
                f"{_shown(text)} is not on the server {tool.server}: a preview is a tool of the same server "
                "as the tool it previews",
            )
        elif tool is not None and reference.tool == tool.tool:
            self.problem(
                pointer,
                f"{_shown(text)} cannot preview itself: the preview is called before the approval, "
                "so name another, read-only tool",
            )

    def template(self, body: str, first_line: int) -> None:
        if not body.strip():
            self.problems.add(
                first_line, "", "The template is required: write the prompt after the front matter"
            )
            return
        found = check_template(
            body,
            place=TEMPLATE_PLACE,
            input_schema=self.input_schema,
            first_line=first_line,
            refuse_structures=False,
            system_block=True,
        )
        for line, message in found:
            self.problems.add(line, "", message)
        if not found and not _renders_outside_system_block(body):
            self.problems.add(
                first_line, "", "The template renders no text outside the system block: write the message"
            )

    # -- the checked document --------------------------------------------------------------------

    def warnings(self) -> tuple[str, ...]:
        output = self.front_matter.get("output")
        if not isinstance(output, dict):
            return ()
        if "schema" in output and self.output_schema_valid:
            return tuple(capped_warnings(schema_warnings(output["schema"], "/output/schema", self.lines)))
        if "shape" in output:
            shape = cast(ShapeName, output["shape"])
            return tuple(capped_warnings(schema_warnings(shape_schema(shape), "/output/shape", self.lines)))
        return ()


def check_reasoning_document(source: str) -> ReasoningDocument:
    """Check a reasoning function's source; raise ``invalid_input`` listing every problem under ``/source``.

    Raises :class:`~parley.errors.Problem` as interaction documents do (``DocumentProblems``): each
    problem names its line and pointer, once, at most 20 in line order, then one line counting the rest.
    """
    problems = DocumentProblems()
    split, front_matter, lines = read_document(source, problems)

    checker = _Checker(front_matter, lines, problems)
    checker.check(split.body, split.body_first_line)
    problems.raise_if_any()
    return _document(front_matter, checker, split.body, split.body_first_line)


def _document(fm: dict[str, Any], checker: _Checker, body: str, body_first_line: int) -> ReasoningDocument:
    """The checked fields, read from a front matter that has no problems."""
    provider, _, model = str(fm["model"]).partition("/")
    config: dict[str, Any] = fm.get("config") or {}
    input_block: dict[str, Any] = fm.get("input") or {}
    output: dict[str, Any] = fm.get("output") or {}
    shape = cast(ShapeName | None, output.get("shape"))
    output_format: OutputFormat = output.get("format") or ("json" if shape is not None else "text")
    stop = config.get("stop_sequences")
    tools = [_tool_reference(str(item)) for item in fm.get("tools") or ()]
    return ReasoningDocument(
        model=ModelReference(provider, model),
        settings=Settings(
            max_output_tokens=int(config.get("max_output_tokens", DEFAULT_MAX_OUTPUT_TOKENS)),
            temperature=config.get("temperature"),
            top_p=config.get("top_p"),
            seed=int(config["seed"]) if "seed" in config else None,
            stop_sequences=tuple(stop) if stop is not None else None,
            reasoning=config.get("reasoning"),
        ),
        description=fm.get("description"),
        input_schema=checker.input_schema,
        input_default=input_block.get("default") or {},
        output_format=output_format,
        output_schema=output.get("schema"),
        output_shape=shape,
        provider_options=fm.get("provider_options") or {},
        tools=tuple(tool for tool in tools if tool is not None),
        template=body,
        template_first_line=body_first_line,
        front_matter=fm,
        warnings=checker.warnings(),
        ask=_ask(fm.get("ask")),
        approve=tuple(_approve_entry(entry) for entry in fm.get("approve") or ()),
    )


def _ask(block: dict[str, Any] | None) -> AskBlock | None:
    if block is None:
        return None
    return AskBlock(
        to=str(block["to"]),
        expires=parse_duration(str(block["expires"])),
        progress=bool(block.get("progress", False)),
    )


def _approve_entry(entry: dict[str, Any]) -> ApproveEntry:
    server, _, tool = str(entry["tool"]).partition("/")
    preview = entry.get("preview")
    return ApproveEntry(
        server=server,
        tool=tool,
        confirmation=entry.get("confirmation"),
        preview=str(preview).partition("/")[2] if preview is not None else None,
    )


def _tool_reference(text: str) -> ToolReference | None:
    server, slash, tool = text.partition("/")
    if not slash or SERVER_NAME.fullmatch(server) is None:
        return None
    if tool != EVERY_TOOL and TOOL_NAME.fullmatch(tool) is None:
        return None
    return ToolReference(server, tool)


def _renders_outside_system_block(body: str) -> bool:
    """Whether the template holds anything outside its system block that may render text.

    Only whitespace and comments are known to render nothing here; a tag that renders nothing for some
    input is found when a run renders it ("The template must render some text outside the block").
    """
    for node in compile_template(body).nodes:
        if isinstance(node, SystemNode | CommentNode):
            continue
        if isinstance(node, ContentNode) and not node.text.strip():
            continue
        return True
    return False


def _is_whole(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and value.is_integer())


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _shown(text: str) -> str:
    return repr(text if len(text) <= 60 else text[:60] + "…")


__all__ = [
    "MEDIA_TYPE",
    "ApproveEntry",
    "AskBlock",
    "ModelReference",
    "ReasoningDocument",
    "Settings",
    "ToolReference",
    "check_reasoning_document",
]
