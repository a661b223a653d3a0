"""Figures of reasoning runs: what Parley adds around the model call.

``cpu_per_run`` measures ``run_definition`` of a reasoning function in process, through the api
handler (an API Gateway event in, the reply out), with the runtime's reasoner left out so that the run's
work happens in the call itself: the document (checked once per version, then cached), the input's
defaults and check, the prompt rendered, the model offered, the run written ``started``; then the work:
the run read back, the prompt rendered again, the model called, the answer checked, the ending written
with the record, and the run read once more for the reply.

Nothing leaves the process and only the project's own code is timed:

- DynamoDB: each run is recorded once against moto, then replayed (``benchmarks.runs.Tape``), so
  neither moto nor botocore is in the figure.
- The model: the run code gives no way to hand ``call_model`` an HTTP client, so the benchmark wraps
  ``parley.models.call_model`` to pass one (``http=``) whose transport is an
  ``httpx.MockTransport`` answering a canned Anthropic Messages or OpenAI Chat Completions body at once:
  no socket. The time spent in ``httpx.Client.request`` (request building, the mock transport, the
  response) is measured apart: it stands in for the round trip, and "our code" is the rest (with
  boto3's type (de)serializers, which the stores call in production too).
- ``cpu_per_run(inject=False)`` leaves ``call_model`` as the run code calls it, with no client: the
  adapter then makes a new ``httpx.Client()`` for each call (its TLS context loads the CA bundle), and
  ``httpx.HTTPTransport`` is patched to answer the canned body instead of sending.

Two functions run: the page's example ``examples/definitions/reasoning/review-brief.md`` with an
Anthropic model, and a JSON function (a JSON schema, strict structured outputs) through an
OpenAI-compatible gateway.

``profile`` runs the same rounds under cProfile and gives the project's top functions by their own
time. ``python -m benchmarks.reasoning`` prints the figures and the profile.
"""

from __future__ import annotations

import cProfile
import json
import os
import pstats
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from benchmarks.runs import ROOT, QuietScheduler, QuietWaits, Tape, percentiles

BASE = "/v1/orgs/acme/playbooks/campaigns"
HEADERS = [("Authorization", "Bearer dev-token"), ("Content-Type", "application/json")]
GATEWAY_URL = "https://llm.internal.example/v1"
OPERATOR = f"""
principals:
  - id: dev
    token: dev-token
    grants: [{{ org: acme, playbook: campaigns, role: write }}]
models:
  allowed: [anthropic/*, internal/*]
  gateways:
    - name: internal
      base_url: {GATEWAY_URL}
      api_key: gw-secret-key-987
      structured_outputs: true
"""
ENVIRON = {"ANTHROPIC_API_KEY": "sk-ant-bench-key-123456", "ANTHROPIC_BASE_URL": "https://api.anthropic.com"}

#: The page's example, with an Anthropic model in place of the demo model.
REVIEW_BRIEF = (
    (ROOT / "examples" / "definitions" / "reasoning" / "review-brief.md")
    .read_text(encoding="utf-8")
    .replace("model: demo/echo", "model: anthropic/claude-sonnet-4-5")
)
JUDGE = """---
model: internal/llama
output:
  format: json
  schema:
    type: object
    additionalProperties: false
    required: [verdict, score]
    properties:
      verdict: { type: string, enum: [approve, revise] }
      score: { type: integer, minimum: 0, maximum: 10 }
---
Judge: {{ input.text }}
"""

FUNCTIONS: dict[str, tuple[str, str, dict[str, Any]]] = {
    # label: (name, source, input)
    "review-brief (anthropic)": (
        "review-brief",
        REVIEW_BRIEF,
        {"brief": "Launch in May with a budget of 40k.", "criteria": "Evidence for every claim."},
    ),
    "JSON function (gateway)": ("judge", JUDGE, {"text": "The brief cites two surveys for its claims."}),
}

#: The canned answers, as the providers send them.
ANTHROPIC_ANSWER = json.dumps(
    {
        "id": "msg_bench",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5-20250929",
        "content": [
            {
                "type": "text",
                "text": "The brief states a budget but gives no source for it; the May date lacks a plan.",
            }
        ],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {
            "input_tokens": 61,
            "output_tokens": 24,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        },
    }
).encode()
OPENAI_ANSWER = json.dumps(
    {
        "id": "chatcmpl-bench",
        "object": "chat.completion",
        "created": 1_767_225_600,
        "model": "llama",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": '{"verdict": "approve", "score": 8}',
                    "refusal": None,
                },
                "logprobs": None,
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 40, "completion_tokens": 12, "total_tokens": 52},
    }
).encode()


def _answer(request: Any) -> Any:
    import httpx

    body = ANTHROPIC_ANSWER if request.url.path.endswith("/messages") else OPENAI_ANSWER
    return httpx.Response(200, content=body, headers={"content-type": "application/json"})


@dataclass
class Split:
    """Per run: the CPU time inside ``call_model`` and inside ``httpx.Client.request``."""

    model: list[float] = field(default_factory=list)
    http: list[float] = field(default_factory=list)

    def clear(self) -> None:
        self.model.clear()
        self.http.clear()


