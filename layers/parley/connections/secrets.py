"""A connection's secrets: its headers and OAuth tokens (``http-api.md``, "Connections"; issue 32,
part 3), never shown, logged or recorded.

The value is a JSON object: ``{"headers": {...}}`` for ``auth: headers``, ``{"oauth": {...}}`` for
OAuth (plus what an authorization under way keeps). Three keepers, one protocol
(:class:`ConnectionSecrets`):

- :class:`AwsConnectionSecrets`, on AWS: one Secrets Manager secret per connection, named
  ``{prefix}{org}/{name}`` where the stage's prefix (``PARLEY_CONNECTION_SECRETS_PREFIX``) is
  ``parley/<stage>/connections/``; the functions are granted exactly the calls they make on that prefix
  (``cdk/parley_cdk``). Removing a connection deletes its secret at once
  (``ForceDeleteWithoutRecovery``): a connection added again under the same name starts clean.
- :class:`LocalConnectionSecrets`, for ``parley serve`` with a data folder: one file per connection in
  the folder (``connections/{org}/{name}.secret``), each the value encrypted with Fernet
  (``cryptography``: AES-128-CBC and HMAC-SHA256) under a key kept OUTSIDE the folder —
  ``PARLEY_SECRET_KEY_FILE``, else ``~/.config/parley/secret.key`` — made on first use with mode 0600.
  The files are 0600 too, written whole (a temporary file, ``fsync``, rename) before the response that
  reports the connection. A folder copied without its key keeps its connections, but their secrets read
  as :class:`SecretUnreadable` (the connection then shows ``broken``).
- :class:`MemoryConnectionSecrets`, for ``--data none`` and tests.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Protocol

from parley.errors import ParleyError
from parley.infrastructure.functions import CONNECTION_SECRETS_PREFIX_VARIABLE

if TYPE_CHECKING:
    from cryptography.fernet import Fernet

#: The environment variable naming the local server's key file.
SECRET_KEY_FILE_VARIABLE: Final = "PARLEY_SECRET_KEY_FILE"
#: The folder of the data folder holding the encrypted secrets.
LOCAL_SECRETS_FOLDER: Final = "connections"


class SecretUnreadable(ParleyError):
    """A connection's secret cannot be read (gone, denied, or not decryptable): the connection is
    ``broken``. The message never holds the secret."""


class ConnectionSecrets(Protocol):
    """A connection's headers and OAuth tokens, never shown."""

    def put(self, org: str, name: str, value: Mapping[str, Any]) -> None:
        """Keep ``value`` as the connection's secret (replacing any)."""
        ...

    def read(self, org: str, name: str) -> dict[str, Any]:
        """The connection's secret; :class:`SecretUnreadable` when it cannot be read."""
        ...

    def delete(self, org: str, name: str) -> None:
        """Forget the connection's secret (nothing happens when there is none)."""
        ...


def _encoded(value: Mapping[str, Any]) -> str:
    return json.dumps(dict(value), ensure_ascii=False, separators=(",", ":"))


def _decoded(text: str | bytes) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError:
        raise SecretUnreadable("the secret is not a JSON object") from None
    if not isinstance(value, dict):
        raise SecretUnreadable("the secret is not a JSON object")
    return value


# --- in memory -----------------------------------------------------------------------------------


class MemoryConnectionSecrets:
    """Secrets in this process only (``--data none``, tests)."""

    def __init__(self) -> None:
        self._values: dict[tuple[str, str], str] = {}
        self._lock = threading.Lock()

    def put(self, org: str, name: str, value: Mapping[str, Any]) -> None:
        with self._lock:
            self._values[(org, name)] = _encoded(value)

    def read(self, org: str, name: str) -> dict[str, Any]:
        with self._lock:
            text = self._values.get((org, name))
        if text is None:
            raise SecretUnreadable(f"connection {org}/{name} has no secret")
        return _decoded(text)

    def delete(self, org: str, name: str) -> None:
        with self._lock:
            self._values.pop((org, name), None)


