"""jsonata-python is imported without changing the process's recursion limit
(``parley.workflow.jsonata_library``): the library raises it to 10,000 when imported."""

from __future__ import annotations

import subprocess
import sys


def test_importing_the_expressions_keeps_the_recursion_limit() -> None:
    code = (
        "import sys; before = sys.getrecursionlimit(); "
        "import parley.workflow.expressions, parley.local.jsonata_eval; "
        "print(before, sys.getrecursionlimit())"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    before, after = done.stdout.split()
    assert before == after
