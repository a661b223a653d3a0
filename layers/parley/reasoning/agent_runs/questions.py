"""Questions a run asks a person, and the answers it takes (``agent-runs.md``, "Questions:
``request_input``", and the question of "A tool that asks").

"The model calls ``request_input`` with: ``kind`` (``text``, ``choice`` or ``form``), ``prompt`` (1 to
2,000 characters), ``options`` (choice: 1 to 50 of ``{id, label, recommended?}``; ids of 1 to 64
characters, unique), ``multiple``, ``allow_custom``, ``allow_skip``, ``skip_label`` (choice) and
``questions`` (form: 2 to 8 of ``{id, kind: text or choice, prompt, options?, multiple?, allow_custom?,
required?}``; unique ids; ``required`` is ``true`` by default). A call that breaks a rule is not a
request: the model receives a tool error naming the rule, and may try again."

- :func:`request_input_spec` is the built-in tool offered to the model; :func:`check_question` checks a
  call's arguments (and a tool's ``_meta`` ``parley/interaction`` request, the same fields plus a
  ``continuation`` the caller checks) and gives the :class:`Question`, or the tool error's words.
- :meth:`Question.as_json` is the request's ``question`` as ``list_interactions`` shows it, and
  :func:`answer_schema` its ``answer_schema``: "as much of this as JSON Schema can; the rest is checked
  all the same", by :func:`answer_errors` ("Answers, checked when they are given": each broken rule is an
  entry of ``422 invalid_input`` with a pointer under ``/answer``).
- :func:`ask_question` is the loop's step for a call of ``request_input`` (the request opened, the run
  waits), :func:`open_question` opens a question's request (the model's, or a tool's), and
  :func:`question_settled` is the asked call's result once the run is taken up again; they reach the
  loop through ``asking.AskingLoop``. An approval's answer is in ``approvals``.

Apart from those steps, nothing here does any I/O. A skip is ``{"selected": [], "skipped": true}``;
``{"skipped": true}`` is taken as the same. "``recommended`` is a hint for a person's screen, never an
answer": it is shown, and never read as a choice.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal

from parley.documents.pointers import join_pointer
from parley.errors import ErrorEntry
from parley.models import ToolCall, ToolResult, ToolSpec
from parley.reasoning.agent_runs.requests import open_request, over_the_limit
from parley.reasoning.agent_runs.state import call_json

if TYPE_CHECKING:
    from parley.reasoning.agent_runs.asking import AskingLoop
    from parley.reasoning.agent_runs.requests import Asker

#: The built-in tool's name: "the model is offered the built-in tool ``request_input``".
REQUEST_INPUT: Final = "request_input"
#: Where a tool's result carries its request: "in ``_meta`` under ``parley/interaction``".
TOOL_REQUEST_KEY: Final = "parley/interaction"

QuestionKind = Literal["text", "choice", "form"]
FormQuestionKind = Literal["text", "choice"]

#: "``kind``: ``text``, ``choice`` or ``form``."
KINDS: Final[tuple[QuestionKind, ...]] = ("text", "choice", "form")
#: "``questions``: 2 to 8 of ``{id, kind: text or choice, …}``."
FORM_QUESTION_KINDS: Final[tuple[FormQuestionKind, ...]] = ("text", "choice")
#: "``prompt``: 1 to 2,000 characters."
PROMPT_MAX_CHARS: Final = 2000
#: "``options``: 1 to 50 of ``{id, label, recommended?}``."
OPTIONS_MAX: Final = 50
#: "ids of 1 to 64 characters, unique" (an option's, and a form question's).
ID_MAX_CHARS: Final = 64
#: The words of the skip button: not bounded by the page; a button's words are kept short.
SKIP_LABEL_MAX_CHARS: Final = 200
#: "``questions``: 2 to 8."
FORM_QUESTIONS_MIN: Final = 2
FORM_QUESTIONS_MAX: Final = 8
#: "**text**: a string, not empty or only whitespace, at most 8 KiB" (bytes of UTF-8); a choice's
#: ``custom`` is such a text too.
ANSWER_TEXT_MAX_BYTES: Final = 8 * 1024

#: The fields of a ``request_input`` call, in the page's order.
QUESTION_FIELDS: Final = (
    "kind",
    "prompt",
    "options",
    "multiple",
    "allow_custom",
    "allow_skip",
    "skip_label",
    "questions",
)
#: The fields that are a choice's only (refused on a text question and on a form).
CHOICE_FIELDS: Final = ("options", "multiple", "allow_custom", "allow_skip", "skip_label")
#: The fields of a form's question.
FORM_QUESTION_FIELDS: Final = ("id", "kind", "prompt", "options", "multiple", "allow_custom", "required")
#: The fields of an option.
OPTION_FIELDS: Final = ("id", "label", "recommended")
#: The members of a choice's answer, each optional.
CHOICE_ANSWER_MEMBERS: Final = ("selected", "custom", "skipped")

#: The most problems one tool error lists; the rest are counted.
MAX_LISTED_PROBLEMS: Final = 10


@dataclass(frozen=True)
class Option:
    """One option of a choice: its ``id`` (what an answer selects), the ``label`` the person reads, and
    whether the model ``recommended`` it (a hint for the screen, never an answer)."""

    id: str
    label: str
    recommended: bool = False

    def as_json(self) -> dict[str, Any]:
        shown: dict[str, Any] = {"id": self.id, "label": self.label}
        if self.recommended:
            shown["recommended"] = True
        return shown

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Option:
        return cls(str(data["id"]), str(data["label"]), bool(data.get("recommended", False)))


@dataclass(frozen=True)
class FormQuestion:
    """One question of a form: a ``text`` or a ``choice`` (without a skip: a question that may be left
    out is one that is not ``required``)."""

    id: str
    kind: FormQuestionKind
    prompt: str
    options: tuple[Option, ...] = ()
    multiple: bool = False
    allow_custom: bool = False
    required: bool = True

    def as_json(self) -> dict[str, Any]:
        shown: dict[str, Any] = {"id": self.id, "kind": self.kind, "prompt": self.prompt}
        if self.kind == "choice":
            shown["options"] = [option.as_json() for option in self.options]
            shown["multiple"] = self.multiple
            shown["allow_custom"] = self.allow_custom
        shown["required"] = self.required
        return shown

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> FormQuestion:
        kind: FormQuestionKind = "choice" if data["kind"] == "choice" else "text"
        return cls(
            id=str(data["id"]),
            kind=kind,
            prompt=str(data["prompt"]),
            options=tuple(Option.from_json(option) for option in data.get("options") or ()),
            multiple=bool(data.get("multiple", False)),
            allow_custom=bool(data.get("allow_custom", False)),
            required=bool(data.get("required", True)),
        )


@dataclass(frozen=True)
class Question:
    """A checked question: what ``request_input`` (or a tool's ``parley/interaction``) asked."""

    kind: QuestionKind
    prompt: str
    options: tuple[Option, ...] = ()
    multiple: bool = False
    allow_custom: bool = False
    allow_skip: bool = False
    skip_label: str | None = None
    questions: tuple[FormQuestion, ...] = ()

    def as_json(self) -> dict[str, Any]:
        """The request's ``question`` as ``list_interactions`` shows it: "the kind and what it offers:
        options, ``multiple``, ``allow_custom``, ``allow_skip``, ``skip_label``, the questions of a form"
        (with the prompt). A choice shows ``skip_label`` as ``null`` when it has none."""
        shown: dict[str, Any] = {"kind": self.kind, "prompt": self.prompt}
        if self.kind == "choice":
            shown["options"] = [option.as_json() for option in self.options]
            shown["multiple"] = self.multiple
            shown["allow_custom"] = self.allow_custom
            shown["allow_skip"] = self.allow_skip
            shown["skip_label"] = self.skip_label
        elif self.kind == "form":
            shown["questions"] = [question.as_json() for question in self.questions]
        return shown

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Question:
        """A question read back from :meth:`as_json` (as kept with the request)."""
        kind = str(data["kind"])
        skip_label = data.get("skip_label")
        return cls(
            kind="choice" if kind == "choice" else "form" if kind == "form" else "text",
            prompt=str(data["prompt"]),
            options=tuple(Option.from_json(option) for option in data.get("options") or ()),
            multiple=bool(data.get("multiple", False)),
            allow_custom=bool(data.get("allow_custom", False)),
            allow_skip=bool(data.get("allow_skip", False)),
            skip_label=None if skip_label is None else str(skip_label),
            questions=tuple(FormQuestion.from_json(question) for question in data.get("questions") or ()),
        )


# --- the tool offered to the model -----------------------------------------------------------------

_DESCRIPTION: Final = (
    "Ask the person you work for a question, and wait for their answer. Ask only what you cannot find "
    "out yourself, with your other tools or from what you were given: a preference, a decision, a fact "
    "only they know. The run waits (for days if need be) until they answer; their answer comes back as "
    "this call's result. If nobody answers in time, the result says so: go on with what you have.\n"
    "Kinds:\n"
    "- text: they write an answer.\n"
    "- choice: they pick among options (1 to 50, each {id, label, recommended?}); multiple lets them pick "
    "several, allow_custom lets them write their own, allow_skip lets them skip (skip_label: the words "
    "of that button). recommended marks an option you suggest; it is only a hint, never their answer.\n"
    "- form: 2 to 8 questions (text or choice) asked at once; required is true by default.\n"
    "Ask one clear thing at a time; a run asks at most 20 times."
)


def _option_schema() -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "id": {
                "type": "string",
                "minLength": 1,
                "maxLength": ID_MAX_CHARS,
                "description": "What the answer names when this option is chosen; unique in the question.",
            },
            "label": {"type": "string", "minLength": 1, "description": "The words the person reads."},
            "recommended": {
                "type": "boolean",
                "description": "Whether you suggest this option: a hint on their screen, never an answer.",
            },
        },
        "required": ["id", "label"],
        "additionalProperties": False,
    }


