"""The REST API: every route under ``/v1`` goes to the ``api`` function (http-api.md, "Base and auth").

The function does the routing, validation and problem documents; API Gateway only proxies. The few
answers API Gateway gives by itself (no route, body over its own limit, integration failure) are shaped as
the same RFC 9457 problems (http-api.md, "Problems") so that a client sees one error format.
"""

from __future__ import annotations

import json
from typing import Final

from aws_cdk import RemovalPolicy
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from constructs import Construct

from parley.errors import Problem
from parley_cdk.nag import accept
from parley_cdk.settings import StageSettings

#: The version segment every route starts with; ``{proxy+}`` below it reaches the function.
BASE_PATH: Final = "v1"

PROBLEM_MEDIA_TYPE: Final = "application/problem+json"


def problem_template(problem: Problem) -> str:
    """A gateway-response body template for ``problem`` (VTL: ``$context`` variables are filled in)."""
    return json.dumps(problem.as_json())


def gateway_problems() -> list[tuple[str, apigw.ResponseType, Problem]]:
    """API Gateway's own answers, as problems: (construct id, response type, problem)."""
    return [
        # An unknown path answers "Missing Authentication Token" (403) unless told otherwise.
        (
            "NoRoute",
            apigw.ResponseType.MISSING_AUTHENTICATION_TOKEN,
            Problem("not_found", "No route matches this method and path."),
        ),
        (
            "TooLarge",
            apigw.ResponseType.REQUEST_TOO_LARGE,
            Problem("content_too_large", "The request body is too large."),
        ),
        # Function errors and timeouts; $context.requestId is a UUID that finds the logs.
        (
            "Failed",
            apigw.ResponseType.DEFAULT_5_XX,
            Problem(
                "internal", "The request could not be completed.", instance="urn:uuid:$context.requestId"
            ),
        ),
    ]


class HttpApi(Construct):
    """REST API with a Lambda proxy integration at ``/v1/{proxy+}``, traced and access-logged."""

    def __init__(
        self, scope: Construct, construct_id: str, *, settings: StageSettings, handler: lambda_.IFunction
    ) -> None:
        super().__init__(scope, construct_id)
        access_logs = logs.LogGroup(
            self,
            "AccessLogs",
            retention=settings.log_retention,
            removal_policy=settings.removal_policy,
        )
        self.rest_api = apigw.RestApi(
            self,
            "RestApi",
            rest_api_name=f"parley-{settings.name}",
            description="Parley HTTP API (spec http-api.md)",
            endpoint_types=[apigw.EndpointType.REGIONAL],
            # Stage logging needs the account's API Gateway CloudWatch role. It is one setting per account
            # and region, shared by every stage, so it is kept when a stack is deleted.
            cloud_watch_role=True,
            cloud_watch_role_removal_policy=RemovalPolicy.RETAIN,
            deploy_options=apigw.StageOptions(
                stage_name=settings.name,
                tracing_enabled=True,
                metrics_enabled=True,
                logging_level=apigw.MethodLoggingLevel.ERROR,
                # Bodies carry answers and messages: never copied into execution logs.
                data_trace_enabled=False,
                access_log_destination=apigw.LogGroupLogDestination(access_logs),
                access_log_format=apigw.AccessLogFormat.json_with_standard_fields(
                    caller=False,
                    http_method=True,
                    ip=True,
                    protocol=True,
                    request_time=True,
                    resource_path=True,
                    response_length=True,
                    status=True,
                    user=True,
                ),
            ),
        )
        integration = apigw.LambdaIntegration(handler, proxy=True)
        self.rest_api.root.add_resource(BASE_PATH).add_proxy(default_integration=integration, any_method=True)
        for response_id, response_type, problem in gateway_problems():
            self.rest_api.add_gateway_response(
                response_id,
                type=response_type,
                status_code=str(problem.status),
                response_headers={"Content-Type": f"'{PROBLEM_MEDIA_TYPE}'"},
                templates={"application/json": problem_template(problem)},
            )
        self._accept_findings()

    def _accept_findings(self) -> None:
        no_authorizer_yet = (
            "Requests are authenticated by the api function for now: it checks the bearer token "
            "(http-api.md, 'Base and auth') and answers 401 unauthenticated. The auth issue adds a JWT "
            "authorizer to this API."
        )
        accept(self.rest_api, "AwsSolutions-APIG4", no_authorizer_yet)
        accept(self.rest_api, "AwsSolutions-COG4", f"{no_authorizer_yet} Principals are not Cognito users.")
        accept(
            self.rest_api,
            "AwsSolutions-APIG2",
            "The api function validates every request (path, query, body) against the HTTP contract and "
            "answers RFC 9457 problems with JSON pointers; an API Gateway request validator on a {proxy+} "
            "route has no model to check and would answer in its own, non-problem format.",
        )
        accept(
            self.rest_api,
            "AwsSolutions-APIG3",
            "No WAF web ACL yet: every route needs a bearer token, and a web ACL (a per-ACL and per-request "
            "cost) is a deployment decision that comes with the auth issue.",
        )
        accept(
            self.rest_api,
            "AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/"
            "AmazonAPIGatewayPushToCloudWatchLogs]",
            "The account's API Gateway logging role (needed for access and execution logs) uses the AWS "
            "managed policy that AWS documents for exactly this role.",
        )
