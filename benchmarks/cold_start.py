"""Cold start as a caller meets it: a fresh process imports a function's handler and handles one
realistic first event, then a second and a tenth, against a bare handler that makes the same boto3
clients and AWS calls (issue: "Cold start as a user feels it").

AWS is moto's server in this process, reached over HTTP through ``AWS_ENDPOINT_URL`` as a function
reaches AWS, so a child process imports boto3 and botocore itself (moto in the child would have loaded
them before the clock starts). Each figure is the median of fresh processes, the functions and their
baselines interleaved so that the machine's noise falls on all alike.

What the time goes to: ``python -X importtime`` of the api function's import and first event, summed by
top-level package (self time), and the first event's phases (import, first event, of which imports).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import socket
import statistics
import subprocess
import sys
import textwrap
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

ROOT: Final = Path(__file__).resolve().parent.parent
TABLE: Final = "parley-bench"
PARAMETER: Final = "/parley/bench/operator"
OPERATOR: Final = """
principals:
  - { id: dev, grants: [{ org: acme, playbook: campaigns, role: write }] }
"""
RUN: Final = {"org": "acme", "playbook": "campaigns", "run_id": "0f5e8c1a-4d3b-4f6e-9a2c-7b1d3e5f7a9c"}

#: Each function's first event (from ``events/``, or made here where the folder has none).
EVENTS: Final[dict[str, Any]] = {
    "api": ROOT / "events" / "api" / "list_definitions.json",
    "wait": ROOT / "events" / "stepfunctions" / "wait.json",
    "settle": ROOT / "events" / "stepfunctions" / "settle_timeout.json",
    "timer": ROOT / "events" / "scheduler" / "expire.json",
    "reason": {"run": RUN, "resume": True},
    "mcp": "mcp",
}
#: The AWS calls each function's first event makes (so that its baseline makes the same).
CALLS: Final[dict[str, tuple[str, ...]]] = {
    "api": ("ssm", "dynamodb"),
    "wait": ("dynamodb", "stepfunctions"),
    "settle": ("dynamodb",),
    "timer": ("dynamodb",),
    "reason": ("dynamodb",),
    "mcp": ("ssm",),
}

CHILD: Final = textwrap.dedent(
    """
    import json, sys, time
    sys.path.insert(0, {folder!r})
    event = json.loads({event!r})

    class Context:
        function_name = "bench"
        aws_request_id = "bench-request"
        invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:bench"
        memory_limit_in_mb = 512
        def get_remaining_time_in_millis(self):
            return 30_000

    start = time.perf_counter()
    import handler
    imported = time.perf_counter()
    before = set(sys.modules)
    handler.handler(event, Context())
    first = time.perf_counter()
    loaded = len(set(sys.modules) - before)
    times = []
    for _ in range(9):
        began = time.perf_counter()
        handler.handler(event, Context())
        times.append(time.perf_counter() - began)
    print(json.dumps({{"import": imported - start, "first": first - imported, "second": times[0],
                      "tenth": times[-1], "modules_on_first_event": loaded}}))
    """
)

BARE: Final = textwrap.dedent(
    """
    from aws_lambda_powertools.event_handler import APIGatewayRestResolver

    app = APIGatewayRestResolver()
    clients = {{}}

    def calls():
        import boto3
        if not clients:
            clients.update({{name: boto3.client(name) for name in {services!r}}})
        for name in {services!r}:
            if name == "dynamodb":
                clients[name].get_item(TableName={table!r}, Key={{"pk": {{"S": "x"}}, "sk": {{"S": "y"}}}})
            elif name == "ssm":
                clients[name].get_parameter(Name={parameter!r})
            elif name == "stepfunctions":
                try:
                    clients[name].send_task_failure(taskToken="spent", error="Parley.Cancelled", cause="x")
                except clients[name].exceptions.ClientError:
                    pass

    @app.get("/v1/orgs/<org>/playbooks/<playbook>/definitions/<kind>")
    def list_definitions(org, playbook, kind):
        calls()
        return {{"definitions": [], "next_cursor": None}}

    @app.post("/mcp")
    def mcp():
        calls()
        return {{"jsonrpc": "2.0", "id": 1, "result": {{"tools": []}}}}

    def handler(event, context):
        if "httpMethod" in event:
            return app.resolve(event, context)
        calls()
        return {{"outcome": "unchanged"}}
    """
)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextlib.contextmanager
def _aws() -> Iterator[dict[str, str]]:
    """moto's server on 127.0.0.1 with the table and the operator configuration's parameter; the
    environment a function's process gets."""
    import boto3
    from moto.server import ThreadedMotoServer

    from parley.infrastructure.table import TABLE as TABLE_SHAPE

    port = _free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # no line per request
    server.start()
    endpoint = f"http://127.0.0.1:{port}"
    environ = {
        "PATH": "/usr/bin:/bin",
        "AWS_ENDPOINT_URL": endpoint,
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "PARLEY_TABLE": TABLE,
        "PARLEY_OPERATOR_CONFIG_PARAMETER": PARAMETER,
        # As the stack sets them for every function (the clients are made on their first call).
        "PARLEY_STATE_MACHINE_ARN": "arn:aws:states:us-east-1:123456789012:stateMachine:parley-bench-runs",
        "PARLEY_SCHEDULE_GROUP": "parley-bench",
        "PARLEY_SCHEDULER_ROLE_ARN": "arn:aws:iam::123456789012:role/parley-bench-scheduler",
        "PARLEY_TIMER_FUNCTION_ARN": "arn:aws:lambda:us-east-1:123456789012:function:parley-bench-timer",
        "POWERTOOLS_SERVICE_NAME": "parley",
        "POWERTOOLS_LOG_LEVEL": "ERROR",
    }
    session = boto3.session.Session(
        aws_access_key_id="testing", aws_secret_access_key="testing", region_name="us-east-1"
    )
    try:
        session.client("dynamodb", endpoint_url=endpoint).create_table(
            **TABLE_SHAPE.create_table_arguments(TABLE)
        )
        session.client("ssm", endpoint_url=endpoint).put_parameter(
            Name=PARAMETER, Value=OPERATOR, Type="String"
        )
        yield environ
    finally:
        # moto's backends live in this process: forget the table and the parameter, so that a second
        # server (import_profile after measure) starts empty.
        reset = urllib.request.Request(f"{endpoint}/moto-api/reset", method="POST")
        with contextlib.suppress(OSError), urllib.request.urlopen(reset, timeout=10):
            pass
        server.stop()


