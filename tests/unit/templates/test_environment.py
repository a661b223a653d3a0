"""The one Liquid environment: its tags, its filters, and that it is built lazily."""

from __future__ import annotations

import subprocess
import sys

import pytest

from parley.templates.environment import ParleyEnvironment, liquid_environment

# reasoning-format.md, "Filters": the standard filters, word for word, and the runtime's three.
SPEC_FILTERS = """
abs append array_to_sentence_string at_least at_most base64_decode base64_encode capitalize ceil
compact concat default divided_by downcase escape escape_once find find_index first floor group_by
has join json last lstrip map minus modulo newline_to_br normalize_whitespace number_of_words plus
pop prepend push raw reject remove remove_first remove_last replace replace_first replace_last
reverse round rstrip shift size slice slugify sort sort_natural split squish strip strip_newlines
sum times to_integer truncate truncatewords uniq unshift upcase where xml_escape
money clip words
""".split()  # noqa: SIM905  (the spec's list, as it reads)

# reasoning-format.md, "Tags" (raw is handled by the lexer, not registered as a tag), plus the
# internal pseudo-tags python-liquid needs to parse anything.
SPEC_TAGS = {
    "assign",
    "if",
    "unless",
    "case",
    "for",
    "break",
    "continue",
    "cycle",
    "increment",
    "decrement",
    "echo",
    "liquid",
    "comment",
    "#",
    "tablerow",
}
INTERNAL_TAGS = {"content", "output", "illegal"}
# reasoning-format.md, "The system block": registered for reasoning templates, refused elsewhere
# when a document is saved (see test_checks.py).
SYSTEM_TAG = {"system"}


def test_the_environment_has_exactly_the_listed_filters() -> None:
    assert sorted(liquid_environment().filters) == sorted(SPEC_FILTERS)


def test_the_environment_has_exactly_the_listed_tags() -> None:
    assert set(liquid_environment().tags) == SPEC_TAGS | INTERNAL_TAGS | SYSTEM_TAG


@pytest.mark.parametrize(
    "name",
    [
        "date",
        "sample",
        "md5",
        "sha1",
        "sha256",
        "hmac_sha256",
        "strip_html",
        "url_encode",
        "url_decode",
        "cgi_escape",
        "uri_escape",
        "base64_url_safe_encode",
        "where_exp",
        "find_exp",
        "group_by_exp",
        "inspect",
        "jsonify",
        "safe",
        "escapejs",
    ],
)
def test_unavailable_filters_are_not_registered(name: str) -> None:
    assert name not in liquid_environment().filters


@pytest.mark.parametrize("name", ["include", "render", "layout", "block", "capture", "ifchanged", "doc"])
def test_unavailable_tags_are_not_registered(name: str) -> None:
    assert name not in liquid_environment().tags


def test_the_environment_is_cached() -> None:
    assert liquid_environment() is liquid_environment()
    assert isinstance(liquid_environment(), ParleyEnvironment)


def test_importing_builds_nothing() -> None:
    code = (
        "import parley.templates.environment as e, parley.templates.render, parley.templates.checks;"
        "print(e.liquid_environment.cache_info().currsize, e.compile_template.cache_info().currsize)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.split() == ["0", "0"]
