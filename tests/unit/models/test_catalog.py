"""``list_models`` (http-api.md, "Models"): where the entries come from, their order, the patterns, the
providers' lists kept five minutes, and what a failed read does."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest

from parley.clock import ManualClock
from parley.config import CatalogEntry, ModelsConfig
from parley.models.catalog import LIST_MAX_AGE, ModelListCache, list_models

START = datetime(2026, 10, 17, 10, 18, 42, tzinfo=UTC)


@dataclass(frozen=True)
class Listed:
    """What a provider adapter's ``ListedModel`` holds."""

    id: str
    created: int | None = None
    owned_by: str | None = None
    name: str | None = None
    context_window: int | None = None
    max_tokens: int | None = None


class Lister:
    """Each provider's list; a provider in ``failing`` raises; every call is counted."""

    def __init__(self, lists: dict[str, list[Listed]]) -> None:
        self.lists = lists
        self.failing: set[str] = set()
        self.calls: list[str] = []

    def __call__(self, provider: str) -> list[Listed]:
        self.calls.append(provider)
        if provider in self.failing:
            raise ConnectionError(f"{provider} is down (sk-secret-in-the-message)")
        return self.lists[provider]


SPEC = ModelsConfig(
    allowed=("anthropic/*", "demo/*"),
    aliases={"fast": "anthropic/claude-haiku-4-5", "anthropic/*": "bedrock-anthropic/us.anthropic.*"},
    catalog=(CatalogEntry(id="demo/echo", context_window=32768, max_tokens=4096),),
)


def lists() -> dict[str, list[Listed]]:
    return {
        "anthropic": [
            Listed("claude-sonnet-4-5", 1_759_000_000, "anthropic", "Claude Sonnet 4.5", 200_000, 64_000),
            Listed("claude-haiku-4-5", 1_760_000_000, None, "Claude Haiku 4.5", 200_000, 64_000),
        ],
        "demo": [Listed("echo", 1_767_225_600, "parley-demo"), Listed("echo", 1), Listed("shout")],
    }


def test_the_entries_their_fields_and_their_order() -> None:
    clock = ManualClock(START)

    answer = list_models(SPEC, ["anthropic", "demo"], Lister(lists()), clock.now)

    assert answer["object"] == "list"
    assert answer["catalog_status"] == "complete"
    assert answer["listed_at"] == "2026-10-17T10:18:42.000Z"
    assert answer["data"] == [
        {
            "id": "anthropic/*",
            "object": "model",
            "created": 0,
            "owned_by": "anthropic",
            "pattern": True,
            "resolved_to": "bedrock-anthropic/us.anthropic.*",
        },
        {
            "id": "anthropic/claude-haiku-4-5",
            "object": "model",
            "created": 1_760_000_000,
            "owned_by": "anthropic",
            "name": "Claude Haiku 4.5",
            "context_window": 200_000,
            "max_tokens": 64_000,
        },
        {
            "id": "anthropic/claude-sonnet-4-5",
            "object": "model",
            "created": 1_759_000_000,
            "owned_by": "anthropic",
            "name": "Claude Sonnet 4.5",
            "context_window": 200_000,
            "max_tokens": 64_000,
        },
        {"id": "demo/*", "object": "model", "created": 0, "owned_by": "demo", "pattern": True},
        {
            "id": "demo/echo",
            "object": "model",
            "created": 1_767_225_600,
            "owned_by": "parley-demo",
            "context_window": 32768,
            "max_tokens": 4096,
        },
        {"id": "demo/shout", "object": "model", "created": 0, "owned_by": "demo"},
        {
            "id": "fast",
            "object": "model",
            "created": 1_760_000_000,
            "owned_by": "anthropic",
            "resolved_to": "anthropic/claude-haiku-4-5",
            "name": "Claude Haiku 4.5",
            "context_window": 200_000,
            "max_tokens": 64_000,
        },
    ]


