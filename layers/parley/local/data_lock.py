"""One ``parley serve`` per data folder (issue 27, "One server per data folder").

Two servers that kept the same folder would each write their own state over the other's, so what one of
them acknowledged could be gone once both stopped. While a server uses its data folder it holds an
exclusive lock on the file ``serve.lock`` in it (``flock``: the kernel releases it when the process ends,
however it ends, so a lock left by a killed server never blocks the next one). The file says which
process holds it and, once the server listens, on which port, so that a second server can name the
first in its refusal. The file is left in place when the server stops: only the lock matters, not the
file.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Final

from parley.errors import ParleyError

__all__ = ["LOCK_FILE", "DataFolderInUse", "DataFolderLock"]

LOCK_FILE: Final = "serve.lock"


@dataclass(frozen=True)
class Holder:
    """What the lock file says of the server that holds it (each ``None`` when unknown)."""

    pid: int | None
    port: int | None
    host: str | None


class DataFolderInUse(ParleyError):
    """Another server holds the data folder's lock."""

    def __init__(self, folder: Path, holder: Holder) -> None:
        self.folder = folder
        self.holder = holder
        super().__init__(self.message())

    def message(self) -> str:
        """The refusal, with the folder, the other server and the two ways out."""
        process = f"process {self.holder.pid}" if self.holder.pid is not None else "another process"
        if self.holder.port is not None:
            where = f", port {self.holder.port}"
        else:
            where = " (still starting, its port not known yet)"
        return (
            f"the data folder {self.folder}/ is in use by another parley serve ({process}{where}). "
            "One server keeps a folder at a time: stop that one, or start this one with its own folder "
            "(--data DIR) or with none (--data none: it forgets everything when it stops)."
        )


class DataFolderLock:
    """The lock of one data folder, held from :meth:`acquire` to :meth:`release`."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.path = folder / LOCK_FILE
        self._file: IO[str] | None = None

    def acquire(self) -> None:
        """Take the lock (creating the folder if need be) and write this process's id in the file;
        :class:`DataFolderInUse` when another process holds it, ``OSError`` when the folder cannot be
        made or written."""
        self.folder.mkdir(parents=True, exist_ok=True)
        file = open(self.path, "a+", encoding="utf-8")  # noqa: SIM115 - held open until release()
        try:
            fcntl.flock(file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            file.seek(0)
            holder = _holder(file.read())
            file.close()
            raise DataFolderInUse(self.folder, holder) from None
        except BaseException:
            file.close()
            raise
        self._file = file
        self._write(Holder(os.getpid(), None, None))

    def listening(self, host: str, port: int) -> None:
        """Say in the file where the server listens, once it does."""
        self._write(Holder(os.getpid(), port, host))

    def release(self) -> None:
        if self._file is not None:
            with contextlib.suppress(OSError):
                fcntl.flock(self._file.fileno(), fcntl.LOCK_UN)
            self._file.close()
            self._file = None

    def __enter__(self) -> DataFolderLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def _write(self, holder: Holder) -> None:
        assert self._file is not None
        self._file.seek(0)
        self._file.truncate()
        self._file.write(json.dumps({"pid": holder.pid, "port": holder.port, "host": holder.host}) + "\n")
        self._file.flush()


def _holder(text: str) -> Holder:
    """What the lock file says (a file being rewritten, or not ours: nothing known)."""
    try:
        data = json.loads(text)
    except ValueError:
        return Holder(None, None, None)
    if not isinstance(data, dict):
        return Holder(None, None, None)
    pid, port, host = data.get("pid"), data.get("port"), data.get("host")
    return Holder(
        pid if isinstance(pid, int) and not isinstance(pid, bool) else None,
        port if isinstance(port, int) and not isinstance(port, bool) else None,
        host if isinstance(host, str) else None,
    )
