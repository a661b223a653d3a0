"""The function list (``parley.infrastructure.functions``): data the CDK app and the local runtime share."""

from __future__ import annotations

from pathlib import Path

import pytest

from parley.infrastructure.functions import ENTRY_ATTRIBUTE, FUNCTIONS, FunctionDefinition, function_named

ROOT = Path(__file__).resolve().parents[2]


def test_a_handler_file_gives_the_asset_folder_and_the_lambda_handler() -> None:
    definition = FunctionDefinition(
        name="read-replies",
        handler="functions/read_replies/handler.py",
        memory_mb=512,
        timeout_s=60,
        description="Reads replies",
    )

    assert definition.asset_dir == "functions/read_replies"
    assert definition.lambda_handler == "handler.handler"


@pytest.mark.parametrize("definition", FUNCTIONS, ids=lambda d: d.name)
def test_every_function_has_its_handler_file_alone_in_its_folder(definition: FunctionDefinition) -> None:
    handler_file = ROOT / definition.handler
    source = handler_file.read_text(encoding="utf-8")

    assert handler_file.parent == ROOT / definition.asset_dir
    assert f"\n{ENTRY_ATTRIBUTE} = " in source or f"\ndef {ENTRY_ATTRIBUTE}(" in source
    # The folder is the whole code asset: the core comes from the layer.
    shipped = [p.name for p in handler_file.parent.iterdir() if p.name != "__pycache__"]
    assert shipped == [handler_file.name]


def test_names_are_unique_and_fit_lambda_limits() -> None:
    names = [definition.name for definition in FUNCTIONS]

    assert len(names) == len(set(names))
    for definition in FUNCTIONS:
        assert 128 <= definition.memory_mb <= 10240
        assert 1 <= definition.timeout_s <= 900


def test_the_api_function_outlasts_the_apis_wait_which_outlasts_a_call() -> None:
    from parley_cdk.api import INTEGRATION_TIMEOUT_SECONDS

    # interaction-format.md, "Bounds": a run of a function with `call` takes up to 70 seconds.
    assert 70 < INTEGRATION_TIMEOUT_SECONDS < function_named("api").timeout_s
    # API Gateway waits 10 seconds for an authorizer.
    assert function_named("authorizer").timeout_s <= 10


def test_an_unknown_function_name_is_a_key_error() -> None:
    with pytest.raises(KeyError):
        function_named("nope")


def test_the_api_handler_is_the_apps_handle() -> None:
    import importlib.util

    from parley.api.app import handle

    spec = importlib.util.spec_from_file_location("api_handler", ROOT / function_named("api").handler)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)

    assert module.handler is handle


def test_the_authorizer_handler_is_the_authorizers_handle() -> None:
    import importlib.util

    from parley.authorizer import handle

    spec = importlib.util.spec_from_file_location(
        "authorizer_handler", ROOT / function_named("authorizer").handler
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)

    assert module.handler is handle


@pytest.mark.parametrize("name", ["wait", "settle", "timer"])
def test_the_run_functions_handlers_are_the_entries_of_the_runs_domain(name: str) -> None:
    import importlib.util

    from parley.executions import entry

    spec = importlib.util.spec_from_file_location(f"{name}_handler", ROOT / function_named(name).handler)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)

    assert module.handler is getattr(entry, f"handle_{name}")
