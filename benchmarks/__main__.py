"""Run every benchmark and print its figures."""

from __future__ import annotations

import contextlib
import io
import tempfile
from pathlib import Path

from benchmarks import (
    agent_runs,
    cold_start,
    create_definition,
    import_time,
    listings,
    local_durability,
    local_scale,
    reason_memory,
    reasoning,
    replies,
    runs,
    tool_runs,
    workflows,
)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        figures = import_time.measure(Path(tmp))
    print("Cold import of the api handler module (median of 15 fresh interpreters)")
    print(f"  bare powertools APIGatewayRestResolver handler: {figures['bare_ms']:.1f} ms")
    print(f"  parley api handler:                             {figures['api_ms']:.1f} ms")
    print(f"  ratio: {figures['ratio']:.2f}x (goal: at most 1.5x)")
    extras = import_time.api_handler_extras()
    print(
        f"  httpx, provider adapters or the reasoning package loaded by the api handler: {extras or 'none'}"
    )
    print("Cold import of the reason handler module (same interpreters, interleaved)")
    print(f"  parley reason handler:                          {figures['reason_ms']:.1f} ms")
    print(f"  ratio to the bare handler: {figures['reason_ratio']:.2f}x")
    reason_first = import_time.reason_first_run()
    print("  then the modules its first run loads (reasoning type, anthropic adapter, httpx; no AWS client),")
    print(f"  median of 7 fresh interpreters: {reason_first['first_run_modules_ms']:.0f} ms")
    print()
    latency = create_definition.measure()
    print("create_definition in process (API Gateway event -> handler -> moto DynamoDB), per document")
    first = latency.pop("first event")[0]
    for name, (p50, p99) in latency.items():
        print(f"  {name:<28} p50 {p50:6.2f} ms   p99 {p99:6.2f} ms")
    print(f"  first event of a fresh handler (loads routes, checker, boto3 client): {first:.0f} ms")
    print()
    print("CPU time of the project's own code per operation, AWS calls replayed (300 rounds)")
    for name, (p50, p99) in runs.cpu_per_operation().items():
        print(f"  {name:<28} p50 {p50:6.2f} ms   p99 {p99:6.2f} ms")
    print()
    with contextlib.redirect_stderr(io.StringIO()):  # the local server's request log
        calls = runs.calls_of_an_answered_run()
        p50, p99, at_once = runs.answer_to_settled()
    print("One asked-and-answered run (local runtime: the same handlers, state machine and scheduler port)")
    print(f"  Step Functions state transitions: {calls['state_transitions']} (goal: at most 2)")
    print(f"  Lambda invocations: {calls['lambda_invocations']}")
    print(f"  DynamoDB calls: {calls['dynamodb_calls']}")
    writes, reads = calls["dynamodb_units"]
    print(
        f"  DynamoDB request units: {writes:g} write (of which {calls['index_write_units']:g} the indexes'), "
        f"{reads:g} read"
    )
    print(f"  schedules: {calls['schedules']}")
    total = sum(calls["cost_per_1000_runs"].values())
    billed = runs.ASSUMED_BILLED_SECONDS * 1000
    print(f"  list price per 1,000 runs: ${total:.4f} (goal: at most $0.06)")
    print(f"    (Lambda at an assumed {billed:.0f} ms a call)")
    for item, dollars in calls["cost_per_1000_runs"].items():
        print(f"    {item:<28} ${dollars:.5f}")
    print()
    scans = runs.first_page_scans()
    print("list_interactions, first page (50): items DynamoDB read (ScannedCount)")
    for size, count in scans.items():
        print(f"  with {size:>6,} open requests: {count}")
    print()
    print("answer -> run succeeded on the local runtime (40 runs)")
    print(f"  p50 {p50:.1f} ms   p99 {p99:.1f} ms (the answer's response and one get_run)")
    print(f"  get_run right after the answer's 200 said succeeded: {at_once} of 40")
    print()
    workflows.report()
    print()
    replies.report()
    print()
    reasoning.report()
    print()
    tool_runs.report()
    print()
    agent_runs.report()
    print()
    reason_memory.report()
    print()
    local_scale.report()
    print()
    local_durability.report()
    print()
    listings.report()
    print()
    cold_start.report()


if __name__ == "__main__":
    main()
