"""Cold import time of the api and reason handler modules, as a ratio to a bare powertools handler.

Each measurement is a fresh interpreter (a Lambda cold start imports the handler module once), timing
only the import itself. The three are interleaved so that machine noise falls on all alike.

``api_handler_extras`` imports the api handler in a fresh interpreter and names what it loaded that the
api function must not carry: httpx, a model provider's adapter, the reasoning package.
"""

from __future__ import annotations

import json
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
    reason = ROOT / "functions" / "reason"
    # Warm the file cache and bytecode of each once before measuring.
    _time_import(bare)
    _time_import(ours)
    _time_import(reason)
    bare_times: list[float] = []
    our_times: list[float] = []
    reason_times: list[float] = []
    for _ in range(rounds):
        bare_times.append(_time_import(bare))
        our_times.append(_time_import(ours))
        reason_times.append(_time_import(reason))
    bare_median = statistics.median(bare_times)
    our_median = statistics.median(our_times)
    reason_median = statistics.median(reason_times)
    return {
        "bare_ms": bare_median * 1000,
        "api_ms": our_median * 1000,
        "ratio": our_median / bare_median,
        "reason_ms": reason_median * 1000,
        "reason_ratio": reason_median / bare_median,
    }


#: What the reason function's first run imports after the handler module (its handler defers them all):
#: the runtime from the environment, the run lifecycle, the reasoning type and an adapter over httpx.
REASON_FIRST_RUN = (
    "parley.aws.environment",
    "parley.runs.service",
    "parley.reasoning.running",
    "parley.reasoning.document",
    "parley.reasoning.input",
    "parley.reasoning.prompt",
    "parley.reasoning.offer",
    "parley.reasoning.answer",
    "parley.reasoning.record",
    "parley.models.secrets",
    "parley.models.providers.anthropic",
    "httpx",
)

FIRST_RUN_TIMER = textwrap.dedent(
    """
    import importlib, sys, time
    sys.path.insert(0, {folder!r})
    start = time.perf_counter()
    import handler
    middle = time.perf_counter()
    for name in {modules!r}:
        importlib.import_module(name)
    print(middle - start, time.perf_counter() - middle)
    """
)


def reason_first_run(rounds: int = 7) -> dict[str, float]:
    """Median ms, in fresh interpreters, of importing the reason handler and then the modules its first
    run loads (:data:`REASON_FIRST_RUN`; no AWS client is made)."""
    code = FIRST_RUN_TIMER.format(folder=str(ROOT / "functions" / "reason"), modules=REASON_FIRST_RUN)
    handler_times: list[float] = []
    module_times: list[float] = []
    for _ in range(rounds + 1):
        out = subprocess.run(
            [sys.executable, "-c", code],
            check=True,
            capture_output=True,
            text=True,
            env={"PATH": "/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE": "1"},
        )
        handler_s, modules_s = (float(x) for x in out.stdout.split())
        handler_times.append(handler_s)
        module_times.append(modules_s)
    return {
        "handler_ms": statistics.median(handler_times[1:]) * 1000,
        "first_run_modules_ms": statistics.median(module_times[1:]) * 1000,
    }


#: Modules the api function must not load: the HTTP client of the model providers, the models (their
#: adapters among them), and the reasoning package (the reason function does a reasoning run's work).
API_MUST_NOT_LOAD = ("httpx", "httpcore", "parley.models", "parley.reasoning", "parley.executions.reason")

LOADED = textwrap.dedent(
    """
    import json, sys
    sys.path.insert(0, {folder!r})
    import handler
    print(json.dumps(sorted(sys.modules)))
    """
)


def api_handler_extras() -> list[str]:
    """The modules of :data:`API_MUST_NOT_LOAD` (and those under them) that importing the api handler
    loads, in a fresh interpreter: empty when it carries none."""
    out = subprocess.run(
        [sys.executable, "-c", LOADED.format(folder=str(ROOT / "functions" / "api"))],
        check=True,
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE": "1"},
    )
    loaded: list[str] = json.loads(out.stdout)
    return [m for m in loaded if any(m == p or m.startswith(p + ".") for p in API_MUST_NOT_LOAD)]
