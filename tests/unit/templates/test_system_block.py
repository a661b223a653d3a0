"""The system block of reasoning templates (reasoning-format.md, "The system block"): the cases around
the block that test_checks.py and test_render.py leave out."""

from __future__ import annotations

import pytest

from parley.templates.checks import check_template, place_names
from parley.templates.render import RenderFailure, render_prompt, render_text

TEMPLATE = place_names("template")
MESSAGE = place_names("message")
DATA = {"input": {"company": "ACME"}, "today": "2026-10-17", "now": "2026-10-17T10:18:42.000Z"}


def reasoning_check(source: str) -> list[tuple[int, str]]:
    return check_template(
        source, place=TEMPLATE, input_schema=None, first_line=1, refuse_structures=False, system_block=True
    )


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("{% raw %}{% system %}x{% endsystem %}{% endraw %}m", (None, "{% system %}x{% endsystem %}m")),
        ("{% comment %}{% system %}x{% endsystem %}{% endcomment %}m", (None, "m")),
        ("{%- system -%}  x  {%- endsystem -%}  m", ("x", "m")),
        ("{% system %}{% increment n %}{% endsystem %}{% increment n %}", ("0", "1")),
        ("{% system %}{% endsystem %}m", ("", "m")),
    ],
)
def test_what_renders_as_the_instructions(source: str, expected: tuple[str | None, str]) -> None:
    assert reasoning_check(source) == []
    assert render_prompt(source, DATA) == expected


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("a\n{% endsystem %}", (2, "the template does not compile: unexpected tag 'endsystem'")),
        (
            "m\n{% system %}{% system %}x{% endsystem %}{% endsystem %}",
            (2, "the system block must sit at the top level, outside every other tag"),
        ),
        ("{% system %}{% include 'x' %}{% endsystem %}m", (1, "the tag 'include' is not available")),
        (
            "{% system %}a{% endsystem strict %}m",
            (1, "the template does not compile: the endsystem tag takes no arguments"),
        ),
    ],
)
def test_a_system_block_written_wrongly(source: str, expected: tuple[int, str]) -> None:
    assert reasoning_check(source) == [expected]


def test_an_unclosed_system_block() -> None:
    [(line, message)] = reasoning_check("{% system %}x")
    assert line == 1 and message.startswith("the template does not compile: expected tag endsystem")


def test_an_interaction_template_refuses_the_block_when_saved_and_when_rendered() -> None:
    source = "{% system %}x{% endsystem %}Hello"
    assert check_template(source, place=MESSAGE, input_schema=None, first_line=7) == [
        (7, "the tag 'system' is not available")
    ]
    with pytest.raises(RenderFailure) as caught:
        render_text(source, DATA, first_line=7)
    assert caught.value.line == 7 and "reasoning template" in caught.value.message


def test_an_interaction_template_may_hold_the_words_literally() -> None:
    source = "{% raw %}{% system %}{% endraw %} is literal"
    assert check_template(source, place=MESSAGE, input_schema=None, first_line=1) == []
    assert render_text(source, DATA) == "{% system %} is literal"


def test_an_empty_message_names_the_templates_first_line() -> None:
    with pytest.raises(RenderFailure) as caught:
        render_prompt("{% system %}x{% endsystem %}\n \n", DATA, first_line=14)
    assert str(caught.value) == "Line 14: the template renders no text outside the system block"
