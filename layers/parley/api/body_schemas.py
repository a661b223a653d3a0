"""The JSON Schemas of the operations' bodies (``parley.api.bodies``), made once when the package is built
and kept beside this module in ``body_schemas.json``.

The OpenAPI document and the MCP front door's ``tools/list`` show them. Made from the pydantic models on
each cold start, they cost pydantic's import and a schema build for every model, which an event that only
lists the tools does not otherwise need (issue 20); the models stay what checks a body.

How a model's schema is written (:func:`body_schema`) is here too, below the OpenAPI document that shows
it (issue 30: neither imports the other back). After a body model changes, ``python -m
parley.api.body_schemas`` writes the file again; a unit test (``tests/unit/api/test_body_schemas.py``)
fails while it is out of date.
"""

from __future__ import annotations

import copy
import functools
import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from pydantic import BaseModel

SCHEMAS_FILE: Final = Path(__file__).with_name("body_schemas.json")


def body_json_schema(body_model: str) -> dict[str, Any]:
    """The JSON Schema of the body model named ``body_model`` (a copy, the caller's to change)."""
    schema: dict[str, Any] = copy.deepcopy(_written()[body_model])
    return schema


@functools.cache
def _written() -> Mapping[str, Any]:
    schemas: Mapping[str, Any] = json.loads(SCHEMAS_FILE.read_text(encoding="utf-8"))
    return schemas


def computed_schemas() -> dict[str, Any]:
    """Every body model's JSON Schema, made from the models now: what the file must hold."""
    from parley.api.registry import OPERATIONS

    models = {
        op.body_model: op.body for op in OPERATIONS if op.body_model is not None and op.body is not None
    }
    return {name: body_schema(models[name]) for name in sorted(models)}


def body_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The body model's JSON Schema (titles left out: the descriptions say what each field is), as this
    module writes it for the package and ``parley.api.openapi`` shows it."""
    schema: dict[str, Any] = _without_titles(model.model_json_schema())
    schema.setdefault("properties", {})
    schema["additionalProperties"] = False
    return schema


def _without_titles(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            key: _without_titles(item)
            for key, item in value.items()
            if not (key == "title" and isinstance(item, str))
        }
    if isinstance(value, list):
        return [_without_titles(item) for item in value]
    return value


def schemas_text(schemas: Mapping[str, Any]) -> str:
    """The file's text: indented JSON, one key a line, ending with a newline."""
    return json.dumps(schemas, indent=2, ensure_ascii=False) + "\n"


def main() -> None:
    """Write the file again from the models."""
    SCHEMAS_FILE.write_text(schemas_text(computed_schemas()), encoding="utf-8")
    print(f"wrote {SCHEMAS_FILE}")


if __name__ == "__main__":
    main()