def _prompt_schema(words: str) -> dict[str, Any]:
    return {"type": "string", "minLength": 1, "maxLength": PROMPT_MAX_CHARS, "description": words}


def _options_schema(words: str) -> dict[str, Any]:
    return {
        "type": "array",
        "minItems": 1,
        "maxItems": OPTIONS_MAX,
        "items": _option_schema(),
        "description": words,
    }


def request_input_schema() -> dict[str, Any]:
    """The input schema of ``request_input``: the page's table as a plain object schema (draft 2020-12,
    no ``$ref``). What it cannot say (which fields go with which kind, unique ids) :func:`check_question`
    checks all the same."""
    return {
        "type": "object",
        "properties": {
            "kind": {
                "type": "string",
                "enum": list(KINDS),
                "description": "text: a written answer; choice: options to pick; form: several questions.",
            },
            "prompt": _prompt_schema("The question, as the person reads it."),
            "options": _options_schema("choice only: the options, 1 to 50."),
            "multiple": {
                "type": "boolean",
                "description": "choice only: whether several options may be chosen; false by default.",
            },
            "allow_custom": {
                "type": "boolean",
                "description": "choice only: whether the person may write their own; false by default.",
            },
            "allow_skip": {
                "type": "boolean",
                "description": "choice only: whether the person may skip the question; false by default.",
            },
            "skip_label": {
                "type": "string",
                "minLength": 1,
                "maxLength": SKIP_LABEL_MAX_CHARS,
                "description": "choice with allow_skip only: the words of the button that skips.",
            },
            "questions": {
                "type": "array",
                "minItems": FORM_QUESTIONS_MIN,
                "maxItems": FORM_QUESTIONS_MAX,
                "description": "form only: the questions, 2 to 8, with unique ids.",
                "items": {
                    "type": "object",
                    "properties": {
                        "id": {
                            "type": "string",
                            "minLength": 1,
                            "maxLength": ID_MAX_CHARS,
                            "description": "Names this question's answer; unique in the form.",
                        },
                        "kind": {"type": "string", "enum": list(FORM_QUESTION_KINDS)},
                        "prompt": _prompt_schema("The question, as the person reads it."),
                        "options": _options_schema("choice only: the options, 1 to 50."),
                        "multiple": {"type": "boolean", "description": "choice only; false by default."},
                        "allow_custom": {"type": "boolean", "description": "choice only; false by default."},
                        "required": {
                            "type": "boolean",
                            "description": "Whether it must be answered; true by default.",
                        },
                    },
                    "required": ["id", "kind", "prompt"],
                    "additionalProperties": False,
                },
            },
        },
        "required": ["kind", "prompt"],
        "additionalProperties": False,
    }


