"""The core layer's bundle, built without Docker (architecture.md, "One definition of the infrastructure").

``pip install --platform … --only-binary=:all:`` fetches the Linux/ARM wheels of the runtime dependencies
from ``pyproject.toml`` whatever machine runs the synth, and the ``parley`` package is copied beside them,
giving the layer layout Lambda expects (``python/<package>``). The same steps are the Docker command, used
only if local bundling is ever turned off, and they are part of the asset hash: changing a dependency
rebuilds the layer.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import jsii
from aws_cdk import DockerImage, ILocalBundling

#: Never part of an asset: bytecode of the machine that runs the synth, and tool caches.
ASSET_EXCLUDES: Final = ("__pycache__", "*.pyc", ".mypy_cache", ".pytest_cache", ".ruff_cache")

#: Lambda's Python 3.12+ runtimes run on Amazon Linux 2023 (glibc 2.34), so any manylinux wheel up to
#: glibc 2.34 runs there. pip matches platform tags literally, so each is named (``manylinux2014`` is the
#: legacy alias of ``manylinux_2_17`` that most wheels carry).
ARM64_PLATFORMS: Final = (
    *(f"manylinux_2_{minor}_aarch64" for minor in range(34, 16, -1)),
    "manylinux2014_aarch64",
)


def runtime_requirements(pyproject: Path) -> tuple[str, ...]:
    """The ``[project].dependencies`` of ``pyproject``: what the core package needs at run time."""
    with pyproject.open("rb") as file:
        project = tomllib.load(file)["project"]
    return tuple(project["dependencies"])


@dataclass(frozen=True)
class LayerBuild:
    """What goes into the layer: the package folder and the requirements, for one Python and platform."""

    package_dir: Path
    requirements: tuple[str, ...]
    python_version: str
    platforms: tuple[str, ...] = ARM64_PLATFORMS

    def pip_arguments(self, target: str) -> list[str]:
        """``pip`` arguments that install the requirements' wheels for Lambda into ``target``."""
        platforms = [argument for platform in self.platforms for argument in ("--platform", platform)]
        return [
            "install",
            *platforms,
            "--only-binary=:all:",
            "--python-version",
            self.python_version,
            "--implementation",
            "cp",
            "--target",
            target,
            # Bytecode compiled here would be for this machine's Python, not the runtime's.
            "--no-compile",
            "--disable-pip-version-check",
            "--no-input",
            "--quiet",
            *self.requirements,
        ]

    def docker_command(self) -> list[str]:
        """The same build inside a bundling container (source at ``/asset-input``)."""
        pip = shlex.join(["pip", *self.pip_arguments("/asset-output/python")])
        copy = shlex.join(["cp", "-r", "/asset-input", f"/asset-output/python/{self.package_dir.name}"])
        return ["bash", "-c", f"{pip} && {copy}"]


class BundlingFailed(RuntimeError):
    """pip could not install the layer's requirements (no network, no wheel for the platform, …)."""


@jsii.implements(ILocalBundling)
class LocalLayerBundling:
    """Builds the layer on the synthesizing machine with pip, so ``cdk synth`` needs no Docker."""

    def __init__(self, build: LayerBuild, python: str | None = None) -> None:
        self._build = build
        # The interpreter running the synth has pip (the project's venv); its version does not matter
        # because pip is told the target Python and platform.
        self._python = python or sys.executable

    def try_bundle(self, output_dir: str, *, image: DockerImage, **_options: Any) -> bool:
        target = Path(output_dir) / "python"
        command = [self._python, "-m", "pip", *self._build.pip_arguments(str(target))]
        result = subprocess.run(command, capture_output=True, text=True, check=False)
        if result.returncode != 0:
            raise BundlingFailed(
                f"Building the layer failed ({shlex.join(command)}):\n{result.stdout}{result.stderr}"
            )
        shutil.copytree(
            self._build.package_dir,
            target / self._build.package_dir.name,
            ignore=shutil.ignore_patterns(*ASSET_EXCLUDES),
        )
        return True
