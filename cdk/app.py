#!/usr/bin/env python3
"""Synthesize Parley, offline and without Docker.

- ``python app.py [-c stage=prod]`` (from ``cdk/``, with the project's venv): writes ``cdk/cdk.out``.
- ``npx aws-cdk synth|deploy [-c stage=prod]`` from ``cdk/`` runs this file through ``cdk.json`` and
  writes the same folder.

The stage defaults to ``dev``; the other context keys (the token issuer, secrets, Bedrock models, alarm
address, the operator configuration) are ``parley_cdk.options``'. cdk-nag findings that are not
acknowledged fail the synth.

The layer's wheels come from a cache (``parley_cdk.bundling``): only a synth that finds none needs the
package index, and without it the synth fails with the one line saying so, not jsii's traceback.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

HERE = Path(__file__).resolve().parent


def parse_context(argv: list[str]) -> dict[str, str]:
    """``-c key=value`` pairs, as the CDK CLI takes them."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("-c", "--context", action="append", default=[], metavar="KEY=VALUE")
    pairs = parser.parse_args(argv).context
    context = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep:
            parser.error(f"context {pair!r} is not KEY=VALUE")
        context[key] = value
    return context


def prune_unreferenced_assets(outdir: Path) -> None:
    """Remove asset folders no manifest in ``outdir`` names (each layer build leaves ~110 MB behind)."""
    manifests = [path.read_text() for path in outdir.glob("*.assets.json")]
    for path in outdir.iterdir():
        stale = path.name.startswith("bundling-temp-") or (
            path.name.startswith("asset.") and not any(path.name[6:] in text for text in manifests)
        )
        if stale and path.is_dir():
            shutil.rmtree(path)


@contextmanager
def layer_failure_in_one_line() -> Iterator[None]:
    """A layer that could not be built (while the stack is built, or synthesized) ends the process with
    its one line (exit 2), instead of the page of traceback jsii's error brings."""
    from parley_cdk.bundling import bundling_failure

    before = bundling_failure()
    try:
        yield
    except Exception:
        failure = bundling_failure()
        if failure is None or failure is before:
            raise
        print(f"synth: {failure}", file=sys.stderr)
        raise SystemExit(2) from None


def main(argv: list[str]) -> None:
    context = parse_context(argv)
    # Node 20 works with this CDK; jsii's end-of-life banner would only add noise to every synth.
    os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")
    # The core package, for a Python where the project is not installed (it is, in the project's venv).
    sys.path.append(str(HERE.parent / "layers"))

    from aws_cdk import App

    from parley_cdk.application import build
    from parley_cdk.options import OptionsError
    from parley_cdk.summary import summary_lines

    # Outside the CLI (which sets CDK_OUTDIR) an App writes to a temporary folder: use the CLI's place.
    outdir = Path(os.environ.get("CDK_OUTDIR") or HERE / "cdk.out")
    app = App(outdir=str(outdir), context=context)
    try:
        with layer_failure_in_one_line():
            build(app)
            app.synth()
    except OptionsError as exc:  # a bad -c option: its one line, not a traceback
        print(f"synth: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    prune_unreferenced_assets(outdir)
    for line in summary_lines(outdir):
        print(line)


if __name__ == "__main__":
    main(sys.argv[1:])
