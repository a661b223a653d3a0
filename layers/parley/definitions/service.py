"""The rules of definitions (``http-api.md``, "Definitions").

- ``{type}`` is ``interaction`` or ``reasoning``; any other type has no definitions (``404``).
- A name is 3 to 48 of ``a-z``, ``0-9``, ``-``, starting with a letter; a source at most 65,536 bytes.
- A name is never reused: creating a taken name, also a retired one, is ``409 conflict``.
- Every change of source is a new version (all versions are kept); an identical source makes none.
- A retired definition cannot be updated (``409``). Retiring a retired definition answers it as it
  is (``200``, nothing changes): retire is a state to reach, so a retried call is harmless.
- Concurrent writers: exactly one create of a name wins. Concurrent updates each become a version of
  their own, in some order (the loser of a race reads the new head and tries again); none is lost.
- A saved definition carries ``warnings``: its type's, and those every type shares
  (``parley.documents.save_warnings``), such as a misspelt input field, a schema keyword no draft
  defines, or a tool server that does not serve the playbook. The last needs the runtime's operator
  configuration, which comes in as ``servers``: the names of the servers that serve a playbook.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Final

from parley.clock import Clock, format_time
from parley.definitions.cursor import decode_cursor, encode_cursor
from parley.definitions.model import DEFINITION_TYPES, Definition, DefinitionPage, PlaybookRef
from parley.definitions.store import DefinitionStore, ListPosition, StoreConflict, StoreContention
from parley.documents.definition import CheckedDocument
from parley.documents.problems import DocumentWarning
from parley.errors import ErrorEntry, Problem, capped_errors

NAME_PATTERN: Final = re.compile(r"[a-z][a-z0-9-]{2,47}")
MAX_SOURCE_BYTES: Final = 65_536
DEFAULT_LIMIT: Final = 50
MAX_LIMIT: Final = 100
#: The type whose definitions call others: their `uses` make the **Used by** of what they call.
USING_TYPE: Final = "workflow"
#: How often a write that lost a race is tried again on the new head before answering 409.
WRITE_ATTEMPTS: Final = 10

_TIME_PATTERN: Final = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")

Checker = Callable[[str, str], CheckedDocument]
#: The names of the tool servers that serve a playbook (the runtime's operator configuration says).
ServersServing = Callable[[PlaybookRef], Iterable[str]]
#: A type's warnings about a document on this server (``parley.runs.kinds.warnings_here``).
WarningsHere = Callable[[str, str], Iterable[DocumentWarning]]


class DefinitionService:
    """Create, read, list, update and retire the definitions of a playbook."""

    def __init__(
        self,
        store: DefinitionStore,
        clock: Clock,
        check: Checker,
        *,
        servers: ServersServing | None = None,
        here: WarningsHere | None = None,
    ) -> None:
        """``check`` is the runtime's document check: the type registry's (``parley.runs.kinds``), which
        this package reaches only through the runtime. ``servers`` names the tool servers that serve a
        playbook, for the warnings about the servers a document names; without it there are none."""
        self._store = store
        self._clock = clock
        self._check = check
        self._servers = servers
        self._here = here

    def create_definition(
        self, playbook: PlaybookRef, definition_type: str, name: str, source: str
    ) -> Definition:
        require_type(definition_type)
        errors = _name_errors(name) + _source_errors(source)
        checked = self._checked(definition_type, source, errors)
        warnings = self._warnings(playbook, definition_type, source, checked)
        now = format_time(self._clock.now())
        definition = Definition(
            type=definition_type,
            name=name,
            version=1,
            status="active",
            media_type=checked.media_type,
            description=checked.description,
            source=source,
            overview=checked.overview,
            warnings=warnings,
            created_at=now,
            updated_at=now,
            shows=checked.shows,
            uses=checked.uses,
        )
        for _ in range(WRITE_ATTEMPTS):
            try:
                self._store.create(playbook, definition)
                return definition
            except StoreConflict:
                raise self._name_taken(playbook, definition_type, name) from None
            except StoreContention:
                continue
        raise _busy(definition_type, name)

    def get_definition(self, playbook: PlaybookRef, definition_type: str, name: str) -> Definition:
        require_type(definition_type)
        found = self._store.get(playbook, definition_type, name) if _is_name(name) else None
        if found is None:
            raise _not_found(definition_type, name)
        return found

    def used_by(self, playbook: PlaybookRef, definition: Definition) -> Definition:
        """The definition with the workflows that call it (``workflow-format.md``, "Overview") listed
        under **Used by** at the end of its overview: the playbook's active workflows, read when shown,
        so that saving a workflow needs no write to the functions it calls."""
        used = f"{definition.type}/{definition.name}"
        users: list[str] = []
        after: ListPosition | None = None
        while True:
            heads, more = self._store.list_heads(
                playbook, USING_TYPE, include_retired=False, limit=MAX_LIMIT, after=after
            )
            users.extend(head.name for head in heads if used in head.uses)
            if not more or not heads:
                break
            after = ListPosition(heads[-1].created_at, heads[-1].name)
        if not users:
            return definition
        listed = "\n".join(f"- the workflow **{name}**" for name in users)
        return replace(definition, overview=f"{definition.overview.rstrip()}\n\n**Used by**\n\n{listed}\n")

    def list_definitions(
        self,
        playbook: PlaybookRef,
        definition_type: str,
        *,
        include_retired: bool = False,
        limit: int = DEFAULT_LIMIT,
        cursor: str | None = None,
    ) -> DefinitionPage:
        require_type(definition_type)
        if not 1 <= limit <= MAX_LIMIT:
            raise Problem("bad_request", f"limit is 1 to {MAX_LIMIT}, {DEFAULT_LIMIT} when left out.")
        scope = _list_scope(playbook, definition_type)
        after = _position(decode_cursor(scope, cursor)) if cursor is not None else None
        definitions, more = self._store.list_heads(
            playbook, definition_type, include_retired=include_retired, limit=limit, after=after
        )
        next_cursor = None
        if more and definitions:
            last = definitions[-1]
            next_cursor = encode_cursor(scope, [last.created_at, last.name])
        return DefinitionPage(tuple(definitions), next_cursor)

    def update_definition(
        self, playbook: PlaybookRef, definition_type: str, name: str, source: str
    ) -> Definition:
        head = self.get_definition(playbook, definition_type, name)
        checked: CheckedDocument | None = None
        warnings: tuple[str, ...] = ()
        for _ in range(WRITE_ATTEMPTS):
            if head.status == "retired":
                raise Problem(
                    "conflict",
                    f"The {definition_type} definition {name!r} is retired; a retired definition cannot "
                    "be changed. Save the document under a new name.",
                )
            if head.source == source:
                return head
            if checked is None:
                checked = self._checked(definition_type, source, _source_errors(source))
                warnings = self._warnings(playbook, definition_type, source, checked)
            updated = replace(
                head,
                version=head.version + 1,
                media_type=checked.media_type,
                description=checked.description,
                source=source,
                overview=checked.overview,
                warnings=warnings,
                updated_at=format_time(self._clock.now()),
                shows=checked.shows,
                uses=checked.uses,
            )
            try:
                self._store.save_version(playbook, updated)
                return updated
            except (StoreConflict, StoreContention):
                head = self.get_definition(playbook, definition_type, name)
        raise _busy(definition_type, name)

    def retire_definition(self, playbook: PlaybookRef, definition_type: str, name: str) -> Definition:
        head = self.get_definition(playbook, definition_type, name)
        for _ in range(WRITE_ATTEMPTS):
            if head.status == "retired":
                return head
            retired = replace(head, status="retired", updated_at=format_time(self._clock.now()))
            try:
                self._store.retire(playbook, retired)
                return retired
            except (StoreConflict, StoreContention):
                head = self.get_definition(playbook, definition_type, name)
        raise _busy(definition_type, name)

    def _warnings(
        self, playbook: PlaybookRef, definition_type: str, source: str, checked: CheckedDocument
    ) -> tuple[str, ...]:
        """The type's warnings and the shared ones, for the playbook saved to (the shared checks load
        YAML, JSON Schema and Liquid: imported on the first save, never by functions that only run)."""
        from parley.documents.save_warnings import SaveContext, merged_warnings, save_warnings

        servers = frozenset(self._servers(playbook)) if self._servers is not None else None
        found = save_warnings(definition_type, source, SaveContext(servers=servers))
        if self._here is not None:  # what this server's configuration says: a model it would not call
            found = [*found, *self._here(definition_type, source)]
        return tuple(merged_warnings(checked.warnings, found))

    def _name_taken(self, playbook: PlaybookRef, definition_type: str, name: str) -> Problem:
        """``409``: names are never reused. Updating is the way on only while the holder is active."""
        holder = self._store.get(playbook, definition_type, name)
        if holder is not None and holder.status == "retired":
            return Problem(
                "conflict",
                f"The name {name!r} belongs to a retired {definition_type} definition of this playbook; "
                "names are never reused, also after a definition is retired, and a retired definition "
                "cannot be updated. Choose another name.",
            )
        return Problem(
            "conflict",
            f"The name {name!r} is taken by {_article(definition_type)} {definition_type} definition of this "
            "playbook; names are never reused. Update it, or choose another name.",
        )

    def _checked(self, definition_type: str, source: str, errors: list[ErrorEntry]) -> CheckedDocument:
        """The checked document, or one ``422`` naming every problem of the name and the source."""
        if any(entry.pointer == "/source" for entry in errors):
            raise _invalid(errors)
        try:
            checked = self._check(definition_type, source)
        except Problem as problem:
            if problem.reason != "invalid_input" or not errors:
                raise
            raise _invalid(errors + problem.errors) from None
        if errors:
            raise _invalid(errors)
        return checked


def require_type(definition_type: str) -> None:
    if definition_type not in DEFINITION_TYPES:
        raise Problem(
            "not_found",
            f"There are no definitions of type {definition_type!r}; the types are interaction and reasoning.",
        )


def _is_name(name: str) -> bool:
    return NAME_PATTERN.fullmatch(name) is not None  # the whole name: "$" would let a final newline in


def _name_errors(name: str) -> list[ErrorEntry]:
    if _is_name(name):
        return []
    return [ErrorEntry("/name", "A name is 3 to 48 characters of a-z, 0-9 and '-', starting with a letter.")]


def _source_errors(source: str) -> list[ErrorEntry]:
    size = len(source.encode("utf-8"))
    if size <= MAX_SOURCE_BYTES:
        return []
    return [ErrorEntry("/source", f"A source is at most {MAX_SOURCE_BYTES:,} bytes; this one is {size:,}.")]


def _invalid(errors: list[ErrorEntry]) -> Problem:
    capped = capped_errors(errors)
    first = capped[0]
    more = len(errors) - 1
    detail = f"{first.pointer}: {first.detail}" + (f" (and {more} more)" if more > 0 else "")
    return Problem("invalid_input", detail, errors=capped)


def _list_scope(playbook: PlaybookRef, definition_type: str) -> str:
    return f"definitions/{playbook.org}/{playbook.playbook}/{definition_type}"


def _position(parts: list[str]) -> ListPosition:
    if len(parts) != 2 or not _TIME_PATTERN.match(parts[0]) or not _is_name(parts[1]):
        raise Problem("bad_request", "The cursor is not one this list gave out; start without a cursor.")
    return ListPosition(created_at=parts[0], name=parts[1])


def _not_found(definition_type: str, name: str) -> Problem:
    return Problem("not_found", f"This playbook has no {definition_type} definition named {name!r}.")


def _article(word: str) -> str:
    """``an`` before ``interaction``, ``a`` before ``reasoning``."""
    return "an" if word[:1] and word[:1] in "aeiou" else "a"


def _busy(definition_type: str, name: str) -> Problem:
    return Problem(
        "conflict",
        f"The {definition_type} definition {name!r} kept changing while this change was saved; try again.",
    )
