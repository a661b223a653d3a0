"""No top-level folder of the core holds more than a fifth of its lines (issue 30): a part that grows past
that is several things, and wants splitting the way ``models/`` left ``reasoning/``."""

from __future__ import annotations

from pathlib import Path

import parley

PACKAGE = Path(parley.__file__).parent


def _lines(paths: list[Path]) -> int:
    return sum(len(path.read_text(encoding="utf-8").splitlines()) for path in paths)


def test_no_top_level_folder_holds_over_a_fifth_of_the_cores_lines() -> None:
    total = _lines(list(PACKAGE.rglob("*.py")))
    folders = {
        folder.name: _lines(list(folder.rglob("*.py"))) for folder in PACKAGE.iterdir() if folder.is_dir()
    }
    assert {name: lines for name, lines in folders.items() if lines * 5 > total} == {}
