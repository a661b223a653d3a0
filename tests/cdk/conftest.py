"""The CDK app (``cdk/parley_cdk``) is a script folder, not an installed package: import it from there."""

from __future__ import annotations

import os
import sys
from pathlib import Path

CDK_DIR = Path(__file__).resolve().parents[2] / "cdk"

if str(CDK_DIR) not in sys.path:
    sys.path.insert(0, str(CDK_DIR))
# Read by the jsii node process when aws_cdk is first imported (by the test modules, after this file).
os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")
