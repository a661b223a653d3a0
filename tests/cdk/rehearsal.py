"""The deploy rehearsed on moto (issue 28, item 5): the synthesized template created in moto's
CloudFormation, its assets published to moto's S3 as ``cdk deploy`` publishes them, and the created
functions run with the code and environment the created stack gives them.

What stands in for AWS, and why (docs/deploy-rehearsal.md says the same for readers):

- **Bootstrap.** ``cdk bootstrap`` leaves an assets bucket and the ``/cdk-bootstrap/<qualifier>/version``
  parameter, which the template reads (``BootstrapVersion``): :func:`bootstrap` makes both.
- **Assets.** Every file asset of the stack's asset manifest is zipped and put where the manifest says
  (:func:`publish`). The tests synthesize with bundling skipped, so the layer's asset is the package's
  source folder: it is zipped as the bundle lays it out (``python/parley/…``), without the third-party
  wheels, which the runner takes from the project's virtualenv instead.
- **What moto's CloudFormation does not model** (:data:`MOTO_CANNOT_CREATE`). moto skips a resource of
  a type it does not model, but fails the whole stack on a ``Fn::GetAtt`` of one, and leaves ``None``
  where a ``Ref`` names one. :func:`adapt` takes those resources out of the template and puts a stand-in
  value where they are named: the Cognito user pool, its client and domain and the schedule group are
  made first through their own services' APIs in moto (:func:`make_stand_ins`: the flows use them), an
  API stage is named by its stage name (what ``Ref`` gives), anything else by a marked placeholder.
- **moto's own mistakes.** ``AWS::SSM::Parameter`` ``Tags`` are a map in CloudFormation, a list in
  moto's model: :func:`adapt` writes them as the list moto expects.
- **Lambda.** moto runs a function's code in Docker with an image it pulls; :class:`FunctionRunner` runs
  it in a fresh Python process instead (the function's zip and its layers' zips, as moto holds them, on
  the path; the function's environment as created, reaching moto through ``AWS_ENDPOINT_URL``).
- **The issuer's keys.** The authorizer reads the issuer's JWKS over https only, and moto serves a user
  pool's on plain http: :func:`https_documents` serves the pool's JWKS, as moto gives it, over https on
  127.0.0.1 with a certificate made for the run, and the authorizer alone is told that address
  (``PARLEY_JWT_JWKS_URL``) and that certificate (``SSL_CERT_FILE``); the issuer stays the created one.
- **Step Functions.** moto's state machines run their definitions only in its "execute" mode, whose
  backend CloudFormation does not write to: :class:`MotoAccount` points CloudFormation at it, so the
  created state machine is the one that runs (its ASL parsed and interpreted by moto).
"""

from __future__ import annotations

import base64
import contextlib
import copy
import http.server
import io
import json
import logging
import os
import socket
import ssl
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
import urllib.request
import warnings
import zipfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import boto3
import pytest
from botocore.exceptions import ClientError
from botocore.parsers import ResponseParserError
from self_signed import self_signed

ACCOUNT: Final = "123456789012"
REGION: Final = "us-east-1"
#: The CDK's default bootstrap qualifier (``DefaultStackSynthesizer``).
QUALIFIER: Final = "hnb659fds"
BOOTSTRAP_VERSION: Final = "30"
CAPABILITIES: Final = ["CAPABILITY_IAM", "CAPABILITY_NAMED_IAM", "CAPABILITY_AUTO_EXPAND"]

