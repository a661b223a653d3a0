"""One declaration per operation of ``http-api.md``: the HTTP routes, the MCP tools and the OpenAPI
document are all made from it, so the three cannot drift.

An :class:`Operation` holds what a caller sees of it — its name (the MCP tool's too), method and
route, the role it needs, its path and query :class:`Param`\\ s (types, bounds, descriptions), its body
model (pydantic, checked strictly; named in ``parley.api.bodies``, loaded only when a body is read or
shown), its success status and body shape, the problems it may answer,
the MCP annotations and the words that tell an agent when to use it — and ``invoke``, the one call
into the services (``parley.runs.service``, the definitions service, ``parley.tools.service``).

A call is checked in the same order whichever door it came through:

1. who calls: ``401`` (the front door's job), then the grants — a playbook the caller cannot read is
   ``404``, a write with the ``read`` role ``403`` (:func:`authorize_call`);
2. path values (``404`` for a type that does not exist), then query values: a value that breaks its
   declaration is ``400 bad_request``, worded by the parameter (:meth:`Param.from_query` over HTTP,
   :meth:`Param.from_argument` from an MCP tool's arguments);
3. the body: strict types, no unknown fields, ``422 invalid_input`` with a pointer per field
   (:func:`checked_body`);
4. ``invoke``.

Nothing here imports a service: ``invoke`` reaches them through :class:`Services`, which builds each on
first use.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Literal

from parley.definitions.model import PlaybookRef
from parley.errors import ErrorEntry, Problem, capped_errors

if TYPE_CHECKING:
    from pydantic import BaseModel

    from parley.config import Principal
    from parley.definitions.service import DefinitionService
    from parley.ports.runtime import Runtime
    from parley.runs.service import RunService
    from parley.tools.service import ToolService

Role = Literal["read", "write"]
Scope = Literal["playbook", "org"]
Where = Literal["path", "query"]
Kind = Literal["string", "integer", "boolean"]

#: Where every playbook route starts (``http-api.md``, "Base and auth"), in OpenAPI's spelling.
PLAYBOOK_PATH: Final = "/v1/orgs/{org}/playbooks/{playbook}"
#: Where the routes relative to an org start (``http-api.md``, "Models").
ORG_PATH: Final = "/v1/orgs/{org}"

_FIELD_MESSAGES: Final = {
    "missing": "Required.",
    "extra_forbidden": "Not a field of this request.",
    "string_type": "Expected a string.",
    "int_type": "Expected an integer.",
    "bool_type": "Expected true or false.",
    "dict_type": "Expected an object.",
    "model_type": "Expected an object.",
    "list_type": "Expected an array.",
}


@dataclass(frozen=True)
class Param:
    """A path or query parameter: its JSON type, bounds and words.

    ``rule`` is the ``400 bad_request`` detail a value that breaks the declaration answers (a query
    value); ``check`` runs on a path value (such as ``require_type``, whose problem is ``404``).
    """

    name: str
    where: Where
    description: str
    kind: Kind = "string"
    enum: tuple[str, ...] = ()
    minimum: int | None = None
    maximum: int | None = None
    default: Any = None
    format: str | None = None
    pattern: str | None = None
    max_length: int | None = None
    rule: str = ""
    check: Callable[[str], None] | None = None

    @property
    def required(self) -> bool:
        return self.where == "path"

    def schema(self) -> dict[str, Any]:
        """The parameter's JSON Schema (an MCP tool's property, an OpenAPI parameter's schema)."""
        shown: dict[str, Any] = {"type": self.kind}
        if self.kind == "string":
            shown["minLength"] = 1
        if self.enum:
            shown["enum"] = list(self.enum)
        if self.minimum is not None:
            shown["minimum"] = self.minimum
        if self.maximum is not None:
            shown["maximum"] = self.maximum
        if self.max_length is not None:
            shown["maxLength"] = self.max_length
        if self.pattern is not None:
            shown["pattern"] = self.pattern
        if self.format is not None:
            shown["format"] = self.format
        if self.default is not None:
            shown["default"] = self.default
        shown["description"] = self.description
        return shown

    # --- reading a value ------------------------------------------------------------------------

    def from_query(self, raw: str) -> Any:
        """A query string's value, typed; ``400 bad_request`` when it breaks the declaration."""
        if self.kind == "integer":
            # Digits only, and few of them: int() of thousands of digits is slow, then refused by Python.
            if not (raw.isascii() and raw.isdigit()) or len(raw) > 6:
                raise self._refused()
            return self._bounded(int(raw))
        if self.kind == "boolean":
            value = raw.strip().lower()
            if value in ("true", "1", ""):
                return True
            if value in ("false", "0"):
                return False
            raise Problem("bad_request", self.rule or f"{self.name} is true or false, not {raw!r}.")
        return self._text(raw)

    def from_argument(self, value: Any) -> Any:
        """An MCP tool argument's value (JSON), typed; the same problems as :meth:`from_query`."""
        if self.kind == "integer":
            if isinstance(value, bool) or not isinstance(value, int):
                raise self._refused()
            return self._bounded(value)
        if self.kind == "boolean":
            if not isinstance(value, bool):
                raise Problem("bad_request", self.rule or f"{self.name} is true or false.")
            return value
        if not isinstance(value, str):
            if self.where == "path":
                raise Problem(
                    "invalid_input",
                    f"/{self.name}: Expected a string.",
                    errors=[ErrorEntry(f"/{self.name}", "Expected a string.")],
                )
            raise self._refused()
        return self._text(value)

    def _text(self, value: str) -> str:
        if not value:
            if self.where == "path":
                raise Problem(
                    "invalid_input",
                    f"/{self.name}: Required, and not empty.",
                    errors=[ErrorEntry(f"/{self.name}", "Required, and not empty.")],
                )
            raise Problem("bad_request", f"{self.name} cannot be empty; leave it out instead.")
        if self.check is not None:
            self.check(value)
        if self.enum and value not in self.enum:
            raise self._refused()
        return value

    def _bounded(self, value: int) -> int:
        if (self.minimum is not None and value < self.minimum) or (
            self.maximum is not None and value > self.maximum
        ):
            raise self._refused()
        return value

    def _refused(self) -> Problem:
        if self.rule:
            return Problem("bad_request", self.rule)
        if self.enum:
            return Problem("bad_request", f"{self.name} is one of {', '.join(self.enum)}.")
        return Problem("bad_request", f"{self.name} is a {self.kind}.")


