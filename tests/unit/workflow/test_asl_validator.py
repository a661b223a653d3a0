"""Every compiled machine of the corpus passes asl-validator (npm: the Amazon States Language's JSON
Schema, JSONata-mode fields, its expressions parsed by the reference JSONata, transitions and terminal
states), as saved (the entry function's ARN a placeholder) and as created (an ARN in its place); one node
process validates them all."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any, Final

import pytest
import yaml
from unit.workflow.machines import CASES

from parley.workflow import engine
from parley.workflow.compiler import compile_workflow
from parley.workflow.document import check_workflow_document

ROOT: Final = Path(__file__).resolve().parents[3]
VALIDATOR: Final = ROOT / "node_modules" / "asl-validator"
ENTRY_ARN: Final = "arn:aws:lambda:eu-west-1:123456789012:function:parley-dev-workflow"

# asl-validator makes a new Ajv (compiling every schema again) for each machine, 160 ms each: one Ajv,
# made once, serves them all (the keywords ajv-formats adds each time are added once).
_NODE_SCRIPT: Final = r"""
const ajv = require(require.resolve('ajv', {paths: [process.argv[1]]}));
const Ajv = ajv.default;
let shared = null;
ajv.default = function (options) {
  if (shared === null) {
    shared = new Ajv(options);
    const addKeyword = shared.addKeyword.bind(shared);
    shared.addKeyword = (definition, ...rest) => {
      const name = typeof definition === 'string' ? definition : definition.keyword;
      const first = Array.isArray(name) ? name[0] : name;
      return first && shared.getKeyword(first) ? shared : addKeyword(definition, ...rest);
    };
  }
  return shared;
};
const validator = require(process.argv[1]);
const machines = JSON.parse(require('fs').readFileSync(0, 'utf8'));
const results = machines.map((definition) => {
  const result = validator(definition, {checkPaths: true, checkArn: true});
  return {valid: result.isValid, errors: result.errorsText('\n')};
});
process.stdout.write(JSON.stringify(results));
"""


def _validate(definitions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    done = subprocess.run(
        ["node", "-e", _NODE_SCRIPT, str(VALIDATOR)],
        input=json.dumps(definitions),
        capture_output=True,
        text=True,
        check=True,
    )
    results: list[dict[str, Any]] = json.loads(done.stdout)
    return results


@pytest.mark.skipif(
    not VALIDATOR.is_dir(), reason="node_modules/asl-validator is not installed (make install)"
)
@pytest.mark.skipif(shutil.which("node") is None, reason="node is not on the PATH")
def test_every_compiled_machine_of_the_corpus_is_valid_asl() -> None:
    documents = sorted({case.document for case in CASES})
    definitions = [
        compile_workflow(check_workflow_document(document).data).definition for document in documents
    ]
    created = [engine.with_entry(definition, ENTRY_ARN) for definition in definitions]
    results = _validate(definitions + created)
    invalid = [
        f"{(documents + documents)[index][:200]}\n  {result['errors']}"
        for index, result in enumerate(results)
        if not result["valid"]
    ]
    assert len(results) == 2 * len(documents)
    assert not invalid, "\n".join(invalid)


@pytest.mark.skipif(
    not VALIDATOR.is_dir(), reason="node_modules/asl-validator is not installed (make install)"
)
@pytest.mark.skipif(shutil.which("node") is None, reason="node is not on the PATH")
def test_the_validator_refuses_what_is_wrong() -> None:
    """The check can fail: a machine whose expression does not parse, or whose Next goes nowhere."""
    document = yaml.safe_load(next(case.document for case in CASES if case.name == "set one expression"))
    definition = compile_workflow(document).definition
    broken = json.loads(json.dumps(definition).replace("$data.items[price > 2].name", "$data.items[price >"))
    lost = json.loads(json.dumps(definition).replace('"Next": "#end"', '"Next": "#nowhere"'))
    assert [result["valid"] for result in _validate([definition, broken, lost])] == [True, False, False]
