"""The operator configuration on AWS (http-api.md, "Operator configuration"): one SSM parameter that the
operator changes without redeploying, read by the functions at most once a minute
(``parley.config.OperatorConfigParameter``). It holds no secret: principals carry no token (the JWT names
them) and tool server headers refer to Secrets Manager.
"""

from __future__ import annotations

from aws_cdk import aws_iam as iam
from aws_cdk import aws_ssm as ssm
from constructs import Construct

from parley_cdk.settings import StageSettings


def parameter_name(settings: StageSettings) -> str:
    return f"/parley/{settings.name}/operator-config"


class OperatorConfiguration(Construct):
    """The parameter, created with ``text``: CloudFormation writes the value again only when ``text``
    changes, so the operator's own edits stay through later deploys (docs/deploy.md)."""

    def __init__(self, scope: Construct, construct_id: str, *, settings: StageSettings, text: str) -> None:
        super().__init__(scope, construct_id)
        self.parameter = ssm.StringParameter(
            self,
            "Parameter",
            parameter_name=parameter_name(settings),
            description=f"Parley {settings.name}: operator configuration (principals, grants, tool servers)",
            string_value=text,
            # Standard (free) up to 4 KB, advanced beyond (up to 8 KB).
            tier=ssm.ParameterTier.INTELLIGENT_TIERING,
        )
        self.name = parameter_name(settings)

    def allow_reading(self, grantee: iam.IGrantable) -> None:
        """``grantee`` may read this parameter (``ssm:GetParameter``), and no other."""
        grantee.grant_principal.add_to_principal_policy(
            iam.PolicyStatement(actions=["ssm:GetParameter"], resources=[self.parameter.parameter_arn])
        )
