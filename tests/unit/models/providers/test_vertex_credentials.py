"""Vertex's application default credentials through google-auth (``vertex_auth.access_token``): the
token a found credential gives, refreshed when it is not valid, and each failure as its run's ending."""

from __future__ import annotations

from typing import Any

import pytest

from parley.models.providers import vertex_auth
from parley.models.providers.base import ModelCallFailed, ProviderSettings
from parley.models.providers.context import CallContext

SETTINGS = ProviderSettings(provider="vertex", kind="vertex", project="p1", location="us-central1")


class Credentials:
    def __init__(self, valid: bool) -> None:
        self.valid = valid
        self.token: str | None = "ya29.found" if valid else None
        self.refreshed = 0

    def refresh(self, request: Any) -> None:
        self.refreshed += 1
        self.valid, self.token = True, "ya29.refreshed"


@pytest.fixture(autouse=True)
def forget_found_credentials() -> None:
    vertex_auth._found.clear()


def test_found_credentials_give_their_token_and_are_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    import google.auth

    found = Credentials(valid=True)
    calls: list[Any] = []
    monkeypatch.setattr(google.auth, "default", lambda scopes: calls.append(scopes) or (found, "p1"))

    assert vertex_auth.access_token(SETTINGS, CallContext()) == "ya29.found"
    assert vertex_auth.access_token(SETTINGS, CallContext()) == "ya29.found"
    assert calls == [[vertex_auth.SCOPE]]


def test_credentials_that_are_not_valid_are_refreshed(monkeypatch: pytest.MonkeyPatch) -> None:
    import google.auth

    stale = Credentials(valid=False)
    monkeypatch.setattr(google.auth, "default", lambda scopes: (stale, "p1"))

    assert vertex_auth.access_token(SETTINGS, CallContext()) == "ya29.refreshed"
    assert stale.refreshed == 1


def test_no_credentials_is_unavailable_naming_the_provider(monkeypatch: pytest.MonkeyPatch) -> None:
    import google.auth
    from google.auth.exceptions import DefaultCredentialsError

    def missing(scopes: Any) -> Any:
        raise DefaultCredentialsError("none")

    monkeypatch.setattr(google.auth, "default", missing)

    with pytest.raises(ModelCallFailed) as failed:
        vertex_auth.access_token(SETTINGS, CallContext())

    assert (failed.value.kind, failed.value.provider) == ("unavailable", "vertex")
