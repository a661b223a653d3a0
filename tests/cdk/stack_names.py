"""A synthesized template's intrinsics resolved to the names and ARNs of one fake account (issue 28).

CloudFormation decides some names at deploy time (a table, a bucket or a role the template leaves
unnamed); :class:`StackNames` makes them up the same way every time, ``<stack>-<logical id>-<digest>``,
and uses the same name wherever the template refers to the resource: in a function's environment
(``Ref`` of the table), in a role's statement (``Fn::GetAtt`` of its ``Arn``), in a state machine's
definition. So a variable and a grant that name the same resource resolve to the same text, and a test
can compare what a function calls with what its role allows as IAM would, on plain strings.

``Ref`` and ``Fn::GetAtt`` follow what CloudFormation returns for each type (a queue's ``Ref`` is its
URL, a state machine's its ARN, a function's its name); a type this module does not know resolves to a
name made from its logical id, and an attribute it does not know fails (a new kind of wire is then
added here on purpose, never guessed).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any, Final

ACCOUNT: Final = "123456789012"  # moto's default account: the ARNs moto makes use it too
REGION: Final = "eu-west-1"
PARTITION: Final = "aws"

_SUB: Final = re.compile(r"\$\{([^}!][^}]*)\}")


class StackNames:
    """Resolves ``Ref``/``Fn::GetAtt``/``Fn::Join``/``Fn::Sub``/``Fn::Select``/``Fn::Split`` of one
    template (its JSON) to strings."""

    def __init__(self, template: Mapping[str, Any], stack_name: str) -> None:
        self.template = template
        self.stack_name = stack_name
        self.resources: Mapping[str, Any] = template["Resources"]

    # -- the names -------------------------------------------------------------------------------------

    def type_of(self, logical_id: str) -> str:
        kind: str = self.resources[logical_id]["Type"]
        return kind

    def properties(self, logical_id: str) -> Mapping[str, Any]:
        found: Mapping[str, Any] = self.resources[logical_id].get("Properties", {})
        return found

    def generated(self, logical_id: str, *, lower: bool = False, limit: int = 64) -> str:
        digest = hashlib.sha256(f"{self.stack_name}/{logical_id}".encode()).hexdigest()[:12].upper()
        name = f"{self.stack_name}-{logical_id}"[: limit - 13] + f"-{digest}"
        return name.lower() if lower else name

    def physical_name(self, logical_id: str) -> str:
        """The resource's name: the one the template gives it, else the one CloudFormation would make."""
        kind = self.type_of(logical_id)
        props = self.properties(logical_id)
        named = {
            "AWS::DynamoDB::Table": "TableName",
            "AWS::S3::Bucket": "BucketName",
            "AWS::SQS::Queue": "QueueName",
            "AWS::SSM::Parameter": "Name",
            "AWS::Lambda::Function": "FunctionName",
            "AWS::IAM::Role": "RoleName",
            "AWS::StepFunctions::StateMachine": "StateMachineName",
            "AWS::Scheduler::ScheduleGroup": "Name",
            "AWS::Logs::LogGroup": "LogGroupName",
            "AWS::SNS::Topic": "TopicName",
            "AWS::Events::Rule": "Name",
            "AWS::Cognito::UserPoolDomain": "Domain",
            "AWS::ApiGateway::Stage": "StageName",
        }.get(kind)
        if named and named in props:
            return str(self.resolve(props[named]))
        if kind == "AWS::S3::Bucket":
            return self.generated(logical_id, lower=True, limit=63)
        if kind == "AWS::Logs::LogGroup":
            return f"/aws/{self.generated(logical_id)}"
        if kind == "AWS::Cognito::UserPool":
            return f"{REGION}_{hashlib.sha256(logical_id.encode()).hexdigest()[:9]}"
        return self.generated(logical_id)

    def arn(self, service: str, resource: str, *, region: str = REGION, account: str = ACCOUNT) -> str:
        return f"arn:{PARTITION}:{service}:{region}:{account}:{resource}"

    def ref(self, logical_id: str) -> str:
        pseudo = {
            "AWS::Region": REGION,
            "AWS::AccountId": ACCOUNT,
            "AWS::Partition": PARTITION,
            "AWS::URLSuffix": "amazonaws.com",
            "AWS::StackName": self.stack_name,
        }
        if logical_id in pseudo:
            return pseudo[logical_id]
        if logical_id in self.template.get("Parameters", {}):
            default = self.template["Parameters"][logical_id].get("Default")
            if default is None:
                raise KeyError(f"parameter {logical_id} has no default")
            return str(default)
        kind = self.type_of(logical_id)
        name = self.physical_name(logical_id)
        if kind == "AWS::SQS::Queue":
            return f"https://sqs.{REGION}.amazonaws.com/{ACCOUNT}/{name}"
        if kind in ("AWS::StepFunctions::StateMachine", "AWS::SNS::Topic", "AWS::Lambda::LayerVersion"):
            return self.get_att(logical_id, "Arn")
        return name

    def get_att(self, logical_id: str, attribute: str) -> str:
        kind = self.type_of(logical_id)
        name = self.physical_name(logical_id)
        if attribute == "Arn":
            arns = {
                "AWS::DynamoDB::Table": lambda: self.arn("dynamodb", f"table/{name}"),
                "AWS::S3::Bucket": lambda: f"arn:{PARTITION}:s3:::{name}",
                "AWS::SQS::Queue": lambda: self.arn("sqs", name),
                "AWS::Lambda::Function": lambda: self.arn("lambda", f"function:{name}"),
                "AWS::IAM::Role": lambda: f"arn:{PARTITION}:iam::{ACCOUNT}:role/{name}",
                "AWS::StepFunctions::StateMachine": lambda: self.arn("states", f"stateMachine:{name}"),
                "AWS::Scheduler::ScheduleGroup": lambda: self.arn("scheduler", f"schedule-group/{name}"),
                "AWS::Logs::LogGroup": lambda: self.arn("logs", f"log-group:{name}:*"),
                "AWS::SNS::Topic": lambda: self.arn("sns", name),
                "AWS::Events::Rule": lambda: self.arn("events", f"rule/{name}"),
                "AWS::Lambda::LayerVersion": lambda: self.arn("lambda", f"layer:{name}:1"),
                "AWS::Cognito::UserPool": lambda: self.arn("cognito-idp", f"userpool/{name}"),
            }
            if kind in arns:
                return arns[kind]()
        if kind == "AWS::SQS::Queue" and attribute == "QueueName":
            return name
        if kind == "AWS::SQS::Queue" and attribute == "QueueUrl":
            return self.ref(logical_id)
        if kind == "AWS::Cognito::UserPool" and attribute == "ProviderURL":
            return f"https://cognito-idp.{REGION}.amazonaws.com/{name}"
        if kind == "AWS::StepFunctions::StateMachine" and attribute == "Name":
            return name
        if kind == "AWS::ApiGateway::RestApi" and attribute == "RootResourceId":
            return f"{name}-root"
        raise KeyError(
            f"Fn::GetAtt {logical_id}.{attribute} ({kind}) is not resolved by tests/cdk/stack_names.py"
        )

    # -- intrinsics ------------------------------------------------------------------------------------

    def resolve(self, value: Any) -> Any:
        """``value`` with every intrinsic function replaced by the text it stands for."""
        if isinstance(value, list):
            return [self.resolve(item) for item in value]
        if not isinstance(value, dict):
            return value
        if len(value) == 1:
            ((key, argument),) = value.items()
            if key == "Ref":
                return self.ref(argument)
            if key == "Fn::GetAtt":
                logical_id, attribute = argument if isinstance(argument, list) else argument.split(".", 1)
                return self.get_att(logical_id, attribute)
            if key == "Fn::Join":
                separator, parts = argument
                return str(separator).join(str(self.resolve(part)) for part in self.resolve(parts))
            if key == "Fn::Sub":
                text, variables = (argument, {}) if isinstance(argument, str) else argument
                return self._sub(text, self.resolve(variables))
            if key == "Fn::Select":
                index, items = argument
                return self.resolve(items)[int(self.resolve(index))]
            if key == "Fn::Split":
                separator, text = argument
                return str(self.resolve(text)).split(separator)
            if key.startswith("Fn::"):
                raise KeyError(f"{key} is not resolved by tests/cdk/stack_names.py")
        return {key: self.resolve(item) for key, item in value.items()}

    def _sub(self, text: str, variables: Mapping[str, Any]) -> str:
        def one(match: re.Match[str]) -> str:
            name = match.group(1)
            if name in variables:
                return str(variables[name])
            if "." in name and not name.startswith("AWS::"):
                logical_id, attribute = name.split(".", 1)
                return self.get_att(logical_id, attribute)
            return self.ref(name)

        return _SUB.sub(one, text)

    # -- what tests read ---------------------------------------------------------------------------------

    def of_type(self, kind: str) -> dict[str, Mapping[str, Any]]:
        return {lid: r for lid, r in self.resources.items() if r["Type"] == kind}

    def state_machine_definition(self, logical_id: str) -> dict[str, Any]:
        props = self.properties(logical_id)
        definition: dict[str, Any] = json.loads(self.resolve(props["DefinitionString"]))
        return definition
