"""``make synth`` without network after its first run (issue 28, item 4): the layer's wheels come from the
cache ``parley_cdk.bundling`` keeps, and with neither the cache nor the index the synth says so in one line.

The real pip runs, never on the network: the "index" of a first run is a local folder of two small wheels
made here (pip's ``--no-index --find-links``, set through its environment as a user's configuration would
be), and the unreachable index is a closed port on 127.0.0.1.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import os
import socket
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
from aws_cdk import App, BundlingOptions, DockerImage, Stack
from aws_cdk import aws_lambda as lambda_

from parley_cdk.bundling import (
    LOCK_NAME,
    PYPI_INDEX,
    WHEEL_CACHE_VARIABLE,
    BundlingFailed,
    LayerBuild,
    LocalLayerBundling,
    bundling_failure,
    download_failure,
    lock_lines,
    pip_indexes,
    reachable,
    wheel_cache_root,
)

CDK_DIR = Path(__file__).resolve().parents[2] / "cdk"
IMAGE = DockerImage.from_registry("unused")


def _record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def make_wheel(folder: Path, name: str, version: str, requires: tuple[str, ...] = ()) -> Path:
    """A pure-Python wheel (``py3-none-any``: every platform's) of module ``name``, as pip installs it."""
    info = f"{name}-{version}.dist-info"
    files = {
        f"{name}/__init__.py": f"VERSION = {version!r}\n".encode(),
        f"{info}/METADATA": "".join(
            [f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"]
            + [f"Requires-Dist: {requirement}\n" for requirement in requires]
        ).encode(),
        f"{info}/WHEEL": (
            b"Wheel-Version: 1.0\nGenerator: parley-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        ),
    }
    record = "".join(f"{path},{_record_hash(data)},{len(data)}\n" for path, data in files.items())
    files[f"{info}/RECORD"] = (record + f"{info}/RECORD,,\n").encode()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as archive:
        for member, data in files.items():
            archive.writestr(member, data)
    return path


@pytest.fixture
def closed_port() -> int:
    """A port of 127.0.0.1 nothing listens on (bound, then closed): connections to it are refused."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch, closed_port: int) -> Iterator[str]:
    """pip configured with an index that cannot be reached, and nothing else (no configuration file, no
    find-links): what a synth without network meets. Yields the index's address."""
    for key in list(os.environ):
        if key.startswith("PIP_") or key.lower() in {"http_proxy", "https_proxy", "all_proxy"}:
            monkeypatch.delenv(key)
    index = f"http://127.0.0.1:{closed_port}/simple"
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("PIP_INDEX_URL", index)
    monkeypatch.setenv("PIP_RETRIES", "0")
    monkeypatch.setenv("PIP_TIMEOUT", "5")
    yield index


def _package(tmp_path: Path) -> Path:
    package = tmp_path / "src" / "parley"
    package.mkdir(parents=True, exist_ok=True)
    (package / "__init__.py").write_text("")
    return package


def _build(tmp_path: Path) -> LayerBuild:
    return LayerBuild(package_dir=_package(tmp_path), requirements=("tinyapp>=1",), python_version="3.12")


def _bundling(build: LayerBuild, cache: Path) -> LocalLayerBundling:
    return LocalLayerBundling(build, compiler=sys.executable, cache=cache)


def _bundle(bundling: LocalLayerBundling, out: Path) -> Path:
    out.mkdir(parents=True)
    assert bundling.try_bundle(str(out), image=IMAGE) is True
    return out / "python"


def test_the_cache_is_the_users_unless_named(tmp_path: Path) -> None:
    assert wheel_cache_root({WHEEL_CACHE_VARIABLE: str(tmp_path)}) == tmp_path
    assert wheel_cache_root({"XDG_CACHE_HOME": str(tmp_path)}) == tmp_path / "parley" / "wheels"
    assert wheel_cache_root({}) == Path.home() / ".cache" / "parley" / "wheels"


def test_the_cache_key_changes_with_what_the_wheels_are_resolved_from(tmp_path: Path) -> None:
    build = _build(tmp_path)

    assert build.cache_key() == _build(tmp_path).cache_key()
    others = {
        LayerBuild(package_dir=build.package_dir, requirements=("tinyapp>=2",), python_version="3.12"),
        LayerBuild(package_dir=build.package_dir, requirements=build.requirements, python_version="3.13"),
        LayerBuild(build.package_dir, build.requirements, "3.12", platforms=("manylinux2014_x86_64",)),
    }
    assert build.cache_key() not in {other.cache_key() for other in others}


def test_a_first_synth_fills_the_cache_and_later_ones_need_no_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, closed_port: int
) -> None:
    # The first run's "index": a folder of wheels, tinyapp depending on tinybase.
    index = tmp_path / "index"
    make_wheel(index, "tinyapp", "1.2", requires=("tinybase>=1",))
    make_wheel(index, "tinybase", "1.0")
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(index))
    build = _build(tmp_path)
    cache = tmp_path / "cache"

    first = _bundle(_bundling(build, cache), tmp_path / "first")

    folder = cache / build.cache_key()
    assert sorted(path.name for path in folder.iterdir()) == [
        LOCK_NAME,
        "tinyapp-1.2-py3-none-any.whl",
        "tinybase-1.0-py3-none-any.whl",
    ]
    lock = (folder / LOCK_NAME).read_text().splitlines()
    assert [line.split(" ")[0] for line in lock] == ["tinyapp==1.2", "tinybase==1.0"]
    assert all(line.split(" ")[1].startswith("--hash=sha256:") for line in lock)
    assert (first / "tinyapp" / "__init__.py").read_text() == "VERSION = '1.2'\n"
    assert (first / "tinybase" / "__init__.py").is_file()
    assert (first / "parley" / "__init__.py").is_file()
    assert list(cache.iterdir()) == [folder]  # no half-made folder left beside it

    # Later: the index is gone and the network unreachable; the cache alone builds the same layer.
    for key in ("PIP_NO_INDEX", "PIP_FIND_LINKS"):
        monkeypatch.delenv(key)
    monkeypatch.setenv("PIP_INDEX_URL", f"http://127.0.0.1:{closed_port}/simple")
    monkeypatch.setenv("PIP_RETRIES", "0")
    (index / "tinyapp-1.2-py3-none-any.whl").unlink()

    later = _bundle(_bundling(build, cache), tmp_path / "later")

    assert (later / "tinyapp" / "__init__.py").read_text() == "VERSION = '1.2'\n"
    assert (later / "tinybase" / "__init__.py").is_file()


def test_a_cached_wheel_that_changed_is_refused(tmp_path: Path, offline: str) -> None:
    build = _build(tmp_path)
    folder = tmp_path / "cache" / build.cache_key()
    make_wheel(folder, "tinyapp", "1.2")
    (folder / LOCK_NAME).write_text("\n".join(lock_lines(folder)) + "\n")
    make_wheel(folder, "tinyapp", "1.2", requires=("tinybase>=1",))  # the same name, other bytes

    with pytest.raises(BundlingFailed, match=r"remove .* to fetch them again"):
        _bundle(_bundling(build, tmp_path / "cache"), tmp_path / "out")


def test_without_the_cache_and_the_index_the_bundle_fails_with_one_line(tmp_path: Path, offline: str) -> None:
    build = _build(tmp_path)
    cache = tmp_path / "cache"

    with pytest.raises(BundlingFailed) as raised:
        _bundle(_bundling(build, cache), tmp_path / "out")

    message = str(raised.value)
    assert "\n" not in message
    assert message.startswith(
        f"the layer's arm64 wheels are not cached ({cache / build.cache_key()}) and pip cannot reach the "
        f"package index ({offline}): run `make synth` once with the index reachable to fill the cache"
    )
    assert bundling_failure() is raised.value
    assert list(cache.iterdir()) == []  # nothing half-made is taken for a cache later


def test_a_failure_with_the_index_reachable_is_pips_own_last_error(tmp_path: Path) -> None:
    output = (
        "Looking in indexes: https://mirror.example/simple, file:///opt/local/simple\n"
        "ERROR: Could not find a version that satisfies the requirement tinyapp>=9 (from versions: 1.2)\n"
        "ERROR: No matching distribution found for tinyapp>=9\n"
    )
    asked: list[str] = []

    def answers(url: str) -> bool:
        asked.append(url)
        return True

    assert pip_indexes(output) == ["https://mirror.example/simple", "file:///opt/local/simple"]
    assert pip_indexes("ERROR: …") == [PYPI_INDEX]
    assert str(download_failure(tmp_path, output, probe=answers)) == (
        f"pip could not fetch the layer's arm64 wheels into the cache ({tmp_path}): "
        "No matching distribution found for tinyapp>=9"
    )
    assert asked == ["https://mirror.example/simple"]  # only the web's indexes are reached for
    assert "cannot reach the package index (https://mirror.example/simple)" in str(
        download_failure(tmp_path, output, probe=lambda url: False)
    )


def test_an_index_that_refuses_connections_is_not_reached(offline: str) -> None:
    assert reachable(offline, timeout=5) is False


def _app_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("parley_cdk_app", CDK_DIR / "app.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_synth_says_the_one_line_instead_of_jsiis_traceback(
    tmp_path: Path, offline: str, capsys: pytest.CaptureFixture[str]
) -> None:
    build = _build(tmp_path)
    stack = Stack(App(outdir=str(tmp_path / "cdk.out")), "layer")
    code = lambda_.Code.from_asset(
        str(build.package_dir),
        bundling=BundlingOptions(image=IMAGE, local=_bundling(build, tmp_path / "cache")),
    )

    with pytest.raises(SystemExit) as exited, _app_module().layer_failure_in_one_line():
        lambda_.LayerVersion(stack, "Layer", code=code)  # bundled as it is made, through jsii

    assert exited.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines[-1].startswith("synth: the layer's arm64 wheels are not cached (")
    assert "Traceback" not in "\n".join(lines) and "jsii" not in "\n".join(lines)


def test_other_failures_pass_through(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not the layer's"), _app_module().layer_failure_in_one_line():
        raise ValueError("not the layer's")
