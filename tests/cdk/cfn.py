"""Reading a synthesized template in tests: one resource, a role's statements, who may do what."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aws_cdk.assertions import Match, Template

from parley.infrastructure.functions import FUNCTIONS, function_named

Resource = Mapping[str, Any]

STATE_MACHINE_ARN = (
    "arn:${AWS::Partition}:states:${AWS::Region}:${AWS::AccountId}:stateMachine:parley-dev-runs"
)
TIMER_ARN = "arn:${AWS::Partition}:lambda:${AWS::Region}:${AWS::AccountId}:function:parley-dev-timer"
REASON_ARN = "arn:${AWS::Partition}:lambda:${AWS::Region}:${AWS::AccountId}:function:parley-dev-reason"


def only(template: Template, resource_type: str, properties: Any = None) -> tuple[str, Resource]:
    """The one resource of ``resource_type`` (matching ``properties``): its logical id and its body."""
    found = template.find_resources(resource_type, {"Properties": properties} if properties else None)
    assert len(found) == 1, f"{len(found)} {resource_type} resources match"
    return next(iter(found.items()))


def properties_of(template: Template, resource_type: str) -> Resource:
    properties: Resource = only(template, resource_type)[1]["Properties"]
    return properties


def resource(template: Template, logical_id: str) -> Resource:
    found: Resource = template.to_json()["Resources"][logical_id]
    return found


def get_att(logical_id: str, attribute: str = "Arn") -> dict[str, Any]:
    return {"Fn::GetAtt": [logical_id, attribute]}


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def render(value: Any) -> Any:
    """CloudFormation intrinsics as readable text: ``${Id.Arn}``, ``${AWS::Region}``; joins concatenated."""
    if isinstance(value, dict) and len(value) == 1:
        ((key, argument),) = value.items()
        if key == "Fn::Join":
            separator, parts = argument
            return separator.join(str(render(part)) for part in parts)
        if key == "Fn::GetAtt":
            return "${" + ".".join(argument) + "}"
        if key == "Ref":
            return "${" + argument + "}"
    if isinstance(value, list):
        return [render(item) for item in value]
    return value


def function_named_in(template: Template, name: str) -> tuple[str, Resource]:
    return only(template, "AWS::Lambda::Function", {"Description": function_named(name).description})


def api_function(template: Template) -> tuple[str, Resource]:
    return function_named_in(template, "api")


def statements_of_role(template: Template, role_id: str) -> list[dict[str, Any]]:
    policies = template.find_resources(
        "AWS::IAM::Policy", {"Properties": {"Roles": Match.array_with([{"Ref": role_id}])}}
    )
    return [
        {**s, "Action": as_list(s["Action"]), "Resource": render(as_list(s["Resource"]))}
        for p in policies.values()
        for s in p["Properties"]["PolicyDocument"]["Statement"]
    ]


def role_of(template: Template, name: str) -> str:
    _, function = function_named_in(template, name)
    role_id: str = function["Properties"]["Role"]["Fn::GetAtt"][0]
    return role_id


def function_statements(template: Template, name: str) -> list[dict[str, Any]]:
    return statements_of_role(template, role_of(template, name))


def who_may(template: Template, action: str) -> set[str]:
    return {
        definition.name
        for definition in FUNCTIONS
        if any(action in s["Action"] for s in function_statements(template, definition.name))
    }


def resources_for(template: Template, name: str, action: str) -> list[Any]:
    """Every resource function ``name`` may do ``action`` on."""
    return [r for s in function_statements(template, name) if action in s["Action"] for r in s["Resource"]]


def scheduler_role_id(template: Template) -> str:
    role_id, _ = only(
        template, "AWS::IAM::Role", {"Description": Match.string_like_regexp("invoke the timer function")}
    )
    return role_id
