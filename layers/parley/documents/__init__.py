"""Definition documents: front matter, schemas, templates' places and the checks made when saved,
shared by every function type.

Offers: the checked document (:class:`CheckedDocument`), problems and warnings
(:class:`DocumentProblem`, :class:`DocumentProblems`, :class:`DocumentWarning`), the front matter
(:func:`read_document`, :func:`split_document`, :func:`load_front_matter`, :class:`LineIndex`), JSON
Schema and values (:func:`check_schema`, :func:`validate_instance`, :func:`json_size`,
:func:`canonical_json`), JSON Pointers (:func:`join_pointer`, :func:`resolve_pointer`), durations
(:func:`parse_duration`, :func:`duration_in_words`, :func:`expires_problem`, :func:`wait_problem`), and
the checks of templates that ask (:func:`template_problems`, :func:`confirmation_problems`). The
overviews' words are in ``words``, ``template_words`` and ``schema_words``.

The face is lazy (PEP 562, ``parley.faces``): each name's module is imported on the name's first use, so
importing one module of the package loads no other.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from parley.faces import lazy_face

if TYPE_CHECKING:
    from parley.documents.asking import confirmation_problems, template_problems
    from parley.documents.definition import CheckedDocument
    from parley.documents.durations import duration_in_words, expires_problem, parse_duration, wait_problem
    from parley.documents.front_matter import LineIndex, load_front_matter, read_document, split_document
    from parley.documents.json_schema import canonical_json, check_schema, json_size, validate_instance
    from parley.documents.pointers import join_pointer, resolve_pointer
    from parley.documents.problems import DocumentProblem, DocumentProblems, DocumentWarning

__all__ = [
    "CheckedDocument",
    "DocumentProblem",
    "DocumentProblems",
    "DocumentWarning",
    "LineIndex",
    "canonical_json",
    "check_schema",
    "confirmation_problems",
    "duration_in_words",
    "expires_problem",
    "join_pointer",
    "json_size",
    "load_front_matter",
    "parse_duration",
    "read_document",
    "resolve_pointer",
    "split_document",
    "template_problems",
    "validate_instance",
    "wait_problem",
]

if not TYPE_CHECKING:  # type checkers read the names above; a lookup of another is an error
    __getattr__, __dir__ = lazy_face(
        __name__,
        {
            "definition": ("CheckedDocument",),
            "problems": ("DocumentProblem", "DocumentProblems", "DocumentWarning"),
            "front_matter": ("LineIndex", "load_front_matter", "read_document", "split_document"),
            "json_schema": ("canonical_json", "check_schema", "json_size", "validate_instance"),
            "pointers": ("join_pointer", "resolve_pointer"),
            "durations": ("duration_in_words", "expires_problem", "parse_duration", "wait_problem"),
            "asking": ("confirmation_problems", "template_problems"),
        },
    )
