"""Cold import time of the api handler module, as a ratio to a bare powertools handler.

Each measurement is a fresh interpreter (a Lambda cold start imports the handler module once), timing
only the import itself. The two are interleaved so that machine noise falls on both alike.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

BARE_HANDLER = textwrap.dedent(
    """
    from aws_lambda_powertools.event_handler import APIGatewayRestResolver

    app = APIGatewayRestResolver()

    @app.get("/v1/orgs/<org>/playbooks/<playbook>/definitions/<kind>")
    def list_definitions(org: str, playbook: str, kind: str) -> dict:
        return {"definitions": [], "next_cursor": None}

    def handler(event, context):
        return app.resolve(event, context)
    """
)

TIMER = textwrap.dedent(
    """
    import sys, time
    sys.path.insert(0, {folder!r})
    start = time.perf_counter()
    import handler
    print(time.perf_counter() - start)
    """
)


def _time_import(folder: Path) -> float:
    out = subprocess.run(
        [sys.executable, "-c", TIMER.format(folder=str(folder))],
        check=True,
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE": "1"},
    )
    return float(out.stdout.strip())


def measure(tmp: Path, rounds: int = 15) -> dict[str, float]:
    bare = tmp / "bare"
    bare.mkdir(parents=True, exist_ok=True)
    (bare / "handler.py").write_text(BARE_HANDLER)
    ours = ROOT / "functions" / "api"
    # Warm the file cache and bytecode of both once before measuring.
    _time_import(bare)
    _time_import(ours)
    bare_times: list[float] = []
    our_times: list[float] = []
    for _ in range(rounds):
        bare_times.append(_time_import(bare))
        our_times.append(_time_import(ours))
    bare_median = statistics.median(bare_times)
    our_median = statistics.median(our_times)
    return {
        "bare_ms": bare_median * 1000,
        "api_ms": our_median * 1000,
        "ratio": our_median / bare_median,
    }