def request_input_spec() -> ToolSpec:
    """The built-in tool ``request_input``, as the model is offered it."""
    return ToolSpec(REQUEST_INPUT, _DESCRIPTION, request_input_schema())


# --- checking a call ---------------------------------------------------------------------------------


def _shown(value: Any, limit: int = 60) -> str:
    """A value as JSON for a message, cut to ``limit`` characters."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _field_name(key: str) -> str:
    return key if len(key) <= ID_MAX_CHARS else key[: ID_MAX_CHARS - 1] + "…"


def _words_list(items: Sequence[str]) -> str:
    """``a, b and c``."""
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


class _CallChecker:
    """Collects the rules a call breaks, each as ``field: what is wrong``."""

    def __init__(self) -> None:
        self.problems: list[str] = []

    def problem(self, where: str, words: str) -> None:
        self.problems.append(f"{where}: {words}")

    def unknown_keys(self, value: Mapping[str, Any], where: str, allowed: Iterable[str], words: str) -> None:
        known = set(allowed)
        for key in value:
            if key not in known:
                self.problem(f"{where}{_field_name(str(key))}", words)

    def boolean(self, value: Mapping[str, Any], key: str, where: str) -> bool:
        found = value.get(key, False)
        if not isinstance(found, bool):
            self.problem(f"{where}{key}", f"expected true or false, not {_shown(found)}.")
            return False
        return found

    def prompt(self, value: Mapping[str, Any], where: str) -> str:
        if "prompt" not in value:
            self.problem(f"{where}prompt", "required: the question the person reads, 1 to 2,000 characters.")
            return ""
        prompt = value["prompt"]
        if not isinstance(prompt, str):
            self.problem(f"{where}prompt", f"expected text of 1 to 2,000 characters, not {_shown(prompt)}.")
            return ""
        if not 1 <= len(prompt) <= PROMPT_MAX_CHARS:
            self.problem(
                f"{where}prompt", f"a prompt is 1 to 2,000 characters; this one has {len(prompt):,}."
            )
        return prompt

    def identifier(self, value: Mapping[str, Any], where: str, noun: str, seen: set[str]) -> str:
        """An option's or a form question's ``id`` (``noun``: "option", "question"): 1 to 64 characters,
        unique among ``seen``."""
        what = f"an {noun}" if noun[0] in "aeiou" else f"a {noun}"
        if "id" not in value:
            self.problem(f"{where}id", f"required: {what}'s id, 1 to 64 characters.")
            return ""
        found = value["id"]
        if not isinstance(found, str):
            self.problem(f"{where}id", f"{what}'s id is text of 1 to 64 characters, not {_shown(found)}.")
            return ""
        if not 1 <= len(found) <= ID_MAX_CHARS:
            self.problem(f"{where}id", f"{what}'s id is 1 to 64 characters; this one has {len(found):,}.")
        elif found in seen:
            self.problem(f"{where}id", f"{_shown(found)} is the id of an earlier {noun}; ids are unique.")
        seen.add(found)
        return found

    def options(self, value: Mapping[str, Any], where: str) -> tuple[Option, ...]:
        if "options" not in value:
            self.problem(f"{where}options", "required: a choice offers 1 to 50 options, each {id, label}.")
            return ()
        found = value["options"]
        if not isinstance(found, list):
            self.problem(
                f"{where}options",
                f"expected a list of 1 to 50 options, each {{id, label, recommended?}}, not {_shown(found)}.",
            )
            return ()
        if not 1 <= len(found) <= OPTIONS_MAX:
            self.problem(f"{where}options", f"a choice offers 1 to 50 options; this one has {len(found):,}.")
        seen: set[str] = set()
        options: list[Option] = []
        for index, entry in enumerate(found):
            at = f"{where}options[{index}]"
            if not isinstance(entry, Mapping):
                self.problem(at, f"expected an option {{id, label, recommended?}}, not {_shown(entry)}.")
                continue
            self.unknown_keys(
                entry,
                f"{at}.",
                OPTION_FIELDS,
                "not a field of an option; an option has id, label and recommended.",
            )
            option_id = self.identifier(entry, f"{at}.", "option", seen)
            label = self.label(entry, at)
            recommended = self.boolean(entry, "recommended", f"{at}.")
            options.append(Option(option_id, label, recommended))
        return tuple(options)

    def label(self, entry: Mapping[str, Any], at: str) -> str:
        if "label" not in entry:
            self.problem(f"{at}.label", "required: the words the person reads for this option.")
            return ""
        label = entry["label"]
        if not isinstance(label, str) or not label:
            self.problem(
                f"{at}.label", f"expected the option's words as text that is not empty, not {_shown(label)}."
            )
            return ""
        return label

    def not_for(self, value: Mapping[str, Any], where: str, keys: Iterable[str], words: str) -> None:
        for key in keys:
            if key in value:
                self.problem(f"{where}{key}", words)

    def skip(self, value: Mapping[str, Any]) -> tuple[bool, str | None]:
        allow_skip = self.boolean(value, "allow_skip", "")
        if "skip_label" not in value:
            return allow_skip, None
        label = value["skip_label"]
        if value.get("allow_skip") is not True:
            self.problem("skip_label", "only with allow_skip true: it is the words of the button that skips.")
            return allow_skip, None
        if not isinstance(label, str):
            self.problem("skip_label", f"expected text of 1 to 200 characters, not {_shown(label)}.")
            return allow_skip, None
        if not 1 <= len(label) <= SKIP_LABEL_MAX_CHARS:
            self.problem(
                "skip_label",
                f"the words of the skip button are 1 to 200 characters; this one has {len(label):,}.",
            )
        return allow_skip, label

    def form_questions(self, value: Mapping[str, Any]) -> tuple[FormQuestion, ...]:
        if "questions" not in value:
            self.problem("questions", "required: a form asks 2 to 8 questions, each {id, kind, prompt}.")
            return ()
        found = value["questions"]
        if not isinstance(found, list):
            self.problem("questions", f"expected a list of 2 to 8 questions, not {_shown(found)}.")
            return ()
        if not FORM_QUESTIONS_MIN <= len(found) <= FORM_QUESTIONS_MAX:
            self.problem("questions", f"a form asks 2 to 8 questions; this one has {len(found):,}.")
        seen: set[str] = set()
        questions: list[FormQuestion] = []
        for index, entry in enumerate(found):
            at = f"questions[{index}]"
            if not isinstance(entry, Mapping):
                self.problem(at, f"expected a question {{id, kind, prompt, …}}, not {_shown(entry)}.")
                continue
            question = self.form_question(entry, at, seen)
            if question is not None:
                questions.append(question)
        return tuple(questions)

    def form_question(self, entry: Mapping[str, Any], at: str, seen: set[str]) -> FormQuestion | None:
        self.unknown_keys(
            entry,
            f"{at}.",
            FORM_QUESTION_FIELDS,
            "not a field of a form's question; a question has "
            f"{_words_list(list(FORM_QUESTION_FIELDS))} (a form's choice questions are not skipped: "
            "one that may be left out is not required).",
        )
        question_id = self.identifier(entry, f"{at}.", "question", seen)
        kind = entry.get("kind")
        if "kind" not in entry:
            self.problem(f"{at}.kind", "required: a form's question is text or choice.")
        elif kind not in FORM_QUESTION_KINDS:
            self.problem(
                f"{at}.kind", f"{_shown(kind)} is not a kind of a form's question: it is text or choice."
            )
        prompt = self.prompt(entry, f"{at}.")
        required = self.boolean(entry, "required", f"{at}.") if "required" in entry else True
        if kind == "text":
            self.not_for(
                entry,
                f"{at}.",
                ("options", "multiple", "allow_custom"),
                "not for a text question; options, multiple and allow_custom are for a choice.",
            )
            return FormQuestion(question_id, "text", prompt, required=required)
        if kind == "choice":
            options = self.options(entry, f"{at}.")
            multiple = self.boolean(entry, "multiple", f"{at}.")
            allow_custom = self.boolean(entry, "allow_custom", f"{at}.")
            return FormQuestion(question_id, "choice", prompt, options, multiple, allow_custom, required)
        return None


def _call_message(name: str, problems: Sequence[str]) -> str:
    lines = [f"{name}: {problem}" for problem in problems[:MAX_LISTED_PROBLEMS]]
    rest = len(problems) - MAX_LISTED_PROBLEMS
    if rest > 0:
        lines.append(f"{name}: and {rest:,} more {'rule' if rest == 1 else 'rules'} broken.")
    return "\n".join(lines)


def check_question(
    arguments: Mapping[str, Any] | None, *, allow_continuation: bool = False
) -> Question | str:
    """The :class:`Question` a ``request_input`` call asks, or the tool error the model receives: one
    line per rule broken (at most 10, then a count), each naming the field, such as ``request_input:
    options: a choice offers 1 to 50 options; this one has 0.``

    With ``allow_continuation`` the arguments are a tool's ``_meta`` ``parley/interaction`` request: its
    ``continuation`` is accepted and left to the caller, and the lines name ``parley/interaction``.
    Without it, ``continuation`` is an unknown field as any other.
    """
    name = TOOL_REQUEST_KEY if allow_continuation else REQUEST_INPUT
    if not isinstance(arguments, Mapping):
        return (
            f"{name}: the arguments must be a JSON object, such as "
            '{"kind": "text", "prompt": "Which city do you leave from?"}.'
        )
    checker = _CallChecker()
    allowed = (*QUESTION_FIELDS, "continuation") if allow_continuation else QUESTION_FIELDS
    checker.unknown_keys(
        arguments, "", allowed, f"not a field of {name}; its fields are {_words_list(list(allowed))}."
    )
    kind = arguments.get("kind")
    if "kind" not in arguments:
        checker.problem("kind", "required: a question is text, choice or form.")
    elif kind not in KINDS:
        checker.problem("kind", f"{_shown(kind)} is not a kind; a question is text, choice or form.")
    prompt = checker.prompt(arguments, "")
    question: Question | None = None
    if kind == "text":
        checker.not_for(
            arguments,
            "",
            (*CHOICE_FIELDS, "questions"),
            "not for a text question; options, multiple, allow_custom, allow_skip and skip_label are for "
            "a choice, questions for a form.",
        )
        question = Question("text", prompt)
    elif kind == "choice":
        checker.not_for(arguments, "", ("questions",), "only for a form; a choice has options.")
        options = checker.options(arguments, "")
        multiple = checker.boolean(arguments, "multiple", "")
        allow_custom = checker.boolean(arguments, "allow_custom", "")
        allow_skip, skip_label = checker.skip(arguments)
        question = Question("choice", prompt, options, multiple, allow_custom, allow_skip, skip_label)
    elif kind == "form":
        checker.not_for(
            arguments,
            "",
            CHOICE_FIELDS,
            "not for a form; each of its questions has its own options, multiple and allow_custom.",
        )
        question = Question("form", prompt, questions=checker.form_questions(arguments))
    if checker.problems or question is None:
        return _call_message(name, checker.problems)
    return question


# --- the answer schema -------------------------------------------------------------------------------


def _text_answer_schema() -> dict[str, Any]:
    return {"type": "string", "minLength": 1, "maxLength": ANSWER_TEXT_MAX_BYTES, "pattern": "\\S"}


def _choice_answer_schema(
    options: Sequence[Option], multiple: bool, allow_custom: bool, allow_skip: bool
) -> dict[str, Any]:
    selected: dict[str, Any] = {
        "type": "array",
        "items": {"type": "string", "enum": [option.id for option in options]},
        "uniqueItems": True,
    }
    if not multiple:
        selected["maxItems"] = 1
    properties: dict[str, Any] = {"selected": selected}
    if allow_custom:
        properties["custom"] = _text_answer_schema()
    if allow_skip:
        properties["skipped"] = {"const": True}
    return {"type": "object", "properties": properties, "additionalProperties": False, "minProperties": 1}


def _form_question_schema(question: FormQuestion) -> dict[str, Any]:
    if question.kind == "choice":
        return _choice_answer_schema(question.options, question.multiple, question.allow_custom, False)
    return _text_answer_schema()


def answer_schema(question: Question) -> dict[str, Any]:
    """The request's ``answer_schema``: "as much of this as JSON Schema can" (draft 2020-12). What it
    leaves out (8 KiB counted in bytes, an answer with nothing in it, a single choice's ``custom``
    beside ``selected``, a skip beside a choice) :func:`answer_errors` checks all the same."""
    if question.kind == "choice":
        return _choice_answer_schema(
            question.options, question.multiple, question.allow_custom, question.allow_skip
        )
    if question.kind == "form":
        answers: dict[str, Any] = {
            "type": "object",
            "properties": {each.id: _form_question_schema(each) for each in question.questions},
            "additionalProperties": False,
        }
        required = [each.id for each in question.questions if each.required]
        if required:
            answers["required"] = required
        return {
            "type": "object",
            "properties": {"answers": answers},
            "required": ["answers"],
            "additionalProperties": False,
        }
    return _text_answer_schema()


# --- checking an answer ------------------------------------------------------------------------------


def _quoted_ids(ids: Sequence[str], limit: int = 10) -> str:
    shown = [_shown(each, 70) for each in ids[:limit]]
    if len(ids) > limit:
        shown.append(f"{len(ids) - limit:,} more")
    return _words_list(shown)


def _text_errors(value: Any, pointer: str, what: str) -> list[ErrorEntry]:
    """A text answer (``what``: "An answer", "Your own answer"): "a string, not empty or only whitespace,
    at most 8 KiB"."""
    if not isinstance(value, str):
        return [ErrorEntry(pointer, f"{what} is text (a string), not {_shown(value)}.")]
    if not value.strip():
        return [ErrorEntry(pointer, f"{what} is text with something in it, not empty or only whitespace.")]
    size = len(value.encode("utf-8", "surrogatepass"))
    if size > ANSWER_TEXT_MAX_BYTES:
        return [
            ErrorEntry(
                pointer, f"{what} is at most 8 KiB (8,192 bytes of UTF-8); this one is {size:,} bytes."
            )
        ]
    return []


