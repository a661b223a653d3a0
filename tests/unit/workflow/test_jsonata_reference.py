"""jsonata-python (through Parley's evaluator, ``parley.local.jsonata_eval``) gives what the reference
JSONata gives (the npm ``jsonata`` package, at the version Step Functions runs) for every expression the
corpus's compiled machines evaluate: the expressions moto evaluated running the corpus, each with the
variables Step Functions bound (moto writes them into the text), evaluated again by both at one fixed
instant, in one node process. ``$parse`` is Step Functions' own: the reference is given ``JSON.parse``."""

from __future__ import annotations

import json
import shutil
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

import pytest
from unit.workflow.moto_runs import run_corpus

from parley.local.jsonata_eval import ExpressionFailed, evaluate

#: moto's executor stops a Parallel's other branches by letting their worker threads fail after the
#: program has stopped (a competing fork's losers): its own thread's error, not the run's ending, which
#: is what these tests check.
pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")

ROOT: Final = Path(__file__).resolve().parents[3]
REFERENCE: Final = ROOT / "node_modules" / "jsonata"
INSTANT: Final = datetime(2025, 3, 14, 15, 9, 26, 535000, tzinfo=UTC)
UNDEFINED: Final = "<undefined>"
#: Functions whose results differ by design from one evaluation to the next.
_RANDOM: Final = ("$random(", "$uuid(")

_NODE_SCRIPT: Final = r"""
const jsonata = require(process.argv[1]);
const instant = Number(process.argv[2]);
const texts = JSON.parse(require('fs').readFileSync(0, 'utf8'));
(async () => {
  const results = [];
  for (const text of texts) {
    try {
      const bindings = {
        parse: (value) => JSON.parse(value),
        millis: () => instant,
        now: (picture, timezone) =>
          jsonata('$fromMillis($m, $p, $z)').evaluate({}, {m: instant, p: picture, z: timezone}),
      };
      const value = await jsonata(text).evaluate(null, bindings);
      if (value === undefined) results.push({ok: true, value: '<undefined>'});
      else if (typeof value === 'function') results.push({ok: false, error: 'a function'});
      else results.push({ok: true, value: JSON.parse(JSON.stringify(value))});
    } catch (error) {
      results.push({ok: false, error: String(error && error.message || error)});
    }
  }
  process.stdout.write(JSON.stringify(results));
})();
"""


def _ours(text: str) -> dict[str, Any]:
    try:
        return {"ok": True, "value": evaluate(text, {}, now=lambda: INSTANT)}
    except ExpressionFailed as exc:
        if "returned nothing" in exc.message:
            return {"ok": True, "value": UNDEFINED}
        return {"ok": False, "error": exc.message}


def _reference(texts: list[str]) -> list[dict[str, Any]]:
    millis = str(round(INSTANT.timestamp() * 1000))
    done = subprocess.run(
        ["node", "-e", _NODE_SCRIPT, str(REFERENCE), millis],
        input=json.dumps(texts),
        capture_output=True,
        text=True,
        check=True,
    )
    results: list[dict[str, Any]] = json.loads(done.stdout)
    return results


@pytest.mark.skipif(not REFERENCE.is_dir(), reason="node_modules/jsonata is not installed (make install)")
@pytest.mark.skipif(shutil.which("node") is None, reason="node is not on the PATH")
def test_jsonata_python_agrees_with_the_reference_on_the_corpus() -> None:
    texts = sorted({text for text in run_corpus().expressions if not any(name in text for name in _RANDOM)})
    assert len(texts) > 200
    reference = _reference(texts)
    assert len(reference) == len(texts)
    differences: list[str] = []
    for text, theirs in zip(texts, reference, strict=True):
        ours = _ours(text)
        if ours["ok"] != theirs["ok"] or (ours["ok"] and ours["value"] != theirs["value"]):
            differences.append(f"{text[-300:]}\n  jsonata-python: {ours}\n  reference:      {theirs}")
    assert not differences, f"{len(differences)} of {len(texts)} differ:\n" + "\n".join(differences[:5])
    failing = sum(1 for text in texts if not _ours(text)["ok"])
    assert failing > 0, "the corpus has expressions that fail, as both must agree they do"