#: The resource types of Parley's stacks that moto's CloudFormation (moto 5.2) does not model, and what a
#: missing one costs the rehearsal. A type leaving this list (moto learned it) or joining it (the stack
#: grew one) fails ``test_rehearsal``, so that docs/deploy-rehearsal.md is kept true.
MOTO_CANNOT_CREATE: Final = {
    "AWS::ApiGateway::Account": "the account's CloudWatch role for API Gateway's logs",
    "AWS::ApiGateway::Authorizer": "the API's JWT authorizer (the authorizer function is run directly)",
    "AWS::ApiGateway::GatewayResponse": "the API's own error responses (problem documents)",
    "AWS::ApiGateway::Stage": "the API's stage (throttling, access logs); no request reaches the API",
    "AWS::CloudWatch::Alarm": "every alarm",
    "AWS::Cognito::UserPool": "the user pool (made through Cognito's API in moto instead)",
    "AWS::Cognito::UserPoolClient": "the pool's app client (made through Cognito's API instead)",
    "AWS::Cognito::UserPoolDomain": "the sign-in domain (made through Cognito's API instead)",
    "AWS::Lambda::EventInvokeConfig": "the timer's and reason's retries and failure queues",
    "AWS::S3::BucketPolicy": "the buckets' TLS-only policies",
    "AWS::SNS::TopicPolicy": "the alarm topic's policy",
    "AWS::SQS::QueuePolicy": "the queues' TLS-only policies",
    "AWS::Scheduler::ScheduleGroup": "the schedule group (made through the Scheduler's API instead)",
}
#: What a reference to a resource moto cannot create becomes, when nothing stands in for it.
PLACEHOLDER_PREFIX: Final = "not-created-by-moto-"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass
class MotoAccount:
    """moto's server on 127.0.0.1, in this process (its backends are this process's), and a session."""

    endpoint: str
    runner: FunctionRunner
    session: boto3.session.Session = field(
        default_factory=lambda: boto3.session.Session(
            aws_access_key_id="testing", aws_secret_access_key="testing", region_name=REGION
        )
    )

    def client(self, service: str) -> Any:
        return self.session.client(service, endpoint_url=self.endpoint)  # type: ignore[call-overload]


@contextlib.contextmanager
def moto_account(work: Path) -> Iterator[MotoAccount]:
    """moto's server, with state machines that run (CloudFormation writing to the executing backend,
    whose Lambda tasks reach this server through ``MOTO_PORT``) and functions run by a
    :class:`FunctionRunner` instead of Docker; everything is put back and forgotten on the way out."""
    from moto.awslambda.models import LambdaFunction
    from moto.core.config import default_user_config
    from moto.server import ThreadedMotoServer
    from moto.stepfunctions import models as stepfunctions_models
    from moto.stepfunctions.parser.models import stepfunctions_parser_backends

    port = _free_port()
    endpoint = f"http://127.0.0.1:{port}"
    runner = FunctionRunner(endpoint=endpoint, work=work)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MOTO_PORT", str(port))
        patch.setitem(default_user_config["stepfunctions"], "execute_state_machine", True)
        patch.setattr(stepfunctions_models, "stepfunctions_backends", stepfunctions_parser_backends)
        patch.setattr(
            LambdaFunction,
            "_invoke_lambda",
            lambda function, event=None: runner.invoke_lambda(function, event),
        )
        server.start()
        account = MotoAccount(endpoint=endpoint, runner=runner)
        try:
            yield account
        finally:
            with contextlib.suppress(Exception):
                _stop_executions(account)
            reset = urllib.request.Request(f"{endpoint}/moto-api/reset", method="POST")
            with contextlib.suppress(OSError), urllib.request.urlopen(reset, timeout=30):
                pass
            server.stop()


def _stop_executions(aws: MotoAccount) -> None:
    """Stop what still runs (a test that failed half-way leaves an execution waiting for its token)."""
    stepfunctions = aws.client("stepfunctions")
    for machine in stepfunctions.list_state_machines()["stateMachines"]:
        running = stepfunctions.list_executions(
            stateMachineArn=machine["stateMachineArn"], statusFilter="RUNNING"
        )["executions"]
        for execution in running:
            stepfunctions.stop_execution(executionArn=execution["executionArn"])


# -- bootstrap and assets ----------------------------------------------------------------------------


def assets_bucket() -> str:
    return f"cdk-{QUALIFIER}-assets-{ACCOUNT}-{REGION}"


def bootstrap(aws: MotoAccount) -> None:
    """What ``cdk bootstrap`` leaves that a deploy uses: the assets bucket and the version parameter."""
    aws.client("s3").create_bucket(Bucket=assets_bucket())
    aws.client("ssm").put_parameter(
        Name=f"/cdk-bootstrap/{QUALIFIER}/version", Value=BOOTSTRAP_VERSION, Type="String"
    )


def _resolve_pseudo(text: str) -> str:
    return text.replace("${AWS::AccountId}", ACCOUNT).replace("${AWS::Region}", REGION)


def _layer_keys(template: Mapping[str, Any]) -> set[str]:
    return {
        str(resource["Properties"]["Content"]["S3Key"])
        for resource in template["Resources"].values()
        if resource["Type"] == "AWS::Lambda::LayerVersion"
    }


