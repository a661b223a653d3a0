"""The synthesized stack, played offline (issue 28): every function in a process of its own with the
environment the template gives it, AWS as moto's server on 127.0.0.1, and this harness in the place of
what AWS itself does between the functions, each step through the wire the template lays for it.

- **The resources** the functions reach are made in moto from the template: the table (its keys and
  indexes), the content bucket, the queues, the schedule group, the operator configuration's parameter
  (its name from the template; its text the test's, which names the test's tool server and models), the
  run's state machine (its definition, resolved), and the secrets the test names.
- **Step Functions.** A ``StartExecution`` of the run's state machine runs its first state as the
  deployed definition says: the task's ``FunctionName`` and ``Payload`` (``$$.Task.Token``, ``$.run``),
  invoked as the machine's role; :meth:`Deployment.time_out_wait` takes the ``Catch`` to the settle
  state. A workflow's machine (made by the code's ``CreateStateMachine``) runs on
  ``parley.local.jsonata_states``, each task's function invoked as the workflows' role. A task token's
  ``SendTaskSuccess``/``SendTaskFailure`` resumes the machine that issued it.
- **Lambda**: an asynchronous ``Invoke`` of a function of the stack runs it after the caller's event
  (the run wait, ``PARLEY_RUN_WAIT_SECONDS``, is set to 0 for this reason: the caller answers
  ``started`` instead of polling a run that can only progress once it has answered).
- **EventBridge Scheduler and the timer queue**: schedules and messages are kept until the test fires
  them (:meth:`Deployment.fire_schedules`, :meth:`Deployment.deliver_queue`): a schedule's target is
  invoked as its ``RoleArn``; a message goes to the function the queue's event source mapping names, as
  an SQS batch, the queue read with that function's role.

Every botocore call a function makes is a :class:`Call` (``function``, ``service``, ``operation``,
``params``); every invocation AWS makes on a function's behalf is a :class:`ServiceCall` (the role of the
state machine, of the schedule, or the function's own for a queue it consumes), so the tests can check
both against the template's roles.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from function_process import FunctionProcess
from iam_check import IamRequest, iam_requests
from stack_names import ACCOUNT, REGION, StackNames

from parley.infrastructure.functions import FUNCTIONS, RUN_WAIT_SECONDS_VARIABLE

ROOT: Final = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Call:
    """One AWS API call a function's code made."""

    function: str
    service: str
    operation: str
    params: Mapping[str, Any]

    def __str__(self) -> str:
        return f"{self.function}: {self.service}.{self.operation}"


@dataclass(frozen=True)
class ServiceCall:
    """What AWS does for the stack, as a role of the stack: ``principal`` names the role's logical id."""

    principal: str
    request: IamRequest
    why: str


@dataclass
class StackFunction:
    name: str
    logical_id: str
    function_name: str
    arn: str
    role_id: str
    environment: dict[str, str]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextlib.contextmanager
def moto_server(log: Path) -> Iterator[str]:
    """moto's server in a process of its own on 127.0.0.1 (its backends apart from any other test's),
    with Lambda's simple backend (no Docker: an invocation is the harness's to deliver)."""
    port = free_port()
    with log.open("w", encoding="utf-8") as out:
        process = subprocess.Popen(
            [
                sys.executable,
                str(Path(__file__).with_name("moto_launcher.py")),
                "-H",
                "127.0.0.1",
                "-p",
                str(port),
            ],
            stdout=out,
            stderr=out,
        )
    endpoint = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            try:
                with urllib.request.urlopen(f"{endpoint}/moto-api/config", timeout=1):
                    break
            except OSError:
                if process.poll() is not None:
                    raise RuntimeError(f"moto's server stopped:\n{log.read_text()[-2000:]}") from None
                time.sleep(0.1)
        request = urllib.request.Request(
            f"{endpoint}/moto-api/config",
            data=json.dumps({"lambda": {"use_docker": False}}).encode(),
            headers={"Content-Type": "application/json"},
            method="POST",
        )
        with urllib.request.urlopen(request, timeout=10):
            pass
        yield endpoint
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _json_path(path: str, data: Any, context: Mapping[str, Any]) -> Any:
    """``$.a.b`` of ``data`` or ``$$.Task.Token`` of ``context`` (the paths the run's machine uses)."""
    if path.startswith("$$."):
        value: Any = context
        parts = path[3:].split(".")
    elif path == "$":
        return data
    elif path.startswith("$."):
        value = data
        parts = path[2:].split(".")
    else:
        raise ValueError(f"path {path} is not read by the harness")
    for part in parts:
        value = value[part]
    return value


