"""The core layer's bundle, built without Docker (architecture.md, "One definition of the infrastructure").

``pip install --platform … --only-binary=:all:`` fetches the Linux/ARM wheels of the runtime dependencies
from ``pyproject.toml`` whatever machine runs the synth, and the ``parley`` package is copied beside them,
giving the layer layout Lambda expects (``python/<package>``). The same steps are the Docker command, used
only if local bundling is ever turned off, and they are part of the asset hash: changing a dependency
rebuilds the layer.

Then every module is compiled (``python -m compileall --invalidation-mode unchecked-hash``) by a Python of
the Lambda runtime's version: Lambda's code folders are read-only, so a layer shipped without bytecode
compiles each module it imports again on every cold start (issue 20). Unchecked hash-based ``.pyc`` files
are used as they are, without a look at the sources' times, and the same sources give the same bytes.
That Python is ``PARLEY_LAYER_PYTHON`` when set, else the first ``python3.12`` (for the runtime's version)
that runs: on the ``PATH``, or one pyenv installed. Without one the layer is built without bytecode, the
synth says so, and so does its summary.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import jsii
from aws_cdk import DockerImage, ILocalBundling

#: Never part of an asset: bytecode of the machine that runs the synth, and tool caches.
ASSET_EXCLUDES: Final = ("__pycache__", "*.pyc", ".mypy_cache", ".pytest_cache", ".ruff_cache")

#: Names a Python of the Lambda runtime's version to compile the layer with (found when left unset).
LAYER_PYTHON_VARIABLE: Final = "PARLEY_LAYER_PYTHON"

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
        """The same build inside a bundling container (source at ``/asset-input``), whose ``python`` is the
        runtime's."""
        pip = shlex.join(["pip", *self.pip_arguments("/asset-output/python")])
        copy = shlex.join(["cp", "-r", "/asset-input", f"/asset-output/python/{self.package_dir.name}"])
        compile_all = shlex.join(["python", *compile_arguments("/asset-output/python")])
        return ["bash", "-c", f"{pip} && {copy} && {compile_all}"]


def compile_arguments(target: str) -> list[str]:
    """``python`` arguments that compile every module under ``target`` into unchecked hash-based ``.pyc``."""
    return ["-m", "compileall", "-q", "-j", "0", "--invalidation-mode", "unchecked-hash", target]


def find_python(version: str, environ: Mapping[str, str] | None = None) -> str | None:
    """A Python interpreter of ``version`` (``3.12``) that runs: ``PARLEY_LAYER_PYTHON`` (which must be
    one), else the first of ``python3.12`` on the ``PATH`` and pyenv's installed ``3.12.x``."""
    env = os.environ if environ is None else environ
    named = env.get(LAYER_PYTHON_VARIABLE)
    if named:
        if _python_version(named) != version:
            raise BundlingFailed(f"${LAYER_PYTHON_VARIABLE} ({named}) is not a Python {version} that runs")
        return named
    for candidate in _candidates(version, env):
        if _python_version(candidate) == version:
            return candidate
    return None


def _candidates(version: str, environ: Mapping[str, str]) -> Iterator[str]:
    on_path = shutil.which(f"python{version}", path=environ.get("PATH"))
    if on_path:
        yield on_path
    pyenv_root = Path(environ.get("PYENV_ROOT") or Path.home() / ".pyenv")
    for folder in sorted((pyenv_root / "versions").glob(f"{version}.*"), reverse=True):
        yield str(folder / "bin" / f"python{version}")


def _python_version(python: str) -> str | None:
    try:
        done = subprocess.run(
            [python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    except OSError:
        return None
    return done.stdout.strip() if done.returncode == 0 else None


class BundlingFailed(RuntimeError):
    """pip could not install the layer's requirements (no network, no wheel for the platform, …)."""


@jsii.implements(ILocalBundling)
class LocalLayerBundling:
    """Builds the layer on the synthesizing machine with pip, so ``cdk synth`` needs no Docker, then
    compiles it with a Python of the runtime's version (``compiler``; found by :func:`find_python` when
    left out)."""

    def __init__(self, build: LayerBuild, python: str | None = None, compiler: str | None = None) -> None:
        self._build = build
        # The interpreter running the synth has pip (the project's venv); its version does not matter
        # because pip is told the target Python and platform.
        self._python = python or sys.executable
        self._compiler = compiler

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
        self._compile(target)
        return True

    def _compile(self, target: Path) -> None:
        version = self._build.python_version
        compiler = self._compiler or find_python(version)
        if compiler is None:
            print(
                f"synth: no Python {version} found (set ${LAYER_PYTHON_VARIABLE}): the layer ships without "
                "bytecode, so each cold start compiles what it imports",
                file=sys.stderr,
            )
            return
        command = [compiler, *compile_arguments(str(target))]
        result = subprocess.run(command, capture_output=True, text=True, check=False)
        if result.returncode != 0:
            raise BundlingFailed(
                f"Compiling the layer failed ({shlex.join(command)}):\n{result.stdout}{result.stderr}"
            )
