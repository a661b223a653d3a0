"""The core layer's bundle, built without Docker (architecture.md, "One definition of the infrastructure").

pip (``--platform … --only-binary=:all:``) installs the Linux/ARM wheels of the runtime dependencies from
``pyproject.toml`` whatever machine runs the synth, and the ``parley`` package is copied beside them,
giving the layer layout Lambda expects (``python/<package>``). The same steps, the wheels fetched straight
from the index, are the Docker command, used only if local bundling is ever turned off, and they are part
of the asset hash: changing a dependency rebuilds the layer.

The wheels come from a cache the synth keeps, so that only its first run needs the package index (issue
28, item 4): ``$PARLEY_WHEEL_CACHE``, else ``$XDG_CACHE_HOME/parley/wheels`` or ``~/.cache/parley/wheels``
(outside the repository: ``make clean`` keeps it). One folder per :meth:`LayerBuild.cache_key` (a hash of
the requirements as ``pyproject.toml`` states them, the Python, the implementation and the platforms)
holds the wheels ``pip download`` fetched and ``requirements.lock``, the lock made from them (each wheel's
name, version and sha256); the folder appears whole or not at all. The layer is then installed from that
folder alone (``pip install --no-index --require-hashes -r requirements.lock``), the same way on the first
run and on every later one. A changed requirement makes a new key, hence a new resolution; removing the
folder resolves again. Without the folder and without the index the synth fails with one line saying so
(:func:`bundling_failure` keeps it for ``cdk/app.py``, which jsii's error would otherwise bury in a page of
traceback).

Then every module is compiled (``python -m compileall --invalidation-mode unchecked-hash``) by a Python of
the Lambda runtime's version: Lambda's code folders are read-only, so a layer shipped without bytecode
compiles each module it imports again on every cold start (issue 20). Unchecked hash-based ``.pyc`` files
are used as they are, without a look at the sources' times, and the same sources give the same bytes.
That Python is ``PARLEY_LAYER_PYTHON`` when set, else the first ``python3.12`` (for the runtime's version)
that runs: on the ``PATH``, or one pyenv installed. Without one the layer is built without bytecode, the
synth says so, and so does its summary.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import shutil
import ssl
import subprocess
import sys
import tempfile
import tomllib
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlsplit

import jsii
from aws_cdk import DockerImage, ILocalBundling

#: Never part of an asset: bytecode of the machine that runs the synth, and tool caches.
ASSET_EXCLUDES: Final = ("__pycache__", "*.pyc", ".mypy_cache", ".pytest_cache", ".ruff_cache")

#: Names a Python of the Lambda runtime's version to compile the layer with (found when left unset).
LAYER_PYTHON_VARIABLE: Final = "PARLEY_LAYER_PYTHON"

#: Names the folder of the wheel cache (see the module's docstring for the default).
WHEEL_CACHE_VARIABLE: Final = "PARLEY_WHEEL_CACHE"
#: In each folder of the cache: the wheels' lock, written last (a folder without it is not a cache's).
LOCK_NAME: Final = "requirements.lock"

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

    def cache_key(self) -> str:
        """What the wheels are resolved from (the requirements as stated, the Python, the implementation,
        the platforms), hashed: the name of the cache's folder for them."""
        inputs = {
            "requirements": list(self.requirements),
            "python_version": self.python_version,
            "implementation": "cp",
            "platforms": list(self.platforms),
        }
        return hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest()[:24]

    def _wheel_selection(self) -> list[str]:
        """``pip`` options choosing the wheels for Lambda: the platforms, binary only, the Python."""
        platforms = [argument for platform in self.platforms for argument in ("--platform", platform)]
        return [
            *platforms,
            "--only-binary=:all:",
            "--python-version",
            self.python_version,
            "--implementation",
            "cp",
        ]

    def download_arguments(self, dest: str) -> list[str]:
        """``pip`` arguments that fetch the requirements' wheels for Lambda from the index into ``dest``."""
        return [
            "download",
            *self._wheel_selection(),
            "--dest",
            dest,
            "--disable-pip-version-check",
            "--no-input",
            # Not --quiet: its "Looking in indexes" line names the index a failure could not reach.
            "--progress-bar",
            "off",
            *self.requirements,
        ]

    def cached_install_arguments(self, target: str, wheels: str) -> list[str]:
        """``pip`` arguments that install the lock of the cache's folder ``wheels`` into ``target``, from
        that folder alone (no index), each wheel checked against its hash."""
        return [
            "install",
            *self._wheel_selection(),
            "--no-index",
            "--find-links",
            wheels,
            "--require-hashes",
            "--requirement",
            str(Path(wheels) / LOCK_NAME),
            "--target",
            target,
            "--no-compile",
            "--disable-pip-version-check",
            "--no-input",
            "--quiet",
        ]

    def pip_arguments(self, target: str) -> list[str]:
        """``pip`` arguments that install the requirements' wheels for Lambda into ``target`` from the
        index (the Docker build's)."""
        return [
            "install",
            *self._wheel_selection(),
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


#: The failures of this process's layer builds: jsii hands the synth's caller only their text, in a page of
#: traceback, so ``cdk/app.py`` reads the failure here to print it alone.
_FAILURES: list[BundlingFailed] = []


def bundling_failure() -> BundlingFailed | None:
    """The last layer build of this process that failed, if one did."""
    return _FAILURES[-1] if _FAILURES else None


def wheel_cache_root(environ: Mapping[str, str] | None = None) -> Path:
    """The folder the layer's wheels are cached under: ``$PARLEY_WHEEL_CACHE``, else the user's cache."""
    env = os.environ if environ is None else environ
    named = env.get(WHEEL_CACHE_VARIABLE)
    if named:
        return Path(named).expanduser()
    base = env.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "parley" / "wheels"


def lock_lines(wheels: Path) -> list[str]:
    """The lock of the wheels in ``wheels``: ``name==version --hash=sha256:…``, one line a wheel."""
    lines = []
    for wheel in sorted(wheels.glob("*.whl")):
        # A wheel's file name is ``{name}-{version}(-{build})?-{python}-{abi}-{platform}.whl``, and
        # neither its name nor its version holds a '-'.
        name, version = wheel.name.split("-")[:2]
        digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
        lines.append(f"{name}=={version} --hash=sha256:{digest}")
    return lines


#: The index pip reads when configured with none (it then prints no "Looking in indexes" line).
PYPI_INDEX: Final = "https://pypi.org/simple"


def pip_indexes(output: str) -> list[str]:
    """The indexes pip looked in, from its output (``Looking in indexes: …``; PyPI's when it names none)."""
    found = re.search(r"^Looking in indexes: (.+)$", output, re.MULTILINE)
    return [url.strip() for url in found.group(1).split(",")] if found else [PYPI_INDEX]


def reachable(url: str, timeout: float = 10) -> bool:
    """Whether a server answers at ``url``, whatever it answers (through the environment's proxies, as pip
    goes): a refused or timed-out connection or an unknown name is not reaching it."""
    try:
        with urllib.request.urlopen(url, timeout=timeout):
            return True
    except urllib.error.HTTPError:
        return True
    except urllib.error.URLError as exc:
        return isinstance(exc.reason, ssl.SSLError)  # a server answered, though not as hoped
    except OSError:
        return False


def download_failure(folder: Path, output: str, probe: Callable[[str], bool] | None = None) -> BundlingFailed:
    """``pip download``'s failure, in one line: the index it could not reach (when none of the web indexes
    it looked in answers), else pip's last error (no wheel for the platform, a version that does not
    exist…)."""
    web = [url for url in pip_indexes(output) if urlsplit(url).scheme in ("http", "https")]
    answers = probe or reachable
    if web and not any(answers(url) for url in web):
        return BundlingFailed(
            f"the layer's arm64 wheels are not cached ({folder}) and pip cannot reach the package index "
            f"({', '.join(web)}): run `make synth` once with the index reachable to fill the cache (later "
            f"synths need no network), or set ${WHEEL_CACHE_VARIABLE} to a filled cache"
        )
    errors = [line.removeprefix("ERROR: ") for line in output.splitlines() if line.startswith("ERROR:")]
    last = errors[-1] if errors else (output.strip().splitlines() or ["(no output)"])[-1]
    return BundlingFailed(f"pip could not fetch the layer's arm64 wheels into the cache ({folder}): {last}")


def _cache_only_environment() -> dict[str, str]:
    """The environment of an install from the cache: no pip configuration (indexes, find-links,
    constraints), so the cache alone is read."""
    environ = {key: value for key, value in os.environ.items() if not key.startswith("PIP_")}
    environ["PIP_CONFIG_FILE"] = os.devnull
    return environ


@jsii.implements(ILocalBundling)
class LocalLayerBundling:
    """Builds the layer on the synthesizing machine with pip, so ``cdk synth`` needs no Docker, its wheels
    from the cache under ``cache`` (:func:`wheel_cache_root` when left out), then compiles it with a Python
    of the runtime's version (``compiler``; found by :func:`find_python` when left out)."""

    def __init__(
        self,
        build: LayerBuild,
        python: str | None = None,
        compiler: str | None = None,
        cache: Path | None = None,
    ) -> None:
        self._build = build
        # The interpreter running the synth has pip (the project's venv); its version does not matter
        # because pip is told the target Python and platform.
        self._python = python or sys.executable
        self._compiler = compiler
        self._cache = cache

    def try_bundle(self, output_dir: str, *, image: DockerImage, **_options: Any) -> bool:
        try:
            self._bundle(Path(output_dir) / "python")
        except BundlingFailed as failure:
            _FAILURES.append(failure)
            raise
        return True

    def cached_wheels(self) -> Path:
        """The cache's folder of this build's wheels, fetched into it first if it has none."""
        root = self._cache or wheel_cache_root()
        folder = root / self._build.cache_key()
        if (folder / LOCK_NAME).is_file():
            return folder
        root.mkdir(parents=True, exist_ok=True)
        partial = Path(tempfile.mkdtemp(prefix=f"{folder.name}.", suffix=".partial", dir=root))
        try:
            command = [self._python, "-m", "pip", *self._build.download_arguments(str(partial))]
            result = subprocess.run(command, capture_output=True, text=True, check=False)
            if result.returncode != 0:
                raise download_failure(folder, result.stdout + result.stderr)
            (partial / LOCK_NAME).write_text("\n".join(lock_lines(partial)) + "\n", encoding="utf-8")
            if folder.exists() and not (folder / LOCK_NAME).is_file():
                shutil.rmtree(folder)  # a folder left half-made by hand: not a cache's
            try:
                partial.rename(folder)
            except OSError:
                if not (folder / LOCK_NAME).is_file():  # (else another synth filled it meanwhile)
                    raise
        finally:
            shutil.rmtree(partial, ignore_errors=True)
        return folder

    def _bundle(self, target: Path) -> None:
        wheels = self.cached_wheels()
        command = [self._python, "-m", "pip", *self._build.cached_install_arguments(str(target), str(wheels))]
        result = subprocess.run(
            command, capture_output=True, text=True, check=False, env=_cache_only_environment()
        )
        if result.returncode != 0:
            raise BundlingFailed(
                f"Installing the layer's wheels from the cache failed ({shlex.join(command)}; remove "
                f"{wheels} to fetch them again):\n{result.stdout}{result.stderr}"
            )
        shutil.copytree(
            self._build.package_dir,
            target / self._build.package_dir.name,
            ignore=shutil.ignore_patterns(*ASSET_EXCLUDES),
        )
        self._compile(target)

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