def _zip(folder: Path, prefix: str = "") -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
                archive.write(path, prefix + path.relative_to(folder).as_posix())
    return buffer.getvalue()


def publish(aws: MotoAccount, outdir: Path, stack_name: str, template: Mapping[str, Any]) -> str:
    """Put every file asset of ``stack_name``'s asset manifest where it says (the template: ``template``,
    the one moto is given); the template's URL."""
    manifest = json.loads((outdir / f"{stack_name}.assets.json").read_text(encoding="utf-8"))
    layers = _layer_keys(template)
    s3 = aws.client("s3")
    template_url = ""
    for asset in manifest["files"].values():
        source = asset["source"]
        for destination in asset["destinations"].values():
            bucket, key = _resolve_pseudo(destination["bucketName"]), destination["objectKey"]
            if source["packaging"] == "file":
                body = json.dumps(template).encode("utf-8")
                template_url = f"https://s3.{REGION}.amazonaws.com/{bucket}/{key}"
            else:
                folder = outdir / source["path"]  # (an absolute path stays absolute)
                body = _zip(folder, prefix=f"python/{folder.name}/" if key in layers else "")
            s3.put_object(Bucket=bucket, Key=key, Body=body)
    assert template_url, f"{stack_name}'s asset manifest names no template"
    return template_url


# -- what moto's CloudFormation cannot create ----------------------------------------------------------


@dataclass
class Adapted:
    template: dict[str, Any]
    #: The resources taken out, by type: moto's CloudFormation does not model them.
    skipped: dict[str, list[str]]
    #: What each reference to a taken-out resource became, by logical id and attribute (``Ref`` for Ref).
    stand_ins: dict[str, dict[str, str]]
    #: moto's mistakes worked around, one line each.
    fixed: list[str]


def moto_models() -> set[str]:
    """The resource types moto's CloudFormation creates."""
    from moto.cloudformation.parsing import get_model_map

    return set(get_model_map())


def make_stand_ins(
    aws: MotoAccount, template: Mapping[str, Any], stack_name: str
) -> dict[str, dict[str, str]]:
    """The user pool, its clients and domains, and the schedule groups of ``template``, made through their
    services' APIs in moto with the template's names: their ``Ref`` and ``Fn::GetAtt`` values."""
    resources = template["Resources"]
    made: dict[str, dict[str, str]] = {}
    cognito, scheduler = aws.client("cognito-idp"), aws.client("scheduler")

    def by_type(kind: str) -> list[tuple[str, Mapping[str, Any]]]:
        return [
            (key, value.get("Properties", {})) for key, value in resources.items() if value["Type"] == kind
        ]

    for logical_id, properties in by_type("AWS::Cognito::UserPool"):
        pool = cognito.create_user_pool(
            PoolName=str(properties.get("UserPoolName", f"{stack_name}-{logical_id}"))
        )
        pool_id = pool["UserPool"]["Id"]
        made[logical_id] = {
            "Ref": pool_id,
            "Arn": pool["UserPool"]["Arn"],
            "ProviderName": f"cognito-idp.{REGION}.amazonaws.com/{pool_id}",
            "ProviderURL": f"https://cognito-idp.{REGION}.amazonaws.com/{pool_id}",
        }
    for logical_id, properties in by_type("AWS::Cognito::UserPoolClient"):
        pool_id = made[properties["UserPoolId"]["Ref"]]["Ref"]
        client = cognito.create_user_pool_client(
            UserPoolId=pool_id,
            ClientName=str(properties.get("ClientName", logical_id)),
            ExplicitAuthFlows=list(properties.get("ExplicitAuthFlows", [])),
            GenerateSecret=bool(properties.get("GenerateSecret", False)),
        )
        made[logical_id] = {"Ref": client["UserPoolClient"]["ClientId"]}
    for logical_id, properties in by_type("AWS::Cognito::UserPoolDomain"):
        pool_id = made[properties["UserPoolId"]["Ref"]]["Ref"]
        domain = f"{stack_name}-{ACCOUNT}"
        cognito.create_user_pool_domain(Domain=domain, UserPoolId=pool_id)
        made[logical_id] = {"Ref": domain}
    for logical_id, properties in by_type("AWS::Scheduler::ScheduleGroup"):
        group = scheduler.create_schedule_group(Name=str(properties["Name"]))
        made[logical_id] = {"Ref": str(properties["Name"]), "Arn": group["ScheduleGroupArn"]}
    return made