def _choice_shape(multiple: bool, allow_custom: bool, allow_skip: bool) -> str:
    members = ['"selected": [option ids]' if multiple else '"selected": [one option id]']
    if allow_custom:
        members.append('"custom": your own answer')
    if allow_skip:
        members.append('"skipped": true')
    return "{" + ", ".join(members) + "}"


def _selected_errors(found: Any, pointer: str, options: Sequence[Option], multiple: bool) -> list[ErrorEntry]:
    if not isinstance(found, list):
        return [ErrorEntry(pointer, f"selected is a list of option ids, not {_shown(found)}.")]
    ids = [option.id for option in options]
    known = set(ids)
    errors: list[ErrorEntry] = []
    chosen: set[str] = set()
    for index, item in enumerate(found):
        at = join_pointer(pointer, index)
        if not isinstance(item, str):
            errors.append(ErrorEntry(at, f"An option is chosen by its id (text), not {_shown(item)}."))
        elif item not in known:
            errors.append(
                ErrorEntry(
                    at,
                    f"{_shown(item)} is not an option of this question; its options are {_quoted_ids(ids)}.",
                )
            )
        elif item in chosen:
            errors.append(
                ErrorEntry(at, f"{_shown(item)} is chosen twice; each option is chosen at most once.")
            )
        elif not multiple and chosen:
            errors.append(ErrorEntry(at, "This is a single choice: at most one option is chosen."))
        if isinstance(item, str):
            chosen.add(item)
    return errors


