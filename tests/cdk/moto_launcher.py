"""moto's server for the deployed stack's tests (``deployed.moto_server`` runs this file): moto 5.2 as it
is, plus ``ListStateMachineVersions``, which the workflows' adapter (``parley.aws.workflows``) calls to
find a published version and moto's Step Functions does not serve (it keeps the versions, and reads
them back through ``DescribeStateMachine``), and ``StartExecution`` of a version's ARN
(``…:stateMachine:<name>:<version>``, which moto refuses): it starts the machine's execution, whose ARN
is the same."""

from __future__ import annotations

import sys
from typing import Any


def _list_state_machine_versions(self: Any) -> Any:
    from moto.core.responses import ActionResult

    machine = self.stepfunction_backend.describe_state_machine(self._get_param("stateMachineArn"))
    versions = sorted(machine.versions.values(), key=lambda version: -version.version)
    listed = [{"stateMachineVersionArn": v.arn, "creationDate": v.creation_date} for v in versions]
    return ActionResult({"stateMachineVersions": listed})


def main() -> None:
    from moto.server import main as serve
    from moto.stepfunctions.models import StepFunctionBackend
    from moto.stepfunctions.responses import StepFunctionResponse

    original = StepFunctionBackend.start_execution

    def start_execution(self: Any, state_machine_arn: str, *args: Any, **kwargs: Any) -> Any:
        parts = state_machine_arn.split(":")
        if len(parts) == 8 and parts[7].isdigit():  # a version: its machine
            state_machine_arn = ":".join(parts[:7])
        return original(self, state_machine_arn, *args, **kwargs)

    StepFunctionBackend.start_execution = start_execution  # type: ignore[method-assign]

    StepFunctionResponse.list_state_machine_versions = _list_state_machine_versions  # type: ignore[attr-defined]
    serve(sys.argv[1:])


if __name__ == "__main__":
    main()