def adapt(template: Mapping[str, Any], stand_ins: Mapping[str, Mapping[str, str]]) -> Adapted:
    """``template`` as moto's CloudFormation can create it (the module's docstring says what and why)."""
    adapted: dict[str, Any] = copy.deepcopy(dict(template))
    resources: dict[str, Any] = adapted["Resources"]
    known = moto_models()
    skipped: dict[str, list[str]] = {}
    values: dict[str, dict[str, str]] = {}
    for logical_id, resource in list(resources.items()):
        kind = resource["Type"]
        if kind in known:
            continue
        skipped.setdefault(kind, []).append(logical_id)
        del resources[logical_id]
        if logical_id in stand_ins:
            values[logical_id] = dict(stand_ins[logical_id])
        elif kind == "AWS::ApiGateway::Stage":
            values[logical_id] = {"Ref": str(resource["Properties"]["StageName"])}
        else:
            values[logical_id] = {"Ref": PLACEHOLDER_PREFIX + logical_id}

    def replace(value: Any) -> Any:
        if isinstance(value, dict):
            if set(value) == {"Ref"} and value["Ref"] in values:
                return values[value["Ref"]]["Ref"]
            if set(value) == {"Fn::GetAtt"} and value["Fn::GetAtt"][0] in values:
                name, attribute = value["Fn::GetAtt"]
                found = values[name].get(attribute)
                return found if found is not None else f"{PLACEHOLDER_PREFIX}{name}.{attribute}"
            return {key: replace(item) for key, item in value.items()}
        if isinstance(value, list):
            return [replace(item) for item in value]
        return value

    fixed: list[str] = []
    for logical_id, resource in resources.items():
        resources[logical_id] = replace(resource)
        depends = resource.get("DependsOn")
        if depends is not None:
            kept = [
                name for name in ([depends] if isinstance(depends, str) else depends) if name not in values
            ]
            if kept:
                resources[logical_id]["DependsOn"] = kept
            else:
                del resources[logical_id]["DependsOn"]
        properties = resources[logical_id].get("Properties", {})
        if resource["Type"] == "AWS::SSM::Parameter" and isinstance(properties.get("Tags"), dict):
            properties["Tags"] = [{"Key": key, "Value": value} for key, value in properties["Tags"].items()]
            fixed.append(
                f"{logical_id}: AWS::SSM::Parameter Tags written as moto's list, not the map AWS takes"
            )
    adapted["Outputs"] = replace(adapted.get("Outputs", {}))
    return Adapted(template=adapted, skipped=skipped, stand_ins=values, fixed=fixed)


# -- the deploy ------------------------------------------------------------------------------------------


@dataclass
class Deployment:
    stack_name: str
    status: str
    reason: str
    #: ``ListStackResources``: logical id → (type, physical id, status).
    created: dict[str, tuple[str, str, str]]
    adapted: Adapted
    outputs: dict[str, str]
    #: What moto's CloudFormation warned about while it created the stack.
    warnings: list[str]

    def physical(self, logical_id: str) -> str:
        return self.created[logical_id][1]

    def of_type(self, kind: str) -> dict[str, str]:
        return {key: physical for key, (found, physical, _) in self.created.items() if found == kind}


def deploy(aws: MotoAccount, outdir: Path, stack_name: str) -> Deployment:
    """Bootstrap, make the stand-ins, publish the assets, and create the stack from the template's URL,
    as ``cdk deploy`` does with a template too large to send in the call."""
    template = json.loads((outdir / f"{stack_name}.template.json").read_text(encoding="utf-8"))
    bootstrap(aws)
    adapted = adapt(template, make_stand_ins(aws, template, stack_name))
    url = publish(aws, outdir, stack_name, adapted.template)
    cloudformation = aws.client("cloudformation")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            cloudformation.create_stack(StackName=stack_name, TemplateURL=url, Capabilities=CAPABILITIES)
        except (ClientError, ResponseParserError) as exc:  # (moto lets a resource's refusal escape as is)
            raise AssertionError(f"moto's CloudFormation refused {stack_name}: {exc}") from None
        stack = cloudformation.describe_stacks(StackName=stack_name)["Stacks"][0]
        for _ in range(60):  # moto creates within the call; a real stack would be waited for
            if not stack["StackStatus"].endswith("_IN_PROGRESS"):
                break
            time.sleep(0.5)
            stack = cloudformation.describe_stacks(StackName=stack_name)["Stacks"][0]
    created: dict[str, tuple[str, str, str]] = {}
    for page in cloudformation.get_paginator("list_stack_resources").paginate(StackName=stack_name):
        for summary in page["StackResourceSummaries"]:
            created[summary["LogicalResourceId"]] = (
                summary["ResourceType"],
                summary.get("PhysicalResourceId", ""),
                summary["ResourceStatus"],
            )
    _attach_layers(aws, stack_name, template, created, adapted)
    return Deployment(
        stack_name=stack_name,
        status=stack["StackStatus"],
        reason=stack.get("StackStatusReason", ""),
        created=created,
        adapted=adapted,
        outputs={output["OutputKey"]: output["OutputValue"] for output in stack.get("Outputs", [])},
        warnings=[str(warning.message) for warning in caught],
    )


