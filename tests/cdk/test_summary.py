"""``make synth`` says what it made (``parley_cdk.summary``), and a bad ``-c`` option is one line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from parley_cdk.summary import summary_lines

CDK = Path(__file__).resolve().parents[2] / "cdk"


def test_the_summary_names_the_stack_its_resources_outputs_and_layer(tmp_path: Path) -> None:
    layer = tmp_path / "asset.abc"
    (layer / "python").mkdir(parents=True)
    (layer / "python" / "module.py").write_bytes(b"x" * 2_097_152)
    template = {
        "Resources": {
            "Layer": {"Type": "AWS::Lambda::LayerVersion", "Properties": {"Content": {"S3Key": "abc.zip"}}},
            "Api": {"Type": "AWS::Lambda::Function"},
            "Worker": {"Type": "AWS::Lambda::Function"},
        },
        "Outputs": {"ApiUrl": {"Description": "The API's base URL", "Value": "x"}},
    }
    (tmp_path / "parley-dev.template.json").write_text(json.dumps(template), encoding="utf-8")

    lines = summary_lines(tmp_path)

    assert lines[0] == f"Stack parley-dev: {tmp_path / 'parley-dev.template.json'}"
    assert lines[1].startswith("  3 resources (2 Lambda::Function, 1 Lambda::LayerVersion")
    assert "  output ApiUrl: The API's base URL" in lines
    not_compiled = "not compiled (no .pyc: each cold start compiles what it imports)"
    assert f"  layer asset.abc: 2.0 MiB unzipped, {not_compiled}" in lines


def test_the_summary_counts_the_layers_compiled_modules_in_its_size(tmp_path: Path) -> None:
    layer = tmp_path / "asset.abc"
    (layer / "python" / "__pycache__").mkdir(parents=True)
    (layer / "python" / "module.py").write_bytes(b"x" * 1_048_576)
    (layer / "python" / "__pycache__" / "module.cpython-312.pyc").write_bytes(b"x" * 524_288)
    (layer / "python" / "__pycache__" / "other.cpython-312.pyc").write_bytes(b"x" * 524_288)
    template = {
        "Resources": {
            "Layer": {"Type": "AWS::Lambda::LayerVersion", "Properties": {"Content": {"S3Key": "abc.zip"}}}
        }
    }
    (tmp_path / "parley-dev.template.json").write_text(json.dumps(template), encoding="utf-8")

    assert "  layer asset.abc: 2.0 MiB unzipped, 2 modules compiled (cpython-312, 1.0 MiB)" in summary_lines(
        tmp_path
    )


def test_a_bad_context_option_is_one_line_without_a_traceback(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "app.py", "-c", "alarm_email=not-an-address"],
        cwd=CDK,
        capture_output=True,
        text=True,
        timeout=300,
        env={"CDK_OUTDIR": str(tmp_path), "PATH": "/usr/bin:/bin"},
    )

    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.strip().startswith("synth: context alarm_email: an email address")