def test_each_id_once_and_sorted() -> None:
    config = ModelsConfig(
        allowed=("demo/echo", "demo/*"),
        aliases={"demo/echo": "demo/shout", "a-first": "demo/echo"},
        catalog=(CatalogEntry(id="demo/echo", context_window=10, max_tokens=5),),
    )

    data = list_models(config, ["demo", "demo"], Lister(lists()), ManualClock(START).now)["data"]

    ids = [entry["id"] for entry in data]
    assert ids == sorted(ids) == ["a-first", "demo/*", "demo/echo", "demo/shout"]
    echo = data[2]
    assert echo["resolved_to"] == "demo/shout"  # the alias and the listed model are one entry
    assert echo["created"] == 1_767_225_600


def test_the_catalog_wins_over_the_providers_list_and_adds_what_no_list_has() -> None:
    config = ModelsConfig(
        catalog=(
            CatalogEntry(
                id="anthropic/claude-sonnet-4-5", context_window=1_000_000, max_tokens=8192, name="Big"
            ),
            CatalogEntry(id="internal/llama-3.3-70b", context_window=131072, max_tokens=8192),
        )
    )

    data = {
        e["id"]: e
        for e in list_models(config, ["anthropic"], Lister(lists()), ManualClock(START).now)["data"]
    }

    sonnet = data["anthropic/claude-sonnet-4-5"]
    assert (sonnet["context_window"], sonnet["max_tokens"], sonnet["name"]) == (1_000_000, 8192, "Big")
    assert sonnet["created"] == 1_759_000_000
    assert data["internal/llama-3.3-70b"] == {
        "id": "internal/llama-3.3-70b",
        "object": "model",
        "created": 0,
        "owned_by": "internal",
        "context_window": 131072,
        "max_tokens": 8192,
    }


def test_an_alias_to_an_unknown_model_and_a_prefix_without_a_provider() -> None:
    config = ModelsConfig(allowed=("gpt-*",), aliases={"smart": "openai/gpt-5"})

    data = list_models(config, [], Lister({}), ManualClock(START).now)["data"]

    assert data == [
        {"id": "gpt-*", "object": "model", "created": 0, "owned_by": "operator", "pattern": True},
        {"id": "smart", "object": "model", "created": 0, "owned_by": "openai", "resolved_to": "openai/gpt-5"},
    ]


def test_the_provider_query() -> None:
    answer = list_models(
        SPEC, ["anthropic", "demo"], lister := Lister(lists()), ManualClock(START).now, "demo"
    )

    assert [e["id"] for e in answer["data"]] == ["demo/*", "demo/echo", "demo/shout"]
    assert lister.calls == ["demo"]
    anthropic = list_models(SPEC, ["anthropic", "demo"], Lister(lists()), ManualClock(START).now, "anthropic")
    # `fast` names no provider itself: it counts as its target's.
    assert [e["id"] for e in anthropic["data"]] == [
        "anthropic/*", "anthropic/claude-haiku-4-5", "anthropic/claude-sonnet-4-5", "fast"
    ]  # fmt: skip
    unknown = list_models(SPEC, ["anthropic"], Lister(lists()), ManualClock(START).now, "nobody")
    assert (unknown["data"], unknown["catalog_status"]) == ([], "complete")


def test_a_provider_whose_list_cannot_be_read_makes_the_answer_partial(
    caplog: pytest.LogCaptureFixture,
) -> None:
    lister = Lister(lists())
    lister.failing.add("anthropic")

    answer = list_models(SPEC, ["anthropic", "demo"], lister, ManualClock(START).now)

    assert answer["catalog_status"] == "partial"
    ids = [e["id"] for e in answer["data"]]
    assert "anthropic/claude-sonnet-4-5" not in ids
    assert {"demo/echo", "fast", "anthropic/*"} <= set(ids)
    assert "anthropic" in caplog.text and "ConnectionError" in caplog.text
    assert "sk-secret-in-the-message" not in caplog.text


