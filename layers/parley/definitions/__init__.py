"""Definitions: saving, versioning, listing and retiring functions (``http-api.md``, "Definitions").

``service`` holds the rules, ``store`` the port and its DynamoDB adapter, ``model`` the shapes.

Offers: :class:`DefinitionService` (with :data:`Checker`, the runtime's document check, and
:func:`require_type`), :class:`Definition` and :class:`PlaybookRef` (``DEFINITION_TYPES``), the store
(:class:`DefinitionStore`, :class:`DynamoDefinitionStore`), and the listings' cursors
(:func:`encode_cursor`, :func:`decode_cursor`).

The face is lazy (PEP 562, ``parley.faces``): each name's module is imported on the name's first use, so
importing one module of the package loads no other.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from parley.faces import lazy_face

if TYPE_CHECKING:
    from parley.definitions.cursor import decode_cursor, encode_cursor
    from parley.definitions.model import DEFINITION_TYPES, Definition, PlaybookRef
    from parley.definitions.service import Checker, DefinitionService, require_type
    from parley.definitions.store import DefinitionStore, DynamoDefinitionStore

__all__ = [
    "DEFINITION_TYPES",
    "Checker",
    "Definition",
    "DefinitionService",
    "DefinitionStore",
    "DynamoDefinitionStore",
    "PlaybookRef",
    "decode_cursor",
    "encode_cursor",
    "require_type",
]

if not TYPE_CHECKING:  # type checkers read the names above; a lookup of another is an error
    __getattr__, __dir__ = lazy_face(
        __name__,
        {
            "service": ("Checker", "DefinitionService", "require_type"),
            "model": ("DEFINITION_TYPES", "Definition", "PlaybookRef"),
            "store": ("DefinitionStore", "DynamoDefinitionStore"),
            "cursor": ("decode_cursor", "encode_cursor"),
        },
    )