def _parameters(template: Any, data: Any, context: Mapping[str, Any]) -> Any:
    if isinstance(template, dict):
        out = {}
        for key, value in template.items():
            if key.endswith(".$"):
                out[key[:-2]] = _json_path(value, data, context)
            else:
                out[key] = _parameters(value, data, context)
        return out
    if isinstance(template, list):
        return [_parameters(item, data, context) for item in template]
    return template


@dataclass
class _RunExecution:
    machine_arn: str
    input: Any
    state: str
    token: str
    ended: bool = False


class Deployment:
    """The stack of ``template`` (its JSON), its functions started on first use (see the module)."""

    def __init__(
        self,
        template: Mapping[str, Any],
        *,
        stack_name: str,
        endpoint: str,
        folder: Path,
        operator_config: str,
        secrets: Mapping[str, str] = {},
        extra_environment: Mapping[str, str] = {},
    ) -> None:
        self.names = StackNames(template, stack_name)
        self.endpoint = endpoint
        self.folder = folder
        self.calls: list[Call] = []
        self.service_calls: list[ServiceCall] = []
        self.failures: list[str] = []
        #: Every function invoked, in order (the authorizer makes no AWS call: it shows here only).
        self.invoked: list[str] = []
        self.clock_offset = 0.0
        self.tokens: dict[str, str] = {}
        self.schedules: dict[str, Mapping[str, Any]] = {}
        self.queued: list[tuple[str, str]] = []
        self.secret_arns: dict[str, str] = {}
        self.functions = self._functions(extra_environment)
        self._processes: dict[str, FunctionProcess] = {}
        self._pending: deque[Callable[[], None]] = deque()
        self._runs: dict[str, _RunExecution] = {}
        self._workflow_machines: dict[str, Any] = {}
        self._workflow_executions: dict[str, Any] = {}
        self._token_executions: dict[str, str] = {}
        self._session = self._aws_session()
        self._provision(operator_config, secrets)

    # -- the template's functions ---------------------------------------------------------------------

    def _functions(self, extra: Mapping[str, str]) -> dict[str, StackFunction]:
        found: dict[str, StackFunction] = {}
        by_description = {d.description: d.name for d in FUNCTIONS}
        for logical_id, resource in self.names.of_type("AWS::Lambda::Function").items():
            props = resource["Properties"]
            name = by_description.get(props.get("Description"))
            if name is None:
                continue
            variables = props.get("Environment", {}).get("Variables", {})
            environment = {key: str(self.names.resolve(value)) for key, value in variables.items()}
            function_name = self.names.physical_name(logical_id)
            found[name] = StackFunction(
                name=name,
                logical_id=logical_id,
                function_name=function_name,
                arn=self.names.get_att(logical_id, "Arn"),
                role_id=props["Role"]["Fn::GetAtt"][0],
                environment={**environment, **extra},
            )
        return found

    def function_of_arn(self, name_or_arn: str) -> StackFunction | None:
        bare = name_or_arn.split(":")[6] if name_or_arn.startswith("arn:") else name_or_arn
        for function in self.functions.values():
            if function.function_name == bare:
                return function
        return None

    def process_environment(self, function: StackFunction) -> dict[str, str]:
        return {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": os.environ.get("HOME", "/tmp"),
            # The package the tests run (a worktree's, through PYTHONPATH) rather than the one installed.
            **({"PYTHONPATH": os.environ["PYTHONPATH"]} if os.environ.get("PYTHONPATH") else {}),
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_REGION": REGION,
            "AWS_DEFAULT_REGION": REGION,
            "AWS_LAMBDA_FUNCTION_NAME": function.function_name,
            "HARNESS_FUNCTION_ARN": function.arn,
            **function.environment,
            # The harness delivers an asynchronous invocation once its caller has answered (see above).
            **({RUN_WAIT_SECONDS_VARIABLE: "0"} if RUN_WAIT_SECONDS_VARIABLE in function.environment else {}),
        }

    def process(self, name: str) -> FunctionProcess:
        if name not in self._processes:
            function = self.functions[name]
            self._processes[name] = FunctionProcess(
                name, self.process_environment(function), self.folder / f"{name}.log"
            )
        return self._processes[name]

    def stop(self) -> None:
        for process in self._processes.values():
            process.stop()

    # -- moto's resources, from the template -----------------------------------------------------------

    def _aws_session(self) -> Any:
        import boto3

        return boto3.session.Session(
            aws_access_key_id="testing", aws_secret_access_key="testing", region_name=REGION
        )

    def client(self, service: str) -> Any:
        return self._session.client(service, endpoint_url=self.endpoint)

    def _provision(self, operator_config: str, secrets: Mapping[str, str]) -> None:
        names = self.names
        dynamodb = self.client("dynamodb")
        for logical_id, resource in names.of_type("AWS::DynamoDB::Table").items():
            props = names.resolve(resource["Properties"])
            arguments = {
                key: props[key]
                for key in ("KeySchema", "AttributeDefinitions", "GlobalSecondaryIndexes", "BillingMode")
                if key in props
            }
            dynamodb.create_table(TableName=names.physical_name(logical_id), **arguments)
        s3 = self.client("s3")
        for logical_id in names.of_type("AWS::S3::Bucket"):
            s3.create_bucket(
                Bucket=names.physical_name(logical_id),
                CreateBucketConfiguration={"LocationConstraint": REGION},
            )
        sqs = self.client("sqs")
        for logical_id in names.of_type("AWS::SQS::Queue"):
            sqs.create_queue(QueueName=names.physical_name(logical_id))
        scheduler = self.client("scheduler")
        for logical_id in names.of_type("AWS::Scheduler::ScheduleGroup"):
            scheduler.create_schedule_group(Name=names.physical_name(logical_id))
        ssm = self.client("ssm")
        for logical_id, resource in names.of_type("AWS::SSM::Parameter").items():
            ssm.put_parameter(
                Name=names.physical_name(logical_id),
                Value=operator_config,
                Type=resource["Properties"].get("Type", "String"),
            )
        states = self.client("stepfunctions")
        for logical_id, resource in names.of_type("AWS::StepFunctions::StateMachine").items():
            states.create_state_machine(
                name=names.physical_name(logical_id),
                definition=json.dumps(names.state_machine_definition(logical_id)),
                roleArn=names.resolve(resource["Properties"]["RoleArn"]),
            )
        manager = self.client("secretsmanager")
        for name, value in secrets.items():
            created = manager.create_secret(Name=name, SecretString=value)
            self.secret_arns[name] = created["ARN"]

    # -- resources the calls touch ---------------------------------------------------------------------

    def token_machine(self, token: str) -> str:
        if token not in self.tokens:
            raise KeyError(f"a task token no state machine of the harness issued: {token[:40]}")
        return self.tokens[token]

    def secret_arn(self, secret_id: str) -> str:
        if secret_id.startswith("arn:"):
            return secret_id
        return self.secret_arns.get(
            secret_id, f"arn:aws:secretsmanager:{REGION}:{ACCOUNT}:secret:{secret_id}-XXXXXX"
        )

    def iam_requests(self, call: Call) -> list[IamRequest]:
        return iam_requests(
            call.service,
            call.operation,
            call.params,
            token_machine=self.token_machine,
            secret_arn=self.secret_arn,
        )

    # -- invoking ----------------------------------------------------------------------------------------

    def invoke(self, name: str, event: Any, *, settle: bool = True) -> Any:
        """Run function ``name`` on ``event``, then whatever AWS does because of its calls (unless
        ``settle`` is false); the function's result (its error raises :class:`FunctionFailed`)."""
        self.invoked.append(name)
        answer = self.process(name).invoke(event, clock_offset=self.clock_offset)
        calls = [Call(name, c["service"], c["operation"], c["params"]) for c in answer["calls"]]
        self.calls.extend(calls)
        for call in calls:
            self._react(call)
        if settle:
            self.settle()
        if not answer["ok"]:
            raise FunctionFailed(f"{name} failed: {answer['error']}\n{self.process(name).log_tail()}")
        return answer["result"]

    def settle(self) -> None:
        """Deliver what is due at once (asynchronous invocations, new executions, resumed workflows)."""
        for _ in range(500):
            if not self._pending:
                return
            self._pending.popleft()()
        raise RuntimeError("the harness kept delivering: a loop between functions?")

    def _deliver(self, name: str, event: Any, why: str) -> None:
        def deliver() -> None:
            try:
                self.invoke(name, event, settle=False)
            except FunctionFailed as failed:
                self.failures.append(f"{why}: {failed}")

        self._pending.append(deliver)

    # -- what AWS does with a call ----------------------------------------------------------------------

    def _react(self, call: Call) -> None:
        params = call.params
        if call.service == "lambda" and call.operation == "Invoke":
            target = self.function_of_arn(params["FunctionName"])
            if target is None:
                self.failures.append(
                    f"{call.function} invoked {params['FunctionName']}, no function of the stack"
                )
                return
            if params.get("InvocationType") != "Event":
                raise NotImplementedError(f"{call}: only asynchronous invocations are delivered")
            self._deliver(target.name, json.loads(params.get("Payload") or "{}"), f"{call} of {target.name}")
        elif call.service == "stepfunctions" and call.operation == "StartExecution":
            machine = params["stateMachineArn"]
            if machine in self._run_machines():
                self._pending.append(lambda: self._start_run(machine, params))
            else:
                self._pending.append(lambda: self._start_workflow(machine, params))
        elif call.service == "stepfunctions" and call.operation in ("SendTaskSuccess", "SendTaskFailure"):
            token = params["taskToken"]
            self._pending.append(lambda: self._task_answered(token, call.operation, params))
        elif call.service == "stepfunctions" and call.operation in (
            "CreateStateMachine",
            "UpdateStateMachine",
        ):
            self._pending.append(lambda: self._workflow_created(params))
        elif call.service == "scheduler" and call.operation == "CreateSchedule":
            self.schedules[f"{params.get('GroupName', 'default')}/{params['Name']}"] = params
        elif call.service == "scheduler" and call.operation == "DeleteSchedule":
            self.schedules.pop(f"{params.get('GroupName', 'default')}/{params['Name']}", None)
        elif call.service == "sqs" and call.operation == "SendMessage":
            self.queued.append((params["QueueUrl"], params["MessageBody"]))

    def _run_machines(self) -> dict[str, str]:
        """The stack's own state machines: ARN → logical id."""
        return {
            self.names.get_att(lid, "Arn"): lid
            for lid in self.names.of_type("AWS::StepFunctions::StateMachine")
        }

    def _machine_role(self, logical_id: str) -> str:
        role = self.names.properties(logical_id)["RoleArn"]
        role_id: str = role["Fn::GetAtt"][0]
        return role_id

    def _invoke_as(self, principal: str, function_arn: str, event: Any, why: str, *, now: bool) -> Any:
        """An invocation AWS makes as role ``principal`` (a logical id)."""
        self.service_calls.append(
            ServiceCall(principal, IamRequest("lambda:InvokeFunction", function_arn), why)
        )
        target = self.function_of_arn(function_arn)
        if target is None:
            self.failures.append(f"{why}: {function_arn} is no function of the stack")
            return None
        if now:
            return self.invoke(target.name, event, settle=False)
        self._deliver(target.name, event, why)
        return None

    def _start_run(self, machine: str, params: Mapping[str, Any]) -> None:
        logical_id = self._run_machines()[machine]
        definition = self.names.state_machine_definition(logical_id)
        data = json.loads(params.get("input") or "{}")
        token = f"harness-token-{uuid.uuid4().hex}"
        self.tokens[token] = machine
        state_name = definition["StartAt"]
        state = definition["States"][state_name]
        self._runs[token] = _RunExecution(machine, data, state_name, token)
        self._run_task(logical_id, state, data, {"Task": {"Token": token}}, f"{machine} {state_name}")

    def _run_task(self, logical_id: str, state: Mapping[str, Any], data: Any, context: Any, why: str) -> None:
        if not str(state["Resource"]).startswith("arn:aws:states:::lambda:invoke"):
            raise NotImplementedError(f"{why}: the harness runs lambda:invoke tasks only")
        arguments = _parameters(state["Parameters"], data, context)
        self._invoke_as(
            self._machine_role(logical_id), arguments["FunctionName"], arguments["Payload"], why, now=False
        )

    def time_out_wait(self, run_id: str) -> None:
        """The wait of ``run_id``'s execution times out: its ``Catch`` runs (the settle state)."""
        for execution in self._runs.values():
            if execution.ended or execution.input.get("run", {}).get("run_id") != run_id:
                continue
            logical_id = self._run_machines()[execution.machine_arn]
            definition = self.names.state_machine_definition(logical_id)
            catch = definition["States"][execution.state]["Catch"][0]
            data = dict(execution.input)
            data[catch["ResultPath"].removeprefix("$.")] = {"Error": "States.Timeout", "Cause": ""}
            execution.ended = True
            state = definition["States"][catch["Next"]]
            self._run_task(logical_id, state, data, {}, f"{execution.machine_arn} {catch['Next']}")
            self.settle()
            return
        raise KeyError(f"no waiting execution of run {run_id}")

    def _task_answered(self, token: str, operation: str, params: Mapping[str, Any]) -> None:
        if token in self._runs:
            self._runs[token].ended = True
            return
        execution_arn = self._token_executions.get(token)
        if execution_arn is None:
            return  # a token the harness never issued: the IAM check reports it
        from parley.local.steps import Outcome, TaskFailed, TaskSucceeded

        machine, execution = self._workflow_executions[execution_arn]
        outcome: Outcome
        if operation == "SendTaskSuccess":
            outcome = TaskSucceeded(output=json.loads(params["output"]))
        else:
            outcome = TaskFailed(error=str(params.get("error", "")), cause=str(params.get("cause", "")))
        machine.resume(execution, token, outcome)
        machine.run(execution)

    # -- workflows -------------------------------------------------------------------------------------

    def _workflow_created(self, params: Mapping[str, Any]) -> None:
        from parley.local.jsonata_states import WorkflowMachine

        if "name" in params:
            arn = f"arn:aws:states:{REGION}:{ACCOUNT}:stateMachine:{params['name']}"
        else:
            arn = params["stateMachineArn"]
        role_arn = params["roleArn"]
        principal = next(
            (
                lid
                for lid in self.names.of_type("AWS::IAM::Role")
                if self.names.get_att(lid, "Arn") == role_arn
            ),
            None,
        )
        if principal is None:
            self.failures.append(f"the state machine {arn} was given {role_arn}, no role of the stack")
            return

        def invoke(function_name: str, payload: Any) -> Any:
            return self._invoke_as(principal, function_name, payload, f"workflow {arn}", now=True)

        def on_token(execution: Any, token: str) -> None:
            self.tokens[token] = arn
            self._token_executions[token] = execution.arn

        self._workflow_machines[arn] = WorkflowMachine(
            json.loads(params["definition"]), arn=arn, invoke=invoke, on_token=on_token
        )

    def _start_workflow(self, machine_arn: str, params: Mapping[str, Any]) -> None:
        base = ":".join(machine_arn.split(":")[:7])
        machine = self._workflow_machines.get(base)
        if machine is None:
            self.failures.append(f"StartExecution of {machine_arn}: no state machine the code created")
            return
        name = params.get("name") or uuid.uuid4().hex
        execution_arn = f"{base.replace(':stateMachine:', ':execution:')}:{name}"
        execution = machine.start(execution_arn, name, json.loads(params.get("input") or "{}"))
        self._workflow_executions[execution_arn] = (machine, execution)
        machine.run(execution)

    # -- time passing ------------------------------------------------------------------------------------

    def fire_schedules(self, *, advance: float = 0.0) -> int:
        """Move the functions' clock by ``advance`` seconds and fire every schedule (each as its role);
        how many fired."""
        self.clock_offset += advance
        fired = 0
        batch, self.schedules = self.schedules, {}
        for key, params in batch.items():
            target = params["Target"]
            role = self._role_of_arn(target["RoleArn"])
            self._invoke_as(
                role, target["Arn"], json.loads(target.get("Input") or "{}"), f"schedule {key}", now=False
            )
            fired += 1
            self.settle()
        return fired

    def deliver_queue(self, *, advance: float = 0.0) -> int:
        """Move the clock by ``advance`` seconds and hand every queued message to the function the
        queue's event source mapping names (read with that function's role); how many."""
        self.clock_offset += advance
        delivered = 0
        batch, self.queued = self.queued, []
        for url, body in batch:
            queue_arn = f"arn:aws:sqs:{REGION}:{ACCOUNT}:{url.rstrip('/').rsplit('/', 1)[-1]}"
            mapping = self._event_source(queue_arn)
            if mapping is None:
                self.failures.append(f"a message on {url}, which no event source mapping reads")
                continue
            function = self.functions[mapping]
            for action in ("sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes"):
                self.service_calls.append(
                    ServiceCall(function.role_id, IamRequest(action, queue_arn), f"event source of {url}")
                )
            event = {"Records": [{"messageId": uuid.uuid4().hex, "body": body, "eventSourceARN": queue_arn}]}
            result = self.invoke(function.name, event, settle=False)
            if result and result.get("batchItemFailures"):
                self.failures.append(f"{function.name} failed a message of {url}: {body[:200]}")
            delivered += 1
            self.settle()
        return delivered

    def _event_source(self, queue_arn: str) -> str | None:
        for resource in self.names.of_type("AWS::Lambda::EventSourceMapping").values():
            props = resource["Properties"]
            if self.names.resolve(props["EventSourceArn"]) == queue_arn:
                target = self.function_of_arn(str(self.names.resolve(props["FunctionName"])))
                return target.name if target else None
        return None

    def _role_of_arn(self, role_arn: str) -> str:
        for logical_id in self.names.of_type("AWS::IAM::Role"):
            if self.names.get_att(logical_id, "Arn") == role_arn:
                return logical_id
        self.failures.append(f"{role_arn} is no role of the stack")
        return role_arn


class FunctionFailed(RuntimeError):
    """A function's handler raised (Lambda would report a function error)."""


def role_statements(names: StackNames, role_id: str) -> list[dict[str, Any]]:
    """Every statement of role ``role_id``: its inline policies and the ``AWS::IAM::Policy`` resources
    attached to it, intrinsics resolved (managed policies are refused: none of the functions' roles has
    one, and their statements are not in the template)."""
    role = names.properties(role_id)
    statements: list[dict[str, Any]] = []
    for policy in role.get("Policies", []):
        statements.extend(names.resolve(policy["PolicyDocument"]["Statement"]))
    for resource in names.of_type("AWS::IAM::Policy").values():
        props = resource["Properties"]
        if {"Ref": role_id} in props.get("Roles", []):
            statements.extend(names.resolve(props["PolicyDocument"]["Statement"]))
    return statements


def managed_policies(names: StackNames, role_id: str) -> list[Any]:
    found: list[Any] = names.properties(role_id).get("ManagedPolicyArns", [])
    return found