def _choice_errors(
    answer: Any,
    pointer: str,
    options: Sequence[Option],
    multiple: bool,
    allow_custom: bool,
    allow_skip: bool,
) -> list[ErrorEntry]:
    """A choice's answer: "``{"selected": [ids], "custom": text, "skipped": true}``, each member
    optional", with every rule of "Answers, checked when they are given"."""
    shape = _choice_shape(multiple, allow_custom, allow_skip)
    if not isinstance(answer, Mapping):
        return [ErrorEntry(pointer, f"A choice is answered with an object {shape}, not {_shown(answer)}.")]
    errors: list[ErrorEntry] = []
    for key in answer:
        if key not in CHOICE_ANSWER_MEMBERS:
            errors.append(
                ErrorEntry(
                    join_pointer(pointer, str(key)),
                    f"Not a member of a choice's answer; it holds {shape}, each optional.",
                )
            )
    selected = answer.get("selected", [])
    if "selected" in answer:
        errors.extend(_selected_errors(selected, join_pointer(pointer, "selected"), options, multiple))
    chose = not isinstance(selected, list) or bool(selected)
    if "custom" in answer:
        at = join_pointer(pointer, "custom")
        if not allow_custom:
            errors.append(
                ErrorEntry(
                    at,
                    "This question takes no answer of one's own (allow_custom is false): choose an option.",
                )
            )
        else:
            errors.extend(_text_errors(answer["custom"], at, "Your own answer (custom)"))
            if not multiple and chose:
                errors.append(
                    ErrorEntry(
                        at,
                        "This is a single choice: it takes either one option (selected) or an answer of "
                        "one's own (custom), not both.",
                    )
                )
    if "skipped" in answer:
        at = join_pointer(pointer, "skipped")
        if not allow_skip:
            errors.append(ErrorEntry(at, "This question may not be skipped (allow_skip is false)."))
        elif answer["skipped"] is not True:
            errors.append(ErrorEntry(at, f"skipped is true, or left out; not {_shown(answer['skipped'])}."))
        elif chose or "custom" in answer:
            errors.append(
                ErrorEntry(
                    at,
                    'A skip chooses nothing and writes nothing: it is {"selected": [], "skipped": true}.',
                )
            )
    if not chose and "custom" not in answer and "skipped" not in answer:
        errors.append(
            ErrorEntry(pointer, f"This answer has nothing in it; a choice is answered with {shape}.")
        )
    return errors