def _attach_layers(
    aws: MotoAccount,
    stack_name: str,
    template: Mapping[str, Any],
    created: Mapping[str, tuple[str, str, str]],
    adapted: Adapted,
) -> None:
    """moto's CloudFormation creates a function without its ``Layers``: give each created function the
    created layer versions its template names, through ``UpdateFunctionConfiguration``."""
    client = aws.client("lambda")
    # (a created layer version has no physical id in moto: found by the name moto gives it)
    versions = {
        layer["LayerName"]: layer["LatestMatchingVersion"]["LayerVersionArn"]
        for layer in client.list_layers()["Layers"]
    }

    def layer_arn(logical_id: str) -> str:
        named = created[logical_id][1] or next(
            (arn for name, arn in versions.items() if name.startswith(f"{stack_name}-{logical_id}-")), ""
        )
        assert named, f"the layer {logical_id} was not created"
        return named

    for logical_id, resource in template["Resources"].items():
        layers = (
            resource.get("Properties", {}).get("Layers")
            if resource["Type"] == "AWS::Lambda::Function"
            else None
        )
        if not layers or logical_id not in created:
            continue
        arns = [layer_arn(layer["Ref"]) for layer in layers]
        function_name = created[logical_id][1]
        if client.get_function_configuration(FunctionName=function_name).get("Layers"):
            continue  # moto learned it
        client.update_function_configuration(FunctionName=function_name, Layers=arns)
        adapted.fixed.append(
            f"{logical_id}: Layers given after the create (moto's CloudFormation drops them)"
        )


# -- running the created functions ---------------------------------------------------------------------

CHILD: Final = textwrap.dedent(
    """
    import importlib, json, os, sys, traceback

    class Context:
        function_name = os.environ["AWS_LAMBDA_FUNCTION_NAME"]
        aws_request_id = "rehearsal-request"
        invoked_function_arn = os.environ["PARLEY_REHEARSAL_FUNCTION_ARN"]
        memory_limit_in_mb = int(os.environ["AWS_LAMBDA_FUNCTION_MEMORY_SIZE"])
        def get_remaining_time_in_millis(self):
            return 30_000

    module_name, _, name = os.environ["_HANDLER"].rpartition(".")
    event = json.loads(sys.stdin.read())
    try:
        handler = getattr(importlib.import_module(module_name), name)
        import parley
        where = os.path.dirname(parley.__file__)
        if not where.startswith(os.environ["PARLEY_REHEARSAL_LAYERS"]):
            raise RuntimeError(f"parley was imported from {where}, not from the function's layer")
        result = handler(event, Context())
        print(json.dumps({"result": result}))
    except Exception as exc:
        print(json.dumps({"error": {"errorType": type(exc).__name__, "errorMessage": str(exc),
                                    "stackTrace": traceback.format_exc().splitlines()}}))
    """
)


@dataclass
class Invocation:
    function_name: str
    event: Any
    result: Any
    error: dict[str, Any] | None
    logs: str


