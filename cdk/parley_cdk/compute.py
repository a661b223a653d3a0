"""The core layer and every function of ``FUNCTIONS``, each built by the one factory :meth:`Compute.add`."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Final

from aws_cdk import BundlingOptions, Duration
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from constructs import Construct

from parley.infrastructure.functions import FUNCTIONS, FunctionDefinition
from parley_cdk.bundling import ASSET_EXCLUDES, LayerBuild, LocalLayerBundling, runtime_requirements
from parley_cdk.nag import accept
from parley_cdk.settings import StageSettings

#: The Lambda Python, also the one pip fetches the layer's wheels for.
PYTHON_VERSION: Final = "3.12"
#: Powertools' service name in logs, traces and metrics.
SERVICE_NAME: Final = "parley"


def python_runtime() -> lambda_.Runtime:
    return lambda_.Runtime.PYTHON_3_12


def construct_name(function_name: str) -> str:
    """``read-replies`` → ``ReadReplies``: a construct id that keeps logical ids readable."""
    return "".join(part.capitalize() for part in function_name.split("-"))


def layer_code(repository: Path) -> lambda_.Code:
    """The ``parley`` package plus its runtime dependencies, bundled locally (see ``bundling``)."""
    build = LayerBuild(
        package_dir=repository / "layers" / "parley",
        requirements=runtime_requirements(repository / "pyproject.toml"),
        python_version=PYTHON_VERSION,
    )
    return lambda_.Code.from_asset(
        str(build.package_dir),
        exclude=list(ASSET_EXCLUDES),
        bundling=BundlingOptions(
            image=python_runtime().bundling_image,
            command=build.docker_command(),
            local=LocalLayerBundling(build),
        ),
    )


class Compute(Construct):
    """The layer and the functions; ``functions`` maps each definition's name to its function."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        settings: StageSettings,
        repository: Path,
        environment: Mapping[str, str],
    ) -> None:
        super().__init__(scope, construct_id)
        self._settings = settings
        self._repository = repository
        self._environment = {"POWERTOOLS_SERVICE_NAME": SERVICE_NAME, **environment}
        self.layer = lambda_.LayerVersion(
            self,
            "CoreLayer",
            code=layer_code(repository),
            compatible_runtimes=[python_runtime()],
            compatible_architectures=[lambda_.Architecture.ARM_64],
            description="Parley core package (parley) and its runtime dependencies",
        )
        self.functions: dict[str, lambda_.Function] = {}
        for definition in FUNCTIONS:
            self.add(definition)

    def add(self, definition: FunctionDefinition) -> lambda_.Function:
        """Build one function: its own role and log group, the layer, the shared environment, tracing."""
        scope = Construct(self, construct_name(definition.name))
        log_group = logs.LogGroup(
            scope,
            "Logs",
            retention=self._settings.log_retention,
            removal_policy=self._settings.removal_policy,
        )
        # An own role instead of the AWSLambdaBasicExecutionRole managed policy: it may write to its own
        # log group only. Tracing adds the X-Ray statement; the stack adds the table grant.
        role = iam.Role(
            scope,
            "Role",
            assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"),
            description=f"Parley {definition.name} function",
        )
        log_group.grant_write(role)
        function = lambda_.Function(
            scope,
            "Function",
            # Named, so that its ARN is known before it exists (the environment names the timer's).
            function_name=self._settings.resource_name(definition.name),
            description=definition.description,
            runtime=python_runtime(),
            architecture=lambda_.Architecture.ARM_64,
            code=lambda_.Code.from_asset(
                str(self._repository / definition.asset_dir), exclude=list(ASSET_EXCLUDES)
            ),
            handler=definition.lambda_handler,
            layers=[self.layer],
            memory_size=definition.memory_mb,
            timeout=Duration.seconds(definition.timeout_s),
            environment=dict(self._environment),
            tracing=lambda_.Tracing.ACTIVE,
            log_group=log_group,
            role=role,
        )
        accept(
            scope,
            "AwsSolutions-IAM5[Resource::*]",
            "X-Ray tracing (Tracing.ACTIVE): xray:PutTraceSegments and xray:PutTelemetryRecords have no "
            "resource-level permissions, so AWS requires Resource '*' for them.",
        )
        accept(
            function,
            "AwsSolutions-L1",
            f"Pinned on purpose to Python {PYTHON_VERSION}: the layer's wheels are built for it, and the "
            "runtime moves with the project (one constant, PYTHON_VERSION, and a test run), not whenever CDK "
            "learns a newer runtime.",
        )
        self.functions[definition.name] = function
        return function
