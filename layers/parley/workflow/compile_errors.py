"""Errors in a compiled machine (``workflow-format.md``, "Errors, retries and timeouts"): the error a
Catch takes as a workflow error, a ``catch``'s test of it, a ``retry``'s decision and delay, and the
error a ``raise`` raises.

- Every workflow error travels under :data:`~parley.workflow.engine.ERROR_NAME` with the error as JSON
  for its cause; Step Functions' own errors are read as the page says (:func:`caught_error`):
  ``States.Timeout`` is ``timeout`` (408), ``States.QueryEvaluationError`` is ``expression`` (400), any
  other ``runtime`` (500); the error's ``instance`` is the task whose state failed when Step Functions'
  cause names the state, else the task that caught it.
- A ``catch`` takes an error when every field of ``errors.with`` equals the error's (types compared as
  :func:`~parley.workflow.errors.canonical_type` reads them), ``when`` holds and ``exceptWhen`` does not
  (:func:`takes_text`).
- Asking again is a decision: an ``unanswered`` or ``cancelled`` error is retried only by a catch whose
  ``errors.with.type`` names that type (:func:`retry_text`).
- A retry's delay: ``delay`` × 1 (``constant``), × the retry's number (``linear``) or × 2^(number − 1)
  (``exponential``), plus a jitter between ``jitter.from`` and ``jitter.to``; in whole seconds for the
  Wait (rounded up).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from parley.workflow import engine
from parley.workflow.compile_expressions import (
    Place,
    condition_text,
    duration_ms,
    literal,
    mapping,
    value_text,
)
from parley.workflow.errors import (
    FORMER_SPEC_ERRORS,
    PROBLEMS,
    SHORT_TYPES,
    SPEC_ERRORS,
    canonical_type,
    spec_type,
)
from parley.workflow.expressions import expression_body

#: The errors a retry runs the ``try`` again for only when the catch names their type.
ASKING_AGAIN: Final = (PROBLEMS + "unanswered", PROBLEMS + "cancelled")
#: The fields of ``errors.with`` (and of an error).
ERROR_FIELDS: Final = ("type", "status", "instance", "title", "detail", "kind", "because")
#: Lambda's own failures, retried by the engine (the entry is idempotent).
LAMBDA_ERRORS: Final = (
    "Lambda.ServiceException",
    "Lambda.AWSLambdaException",
    "Lambda.SdkClientException",
    "Lambda.TooManyRequestsException",
)
_STEP_FUNCTIONS_ERRORS: Final = (
    (engine.TIMEOUT_ERROR, "timeout", 408),
    (engine.EXPRESSION_ERROR, "expression", 400),
)


def caught_error(fallback_instance: str, cut_names: Mapping[str, str]) -> str:
    """JSONata text, in a Catch, of the error ``$states.errorOutput`` carries, as a workflow error
    (``{type, status, instance, …}``). ``cut_names`` gives the reference of each state whose name was
    cut (the others are read from the name)."""
    sorts = "".join(
        f'$e.Error = {literal(name)} ? {{"type": {literal(spec_type(short))}, "status": {status}}} : '
        for name, short, status in _STEP_FUNCTIONS_ERRORS
    )
    kind = sorts + f'{{"type": {literal(spec_type("runtime"))}, "status": 500}}'
    named = "$match($e.Cause, /executing the state '([^']+)'/)[0].groups[0]"
    if cut_names:
        reference = f"($lookup({literal(dict(cut_names))}, $n) ? $lookup({literal(dict(cut_names))}, $n) : "
        reference += '$substringBefore($n, "#"))'
    else:
        reference = '$substringBefore($n, "#")'
    instance = f"($n := {named}; $n ? {reference} : {literal(fallback_instance)})"
    own = f'$merge([{kind}, {{"instance": {instance}, "title": $e.Error, "detail": $e.Cause}}])'
    ours = f'$e.Error = {literal(engine.ERROR_NAME)} and $substring($e.Cause, 0, 1) = "{{"'
    return f"($e := $states.errorOutput; {ours} ? $parse($e.Cause) : {own})"


def canonical_type_text(text: str) -> str:
    """JSONata text giving the type the JSONata ``text`` gives, as errors are compared (a short name as
    its full type, the former address as the current one)."""
    shorts = literal(list(SHORT_TYPES))
    former = literal(FORMER_SPEC_ERRORS)
    return (
        f"($t := {text}; $t in {shorts} ? {literal(SPEC_ERRORS)} & $t : "
        f"$substring($t, 0, {len(FORMER_SPEC_ERRORS)}) = {former} ? "
        f"{literal(SPEC_ERRORS)} & $substring($t, {len(FORMER_SPEC_ERRORS)}) : $t)"
    )


def takes_text(catch: Mapping[str, Any], error: str, place: Place) -> str | None:
    """JSONata text: whether the ``catch`` takes the error in the variable ``error`` (``$error_…``);
    ``None`` when it takes every error."""
    tests: list[str] = []
    with_ = _errors_with(catch)
    for name in ERROR_FIELDS:
        if name not in with_:
            continue
        expected = with_[name]
        if name == "type":
            wanted = (
                literal(canonical_type(expected))
                if isinstance(expected, str) and expression_body(expected) is None
                else canonical_type_text(value_text(expected, place))
            )
        else:
            wanted = value_text(expected, place)
        tests.append(f"{error}.{name} = {wanted}")
    if "when" in catch:
        tests.append(condition_text(catch["when"], place))
    if "exceptWhen" in catch:
        tests.append(f"$not({condition_text(catch['exceptWhen'], place)})")
    if not tests:
        return None
    return " and ".join(f"({test})" for test in tests)


def _errors_with(catch: Mapping[str, Any]) -> Mapping[str, Any]:
    errors = catch.get("errors")
    if not isinstance(errors, Mapping):
        return {}
    with_ = errors.get("with")
    return with_ if isinstance(with_, Mapping) else {}


def asking_again_refused(catch: Mapping[str, Any]) -> list[str]:
    """The asking-again types this catch's retry does not run the ``try`` again for (those it does not
    name in ``errors.with.type``)."""
    named = _errors_with(catch).get("type")
    named_type = canonical_type(named) if isinstance(named, str) and expression_body(named) is None else None
    return [error_type for error_type in ASKING_AGAIN if error_type != named_type]


def retry_text(
    catch: Mapping[str, Any],
    retry: Mapping[str, Any],
    *,
    error: str,
    counter: str,
    tried: str | None,
    place: Place,
) -> str:
    """JSONata text: whether the retry runs the ``try`` again for the error in ``error``, its counter
    (``{attempt, first}``) in ``counter``, the failed attempt's milliseconds in ``tried``."""
    tests: list[str] = []
    refused = asking_again_refused(catch)
    if refused:
        tests.append(f"$not({error}.type in {literal(refused)})")
    limit = mapping(retry.get("limit"))
    attempt = mapping(limit.get("attempt"))
    if attempt.get("count") is not None:
        tests.append(f"{counter}.attempt < {value_text(attempt['count'], place)}")
    if attempt.get("duration") is not None and tried is not None:
        tests.append(f"{tried} <= {duration_ms(attempt['duration'], place)}")
    if limit.get("duration") is not None:
        tests.append(f"$millis() - {counter}.first <= {duration_ms(limit['duration'], place)}")
    if "when" in retry:
        tests.append(condition_text(retry["when"], place))
    if "exceptWhen" in retry:
        tests.append(f"$not({condition_text(retry['exceptWhen'], place)})")
    if not tests:
        return "true"
    return " and ".join(f"({test})" for test in tests)