# --- AWS: Secrets Manager ----------------------------------------------------------------------


def secret_name(prefix: str, org: str, name: str) -> str:
    """The Secrets Manager name of a connection's secret: ``{prefix}{org}/{name}``."""
    return f"{prefix}{org}/{name}"


class AwsConnectionSecrets:
    """One Secrets Manager secret per connection, under the stage's prefix."""

    def __init__(self, client: Any, prefix: str) -> None:
        if not prefix.endswith("/"):
            prefix += "/"
        self._client = client
        self.prefix = prefix

    def put(self, org: str, name: str, value: Mapping[str, Any]) -> None:
        from botocore.exceptions import ClientError

        secret_id = secret_name(self.prefix, org, name)
        text = _encoded(value)
        try:
            self._client.create_secret(
                Name=secret_id,
                SecretString=text,
                Description=f"Parley connection {name} of org {org}: its headers or OAuth tokens",
            )
        except ClientError as exc:
            if _code(exc) != "ResourceExistsException":
                raise _unavailable_or(exc) from None
            try:
                self._client.put_secret_value(SecretId=secret_id, SecretString=text)
            except ClientError as again:
                raise _unavailable_or(again) from None

    def read(self, org: str, name: str) -> dict[str, Any]:
        from botocore.exceptions import ClientError

        try:
            found = self._client.get_secret_value(SecretId=secret_name(self.prefix, org, name))
        except ClientError as exc:
            if _code(exc) in _BUSY:
                raise _unavailable_or(exc) from None
            raise SecretUnreadable(
                f"connection {org}/{name}: its secret cannot be read ({_code(exc)})"
            ) from None
        text = found.get("SecretString")
        if not isinstance(text, str):
            raise SecretUnreadable(f"connection {org}/{name}: its secret is not text")
        return _decoded(text)

    def delete(self, org: str, name: str) -> None:
        from botocore.exceptions import ClientError

        try:
            self._client.delete_secret(
                SecretId=secret_name(self.prefix, org, name), ForceDeleteWithoutRecovery=True
            )
        except ClientError as exc:
            if _code(exc) != "ResourceNotFoundException":
                raise _unavailable_or(exc) from None


_BUSY: Final = frozenset({"ThrottlingException", "InternalServiceError", "ServiceUnavailable"})


def _code(exc: Any) -> str:
    return str(exc.response.get("Error", {}).get("Code", ""))


def _unavailable_or(exc: Any) -> Exception:
    """A busy Secrets Manager (or a secret still being deleted) is ``503 unavailable``; anything else is
    a failure of the deployment, kept as it is (it becomes ``500 internal``, logged without the value)."""
    from parley.errors import Problem

    code = _code(exc)
    if code in _BUSY or code == "InvalidRequestException":
        return Problem("unavailable", "The secret store is busy; try again shortly.")
    return RuntimeError(f"Secrets Manager refused the call: {code}")


# --- locally: the data folder, encrypted ------------------------------------------------------


def default_key_file(environ: Mapping[str, str] | None = None) -> Path:
    """``PARLEY_SECRET_KEY_FILE``, else ``$XDG_CONFIG_HOME/parley/secret.key`` (``~/.config/…``)."""
    env = os.environ if environ is None else environ
    named = env.get(SECRET_KEY_FILE_VARIABLE, "").strip()
    if named:
        return Path(named).expanduser()
    base = env.get("XDG_CONFIG_HOME", "").strip()
    return (Path(base) if base else Path.home() / ".config") / "parley" / "secret.key"


def _inside(path: Path, folder: Path) -> bool:
    try:
        path.resolve().relative_to(folder.resolve())
    except ValueError:
        return False
    return True