@dataclass(frozen=True)
class Hints:
    """The MCP tool annotations of an operation (what it does to the world, for an agent)."""

    read_only: bool
    destructive: bool = False
    idempotent: bool = False
    open_world: bool = False


@dataclass(frozen=True)
class Call:
    """One checked call: who makes it, where, its typed parameter values and its body."""

    principal: Principal
    org: str
    playbook: str | None
    values: Mapping[str, Any]
    body: Any = None
    #: The API's base URL as the caller reached it (``parley.api.origin``): what a redirect back to the
    #: API is made of (``authorize_connection``); ``None`` when the request named no host.
    base_url: str | None = None

    @property
    def ref(self) -> PlaybookRef:
        assert self.playbook is not None, "an org-relative operation has no playbook"
        return PlaybookRef(org=self.org, playbook=self.playbook)


@dataclass(frozen=True)
class Answer:
    """What an operation answers: its body (a JSON object), status and extra headers."""

    body: dict[str, Any]
    status: int = 200
    headers: Mapping[str, str] = field(default_factory=dict)


class Services:
    """The services around one runtime, each built on its first use."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime

    @functools.cached_property
    def definitions(self) -> DefinitionService:
        return self.runtime.definition_service()

    @functools.cached_property
    def runs(self) -> RunService:
        from parley.runs.service import run_service

        return run_service(self.runtime)

    @functools.cached_property
    def tools(self) -> ToolService:
        from parley.tools.service import ToolService

        return ToolService(self.runtime)


Invoke = Callable[[Services, Call], Answer]
Summarize = Callable[[Services, Call, dict[str, Any]], str]


@dataclass(frozen=True)
class Operation:
    """One operation of ``http-api.md``; see the module's docstring."""

    name: str
    title: str
    method: Literal["GET", "POST", "PUT", "DELETE"]
    #: The route below the scope's base, as the page writes it (``/definitions/{type}``).
    route: str
    scope: Scope
    role: Role
    tag: str
    #: One line: what it does (OpenAPI's summary).
    summary: str
    #: What it does and when to use it, for a person reading the API and an agent choosing a tool.
    description: str
    hints: Hints
    invoke: Invoke
    summarize: Summarize
    params: tuple[Param, ...] = ()
    #: The body model's name in ``parley.api.bodies`` (``None``: the operation takes no body).
    body_model: str | None = None
    #: Whether a body must be sent (an absent body counts as ``{}`` either way).
    body_required: bool = False
    status: int = 200
    #: The success body's JSON Schema (OpenAPI's response, the MCP tool's ``outputSchema``).
    output: Mapping[str, Any] = field(default_factory=dict)
    #: Reasons of the problems it may answer besides those every operation may (``COMMON_PROBLEMS``).
    problems: tuple[str, ...] = ()
    #: For an org operation whose grants are finer than "any grant in the org" (the connections: a
    #: playbook writer adds, the org's admin approves): whether the principal may call it in the org (what
    #: decides the tools an MCP connection lists; ``invoke`` still decides each call).
    permits: Callable[[Principal, str], bool] | None = None
    #: Who may call it, in words (the MCP tool's description ends with them); by the role when left out.
    who: str | None = None

    @property
    def has_body(self) -> bool:
        return self.body_model is not None

    @property
    def body(self) -> type[BaseModel] | None:
        """The body model (``parley.api.bodies``, imported now: it brings pydantic)."""
        if self.body_model is None:
            return None
        from parley.api import bodies

        model: type[BaseModel] = getattr(bodies, self.body_model)
        return model

    @property
    def path(self) -> str:
        """The whole path, OpenAPI's spelling: ``/v1/orgs/{org}/playbooks/{playbook}/definitions/{type}``."""
        return (PLAYBOOK_PATH if self.scope == "playbook" else ORG_PATH) + self.route

    @property
    def rule(self) -> str:
        """The whole path as powertools' resolver writes a rule (``<org>``)."""
        return self.path.replace("{", "<").replace("}", ">")

    @property
    def path_params(self) -> tuple[Param, ...]:
        return tuple(p for p in self.params if p.where == "path")

    @property
    def query_params(self) -> tuple[Param, ...]:
        return tuple(p for p in self.params if p.where == "query")

    @property
    def writes(self) -> bool:
        return self.role == "write"

    def problem_reasons(self) -> tuple[str, ...]:
        """Every reason it may answer, in the order of ``REASONS``."""
        from parley.errors import REASONS

        wanted = {*COMMON_PROBLEMS, *self.problems}
        if self.writes:
            wanted.add("forbidden")
        if self.has_body:
            wanted.update(BODY_PROBLEMS)
        if self.query_params:
            wanted.add("bad_request")
        return tuple(reason for reason in REASONS if reason in wanted)

    # --- reading a call ---------------------------------------------------------------------------

    def values_from_http(self, path: Mapping[str, str], query: Mapping[str, str]) -> dict[str, Any]:
        """The path and query values of an HTTP request, checked (undeclared query names are ignored)."""
        values: dict[str, Any] = {}
        for param in self.path_params:
            values[param.name] = param.from_query(path[param.name])
        for param in self.query_params:
            raw = query.get(param.name)
            values[param.name] = param.default if raw is None else param.from_query(raw)
        return values

    def values_from_arguments(self, arguments: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """An MCP tool's arguments (without ``org`` and ``playbook``) as checked path and query values,
        and what is left: the body's fields. A ``null`` query value counts as left out."""
        rest = dict(arguments)
        values: dict[str, Any] = {}
        missing = [p.name for p in self.path_params if rest.get(p.name) is None]
        if missing:
            raise required(missing)
        for param in self.path_params:
            values[param.name] = param.from_argument(rest.pop(param.name))
        for param in self.query_params:
            value = rest.pop(param.name, None)
            values[param.name] = param.default if value is None else param.from_argument(value)
        return values, rest

    def body_from_fields(self, fields: Mapping[str, Any]) -> Any:
        """The body of an MCP call, from the arguments left after the parameters."""
        body = self.body
        if body is None:
            if fields:
                raise not_fields(list(fields))
            return None
        return checked_body(body, dict(fields))


#: Every operation may answer these: no or a bad token, a playbook (or org) the caller cannot read.
COMMON_PROBLEMS: Final = ("unauthenticated", "not_found", "internal")
#: An operation with a body may answer these (``parley.api.requests``).
BODY_PROBLEMS: Final = ("bad_request", "content_too_large", "unsupported_media_type", "invalid_input")


def checked_body(model: type[BaseModel], data: dict[str, Any]) -> Any:
    """``data`` as ``model`` (strict types, no unknown fields), or ``422 invalid_input`` with a pointer
    per field: what an HTTP body and an MCP tool's arguments both go through."""
    from pydantic import ValidationError

    try:
        return model.model_validate(data, strict=True)
    except ValidationError as exc:
        entries = [
            ErrorEntry(_pointer(error["loc"]), _FIELD_MESSAGES.get(error["type"], error["msg"]))
            for error in exc.errors(include_input=False, include_url=False)
        ]
        raise _invalid(entries) from None


def required(names: list[str]) -> Problem:
    return _invalid([ErrorEntry(f"/{name}", "Required.") for name in names])


def not_fields(names: list[str]) -> Problem:
    return _invalid([ErrorEntry(_pointer((name,)), "Not a field of this request.") for name in names])


def _invalid(entries: list[ErrorEntry]) -> Problem:
    first = entries[0]
    more = f" (and {len(entries) - 1} more)" if len(entries) > 1 else ""
    return Problem("invalid_input", f"{first.pointer}: {first.detail}{more}", errors=capped_errors(entries))


def _pointer(loc: tuple[int | str, ...]) -> str:
    return "".join("/" + str(part).replace("~", "~0").replace("/", "~1") for part in loc)


def authorize_call(operation: Operation, principal: Principal, org: str, playbook: str | None) -> None:
    """Raise unless ``principal`` may make the call: on a playbook, the role the operation needs (``404``
    for a playbook it cannot read, ``403`` for a write with ``read``); on an org, any grant in it."""
    from parley.auth import authorize

    if operation.scope == "playbook":
        assert playbook is not None
        authorize(principal, org, playbook, operation.role)
    elif not any(grant.org == org for grant in principal.grants):
        raise Problem("not_found", f"There is no org {org!r}.")


def may_call(operation: Operation, principal: Principal, org: str | None, playbook: str | None) -> bool:
    """Whether ``principal`` may call ``operation`` at all: on that playbook (or org) when one is given,
    else on some playbook of its grants (what decides the tools an MCP connection lists)."""
    if operation.scope == "org":
        if operation.permits is not None:
            orgs = {org} if org is not None else {grant.org for grant in principal.grants}
            return any(operation.permits(principal, one) for one in orgs)
        return any(org is None or grant.org == org for grant in principal.grants)
    if org is not None and playbook is not None:
        role = principal.role_on(org, playbook)
        return role is not None and (role == "write" or not operation.writes)
    return any(grant.role == "write" or not operation.writes for grant in principal.playbook_grants())


def page_words(count: int, noun: str, body: dict[str, Any]) -> str:
    """``3 runs are on this page; more follow (pass next_cursor as cursor).``"""
    plural = noun if count == 1 else (noun[:-1] + "ies" if noun.endswith("y") else noun + "s")
    verb = "is" if count == 1 else "are"
    more = (
        "; more follow (pass next_cursor as cursor for the next page)"
        if body.get("next_cursor")
        else "; this is the last page"
    )
    return f"{count} {plural} {verb} on this page{more}."


#: The path values every playbook operation starts with, and an org operation with its first.
ORG: Final = Param("org", "path", "The org the playbook belongs to.")
PLAYBOOK: Final = Param(
    "playbook", "path", "The playbook: the definitions, runs and requests of one team or purpose."
)


def base_params(operation: Operation) -> tuple[Param, ...]:
    """``org`` (and ``playbook`` for a playbook operation): what the base of its path names."""
    return (ORG, PLAYBOOK) if operation.scope == "playbook" else (ORG,)
