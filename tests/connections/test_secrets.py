"""Connection secrets (issue 32, part 3): Secrets Manager on moto, the data folder's encrypted files
(never in the clear, 0600, the key outside the folder), and memory."""

from __future__ import annotations

import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from parley.connections.secrets import (
    AwsConnectionSecrets,
    ConnectionSecrets,
    LocalConnectionSecrets,
    MemoryConnectionSecrets,
    SecretUnreadable,
    default_key_file,
    secrets_from_environment,
)

VALUE = {"headers": {"Authorization": "Bearer very-secret-value-123"}}
CLEAR = b"very-secret-value-123"


@pytest.fixture
def secretsmanager() -> Iterator[Any]:
    from moto import mock_aws

    from parley.local.aws import local_session

    with mock_aws():
        yield local_session().client("secretsmanager")


def _round_trip(secrets: ConnectionSecrets) -> None:
    with pytest.raises(SecretUnreadable):
        secrets.read("acme", "notes")
    secrets.put("acme", "notes", VALUE)
    assert secrets.read("acme", "notes") == VALUE
    secrets.put("acme", "notes", {"oauth": {"access_token": "a"}})
    assert secrets.read("acme", "notes") == {"oauth": {"access_token": "a"}}
    with pytest.raises(SecretUnreadable):
        secrets.read("globex", "notes")
    secrets.delete("acme", "notes")
    secrets.delete("acme", "notes")
    with pytest.raises(SecretUnreadable):
        secrets.read("acme", "notes")
    secrets.put("acme", "notes", VALUE)  # the name again, at once
    assert secrets.read("acme", "notes") == VALUE


def test_memory() -> None:
    _round_trip(MemoryConnectionSecrets())


def test_secrets_manager(secretsmanager: Any) -> None:
    secrets = AwsConnectionSecrets(secretsmanager, "parley/dev/connections/")
    _round_trip(secrets)
    names = [s["Name"] for s in secretsmanager.list_secrets()["SecretList"]]
    assert names == ["parley/dev/connections/acme/notes"]


def test_secrets_manager_names_from_the_environment(secretsmanager: Any) -> None:
    assert secrets_from_environment({}, secretsmanager) is None
    secrets = secrets_from_environment(
        {"PARLEY_CONNECTION_SECRETS_PREFIX": "parley/dev/connections"}, secretsmanager
    )
    assert isinstance(secrets, AwsConnectionSecrets) and secrets.prefix == "parley/dev/connections/"


def test_local_files_are_encrypted_private_and_keyed_from_outside(tmp_path: Path) -> None:
    data, key = tmp_path / "data", tmp_path / "config" / "secret.key"
    secrets = LocalConnectionSecrets(data, key)
    _round_trip(secrets)
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    files = [p for p in data.rglob("*") if p.is_file()]
    assert [p.relative_to(data).as_posix() for p in files] == ["connections/acme/notes.secret"]
    for path in files:
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert CLEAR not in path.read_bytes() and b"Authorization" not in path.read_bytes()
    # Another server on the same folder and key reads it; without the key it is unreadable.
    assert LocalConnectionSecrets(data, key).read("acme", "notes") == VALUE
    with pytest.raises(SecretUnreadable, match="does not open"):
        LocalConnectionSecrets(data, tmp_path / "other.key").read("acme", "notes")


def test_the_key_may_not_live_in_the_data_folder(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="inside the data folder"):
        LocalConnectionSecrets(tmp_path, tmp_path / "secret.key")


def test_the_default_key_file() -> None:
    assert default_key_file({"PARLEY_SECRET_KEY_FILE": "/k/secret.key"}) == Path("/k/secret.key")
    assert default_key_file({"XDG_CONFIG_HOME": "/c"}) == Path("/c/parley/secret.key")
