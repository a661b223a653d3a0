"""What ``make synth`` made, in a few lines: each stack, its template's path, how many resources it
has, its outputs, and the Lambda layer's size (the asset folder the functions share), its compiled
modules (``.pyc``) included, with how many there are and for which Python (``parley_cdk.bundling``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def folder_size(path: Path) -> int:
    return sum(item.stat().st_size for item in path.rglob("*") if item.is_file())


def summary_lines(outdir: Path) -> list[str]:
    """The summary of the synthesized cloud assembly in ``outdir``."""
    lines: list[str] = []
    for template_path in sorted(outdir.glob("*.template.json")):
        template: dict[str, Any] = json.loads(template_path.read_text(encoding="utf-8"))
        resources: dict[str, Any] = template.get("Resources", {})
        kinds: dict[str, int] = {}
        for resource in resources.values():
            kind = str(resource.get("Type", "?")).removeprefix("AWS::")
            kinds[kind] = kinds.get(kind, 0) + 1
        lines.append(f"Stack {template_path.name.removesuffix('.template.json')}: {template_path}")
        main = ", ".join(
            f"{count} {kind}" for kind, count in sorted(kinds.items(), key=lambda kv: -kv[1])[:6]
        )
        lines.append(f"  {len(resources)} resources ({main}, …)")
        outputs: dict[str, Any] = template.get("Outputs", {})
        for name, output in sorted(outputs.items()):
            words = output.get("Description") or ""
            lines.append(f"  output {name}{': ' + words if words else ''}")
        for layer in _layers(resources, outdir):
            lines.append(
                f"  layer {layer.name}: {folder_size(layer) / 1_048_576:.1f} MiB unzipped, {_bytecode(layer)}"
            )
    return lines


def _bytecode(layer: Path) -> str:
    """``1,893 modules compiled (cpython-312, 26.0 MiB)``, or that none is."""
    compiled = list(layer.rglob("*.pyc"))
    if not compiled:
        return "not compiled (no .pyc: each cold start compiles what it imports)"
    tags = sorted({path.name.split(".")[-2] for path in compiled})
    size = sum(path.stat().st_size for path in compiled) / 1_048_576
    return f"{len(compiled):,} modules compiled ({', '.join(tags)}, {size:.1f} MiB)"


def _layers(resources: dict[str, Any], outdir: Path) -> list[Path]:
    """The asset folders of the template's Lambda layers (``asset.<hash>``, the hash being the layer's
    S3 key without ``.zip``)."""
    found = []
    for resource in resources.values():
        if resource.get("Type") != "AWS::Lambda::LayerVersion":
            continue
        content = (resource.get("Properties") or {}).get("Content") or {}
        key = content.get("S3Key")
        asset = (resource.get("Metadata") or {}).get("aws:asset:path")
        if not asset and isinstance(key, str):
            asset = "asset." + key.removesuffix(".zip")
        if asset and (outdir / asset).is_dir():
            found.append(outdir / asset)
    return found
