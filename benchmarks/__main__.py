"""Run every benchmark and print its figures."""

from __future__ import annotations

import tempfile
from pathlib import Path

from benchmarks import create_definition, import_time


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        figures = import_time.measure(Path(tmp))
    print("Cold import of the api handler module (median of 15 fresh interpreters)")
    print(f"  bare powertools APIGatewayRestResolver handler: {figures['bare_ms']:.1f} ms")
    print(f"  parley api handler:                             {figures['api_ms']:.1f} ms")
    print(f"  ratio: {figures['ratio']:.2f}x (goal: at most 1.5x)")
    print()
    latency = create_definition.measure()
    print("create_definition in process (API Gateway event -> handler -> moto DynamoDB), per document")
    first = latency.pop("first event")[0]
    for name, (p50, p99) in latency.items():
        print(f"  {name:<28} p50 {p50:6.2f} ms   p99 {p99:6.2f} ms")
    print(f"  first event of a fresh handler (loads routes, checker, boto3 client): {first:.0f} ms")


if __name__ == "__main__":
    main()