def test_each_list_is_kept_five_minutes() -> None:
    clock = ManualClock(START)
    lister = Lister(lists())
    cache = ModelListCache()

    list_models(SPEC, ["anthropic", "demo"], lister, clock.now, cache=cache)
    clock.advance(299)
    kept = list_models(SPEC, ["anthropic", "demo"], lister, clock.now, cache=cache)

    assert lister.calls == ["anthropic", "demo"]
    assert kept["listed_at"] == "2026-10-17T10:18:42.000Z"
    clock.advance(1)
    fresh = list_models(SPEC, ["anthropic", "demo"], lister, clock.now, cache=cache)
    assert lister.calls == ["anthropic", "demo", "anthropic", "demo"]
    assert fresh["listed_at"] == "2026-10-17T10:23:42.000Z"
    assert timedelta(minutes=5) == LIST_MAX_AGE


def test_listed_at_is_the_oldest_list_used() -> None:
    clock = ManualClock(START)
    cache = ModelListCache()
    list_models(SPEC, ["anthropic"], Lister(lists()), clock.now, cache=cache)
    clock.advance(120)

    answer = list_models(SPEC, ["anthropic", "demo"], Lister(lists()), clock.now, cache=cache)

    assert answer["listed_at"] == "2026-10-17T10:18:42.000Z"  # anthropic's, two minutes older than demo's
    clock.advance(200)  # anthropic's is now 320 s old: read again; demo's (200 s) is kept
    assert list_models(SPEC, ["anthropic", "demo"], Lister(lists()), clock.now, cache=cache)["listed_at"] == (
        "2026-10-17T10:20:42.000Z"
    )


def test_without_lists_listed_at_is_now() -> None:
    clock = ManualClock(START + timedelta(milliseconds=5))

    assert list_models(SPEC, [], Lister({}), clock.now)["listed_at"] == "2026-10-17T10:18:42.005Z"


def test_the_last_good_list_is_kept_when_a_refresh_fails() -> None:
    clock = ManualClock(START)
    lister = Lister(lists())
    cache = ModelListCache()
    list_models(SPEC, ["anthropic", "demo"], lister, clock.now, cache=cache)

    clock.advance(600)
    lister.failing.add("anthropic")
    answer = list_models(SPEC, ["anthropic", "demo"], lister, clock.now, cache=cache)

    assert "anthropic/claude-sonnet-4-5" in [e["id"] for e in answer["data"]]
    assert answer["catalog_status"] == "complete"
    assert answer["listed_at"] == "2026-10-17T10:18:42.000Z"  # the kept list's time says how old it is

    lister.failing.clear()
    clock.advance(30)
    healed = list_models(SPEC, ["anthropic", "demo"], lister, clock.now, cache=cache)
    assert healed["listed_at"] == "2026-10-17T10:28:42.000Z"


def test_a_failing_provider_is_left_alone_a_while() -> None:
    clock = ManualClock(START)
    lister = Lister(lists())
    lister.failing.add("anthropic")
    cache = ModelListCache()

    for _ in range(3):
        assert list_models(SPEC, ["anthropic"], lister, clock.now, cache=cache)["catalog_status"] == "partial"
        clock.advance(10)
    assert lister.calls == ["anthropic"]
    lister.failing.clear()
    clock.advance(1)
    assert list_models(SPEC, ["anthropic"], lister, clock.now, cache=cache)["catalog_status"] == "complete"
    assert lister.calls == ["anthropic", "anthropic"]


def test_without_a_cache_every_call_reads_the_lists() -> None:
    lister = Lister(lists())
    clock = ManualClock(START)

    list_models(SPEC, ["demo"], lister, clock.now)
    list_models(SPEC, ["demo"], lister, clock.now)

    assert lister.calls == ["demo", "demo"]


def test_clearing_the_cache() -> None:
    lister = Lister(lists())
    clock = ManualClock(START)
    cache = ModelListCache()
    list_models(SPEC, ["demo"], lister, clock.now, cache=cache)

    cache.clear()
    list_models(SPEC, ["demo"], lister, clock.now, cache=cache)

    assert lister.calls == ["demo", "demo"]


def test_a_provider_adapters_listed_model_fits() -> None:
    base = pytest.importorskip("parley.models.providers.base")
    model = base.ListedModel(id="echo", created=None, owned_by="demo")

    data = list_models(ModelsConfig(), ["demo"], lambda provider: [model], ManualClock(START).now)["data"]

    assert data == [{"id": "demo/echo", "object": "model", "created": 0, "owned_by": "demo"}]