@contextmanager
def canned_model(
    split: Split, *, inject: bool = True, model: Callable[[Any], Any] = _answer
) -> Iterator[None]:
    """The model (``model``: a request to its response) answering at once, with no socket,
    ``call_model`` and ``httpx.Client.request`` timed.

    ``inject``: ``call_model`` is given one httpx client over ``httpx.MockTransport`` (what the run code
    offers no way to do, hence the wrapper). Otherwise the run code goes as written: the adapter uses the
    process's shared ``httpx.Client``, whose ``HTTPTransport`` answers the canned body instead of sending.
    """
    import httpx

    import parley.models as providers

    plain_request = httpx.Client.request
    plain_handle = httpx.HTTPTransport.handle_request
    plain_call = providers.call_model

    def request(self: httpx.Client, *args: Any, **kwargs: Any) -> httpx.Response:
        begin = time.thread_time()
        try:
            return plain_request(self, *args, **kwargs)
        finally:
            split.http.append((time.thread_time() - begin) * 1000)

    http = httpx.Client(transport=httpx.MockTransport(model)) if inject else None

    def call_model(settings: Any, request: Any, **kwargs: Any) -> Any:
        if http is not None:
            kwargs.setdefault("http", http)
        begin = time.thread_time()
        try:
            return plain_call(settings, request, **kwargs)
        finally:
            split.model.append((time.thread_time() - begin) * 1000)

    httpx.Client.request = request  # type: ignore[method-assign]
    if not inject:
        httpx.HTTPTransport.handle_request = lambda self, request: model(request)  # type: ignore[method-assign]
    providers.call_model = call_model
    try:
        yield
    finally:
        providers.call_model = plain_call
        httpx.HTTPTransport.handle_request = plain_handle  # type: ignore[method-assign]
        httpx.Client.request = plain_request  # type: ignore[method-assign]
        if http is not None:
            http.close()


def _event(name: str, value: Mapping[str, Any]) -> dict[str, Any]:
    from parley.local.events import api_gateway_event

    body = json.dumps({"input": value}).encode()
    return api_gateway_event("POST", f"{BASE}/definitions/reasoning/{name}/run", HEADERS, body)


def _succeeded(reply: Mapping[str, Any]) -> None:
    if reply["statusCode"] != 200 or json.loads(reply["body"]).get("status") != "succeeded":
        raise RuntimeError(f"a reasoning run did not succeed: {reply['statusCode']} {reply['body']}")


def taped_runtime(table_name: str, operator: str, environ: dict[str, str], **ports: Any) -> tuple[Any, Tape]:
    """A runtime over a fresh table in moto (under ``mock_aws``), its DynamoDB calls through a tape, the
    manual clock and quiet waits and scheduler; ``ports`` adds others (such as a tool client)."""
    from parley.clock import ManualClock
    from parley.config import parse_operator_config
    from parley.definitions.store import DynamoDefinitionStore
    from parley.local.aws import create_table, local_dynamodb_client
    from parley.ports.runtime import Runtime

    client = local_dynamodb_client()
    table = create_table(client, table_name)
    tape = Tape(client)
    runtime = Runtime(
        definitions=DynamoDefinitionStore(tape, table),  # type: ignore[arg-type]
        clock=ManualClock(),
        operator=parse_operator_config(operator, "bench", environ={}),
        waits=QuietWaits(),
        scheduler=QuietScheduler(),
        environ=environ,
        run_wait_seconds=5,
        **ports,
    )
    return runtime, tape


@contextmanager
def _bench(*, inject: bool = True) -> Iterator[tuple[Callable[[str], Callable[[], None]], Tape, Split]]:
    """The api handler over moto's DynamoDB (through a tape) with the canned model; gives, for a
    function's label, one run of it as a call."""
    os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "WARNING")
    from moto import mock_aws

    from parley.api.app import build_handler
    from parley.definitions.model import PlaybookRef

    split = Split()
    with mock_aws(), canned_model(split, inject=inject):
        runtime, tape = taped_runtime("parley-bench-reasoning", OPERATOR, ENVIRON)
        definitions = runtime.definition_service()
        playbook = PlaybookRef("acme", "campaigns")
        for name, source, _ in FUNCTIONS.values():
            definitions.create_definition(playbook, "reasoning", name, source)
        api = build_handler(runtime)

        def one(label: str) -> Callable[[], None]:
            name, _, value = FUNCTIONS[label]
            event = _event(name, value)
            return lambda: _succeeded(api(event, None))

        yield one, tape, split


