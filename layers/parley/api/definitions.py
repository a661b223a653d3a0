"""Operations of ``http-api.md`` "Definitions": create, list, get, update and retire a definition.

Each is declared once (``parley.api.operation``); the HTTP routes, the MCP tools and the OpenAPI
document are made from these declarations.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from parley.api.operation import Answer, Call, Hints, Operation, Param, Services, page_words
from parley.api.shapes import DEFINITION, page_of
from parley.definitions.model import DEFINITION_TYPES
from parley.definitions.service import DEFAULT_LIMIT, MAX_LIMIT, require_type
from parley.runs.kinds import definition_saved

if TYPE_CHECKING:
    from parley.api.bodies import CreateDefinitionBody, UpdateDefinitionBody

TAG: Final = "Definitions"

TYPE = Param(
    "type",
    "path",
    "The definition's type: interaction (asks a person or a system, and waits), reasoning (calls a "
    "model) or workflow (runs functions of the playbook one after another, on Step Functions).",
    enum=DEFINITION_TYPES,
    check=require_type,
)
NAME = Param(
    "name",
    "path",
    "The definition's name: 3 to 48 characters of a-z, 0-9 and '-', starting with a letter.",
)
LIMIT = Param(
    "limit",
    "query",
    f"How many to list on this page: 1 to {MAX_LIMIT}, {DEFAULT_LIMIT} when left out.",
    kind="integer",
    minimum=1,
    maximum=MAX_LIMIT,
    default=DEFAULT_LIMIT,
    rule=f"limit is a whole number from 1 to {MAX_LIMIT} ({DEFAULT_LIMIT} when left out).",
)
CURSOR = Param(
    "cursor",
    "query",
    "Where the page starts: the next_cursor of the page before (leave out for the first page).",
)


def _definition_words(body: dict[str, Any]) -> str:
    return f"The {body.get('type')} definition {body.get('name')!r}"


def create_definition(services: Services, call: Call) -> Answer:
    body: CreateDefinitionBody = call.body
    kind = call.values["type"]
    definition = services.definitions.create_definition(call.ref, kind, body.name, body.source)
    definition_saved(services.runtime, call.ref, definition)
    location = f"/v1/orgs/{call.org}/playbooks/{call.playbook}/definitions/{kind}/{definition.name}"
    return Answer(definition.as_json(), 201, {"Location": location})


def _created(services: Services, call: Call, body: dict[str, Any]) -> str:
    warnings = len(body.get("warnings") or [])
    noted = f", with {warnings} warning{'s' if warnings != 1 else ''} to read" if warnings else ""
    return f"{_definition_words(body)} is saved as version {body.get('version')}{noted}."


def list_definitions(services: Services, call: Call) -> Answer:
    page = services.definitions.list_definitions(
        call.ref,
        call.values["type"],
        include_retired=call.values["include_retired"],
        limit=call.values["limit"],
        cursor=call.values["cursor"],
    )
    return Answer(page.as_json())


def _listed(services: Services, call: Call, body: dict[str, Any]) -> str:
    return page_words(len(body.get("definitions") or []), f"{call.values['type']} definition", body)


def get_definition(services: Services, call: Call) -> Answer:
    definitions = services.definitions
    definition = definitions.used_by(
        call.ref, definitions.get_definition(call.ref, call.values["type"], call.values["name"])
    )
    return Answer(definition.as_json())


def _got(services: Services, call: Call, body: dict[str, Any]) -> str:
    return f"{_definition_words(body)} is at version {body.get('version')} and {body.get('status')}."


def update_definition(services: Services, call: Call) -> Answer:
    body: UpdateDefinitionBody = call.body
    definition = services.definitions.update_definition(
        call.ref, call.values["type"], call.values["name"], body.source
    )
    definition_saved(services.runtime, call.ref, definition)
    return Answer(definition.as_json())


def _updated(services: Services, call: Call, body: dict[str, Any]) -> str:
    return f"{_definition_words(body)} is now at version {body.get('version')}."


def retire_definition(services: Services, call: Call) -> Answer:
    definition = services.definitions.retire_definition(call.ref, call.values["type"], call.values["name"])
    definition_saved(services.runtime, call.ref, definition)
    return Answer(definition.as_json())


def _retired(services: Services, call: Call, body: dict[str, Any]) -> str:
    return f"{_definition_words(body)} is retired: it runs no more, and its name is not reused."


OPERATIONS: Final = (
    Operation(
        name="create_definition",
        title="Create a definition",
        method="POST",
        route="/definitions/{type}",
        scope="playbook",
        role="write",
        tag=TAG,
        summary="Save a new function document under a new name.",
        description=(
            "Save a new function or workflow (a definition) in the playbook: its name and its source, a "
            "Markdown document with front matter (a function) or a YAML workflow document. Use it to create "
            "what a person asked for; read guide://interaction-format, guide://reasoning-format or "
            "guide://workflow-format first. A workflow's definition shows its compiled state_machine. A "
            "document with problems is "
            "refused with 422 and each problem's line and place; a name already taken (also by a retired "
            "definition) is 409. To change an existing definition, use update_definition."
        ),
        hints=Hints(read_only=False),
        invoke=create_definition,
        summarize=_created,
        params=(TYPE,),
        body_model="CreateDefinitionBody",
        body_required=True,
        status=201,
        output=DEFINITION,
        problems=("conflict", "invalid_input", "unavailable"),
    ),
    Operation(
        name="list_definitions",
        title="List definitions",
        method="GET",
        route="/definitions/{type}",
        scope="playbook",
        role="read",
        tag=TAG,
        summary="List the playbook's definitions of a type, newest first.",
        description=(
            "List the playbook's definitions of one type, newest first, a page at a time (limit, then "
            "next_cursor as cursor). Use it to find which functions exist before creating, running or "
            "changing one. Retired definitions are left out unless include_retired is true."
        ),
        hints=Hints(read_only=True, idempotent=True),
        invoke=list_definitions,
        summarize=_listed,
        params=(
            TYPE,
            Param(
                "include_retired",
                "query",
                "Whether retired definitions are listed too (false when left out).",
                kind="boolean",
                default=False,
            ),
            LIMIT,
            CURSOR,
        ),
        output=page_of("definitions", DEFINITION),
    ),
    Operation(
        name="get_definition",
        title="Read a definition",
        method="GET",
        route="/definitions/{type}/{name}",
        scope="playbook",
        role="read",
        tag=TAG,
        summary="Read one definition: its source, overview and warnings.",
        description=(
            "Read one definition at its latest version: its source, a plain-words overview of what it "
            "does, and its warnings. Use it before running or changing a function, to see what input it "
            "takes and what it does."
        ),
        hints=Hints(read_only=True, idempotent=True),
        invoke=get_definition,
        summarize=_got,
        params=(TYPE, NAME),
        output=DEFINITION,
    ),
    Operation(
        name="update_definition",
        title="Update a definition",
        method="PUT",
        route="/definitions/{type}/{name}",
        scope="playbook",
        role="write",
        tag=TAG,
        summary="Save a new version of a definition's source.",
        description=(
            "Replace a definition's source with a new version (runs already started keep theirs). Use it "
            "to change a function that exists; an identical source makes no new version. A document with "
            "problems is refused with 422 and each problem's line and place."
        ),
        hints=Hints(read_only=False, idempotent=True),
        invoke=update_definition,
        summarize=_updated,
        params=(TYPE, NAME),
        body_model="UpdateDefinitionBody",
        body_required=True,
        output=DEFINITION,
        problems=("conflict", "invalid_input", "unavailable"),
    ),
    Operation(
        name="retire_definition",
        title="Retire a definition",
        method="POST",
        route="/definitions/{type}/{name}/retire",
        scope="playbook",
        role="write",
        tag=TAG,
        summary="Retire a definition: it runs no more.",
        description=(
            "Retire a definition: it can no longer run, and its name is never reused. It cannot be "
            "undone, so use it only when a person asked to retire the function. Retiring a retired "
            "definition answers it as it is."
        ),
        hints=Hints(read_only=False, destructive=True, idempotent=True),
        invoke=retire_definition,
        summarize=_retired,
        params=(TYPE, NAME),
        body_model="RetireDefinitionBody",
        output=DEFINITION,
        problems=("conflict", "unavailable"),
    ),
)
