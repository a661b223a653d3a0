"""The names tools reach the model under (``reasoning-format.md``, "What the model sees").

"Each tool reaches the model under a unique name made from ``server__tool``, for an MCP server and an
HTTP API alike. Characters other than letters, digits and underscores become underscores. A name
longer than 64 characters, or one that clashes with another after that change, gets an 8-character
hash. A numeric suffix resolves any clash that remains."

How, exactly:

1. ``server__tool``, each character other than an ASCII letter, digit or underscore replaced by ``_``
   (providers accept ``^[A-Za-z0-9_-]{1,64}$``; the spec keeps only underscores).
2. A name over 64 characters, or one that two tools share after step 1, becomes
   ``<name cut to 55 characters>_<hash>``: the hash is the first 8 hexadecimal digits of the SHA-256 of
   ``server/tool`` (UTF-8), so it is at most 64 characters and the same on every run.
3. A name two tools still share (a hash collision, or a hashed name equal to another tool's name)
   stays with the first of them in ``(server, tool)`` order; each later one becomes
   ``<name cut to fit>_<n>`` with the smallest ``n`` from 2 that no other tool's name takes.

The tools are sorted first, so the names do not depend on the order the servers listed them in.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Final

#: The longest name providers accept for a tool.
NAME_MAX: Final = 64
HASH_LENGTH: Final = 8
_OTHER: Final = re.compile(r"[^A-Za-z0-9_]")


def plain_name(server: str, tool: str) -> str:
    """``server__tool`` with every character other than a letter, digit or underscore as ``_``."""
    return _OTHER.sub("_", f"{server}__{tool}")


def name_hash(server: str, tool: str) -> str:
    """The 8-character hash of a tool: the first hexadecimal digits of SHA-256 of ``server/tool``."""
    return hashlib.sha256(f"{server}/{tool}".encode("utf-8", "surrogatepass")).hexdigest()[:HASH_LENGTH]


def model_names(tools: Iterable[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """``(server, tool)`` -> the unique name the model sees it under, each at most 64 characters; the
    same whatever the order of ``tools`` (a pair given twice is named once)."""
    pairs = sorted(set(tools))
    plain = {pair: plain_name(*pair) for pair in pairs}
    shared = Counter(plain.values())
    wanted: dict[tuple[str, str], str] = {}
    for pair, name in plain.items():
        if len(name) > NAME_MAX or shared[name] > 1:
            name = _with_suffix(name, name_hash(*pair))
        wanted[pair] = name
    counts = Counter(wanted.values())
    taken = {name for name, count in counts.items() if count == 1}
    names: dict[tuple[str, str], str] = {}
    for pair in pairs:
        name = wanted[pair]
        if counts[name] == 1:
            names[pair] = name
        elif name not in taken:
            taken.add(name)
            names[pair] = name
        else:
            number = 2
            while _with_suffix(name, str(number)) in taken:
                number += 1
            names[pair] = _with_suffix(name, str(number))
            taken.add(names[pair])
    return names


def tools_by_name(names: Mapping[tuple[str, str], str]) -> dict[str, tuple[str, str]]:
    """The reverse of :func:`model_names`: a name the model called -> ``(server, tool)``."""
    return {name: pair for pair, name in names.items()}


def _with_suffix(name: str, suffix: str) -> str:
    """``<name>_<suffix>``, ``name`` cut so that the whole is at most 64 characters."""
    return f"{name[: NAME_MAX - len(suffix) - 1]}_{suffix}"