def _mcp_event() -> dict[str, Any]:
    """``tools/list`` posted to ``/mcp``, as API Gateway hands it to the mcp function (the api event's
    envelope, with the MCP client's headers and body)."""
    event: dict[str, Any] = json.loads((ROOT / "events" / "api" / "list_definitions.json").read_text())
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}})
    headers = {
        **event["headers"],
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "Mcp-Protocol-Version": "2025-06-18",
    }
    event.update(
        path="/mcp",
        httpMethod="POST",
        headers=headers,
        multiValueHeaders={name: [value] for name, value in headers.items()},
        queryStringParameters=None,
        multiValueQueryStringParameters=None,
        pathParameters=None,
        body=body,
        resource="/mcp",
    )
    event["requestContext"].update(resourcePath="/mcp", httpMethod="POST", path="/prod/mcp")
    return event


def _event(name: str) -> str:
    found = EVENTS[name]
    if found == "mcp":
        found = _mcp_event()
    value = json.loads(found.read_text(encoding="utf-8")) if isinstance(found, Path) else found
    if "requestContext" in value:  # behind the stage's authorizer, which names the principal
        value["requestContext"]["authorizer"] = {"principalId": "dev"}
    return json.dumps(value)


def _run(folder: Path, event: str, environ: dict[str, str]) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-c", CHILD.format(folder=str(folder), event=event)],
        capture_output=True,
        text=True,
        env=environ,
        timeout=120,
    )
    if out.returncode != 0:
        raise RuntimeError(f"{folder.name} failed its first event:\n{out.stderr[-3000:]}")
    figures: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return figures


