"""The body schemas written for the package (``parley/api/body_schemas.json``) are the body models' own:
``python -m parley.api.body_schemas`` writes them again after a model changes."""

from __future__ import annotations

from parley.api.body_schemas import SCHEMAS_FILE, body_json_schema, computed_schemas, schemas_text
from parley.api.registry import OPERATIONS


def test_the_written_schemas_are_the_models() -> None:
    assert SCHEMAS_FILE.read_text(encoding="utf-8") == schemas_text(computed_schemas()), (
        "parley/api/body_schemas.json is out of date: run python -m parley.api.body_schemas"
    )


def test_every_operation_with_a_body_has_its_schema() -> None:
    for operation in OPERATIONS:
        if operation.body_model is not None:
            schema = body_json_schema(operation.body_model)
            assert schema["type"] == "object" and schema["additionalProperties"] is False
            schema["properties"]["changed"] = {}  # a copy: the next reader sees the file's
            assert "changed" not in body_json_schema(operation.body_model)["properties"]