def needs_attempt_duration(retry: Mapping[str, Any]) -> bool:
    limit = mapping(retry.get("limit"))
    attempt = mapping(limit.get("attempt"))
    return attempt.get("duration") is not None


def delay_seconds_text(retry: Mapping[str, Any], number: str, place: Place) -> str:
    """JSONata text: the whole seconds a retry waits before the retry numbered ``number`` (JSONata
    text; 1 for the first)."""
    delay = retry.get("delay")
    base = duration_ms(delay, place) if delay is not None else "0"
    backoff = mapping(retry.get("backoff"))
    if "exponential" in backoff:
        ms = f"{base} * $power(2, {number} - 1)"
    elif "linear" in backoff:
        ms = f"{base} * {number}"
    else:
        ms = base
    if isinstance(retry.get("jitter"), Mapping):
        jitter = mapping(retry.get("jitter"))
        low = duration_ms(jitter.get("from", 0), place)
        high = duration_ms(jitter.get("to", 0), place)
        ms = f"{ms} + {low} + $random() * ({high} - {low})"
    if ms == "0":
        return "0"
    return f"$ceil(({ms}) / 1000)"


def timeout_error(reference: str) -> dict[str, Any]:
    """The ``timeout`` error (408) a task's ``timeout`` raises at the task ``reference``."""
    return {
        "type": spec_type("timeout"),
        "status": 408,
        "instance": reference,
        "title": "The task ran past its timeout",
    }


def raised_error(error: Mapping[str, Any], reference: str, place: Place) -> tuple[str | None, str]:
    """The error a ``raise`` of ``error`` raises: the error as JSON text when every field is written out
    (first; a Fail state's written ``Cause``), else ``None``; and JSONata text giving the error as an
    object (second; in a Fail's ``Cause`` as ``$string(…)``, or kept for the end outside any ``try``)."""
    fields: dict[str, Any] = {}
    for name in ERROR_FIELDS:
        if error.get(name) is not None:
            fields[name] = error[name]
    fields.setdefault("instance", reference)
    written = all(expression_body(value) is None for value in fields.values())
    if written:
        shown: dict[str, Any] = {}
        for name in ERROR_FIELDS:
            if name in fields:
                value = fields[name]
                shown[name] = canonical_type(str(value)) if name == "type" else value
        return literal_cause(shown), literal(shown)
    members: list[str] = []
    for name in ERROR_FIELDS:
        if name not in fields:
            continue
        text = value_text(fields[name], place)
        if name == "type":
            text = canonical_type_text(text)
        members.append(f"{literal(name)}: {text}")
    return None, "{" + ", ".join(members) + "}"


def literal_cause(error: Mapping[str, Any]) -> str:
    """An error as a Fail state's written ``Cause`` (JSON on one line, ASCII)."""
    return json.dumps(dict(error), ensure_ascii=True, separators=(",", ":"))