class FunctionRunner:
    """Runs a function moto created, in a fresh Python process, in moto's place (``_invoke_lambda``):
    its zip in ``task/``, its layers' zips in ``opt/`` (as Lambda extracts them: ``/var/task`` and
    ``/opt``), its environment as created plus what Lambda adds, AWS being moto's server. The
    third-party packages come from this virtualenv (the rehearsal's layer has none: see the module).

    ``override`` replaces variables of one function's environment (by name), for what cannot be reached
    from here; ``invocations`` keeps every run, in order."""

    def __init__(self, *, endpoint: str, work: Path) -> None:
        self.endpoint = endpoint
        self.work = work
        self.override: dict[str, dict[str, str]] = {}
        self.invocations: list[Invocation] = []

    def invoke_lambda(self, function: Any, event: Any = None) -> tuple[str, bool, str]:
        """``moto.awslambda.models.LambdaFunction._invoke_lambda``: the result, whether it failed, logs."""
        folder = self._extract(function)
        environment = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "LANG": "C.UTF-8",
            "PYTHONPATH": os.pathsep.join([str(folder / "task"), str(folder / "opt" / "python")]),
            "PYTHONDONTWRITEBYTECODE": "1",
            "_HANDLER": function.handler,
            "AWS_LAMBDA_FUNCTION_NAME": function.function_name,
            "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": str(function.memory_size),
            "AWS_LAMBDA_FUNCTION_VERSION": "$LATEST",
            "AWS_REGION": REGION,
            "AWS_DEFAULT_REGION": REGION,
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_ENDPOINT_URL": self.endpoint,
            "PARLEY_REHEARSAL_FUNCTION_ARN": function.function_arn,
            "PARLEY_REHEARSAL_LAYERS": str(folder / "opt"),
            **{str(key): str(value) for key, value in function.environment_vars.items()},
            **self.override.get(function.function_name, {}),
        }
        done = subprocess.run(
            [sys.executable, "-c", CHILD],
            input=json.dumps(event if event is not None else {}),
            capture_output=True,
            text=True,
            env=environment,
            timeout=120,
            check=False,
        )
        lines = done.stdout.strip().splitlines()
        try:
            answer = json.loads(lines[-1]) if lines else {}
        except ValueError:
            answer = {}
        if "result" not in answer and "error" not in answer:
            answer = {"error": {"errorType": "Runtime.ExitError", "errorMessage": done.stderr[-3000:]}}
        logs = done.stderr[-4000:]
        error = answer.get("error")
        self.invocations.append(Invocation(function.function_name, event, answer.get("result"), error, logs))
        return json.dumps(error if error is not None else answer["result"]), error is not None, logs

    def _extract(self, function: Any) -> Path:
        from moto.awslambda.models import lambda_backends

        folder = self.work / f"{function.function_name}-{function.code_sha_256[:12].replace('/', '_')}"
        if folder.exists():
            return folder
        staging = Path(tempfile.mkdtemp(dir=self.work))
        with zipfile.ZipFile(io.BytesIO(function.code_bytes)) as archive:
            archive.extractall(staging / "task")
        backend = lambda_backends[function.account_id][function.region]
        for layer in function.layers:
            version = backend.layers_versions_by_arn(layer["Arn"])
            assert version is not None, f"{layer['Arn']} is not a layer version moto holds"
            with zipfile.ZipFile(io.BytesIO(version.code_bytes)) as archive:
                archive.extractall(staging / "opt")
        staging.rename(folder)
        return folder


def invoke(aws: MotoAccount, function_name: str, event: Any) -> Any:
    """Invoke a created function through Lambda's API (``RequestResponse``): its answer, decoded; a
    function's error is raised with its message and the process's log."""
    response = aws.client("lambda").invoke(
        FunctionName=function_name, Payload=json.dumps(event).encode("utf-8"), LogType="Tail"
    )
    payload = json.loads(response["Payload"].read())
    if response.get("FunctionError"):
        logs = base64.b64decode(response.get("LogResult", "")).decode("utf-8", "replace")
        raise AssertionError(f"{function_name} failed: {json.dumps(payload)[:3000]}\n{logs}")
    return payload


# -- https on 127.0.0.1 ----------------------------------------------------------------------------------


@contextlib.contextmanager
def https_documents(documents: Mapping[str, bytes], folder: Path) -> Iterator[tuple[str, Path]]:
    """``documents`` (by path) served as JSON over https on 127.0.0.1: the base URL and the certificate
    a client must trust."""
    key, certificate = self_signed(folder)

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = documents.get(self.path)
            self.send_response(200 if body is not None else 404)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(body or b"{}")

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(certificate, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"https://127.0.0.1:{server.server_address[1]}", certificate
    finally:
        server.shutdown()
        server.server_close()
