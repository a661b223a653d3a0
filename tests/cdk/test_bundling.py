"""The layer bundle without Docker: which pip command, for which platform, and the package copied beside.

These run a stand-in for pip, so they need neither network nor a synth (nor the user's wheel cache: each
names its own folder); a real synth (``python app.py`` in ``cdk/``) builds the real bundle.
``test_wheel_cache`` runs the real pip on the cache.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from aws_cdk import DockerImage

import parley_cdk.bundling as bundling_module
from parley_cdk.bundling import (
    LAYER_PYTHON_VARIABLE,
    BundlingFailed,
    LayerBuild,
    LocalLayerBundling,
    find_python,
    runtime_requirements,
)
from parley_cdk.compute import PYTHON_VERSION, python_runtime

ROOT = Path(__file__).resolve().parents[2]


def _build(package_dir: Path) -> LayerBuild:
    return LayerBuild(
        package_dir=package_dir, requirements=("pydantic>=2.10,<3", "pyyaml>=6"), python_version="3.12"
    )


def _option_values(arguments: list[str], option: str) -> list[str]:
    return [arguments[i + 1] for i, argument in enumerate(arguments) if argument == option]


def test_the_layer_takes_the_projects_runtime_dependencies() -> None:
    requirements = runtime_requirements(ROOT / "pyproject.toml")

    assert "aws-lambda-powertools>=3.37,<4" in requirements
    assert any(requirement.startswith("pydantic") for requirement in requirements)
    # Development tools stay out of the layer.
    assert not any(requirement.startswith(("moto", "aws-cdk-lib", "pytest")) for requirement in requirements)


def test_pip_fetches_only_linux_arm64_wheels_for_the_lambda_python(tmp_path: Path) -> None:
    arguments = _build(tmp_path).pip_arguments("/out/python")

    assert arguments[0] == "install"
    assert "--only-binary=:all:" in arguments
    assert "manylinux2014_aarch64" in _option_values(arguments, "--platform")
    assert all(platform.endswith("_aarch64") for platform in _option_values(arguments, "--platform"))
    assert _option_values(arguments, "--python-version") == ["3.12"]
    assert _option_values(arguments, "--implementation") == ["cp"]
    assert _option_values(arguments, "--target") == ["/out/python"]
    assert arguments[-2:] == ["pydantic>=2.10,<3", "pyyaml>=6"]


def test_the_lambda_runtime_is_the_python_the_layer_is_built_for() -> None:
    assert python_runtime().name == f"python{PYTHON_VERSION}"


def _fake_pip(tmp_path: Path, exit_code: int) -> str:
    """A stand-in for ``python``: records ``-m pip …`` arguments, then exits with ``exit_code``."""
    script = tmp_path / "fake-python"
    record = tmp_path / "pip-arguments.json"
    script.write_text(
        f"#!{sys.executable}\n"
        "import json, sys\n"
        f"open({str(record)!r}, 'w').write(json.dumps(sys.argv[1:]))\n"
        "print('no matching distribution', file=sys.stderr)\n"
        f"sys.exit({exit_code})\n"
    )
    script.chmod(0o755)
    return str(script)


def _package(tmp_path: Path) -> Path:
    package = tmp_path / "src" / "parley"
    (package / "__pycache__").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"")
    return package


def test_local_bundling_runs_pip_and_copies_the_package_beside_its_dependencies(tmp_path: Path) -> None:
    build = _build(_package(tmp_path))
    out = tmp_path / "out"
    out.mkdir()

    bundling = LocalLayerBundling(
        build, python=_fake_pip(tmp_path, 0), compiler=sys.executable, cache=tmp_path / "wheels"
    )

    bundled = bundling.try_bundle(str(out), image=DockerImage.from_registry("unused"))

    assert bundled is True
    # (the last pip run: the install from the cache's folder the download filled)
    wheels = tmp_path / "wheels" / build.cache_key()
    arguments = json.loads((tmp_path / "pip-arguments.json").read_text())
    assert arguments == ["-m", "pip", *build.cached_install_arguments(str(out / "python"), str(wheels))]
    assert (out / "python" / "parley" / "__init__.py").is_file()
    # The synthesizing machine's bytecode stays behind; the layer's is compiled for it.
    assert not (out / "python" / "parley" / "__pycache__" / "x.cpython-311.pyc").exists()


def test_the_layer_is_compiled_into_bytecode_lambda_uses_as_it_is(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    bundling = LocalLayerBundling(
        _build(_package(tmp_path)), python=_fake_pip(tmp_path, 0), compiler=sys.executable, cache=tmp_path
    )

    bundling.try_bundle(str(out), image=DockerImage.from_registry("unused"))

    tag = sys.implementation.cache_tag
    compiled = out / "python" / "parley" / "__pycache__" / f"__init__.{tag}.pyc"
    assert compiled.is_file()
    # PEP 552: flags 0b01, a hash-based .pyc whose source is never checked (Lambda's folders are read-only).
    assert int.from_bytes(compiled.read_bytes()[4:8], "little") == 0b01


def test_the_docker_build_compiles_the_layer_too(tmp_path: Path) -> None:
    command = _build(tmp_path).docker_command()[-1]

    assert "python -m compileall -q -j 0 --invalidation-mode unchecked-hash /asset-output/python" in command


def test_the_compiling_python_is_the_runtimes(tmp_path: Path) -> None:
    running = f"{sys.version_info.major}.{sys.version_info.minor}"

    assert find_python(running, {LAYER_PYTHON_VARIABLE: sys.executable}) == sys.executable
    with pytest.raises(BundlingFailed, match=LAYER_PYTHON_VARIABLE):
        find_python("2.7", {LAYER_PYTHON_VARIABLE: sys.executable})
    assert find_python("2.7", {"PATH": str(tmp_path), "PYENV_ROOT": str(tmp_path)}) is None


def test_a_failing_pip_fails_the_bundle_with_its_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bundling_module, "reachable", lambda url: True)  # (the index is not asked)
    out = tmp_path / "out"
    out.mkdir()
    bundling = LocalLayerBundling(_build(_package(tmp_path)), python=_fake_pip(tmp_path, 1), cache=tmp_path)

    with pytest.raises(BundlingFailed, match="no matching distribution"):
        bundling.try_bundle(str(out), image=DockerImage.from_registry("unused"))