def cpu_per_run(rounds: int = 300, *, inject: bool = True) -> dict[str, dict[str, tuple[float, float]]]:
    """For each function: the CPU time of the whole call, inside ``call_model``, inside httpx, and of
    our code (the whole less httpx), as (p50, p99) in milliseconds. ``inject``: see ``canned_model``."""
    figures: dict[str, dict[str, tuple[float, float]]] = {}
    with _bench(inject=inject) as (one, tape, split):
        for label in FUNCTIONS:
            run = one(label)
            for _ in range(3):  # warm: the document check (once per version), imports, caches
                run()
            with tape.record() as calls:
                run()
            split.clear()
            whole: list[float] = []
            for _ in range(rounds):
                with tape.replay(calls):
                    begin = time.thread_time()
                    run()
                    whole.append((time.thread_time() - begin) * 1000)
            if len(split.model) != rounds or len(split.http) != rounds:
                raise RuntimeError("expected one model call and one HTTP exchange a run")
            figures[label] = {
                "whole call": percentiles(whole),
                "inside call_model": percentiles(split.model),
                "inside httpx (no socket)": percentiles(split.http),
                "our code (whole less httpx)": percentiles(
                    [w - h for w, h in zip(whole, split.http, strict=True)]
                ),
                "our code outside call_model": percentiles(
                    [w - m for w, m in zip(whole, split.model, strict=True)]
                ),
            }
    return figures


def first_run_ms() -> dict[str, float]:
    """Wall time of each function's first run in a process whose modules are loaded (moto live): the
    document check of a version not yet cached, and the first use of each code path."""
    firsts: dict[str, float] = {}
    with _bench() as (one, _tape, _split):
        for label in FUNCTIONS:
            run = one(label)
            begin = time.perf_counter()
            run()
            firsts[label] = (time.perf_counter() - begin) * 1000
    return firsts


def new_http_client_ms(rounds: int = 50) -> tuple[float, float]:
    """What ``call_model`` costs on top when it is given no client, as in the run code: a new
    ``httpx.Client()`` for each call (its TLS context loads the CA bundle), made and closed."""
    import httpx

    samples: list[float] = []
    for _ in range(rounds + 2):
        begin = time.thread_time()
        with httpx.Client():
            pass
        samples.append((time.thread_time() - begin) * 1000)
    return percentiles(samples[2:])


def profile(rounds: int = 300, top: int = 15) -> dict[str, list[tuple[str, float, float, int]]]:
    """The top functions by own time of ``rounds`` replayed runs of each function, DynamoDB replayed
    and the model canned: (where, own ms a run, cumulative ms a run, calls a run)."""
    tops: dict[str, list[tuple[str, float, float, int]]] = {}
    with _bench() as (one, tape, _split):
        for label in FUNCTIONS:
            run = one(label)
            for _ in range(3):
                run()
            with tape.record() as calls:
                run()
            profiler = cProfile.Profile()
            for _ in range(rounds):
                with tape.replay(calls):
                    profiler.enable()
                    run()
                    profiler.disable()
            stats = pstats.Stats(profiler).stats  # type: ignore[attr-defined]
            rows = []
            for (path, line, func), (_cc, calls_made, own, cumulative, _callers) in stats.items():
                rows.append(
                    (
                        _where(path, line, func),
                        own * 1000 / rounds,
                        cumulative * 1000 / rounds,
                        calls_made // rounds,
                    )
                )
            rows.sort(key=lambda row: row[1], reverse=True)
            tops[label] = rows[:top]
    return tops


def _where(path: str, line: int, func: str) -> str:
    for marker in ("/layers/", "/site-packages/", "/lib/python"):
        if marker in path:
            path = path.split(marker, 1)[1]
            if marker == "/lib/python":
                path = "stdlib:" + path.split("/", 1)[-1]
            break
    return f"{path}:{line}({func})" if line else func


def report(with_profile: bool = False) -> None:
    print("Reasoning run_definition in process (API Gateway event -> api handler -> reply; the run's work")
    print("in the call), DynamoDB replayed, the model answering at once through httpx.MockTransport")
    print("(CPU time, 300 rounds)")
    for label, figures in cpu_per_run().items():
        print(f"  {label}")
        for name, (p50, p99) in figures.items():
            print(f"    {name:<30} p50 {p50:6.2f} ms   p99 {p99:6.2f} ms")
    print("  goal: our code at most 5 ms p50")
    print("As the run code is wired: call_model is given no client, so every call shares the process's")
    print("one httpx.Client (100 rounds)")
    for label, figures in cpu_per_run(100, inject=False).items():
        p50, p99 = figures["our code (whole less httpx)"]
        print(f"  {label:<28} our code p50 {p50:6.2f} ms   p99 {p99:6.2f} ms")
    p50, p99 = new_http_client_ms()
    print(f"  a new httpx.Client() per call would add: p50 {p50:.2f} ms   p99 {p99:.2f} ms")
    for label, ms in first_run_ms().items():
        print(f"  first run of {label} in a warm process (document check, moto live): {ms:.0f} ms")
    if with_profile:
        print()
        for label, rows in profile().items():
            print(f"cProfile of {label}, top by own time (ms a run; profiled, so inflated)")
            for where, own, cumulative, calls in rows:
                print(f"  {own:6.3f} own  {cumulative:6.3f} cum  {calls:5d}x  {where}")
            print()


if __name__ == "__main__":
    report(with_profile=True)
