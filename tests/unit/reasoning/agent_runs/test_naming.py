"""The names tools reach the model under (reasoning-format.md, "What the model sees")."""

from __future__ import annotations

import hashlib
import random
import re

from hypothesis import given
from hypothesis import strategies as st

from parley.reasoning.agent_runs.naming import NAME_MAX, model_names, name_hash, plain_name, tools_by_name

ALLOWED = re.compile(r"[A-Za-z0-9_]{1,64}")


def test_a_name_is_server__tool() -> None:
    assert model_names([("graph", "search"), ("notes", "add")]) == {
        ("graph", "search"): "graph__search",
        ("notes", "add"): "notes__add",
    }


def test_other_characters_become_underscores() -> None:
    assert plain_name("my-graph", "search.v2") == "my_graph__search_v2"
    assert plain_name("café", "a b/c") == "caf___a_b_c"  # letters are ASCII letters
    assert model_names([("my-graph", "search.v2")]) == {("my-graph", "search.v2"): "my_graph__search_v2"}


def test_the_hash_is_8_hex_digits_of_sha256_of_server_slash_tool() -> None:
    assert name_hash("graph", "search") == hashlib.sha256(b"graph/search").hexdigest()[:8]


def test_names_that_clash_after_the_change_each_get_their_hash() -> None:
    names = model_names([("a-b", "c"), ("a.b", "c"), ("x", "y")])
    assert names == {
        ("a-b", "c"): f"a_b__c_{name_hash('a-b', 'c')}",
        ("a.b", "c"): f"a_b__c_{name_hash('a.b', 'c')}",
        ("x", "y"): "x__y",
    }


def test_a_name_that_clashes_with_an_unchanged_one_hashes_both() -> None:
    names = model_names([("a_b", "c"), ("a-b", "c")])
    assert names[("a_b", "c")] == f"a_b__c_{name_hash('a_b', 'c')}"
    assert names[("a-b", "c")] == f"a_b__c_{name_hash('a-b', 'c')}"


def test_a_name_longer_than_64_characters_is_cut_and_hashed() -> None:
    server, tool = "s" * 30, "t" * 40  # 72 characters
    name = model_names([(server, tool)])[(server, tool)]
    assert len(name) == NAME_MAX
    assert name == f"{('s' * 30 + '__' + 't' * 40)[:55]}_{name_hash(server, tool)}"


def test_a_name_of_64_characters_is_kept() -> None:
    server, tool = "s" * 31, "t" * 31
    assert model_names([(server, tool)])[(server, tool)] == f"{server}__{tool}"


def test_a_numeric_suffix_resolves_a_clash_that_remains() -> None:
    # A hashed name equal to another tool's own name: the first in (server, tool) order keeps it.
    hashed = f"a_b__c_{name_hash('a-b', 'c')}"
    server, tool = "a_b", f"c_{name_hash('a-b', 'c')}"
    assert plain_name(server, tool) == hashed
    names = model_names([(server, tool), ("a-b", "c"), ("a.b", "c")])
    assert names[("a-b", "c")] == hashed
    assert names[(server, tool)] == f"{hashed}_2"
    assert len(set(names.values())) == 3


def test_a_suffix_on_a_64_character_name_stays_within_64() -> None:
    long_hashed = model_names([("s" * 30, "t" * 40)])[("s" * 30, "t" * 40)]
    # Another tool whose own name is that hashed name, and long enough to be hashed itself, cannot
    # exist (its name would change); so build the clash with a 64-character plain name instead.
    server, tool = long_hashed[:30], long_hashed[32:]
    assert plain_name(server, tool) == long_hashed[:30] + "__" + long_hashed[32:]
    names = model_names([("s" * 30, "t" * 40), (server, tool)])
    assert all(len(name) <= NAME_MAX for name in names.values())
    assert len(set(names.values())) == 2


def test_a_pair_given_twice_is_named_once() -> None:
    assert model_names([("g", "s"), ("g", "s")]) == {("g", "s"): "g__s"}


def test_the_reverse_lookup() -> None:
    names = model_names([("a-b", "c"), ("a.b", "c"), ("x", "y")])
    back = tools_by_name(names)
    assert back["x__y"] == ("x", "y")
    assert {back[name] for name in names.values()} == set(names)


tools = st.lists(
    st.tuples(
        st.text(alphabet="ab-._é", min_size=1, max_size=40),
        st.text(alphabet="ab-._é", min_size=1, max_size=40),
    ),
    max_size=12,
)


@given(tools, st.randoms(use_true_random=False))
def test_names_are_unique_allowed_and_independent_of_order(
    pairs: list[tuple[str, str]], rng: random.Random
) -> None:
    names = model_names(pairs)
    assert set(names) == set(pairs)
    assert len(set(names.values())) == len(names)
    assert all(ALLOWED.fullmatch(name) for name in names.values())
    shuffled = list(pairs)
    rng.shuffle(shuffled)
    assert model_names(shuffled) == names