def _form_errors(answer: Any, pointer: str, questions: Sequence[FormQuestion]) -> list[ErrorEntry]:
    """A form's answer: "``{"answers": {question_id: answer}}``, each answer checked as its question's
    kind; every required question answered; no unknown question id"."""
    ids = [question.id for question in questions]
    if not isinstance(answer, Mapping):
        return [
            ErrorEntry(
                pointer,
                'A form is answered with an object {"answers": {question id: answer}}, '
                f"not {_shown(answer)}.",
            )
        ]
    errors: list[ErrorEntry] = []
    for key in answer:
        if key != "answers":
            errors.append(
                ErrorEntry(
                    join_pointer(pointer, str(key)),
                    'Not a member of a form\'s answer: it holds only "answers", {question id: answer}.',
                )
            )
    at = join_pointer(pointer, "answers")
    if "answers" not in answer:
        errors.append(ErrorEntry(at, f"Missing: the answers, by question id ({_quoted_ids(ids)})."))
        return errors
    answers = answer["answers"]
    if not isinstance(answers, Mapping):
        errors.append(ErrorEntry(at, f"answers is an object {{question id: answer}}, not {_shown(answers)}."))
        return errors
    by_id = {question.id: question for question in questions}
    for key in answers:
        if key not in by_id:
            errors.append(
                ErrorEntry(
                    join_pointer(at, str(key)),
                    f"Not a question of this form; its questions are {_quoted_ids(ids)}.",
                )
            )
    for question in questions:
        place = join_pointer(at, question.id)
        if question.id not in answers:
            if question.required:
                errors.append(ErrorEntry(place, "This question is required: answer it."))
            continue
        value = answers[question.id]
        if question.kind == "choice":
            errors.extend(
                _choice_errors(
                    value, place, question.options, question.multiple, question.allow_custom, False
                )
            )
        else:
            errors.extend(_text_errors(value, place, "An answer"))
    return errors