def load_or_create_key(path: Path) -> bytes:
    """The Fernet key in ``path``, made there (mode 0600, its folder 0700) when there is none."""
    from cryptography.fernet import Fernet

    try:
        return path.read_bytes().strip()
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    key = Fernet.generate_key()
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another server made it meanwhile
        return path.read_bytes().strip()
    with os.fdopen(descriptor, "wb") as file:
        file.write(key + b"\n")
        file.flush()
        os.fsync(file.fileno())
    return key


class LocalConnectionSecrets:
    """Secrets in the data folder, each file encrypted with the key kept outside it (see above)."""

    def __init__(self, folder: Path, key_file: Path | None = None) -> None:
        self.folder = Path(folder) / LOCAL_SECRETS_FOLDER
        self.key_file = key_file if key_file is not None else default_key_file()
        if _inside(self.key_file, Path(folder)):
            raise ValueError(
                f"the secret key file {self.key_file} is inside the data folder {folder}: "
                f"keep it outside ({SECRET_KEY_FILE_VARIABLE} names another place)"
            )
        self._lock = threading.Lock()
        self._fernet: Fernet | None = None

    def _cipher(self) -> Fernet:
        if self._fernet is None:
            from cryptography.fernet import Fernet

            try:
                self._fernet = Fernet(load_or_create_key(self.key_file))
            except ValueError:
                raise ValueError(f"the secret key file {self.key_file} holds no Fernet key") from None
        return self._fernet

    def _path(self, org: str, name: str) -> Path:
        return self.folder / org / f"{name}.secret"

    def put(self, org: str, name: str, value: Mapping[str, Any]) -> None:
        token = self._cipher().encrypt(_encoded(value).encode("utf-8"))
        path = self._path(org, name)
        with self._lock:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            temporary = path.with_suffix(".tmp")
            descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(descriptor, "wb") as file:
                file.write(token)
                file.flush()
                os.fsync(file.fileno())
            os.chmod(temporary, 0o600)
            os.replace(temporary, path)
            _sync_folder(path.parent)

    def read(self, org: str, name: str) -> dict[str, Any]:
        from cryptography.fernet import InvalidToken

        try:
            token = self._path(org, name).read_bytes()
        except OSError:
            raise SecretUnreadable(f"connection {org}/{name} has no secret in the data folder") from None
        try:
            plain = self._cipher().decrypt(token)
        except InvalidToken:
            raise SecretUnreadable(
                f"connection {org}/{name}: its secret does not open with the key in {self.key_file}"
            ) from None
        return _decoded(plain)

    def delete(self, org: str, name: str) -> None:
        path = self._path(org, name)
        with self._lock:
            try:
                path.unlink()
            except FileNotFoundError:
                return
            _sync_folder(path.parent)


def _sync_folder(folder: Path) -> None:
    """``fsync`` a folder, so a file made, renamed or removed in it stays so after a crash."""
    descriptor = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def secrets_from_environment(environ: Mapping[str, str], client: Any) -> ConnectionSecrets | None:
    """The Secrets Manager keeper of ``PARLEY_CONNECTION_SECRETS_PREFIX`` (through ``client``); ``None``
    without the variable (a function that keeps no connection secret)."""
    prefix = environ.get(CONNECTION_SECRETS_PREFIX_VARIABLE, "").strip()
    return AwsConnectionSecrets(client, prefix) if prefix else None


class NoConnectionSecrets:
    """The keeper of a deployed function that was given no prefix (``PARLEY_CONNECTION_SECRETS_PREFIX``):
    it keeps nothing, and every secret reads as unreadable (the connection shows ``broken``)."""

    def put(self, org: str, name: str, value: Mapping[str, Any]) -> None:
        raise RuntimeError(
            f"this function keeps no connection secret: {CONNECTION_SECRETS_PREFIX_VARIABLE} is not set"
        )

    def read(self, org: str, name: str) -> dict[str, Any]:
        raise SecretUnreadable(
            f"this function reads no connection secret: {CONNECTION_SECRETS_PREFIX_VARIABLE} is not set"
        )

    def delete(self, org: str, name: str) -> None:
        return None
