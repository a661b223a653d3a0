"""Random templates and data: checks return problems, renders return text or a RenderFailure, nothing else."""

from __future__ import annotations

import contextlib
import os
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from parley.templates.checks import check_template, place_names
from parley.templates.environment import liquid_environment
from parley.templates.render import RenderFailure, render_prompt, render_text, render_typed

SETTINGS = settings(
    max_examples=int(os.environ.get("PARLEY_HYPOTHESIS_EXAMPLES", "200")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=30),
    st.sampled_from(["{{ x }}", "{% if %}", "1234.5", "", " ", "a b c", "limit"]),
)
json_values = st.recursive(
    json_scalars,
    lambda children: (
        st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=6), children, max_size=5)
    ),
    max_leaves=25,
)
input_fields = st.fixed_dictionaries(
    {},
    optional={
        "a": json_values,
        "b": json_values,
        "list": json_values,
        "n": st.integers(min_value=-5, max_value=10**12) | json_values,
        "s": st.text(max_size=50) | json_values,
        "k": json_values,
        "limit": json_values,
    },
)

paths = st.sampled_from(
    [
        "input",
        "input.a",
        "input.b.c",
        "input.list",
        "input.list[0]",
        "input.list.first",
        "input.list.size",
        "input.n",
        "input.s",
        "input.limit",
        "input[input.k]",
        "input.constructor",
        "x",
        "i",
        "today",
        "now",
        "forloop.index",
        "counter",
        "missing",
    ]
)
literals = st.sampled_from(
    ['"text"', "'a,b'", "1", "0", "2.5", "-3", "true", "false", "nil", "(1..3)", "(1..input.n)"]
)
values = st.one_of(paths, literals)
filter_names = st.sampled_from([*sorted(liquid_environment().filters), "date", "sample", "nope"])


@st.composite
def filtered(draw: st.DrawFn) -> str:
    parts = [draw(values)]
    for _ in range(draw(st.integers(min_value=0, max_value=3))):
        name = draw(filter_names)
        args = draw(st.lists(values, max_size=2))
        parts.append(f"{name}: {', '.join(args)}" if args else name)
    return " | ".join(parts)


conditions = st.builds(
    lambda left, op, right: f"{left} {op} {right}" if op else left,
    values,
    st.sampled_from(["", "==", "!=", ">", "<", "contains", "and", "or"]),
    values,
)
texts = st.text(alphabet="ab {}%$#\n-|.", max_size=12)


def blocks(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.one_of(
        st.builds(lambda c, b: f"{{% if {c} %}}{b}{{% endif %}}", conditions, children),
        st.builds(
            lambda c, b, e: f"{{% if {c} %}}{b}{{% elsif {c} %}}{e}{{% else %}}{b}{{% endif %}}",
            conditions,
            children,
            children,
        ),
        st.builds(lambda c, b: f"{{% unless {c} %}}{b}{{% endunless %}}", conditions, children),
        st.builds(lambda v, b: f"{{% for i in {v} %}}{b}{{% break %}}{{% endfor %}}", values, children),
        st.builds(
            lambda v, b: (
                f"{{% for i in {v} limit: 2 reversed %}}{b}{{% continue %}}{{% else %}}e{{% endfor %}}"
            ),
            values,
            children,
        ),
        st.builds(lambda v, b: f"{{% tablerow i in {v} cols: 2 %}}{b}{{% endtablerow %}}", values, children),
        st.builds(
            lambda v, w, b: f"{{% case {v} %}}{{% when {w} %}}{b}{{% else %}}z{{% endcase %}}",
            values,
            values,
            children,
        ),
        st.builds(lambda a, b: a + b, children, children),
    )


leaves = st.one_of(
    texts,
    st.builds(lambda f: f"{{{{ {f} }}}}", filtered()),
    st.builds(lambda f: f"{{% assign x = {f} %}}", filtered()),
    st.builds(lambda f: f"{{% echo {f} %}}", filtered()),
    st.builds(lambda a, b: f"{{% cycle {a}, {b} %}}", values, values),
    st.just("{% increment counter %}"),
    st.just("{% decrement counter %}"),
    st.just("{% raw %}{{ x }}{% endraw %}"),
    st.just("{% comment %}{{ x }}{% endcomment %}"),
    st.just("{% # a note %}"),
    st.just("{% break %}"),
    st.builds(lambda f: f"{{% system %}}{{{{ {f} }}}}{{% assign x = 1 %}}{{% endsystem %}}", filtered()),
    st.builds(lambda f: f"{{% liquid\nassign x = {f}\necho x\n%}}", filtered()),
)
templates = st.recursive(leaves, blocks, max_leaves=12)


def run_data(fields: dict[str, Any]) -> dict[str, object]:
    return {"input": fields, "today": "2026-10-17", "now": "2026-10-17T10:18:42Z"}


@SETTINGS
@given(source=templates, fields=input_fields)
def test_random_templates_fail_only_as_documented(source: str, fields: dict[str, Any]) -> None:
    problems = check_template(source, place=place_names("message"), input_schema=None, first_line=3)
    assert all(isinstance(line, int) and line >= 3 and isinstance(message, str) for line, message in problems)
    try:
        rendered = render_text(source, run_data(fields))
    except RenderFailure as failure:
        assert failure.line is None or failure.line >= 1
        assert failure.pointer is None or failure.pointer.startswith("/input/")
    else:
        assert isinstance(rendered, str)
    with contextlib.suppress(RenderFailure):
        render_typed({"v": source, "w": [source, 1]}, run_data(fields))
    with contextlib.suppress(RenderFailure):
        system, message = render_prompt(source, run_data(fields))
        assert system is None or isinstance(system, str)
        assert message.strip()


@SETTINGS
@given(source=st.text(max_size=80), fields=input_fields)
def test_any_text_fails_only_as_documented(source: str, fields: dict[str, Any]) -> None:
    problems = check_template(
        source, place=place_names("message"), input_schema={"type": "object"}, first_line=1
    )
    assert isinstance(problems, list)
    with contextlib.suppress(RenderFailure):
        assert isinstance(render_text(source, run_data(fields)), str)


@SETTINGS
@given(source=templates, fields=input_fields)
def test_a_template_that_passes_its_checks_renders_or_fails_as_documented(
    source: str, fields: dict[str, Any]
) -> None:
    if check_template(source, place=place_names("message"), input_schema=None, first_line=1):
        return
    try:
        rendered = render_text(source, run_data(fields))
    except RenderFailure as failure:
        assert failure.message
    else:
        assert len(rendered) <= 200_000