def answer_errors(question: Question, answer: Any, pointer: str = "/answer") -> list[ErrorEntry]:
    """Every rule the ``answer`` to ``question`` breaks, each with the pointer of the offending part (under
    ``pointer``) and what is accepted; empty when the answer is valid."""
    if question.kind == "choice":
        return _choice_errors(
            answer, pointer, question.options, question.multiple, question.allow_custom, question.allow_skip
        )
    if question.kind == "form":
        return _form_errors(answer, pointer, question.questions)
    return _text_errors(answer, pointer, "An answer")


# --- the steps that ask --------------------------------------------------------------------------------


def ask_question(loop: AskingLoop, asker: Asker, call: ToolCall) -> ToolResult:
    """``request_input``: a call that breaks a rule is a tool error; a valid one is a request (the run
    waits: ``RunWaits``). Not one of the run's 25 calls."""
    question = check_question(call.arguments)
    if isinstance(question, str):
        return ToolResult(call.id, call.name, question, True)
    refused = over_the_limit(asker, call)
    if refused is not None:
        return refused
    pending = {"kind": "question", "call": call_json(call), "question": question.as_json()}
    return open_question(loop, asker, call, question, pending, {})


def open_question(
    loop: AskingLoop,
    asker: Asker,
    call: ToolCall,
    question: Question,
    pending: dict[str, Any],
    more: dict[str, Any],
) -> ToolResult:
    """Open the request of ``question`` (``input_requested``, with ``more`` in its data)."""
    from parley.runs import events

    return open_request(
        loop,
        asker,
        call,
        pending,
        asked={"question": question.as_json()},
        message=question.prompt,
        answer_schema=answer_schema(question),
        event_type=events.INPUT_REQUESTED,
        event_data={"kind": question.kind, "prompt": question.prompt, "model_call_id": call.id, **more},
    )


def response_meta(pending: dict[str, Any], answer: Any) -> dict[str, Any]:
    """The person's answer as every later call of the segment carries it in ``_meta``."""
    return {
        "interaction_id": pending["interaction_id"],
        "prompt": pending["question"]["prompt"],
        "kind": pending["question"]["kind"],
        "answer": answer,
    }


def question_settled(
    loop: AskingLoop, call: ToolCall, pending: dict[str, Any], answered: bool, answer: Any, expires_at: str
) -> ToolResult:
    """The result of ``request_input`` once the run is taken up: the answer, or that nobody answered."""
    if not answered:
        prompt = pending["question"]["prompt"][:200]
        words = (
            f"Nobody answered the question ({prompt!r}) before it expired at {expires_at}. Go on "
            "without the answer."
        )
        return ToolResult(call.id, call.name, words)
    response = response_meta(pending, answer)
    loop.response_meta = response
    shown = {"interaction_id": response["interaction_id"], "prompt": response["prompt"], "answer": answer}
    return ToolResult(call.id, call.name, json.dumps(shown, ensure_ascii=False))
