"""Every wire connected (issue 28, item 2), read from the synthesized templates (``dev``, ``prod`` and
``options``, intrinsics resolved by ``stack_names``):

- **Environment.** What the deployed code reads from its environment is found in its source (every
  ``*_VARIABLE`` constant of ``layers/parley`` outside the local server, the demo and the CLI, and every
  read of an environment by a literal name): each is in :data:`VARIABLES`, which says which functions the
  template must give it to and what it must name (the stack's table, its bucket, its state machine...),
  or why no function is given it. A new read without a template value fails here.
- **Invocations.** Every function a state machine's task, a schedule's role, a queue's event source, an
  EventBridge rule, a failure destination or the API invokes is a function of the stack, and the role or
  resource policy that makes the invocation allows it: the run's machine's role invokes exactly the
  functions its definition names, the workflows' role exactly the workflow function, the schedules' role
  exactly the timer (and only this stage's schedule group may assume it).
- **The API.** Its methods route exactly the registry's operations (``parley.api.registry``), the MCP
  front door and the public pages (the description, the docs, the web inbox), each operation and the MCP
  front door behind the JWT authorizer, each method to the function that serves it, each with the Lambda
  permission API Gateway needs.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any, Final

import pytest
from deployed import role_statements
from iam_check import IamRequest, allowed
from stack_names import StackNames

from parley.infrastructure.functions import (
    FUNCTIONS,
    MAY_KEEP_CONNECTION_SECRETS,
    MAY_READ_CONNECTION_SECRETS,
    MAY_REASON,
    WITHOUT_RUNTIME,
)

pytestmark = pytest.mark.cdk

ROOT: Final = Path(__file__).resolve().parents[2]
PACKAGE: Final = ROOT / "layers" / "parley"
#: Parts of the package no deployed function runs: the local server, the demo chat and model, the CLI.
NOT_DEPLOYED: Final = ("local/", "demo/", "client/", "cli.py")
RUNTIME: Final = frozenset(d.name for d in FUNCTIONS) - WITHOUT_RUNTIME


@dataclass(frozen=True)
class Variable:
    """Who the template must give a variable to, and what its value names (``None``: not set, ``why``)."""

    functions: frozenset[str]
    names: str | None = None
    why: str = ""


#: Every variable the deployed code reads. ``names`` is a kind checked by :func:`_names` against the stack.
VARIABLES: Final[Mapping[str, Variable]] = {
    "PARLEY_TABLE": Variable(RUNTIME, "table"),
    "PARLEY_CONTENT_BUCKET": Variable(RUNTIME, "bucket"),
    "PARLEY_OPERATOR_CONFIG_PARAMETER": Variable(RUNTIME, "parameter"),
    "PARLEY_STATE_MACHINE_ARN": Variable(RUNTIME, "run state machine"),
    "PARLEY_SCHEDULE_GROUP": Variable(RUNTIME, "schedule group"),
    "PARLEY_SCHEDULER_ROLE_ARN": Variable(RUNTIME, "scheduler role"),
    "PARLEY_TIMER_FUNCTION_ARN": Variable(RUNTIME, "function timer"),
    "PARLEY_TIMER_QUEUE_URL": Variable(RUNTIME, "timer queue"),
    "PARLEY_SCHEDULE_DEAD_LETTER_ARN": Variable(RUNTIME, "schedule dead letters"),
    "PARLEY_WORKFLOW_PREFIX": Variable(RUNTIME, "workflow prefix"),
    "PARLEY_WORKFLOW_ROLE_ARN": Variable(RUNTIME, "workflow role"),
    "PARLEY_WORKFLOW_FUNCTION_ARN": Variable(RUNTIME, "function workflow"),
    "PARLEY_REASON_FUNCTION_ARN": Variable(MAY_REASON, "function reason"),
    "PARLEY_CONNECTION_SECRETS_PREFIX": Variable(
        MAY_KEEP_CONNECTION_SECRETS | MAY_READ_CONNECTION_SECRETS, "connection secrets"
    ),
    "PARLEY_SECRET_KEY_FILE": Variable(
        frozenset(), why="the local server's key of its data folder's secrets: on AWS, Secrets Manager"
    ),
    "XDG_CONFIG_HOME": Variable(
        frozenset(), why="where the local server's key of its data folder's secrets is kept by default"
    ),
    "PARLEY_PUBLIC_URL": Variable(
        frozenset(),
        why="the API's public URL when it is reached through a domain with a base path or a proxy (the OAuth "
        "callback's address): the operator's to set; the stack's own domain needs none",
    ),
    "PARLEY_RUN_WAIT_SECONDS": Variable(MAY_REASON, "seconds"),
    "PARLEY_JWT_ISSUER": Variable(frozenset({"authorizer"}), "issuer"),
    "PARLEY_JWT_AUDIENCE": Variable(frozenset({"authorizer"}), "audience"),
    "PARLEY_JWT_PRINCIPAL_CLAIM": Variable(frozenset({"authorizer"}), "claim"),
    "PARLEY_JWT_JWKS_URL": Variable(frozenset({"authorizer"}), "jwks"),
    "PARLEY_INBOX_COGNITO_DOMAIN": Variable(
        frozenset({"api"}), "cognito domain", "only with the stack's own Cognito pool (not an OIDC issuer)"
    ),
    "PARLEY_INBOX_CLIENT_ID": Variable(
        frozenset({"api"}), "user pool client", "only with the stack's own Cognito pool (not an OIDC issuer)"
    ),
    "PARLEY_OPERATOR_CONFIG": Variable(
        frozenset(),
        why="the configuration inline, for the local server: a deployed function reads the parameter",
    ),
    "INTERACTION_OPEN_REQUESTS": Variable(frozenset(), why="an operator's override of a limit; unset"),
    "REASONING_MAX_INPUT_TOKENS": Variable(frozenset(), why="an operator's override of a limit; unset"),
    "WORKFLOW_MAX_DURATION": Variable(frozenset(), why="an operator's override of a limit; unset"),
}
#: Variables read by a name computed at run time: a model provider's settings (``ANTHROPIC_API_KEY``…),
#: which the operator configuration names by secret reference instead; a deployed function sets none.
DYNAMIC_READS: Final = {
    "config/models.py": "a provider's settings (PROVIDER_SETTINGS)",
    "config/environment.py": "the limits' overrides",
    "models/providers/settings.py": "a provider's settings (PROVIDER_SETTINGS)",
}


def _deployed_sources() -> dict[str, ast.Module]:
    return {
        str(path.relative_to(PACKAGE)): ast.parse(path.read_text(encoding="utf-8"))
        for path in sorted(PACKAGE.rglob("*.py"))
        if not str(path.relative_to(PACKAGE)).startswith(NOT_DEPLOYED)
    }


def code_reads() -> tuple[set[str], list[str]]:
    """The variables the deployed code reads (every ``*_VARIABLE`` constant's value and every literal name
    read from an environment), and the places that read a computed name (``file:line``)."""
    constants: dict[str, set[str]] = {}
    named: set[str] = set()
    sources = _deployed_sources()
    for tree in sources.values():
        for node in tree.body:
            targets = (
                node.targets
                if isinstance(node, ast.Assign)
                else [node.target]
                if isinstance(node, ast.AnnAssign)
                else []
            )
            value = getattr(node, "value", None)
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                for target in targets:
                    if isinstance(target, ast.Name) and target.id.isupper():
                        constants.setdefault(target.id, set()).add(value.value)
                        if target.id.endswith("_VARIABLE"):
                            named.add(value.value)
    dynamic = []
    for file, tree in sources.items():
        for node in ast.walk(tree):  # type: ignore[assignment]
            argument = None
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args:
                if node.func.attr in ("get", "pop") and _is_environment(node.func.value):
                    argument = node.args[0]
            elif isinstance(node, ast.Subscript) and _is_environment(node.value):
                argument = node.slice
            if argument is None:
                continue
            if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
                named.add(argument.value)
            elif isinstance(argument, (ast.Name, ast.Attribute)):
                name = argument.id if isinstance(argument, ast.Name) else argument.attr
                if len(constants.get(name, ())) == 1:
                    named.update(constants[name])
                else:
                    dynamic.append(f"{file}:{node.lineno}")
            else:
                dynamic.append(f"{file}:{node.lineno}")
    return named, dynamic


def _is_environment(node: ast.expr) -> bool:
    text = ast.unparse(node)
    return text.endswith("environ") or text == "env"


# -- the templates -----------------------------------------------------------------------------------------


@dataclass
class Stack:
    name: str
    names: StackNames

    def functions(self) -> dict[str, tuple[str, Mapping[str, Any]]]:
        """Function name → (logical id, properties)."""
        by_description = {d.description: d.name for d in FUNCTIONS}
        return {
            by_description[r["Properties"]["Description"]]: (lid, r["Properties"])
            for lid, r in self.names.of_type("AWS::Lambda::Function").items()
            if r["Properties"].get("Description") in by_description
        }

    def function_arn(self, name: str) -> str:
        return self.names.get_att(self.functions()[name][0], "Arn")

    def function_named_by(self, arn_or_name: str) -> str | None:
        for name, (lid, _) in self.functions().items():
            if arn_or_name in (self.names.get_att(lid, "Arn"), self.names.physical_name(lid)):
                return name
        return None

    def environment(self, name: str) -> dict[str, str]:
        variables = self.functions()[name][1].get("Environment", {}).get("Variables", {})
        return {key: str(self.names.resolve(value)) for key, value in variables.items()}

    def role(self, name: str) -> str:
        role_id: str = self.functions()[name][1]["Role"]["Fn::GetAtt"][0]
        return role_id

    def statements(self, role_id: str) -> list[dict[str, Any]]:
        return role_statements(self.names, role_id)

    def roles_assumed_by(self, service: str) -> dict[str, Mapping[str, Any]]:
        found = {}
        for lid, resource in self.names.of_type("AWS::IAM::Role").items():
            trust = self.names.resolve(resource["Properties"]["AssumeRolePolicyDocument"])
            for statement in trust["Statement"]:
                if statement.get("Principal", {}).get("Service") == service:
                    found[lid] = statement
        return found

    def only(self, kind: str) -> str:
        found = list(self.names.of_type(kind))
        assert len(found) == 1, f"{len(found)} {kind}"
        return found[0]

    def run_machine(self) -> str:
        return self.only("AWS::StepFunctions::StateMachine")

    def invoked_by(self, role_id: str) -> set[str]:
        """The functions a role may invoke (``lambda:InvokeFunction`` resources), as function names."""
        resources = [
            r
            for s in self.statements(role_id)
            if "lambda:InvokeFunction" in _as_list(s["Action"])
            for r in _as_list(s["Resource"])
        ]
        return {self.function_named_by(r) or r for r in resources}


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


@pytest.fixture(scope="module", params=["dev", "prod", "options"])
def stack(request: pytest.FixtureRequest, synthesized: Any) -> Stack:
    template = synthesized.templates[request.param].to_json()
    return Stack(request.param, StackNames(template, synthesized.stacks[request.param].stack_name))


# -- environment -------------------------------------------------------------------------------------------


def test_every_variable_the_code_reads_is_known() -> None:
    named, dynamic = code_reads()
    unknown = sorted(v for v in named if v not in VARIABLES)
    assert not unknown, (
        f"read by the deployed code, not in VARIABLES (set it in the stack, or say why not): {unknown}"
    )
    unexplained = [place for place in dynamic if place.rsplit(":", 1)[0] not in DYNAMIC_READS]
    assert not unexplained, f"reads of a computed variable name: {unexplained}"
    stale = sorted(set(VARIABLES) - named)
    assert not stale, f"in VARIABLES, read by no deployed code: {stale}"


def _names(stack: Stack, function: str, kind: str, value: str) -> bool:
    names = stack.names
    checks: dict[str, Callable[[], bool]] = {
        "table": lambda: value == names.physical_name(stack.only("AWS::DynamoDB::Table")),
        "bucket": lambda: value == names.physical_name(stack.only("AWS::S3::Bucket")),
        "parameter": lambda: value == names.physical_name(stack.only("AWS::SSM::Parameter")),
        "run state machine": lambda: value == names.get_att(stack.run_machine(), "Arn"),
        "schedule group": lambda: value == names.physical_name(stack.only("AWS::Scheduler::ScheduleGroup")),
        "scheduler role": lambda: (
            value in {names.get_att(lid, "Arn") for lid in stack.roles_assumed_by("scheduler.amazonaws.com")}
        ),
        "timer queue": lambda: any(
            names.resolve(m["Properties"]["EventSourceArn"]).endswith(":" + value.rsplit("/", 1)[-1])
            and stack.function_named_by(str(names.resolve(m["Properties"]["FunctionName"]))) == "timer"
            for m in names.of_type("AWS::Lambda::EventSourceMapping").values()
        ),
        "schedule dead letters": lambda: (
            value in {names.get_att(lid, "Arn") for lid in names.of_type("AWS::SQS::Queue")}
        ),
        "workflow prefix": lambda: (
            bool(value)
            and any(
                str(r).split(":stateMachine:", 1)[-1].startswith(value)
                for s in stack.statements(stack.role("workflow"))
                if "states:CreateStateMachine" in _as_list(s["Action"])
                for r in _as_list(s["Resource"])
            )
        ),
        "workflow role": lambda: (
            value in {names.get_att(lid, "Arn") for lid in stack.roles_assumed_by("states.amazonaws.com")}
            and value != names.resolve(names.properties(stack.run_machine())["RoleArn"])
        ),
        "seconds": lambda: 0 <= float(value) <= 900,
        "connection secrets": lambda: (
            value.startswith("parley/")
            and value.endswith("/connections/")
            and any(
                str(r).endswith(f":secret:{value}*")
                for s in stack.statements(stack.role(function))
                if "secretsmanager:GetSecretValue" in _as_list(s["Action"])
                for r in _as_list(s["Resource"])
            )
        ),
        "issuer": lambda: value.startswith("https://"),
        "audience": lambda: bool(value.strip(", ")),
        "claim": lambda: bool(value),
        "jwks": lambda: value.startswith("https://") and value.endswith(("/jwks.json", "/keys")),
        "cognito domain": lambda: (
            value
            == f"https://{names.physical_name(stack.only('AWS::Cognito::UserPoolDomain'))}.auth.{names.ref('AWS::Region')}"
            ".amazoncognito.com"
        ),
        "user pool client": lambda: value == names.physical_name(stack.only("AWS::Cognito::UserPoolClient")),
    }
    if kind.startswith("function "):
        return stack.function_named_by(value) == kind.removeprefix("function ")
    return checks[kind]()


def test_each_function_is_given_what_it_reads_naming_a_resource_of_the_stack(stack: Stack) -> None:
    has_pool = bool(stack.names.of_type("AWS::Cognito::UserPool"))
    wrong = []
    for function in stack.functions():
        environment = stack.environment(function)
        for variable, wanted in VARIABLES.items():
            if function not in wanted.functions or wanted.names is None:
                continue
            if "Cognito" in wanted.why and not has_pool:
                continue
            if variable not in environment:
                wrong.append(
                    f"{stack.name}: the {function} function reads {variable}; the template does not set it"
                )
            elif not _names(stack, function, wanted.names, environment[variable]):
                wrong.append(
                    f"{stack.name}: {function}'s {variable}={environment[variable]!r} "
                    f"names no {wanted.names} of the stack"
                )
    assert not wrong, "\n".join(wrong)


# -- invocations -------------------------------------------------------------------------------------------


def test_the_run_state_machine_invokes_exactly_the_functions_it_names(stack: Stack) -> None:
    machine = stack.run_machine()
    definition = stack.names.state_machine_definition(machine)
    named = {
        str(state["Parameters"]["FunctionName"])
        for state in definition["States"].values()
        if state.get("Type") == "Task"
    }
    targets = {stack.function_named_by(arn) for arn in named}
    assert targets == {"wait", "settle"}, named
    role = stack.names.properties(machine)["RoleArn"]["Fn::GetAtt"][0]
    assert stack.invoked_by(role) == targets
    assert role in stack.roles_assumed_by("states.amazonaws.com")


def test_the_workflows_role_invokes_the_workflow_function_only(stack: Stack) -> None:
    from parley.workflow.engine import ENTRY_FUNCTION, with_entry

    workflow_role = stack.environment("api")["PARLEY_WORKFLOW_ROLE_ARN"]
    role_id = next(
        lid
        for lid in stack.names.of_type("AWS::IAM::Role")
        if stack.names.get_att(lid, "Arn") == workflow_role
    )
    assert stack.invoked_by(role_id) == {"workflow"}
    # The compiled machines name the placeholder, which the runtime replaces with the variable's function.
    machine = with_entry(
        {"Resource": ENTRY_FUNCTION}, stack.environment("api")["PARLEY_WORKFLOW_FUNCTION_ARN"]
    )
    assert stack.function_named_by(machine["Resource"]) == "workflow"


def test_the_schedules_role_invokes_the_timer_only_and_only_this_group_may_assume_it(stack: Stack) -> None:
    roles = stack.roles_assumed_by("scheduler.amazonaws.com")
    assert len(roles) == 1
    ((role_id, trust),) = roles.items()
    assert stack.invoked_by(role_id) == {"timer"}
    group = stack.names.get_att(stack.only("AWS::Scheduler::ScheduleGroup"), "Arn")
    assert trust["Condition"]["ArnEquals"]["aws:SourceArn"] == group
    assert trust["Condition"]["StringEquals"]["aws:SourceAccount"] == stack.names.ref("AWS::AccountId")
    dead_letters = stack.environment("api")["PARLEY_SCHEDULE_DEAD_LETTER_ARN"]
    assert allowed(stack.statements(role_id), IamRequest("sqs:SendMessage", dead_letters))


def test_queues_rules_and_failure_destinations_reach_a_function_that_may_be_reached(stack: Stack) -> None:
    names = stack.names
    for mapping in names.of_type("AWS::Lambda::EventSourceMapping").values():
        props = names.resolve(mapping["Properties"])
        function = stack.function_named_by(props["FunctionName"])
        assert function is not None, props
        for action in ("sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes"):
            assert allowed(
                stack.statements(stack.role(function)), IamRequest(action, props["EventSourceArn"])
            )
    for config in names.of_type("AWS::Lambda::EventInvokeConfig").values():
        props = names.resolve(config["Properties"])
        function = stack.function_named_by(props["FunctionName"])
        assert function is not None, props
        destination = props["DestinationConfig"]["OnFailure"]["Destination"]
        assert allowed(stack.statements(stack.role(function)), IamRequest("sqs:SendMessage", destination))
    permissions = [names.resolve(p["Properties"]) for p in names.of_type("AWS::Lambda::Permission").values()]
    for logical_id, rule in names.of_type("AWS::Events::Rule").items():
        for target in names.resolve(rule["Properties"]["Targets"]):
            function = stack.function_named_by(target["Arn"])
            assert function is not None, target
            rule_arn = names.get_att(logical_id, "Arn")
            assert any(
                p["FunctionName"] == target["Arn"]
                and p["Principal"] == "events.amazonaws.com"
                and p.get("SourceArn") == rule_arn
                for p in permissions
            ), f"the rule {logical_id} may not invoke {function}"


# -- the API -----------------------------------------------------------------------------------------------

#: The routes that take no token: the description, the docs, the web inbox, and the OAuth callback (the
#: browser comes back from the authorization server; the ``state`` it brings is the binding).
PUBLIC: Final = frozenset({"/", "/openapi.json", "/docs", "/inbox", "/inbox/{name}", "/v1/oauth/callback"})
MCP: Final = frozenset({"/mcp", "/v1/orgs/{org}/playbooks/{playbook}/mcp"})
#: The rest of ``/v1`` (an unknown path): the api function answers it with a problem, behind the authorizer.
CATCH_ALL: Final = "/v1/{proxy+}"


@dataclass(frozen=True)
class Route:
    method: str
    path: str
    function: str | None
    authorizer: str | None  # the function of its authorizer, or None for a public method
    logical_id: str


def routes(stack: Stack) -> list[Route]:
    names = stack.names

    def path(resource_id: Any) -> str:
        if not isinstance(resource_id, dict) or "Ref" not in resource_id:
            return ""
        props = names.properties(resource_id["Ref"])
        return path(props["ParentId"]) + "/" + str(props["PathPart"])

    found = []
    for logical_id, resource in names.of_type("AWS::ApiGateway::Method").items():
        props = resource["Properties"]
        uri = str(names.resolve(props["Integration"]["Uri"]))
        function = stack.function_named_by(uri.split("/functions/", 1)[1].removesuffix("/invocations"))
        authorizer = None
        if props.get("AuthorizationType") == "CUSTOM":
            authorizer_props = names.resolve(names.properties(props["AuthorizerId"]["Ref"]))
            authorizer_uri = str(authorizer_props["AuthorizerUri"])
            authorizer = stack.function_named_by(
                authorizer_uri.split("/functions/", 1)[1].removesuffix("/invocations")
            )
        found.append(
            Route(props["HttpMethod"], path(props["ResourceId"]) or "/", function, authorizer, logical_id)
        )
    return found


def _rank(route: Route, method: str, path: str) -> tuple[int, ...] | None:
    """How specifically ``route`` matches a request of ``method`` on ``path`` (``None``: not at all), as
    API Gateway chooses: a literal segment before a parameter, a parameter before a greedy ``{proxy+}``."""
    if route.method not in (method, "ANY"):
        return None
    wanted = [s for s in path.split("/") if s]
    have = [s for s in route.path.split("/") if s]
    rank: list[int] = []
    for index, segment in enumerate(have):
        if segment.endswith("+}"):
            return (*rank, 0) if len(wanted) > index else None
        if index >= len(wanted):
            return None
        if segment.startswith("{"):
            rank.append(1)
        elif segment == wanted[index]:
            rank.append(2)
        else:
            return None
    return (*rank, 3) if len(have) == len(wanted) else None


def route_of(stack_routes: list[Route], method: str, path: str) -> Route | None:
    ranked = [(rank, r) for r in stack_routes if (rank := _rank(r, method, path)) is not None]
    return max(ranked, key=lambda pair: pair[0])[1] if ranked else None


def test_the_api_routes_exactly_the_registrys_operations_the_mcp_front_door_and_the_public_pages(
    stack: Stack,
) -> None:
    from parley.api.registry import OPERATIONS

    stack_routes = routes(stack)
    served: set[str] = set()
    wrong = []
    for operation in OPERATIONS:
        concrete = operation.path.replace("{", "x-").replace("}", "")
        route = route_of(stack_routes, operation.method, concrete)
        if route is None:
            wrong.append(f"{operation.name} ({operation.method} {operation.path}) has no route")
            continue
        served.add(route.logical_id)
        if route.function != "api" or route.authorizer != "authorizer":
            wrong.append(
                f"{operation.name} goes to {route.function} behind {route.authorizer} ({route.path})"
            )
    for path in MCP:
        route = route_of(stack_routes, "POST", path.replace("{", "x-").replace("}", ""))
        if route is None or route.path != path or route.function != "mcp" or route.authorizer != "authorizer":
            wrong.append(f"the MCP front door {path}: {route}")
        elif route is not None:
            served.add(route.logical_id)
    for path in PUBLIC:
        route = route_of(stack_routes, "GET", path.replace("{", "x-").replace("}", ""))
        if route is None or route.path != path or route.function != "api" or route.authorizer is not None:
            wrong.append(f"the public page {path}: {route}")
        elif route is not None:
            served.add(route.logical_id)
    route = route_of(stack_routes, "GET", "/v1/no-such-thing")
    if (
        route is None
        or route.path != CATCH_ALL
        or route.function != "api"
        or route.authorizer != "authorizer"
    ):
        wrong.append(f"the rest of /v1: {route}")
    elif route is not None:
        served.add(route.logical_id)
    dead = [f"{r.method} {r.path}" for r in stack_routes if r.logical_id not in served]
    assert not wrong, "\n".join(wrong)
    assert not dead, f"routes that serve no operation, MCP or public page: {dead}"


def test_api_gateway_may_invoke_what_each_route_and_the_authorizer_name(stack: Stack) -> None:
    names = stack.names
    api_id = names.ref(stack.only("AWS::ApiGateway::RestApi"))
    stage = names.physical_name(stack.only("AWS::ApiGateway::Stage"))
    permissions = [names.resolve(p["Properties"]) for p in names.of_type("AWS::Lambda::Permission").values()]

    def may(function: str, source: str) -> bool:
        arn = stack.function_arn(function)
        return any(
            p["FunctionName"] == arn
            and p["Principal"] == "apigateway.amazonaws.com"
            and fnmatchcase(source, str(p.get("SourceArn", "")))
            for p in permissions
        )

    prefix = f"arn:aws:execute-api:{names.ref('AWS::Region')}:{names.ref('AWS::AccountId')}:{api_id}"
    missing = []
    for route in routes(stack):
        assert route.function is not None, route
        method = "POST" if route.method == "ANY" else route.method
        path = route.path.replace("{proxy+}", "a/b").replace("{", "x-").replace("}", "")
        if not may(route.function, f"{prefix}/{stage}/{method}{path}"):
            missing.append(f"{route.method} {route.path} → {route.function}")
    authorizer_id = names.ref(stack.only("AWS::ApiGateway::Authorizer"))
    if not may("authorizer", f"{prefix}/authorizers/{authorizer_id}"):
        missing.append("the authorizer")
    assert not missing, f"API Gateway may not invoke: {missing}"


def test_the_template_names_every_function_of_the_function_list(stack: Stack) -> None:
    assert set(stack.functions()) == {d.name for d in FUNCTIONS}
    for name in stack.functions():
        assert json.dumps(stack.environment(name))  # every value resolved to text