def measure(tmp: Path, rounds: int = 7) -> dict[str, dict[str, float]]:
    """For each function and its baseline: median import, first, second and tenth event (ms)."""
    results: dict[str, dict[str, list[float]]] = {}
    with _aws() as environ:
        folders: dict[str, tuple[Path, Path]] = {}
        for name, services in CALLS.items():
            bare = tmp / f"bare-{name}"
            bare.mkdir(parents=True, exist_ok=True)
            (bare / "handler.py").write_text(
                BARE.format(services=services, table=TABLE, parameter=PARAMETER), encoding="utf-8"
            )
            folders[name] = (ROOT / "functions" / name, bare)
        for round_number in range(rounds + 1):
            for name, (ours, bare) in folders.items():
                event = _event(name)
                for label, folder in ((name, ours), (f"bare-{name}", bare)):
                    figures = _run(folder, event, environ)
                    if round_number == 0:
                        continue  # warms the file cache
                    for key, value in figures.items():
                        results.setdefault(label, {}).setdefault(key, []).append(value)
    return {
        label: {key: statistics.median(values) for key, values in found.items()}
        for label, found in results.items()
    }


def import_profile(top: int = 10) -> list[tuple[str, float]]:
    """Self time (ms) by top-level package of the api function's import and first event, from
    ``python -X importtime``, largest first."""
    with _aws() as environ:
        code = CHILD.format(folder=str(ROOT / "functions" / "api"), event=_event("api"))
        out = subprocess.run(
            [sys.executable, "-X", "importtime", "-c", code],
            check=True,
            capture_output=True,
            text=True,
            env=environ,
            timeout=120,
        )
    by_package: dict[str, float] = {}
    for line in out.stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        self_us, _, name = (part.strip() for part in line.removeprefix("import time:").split("|"))
        package = name.strip().split(".")[0]
        by_package[package] = by_package.get(package, 0.0) + int(self_us) / 1000
    return sorted(by_package.items(), key=lambda item: -item[1])[:top]


def report() -> None:
    """Print the figures (``make bench``)."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        figures = measure(Path(tmp))
    print(
        "Cold start to a first answer (a fresh process: import the handler, handle one first event; median\n"
        "of 7; AWS is moto's server over HTTP; the baseline is a bare handler making the same boto3 clients\n"
        "and calls — for the api function behind powertools' resolver)"
    )
    print(f"  {'function':<8} {'import':>8} {'1st event':>10} {'to answer':>10} {'baseline':>9} {'ratio':>6}"
          f" {'2nd':>7} {'10th':>7} {'modules on 1st':>15}")  # fmt: skip
    for name in CALLS:
        ours, bare = figures[name], figures[f"bare-{name}"]
        total = ours["import"] + ours["first"]
        baseline = bare["import"] + bare["first"]
        print(
            f"  {name:<8} {ours['import'] * 1000:>6.0f} ms {ours['first'] * 1000:>7.0f} ms "
            f"{total * 1000:>7.0f} ms {baseline * 1000:>6.0f} ms {total / baseline:>5.2f}x "
            f"{ours['second'] * 1000:>5.1f} ms {ours['tenth'] * 1000:>5.1f} ms "
            f"{ours['modules_on_first_event']:>15.0f}"
        )
    print("  goal: api at most 1.3x its baseline, every other function at most 1.5x")
    print("  what the api function's import and first event spend importing (self time by package):")
    for package, ms in import_profile():
        print(f"    {package:<28} {ms:6.1f} ms")


if __name__ == "__main__":
    os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    report()
