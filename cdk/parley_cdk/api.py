"""The REST API: every route under ``/v1`` goes to the ``api`` function (http-api.md, "Base and auth"),
except the MCP front door's two endpoints (http-api.md, "The MCP front door"), which go to the ``mcp``
function: ``/mcp`` and ``/v1/orgs/{org}/playbooks/{playbook}/mcp`` (:func:`add_mcp_routes`).

Every method first passes the JWT authorizer (the ``authorizer`` function, ``parley.authorizer``), a
``TOKEN`` authorizer on the ``Authorization`` header whose answers API Gateway keeps for
:data:`AUTHORIZER_CACHE_SECONDS` per token. The function then does the routing, grants, validation and
problem documents; API Gateway only proxies. The answers API Gateway gives by itself (no or a refused
token, no route, body over its own limit, integration failure) are shaped as the same RFC 9457 problems
(http-api.md, "Problems") so that a client sees one error format.
"""

from __future__ import annotations

import json
from typing import Final

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from constructs import Construct

from parley.errors import Problem
from parley.infrastructure.functions import DEFAULT_RUN_WAIT_SECONDS
from parley_cdk.nag import accept
from parley_cdk.settings import StageSettings

#: The version segment every route starts with; ``{proxy+}`` below it reaches the function.
BASE_PATH: Final = "v1"

PROBLEM_MEDIA_TYPE: Final = "application/problem+json"

#: How long the API waits for the api function. A run of a function with ``call`` may take 70 seconds
#: (interaction-format.md, "Bounds"), beyond API Gateway's default of 29: the account's quota "Maximum
#: integration timeout in milliseconds" must allow it (docs/deploy.md), or the deployment is refused.
INTEGRATION_TIMEOUT_SECONDS: Final = 80
#: What the run wait leaves of the integration timeout: the api function answers ``started`` after the
#: run wait and still has this long to write and send its answer before API Gateway gives up (504).
RUN_WAIT_MARGIN_SECONDS: Final = 5
#: How long run_definition waits for a reasoning run to end before it answers ``started`` (http-api.md,
#: "Reasoning runs"; ``PARLEY_RUN_WAIT_SECONDS`` of the api function).
RUN_WAIT_SECONDS: Final = DEFAULT_RUN_WAIT_SECONDS
#: How long API Gateway keeps an authorizer's answer for one token (grants are the function's, read
#: each minute, so this only delays noticing a token that expired: by at most this long).
AUTHORIZER_CACHE_SECONDS: Final = 300
#: A compact JWS after ``Bearer`` (any case): other headers are refused (401) without calling the
#: authorizer. Three base64url parts with a signature: ``alg: none`` tokens never get through.
BEARER_JWT_PATTERN: Final = r"^[Bb][Ee][Aa][Rr][Ee][Rr] +[-_A-Za-z0-9]+\.[-_A-Za-z0-9]+\.[-_A-Za-z0-9]+$"


def run_wait_variable(
    seconds: float = RUN_WAIT_SECONDS, integration_timeout_seconds: int = INTEGRATION_TIMEOUT_SECONDS
) -> str:
    """The run wait as the api function reads it (``"25"``), once it is known to end before the API's
    integration timeout less :data:`RUN_WAIT_MARGIN_SECONDS`; ``ValueError`` otherwise, which fails the
    synth rather than answering 504 to every slow reasoning run."""
    longest = integration_timeout_seconds - RUN_WAIT_MARGIN_SECONDS
    if not 0 < seconds <= longest:
        raise ValueError(
            f"The run wait ({seconds:g} s) must be more than 0 and at most the API's integration timeout "
            f"less {RUN_WAIT_MARGIN_SECONDS} s ({longest} s)"
        )
    return f"{seconds:g}"


def problem_template(problem: Problem) -> str:
    """A gateway-response body template for ``problem`` (VTL: ``$context`` variables are filled in)."""
    return json.dumps(problem.as_json())


def gateway_problems() -> list[tuple[str, apigw.ResponseType, Problem]]:
    """API Gateway's own answers, as problems: (construct id, response type, problem)."""
    unauthenticated = Problem(
        "unauthenticated",
        "Send the header Authorization: Bearer <token> with a valid token of the API's issuer.",
        headers={"WWW-Authenticate": "Bearer"},
    )
    return [
        # No Authorization header, or one that is not a bearer JWT: API Gateway refuses it itself.
        ("Unauthenticated", apigw.ResponseType.UNAUTHORIZED, unauthenticated),
        # A token the authorizer refused: it answers with a Deny policy (parley.authorizer), which is
        # a 401 too, never a 403 that would tell the caller it was recognized.
        ("Denied", apigw.ResponseType.ACCESS_DENIED, unauthenticated),
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


#: The MCP endpoints' resources, below the API's root: the one of every playbook, and a playbook's own.
MCP_RESOURCE: Final = "mcp"


def add_mcp_routes(
    rest_api: apigw.RestApi, base: apigw.IResource, api: apigw.LambdaIntegration, mcp: lambda_.IFunction
) -> None:
    """``ANY /mcp`` and ``ANY /v1/orgs/{org}/playbooks/{playbook}/mcp`` to the ``mcp`` function (it answers
    405 to all but POST), behind the same authorizer as every method.

    API Gateway matches the most specific resource and does not fall back to ``/v1/{proxy+}`` once a
    static segment matched, so the path down to a playbook's endpoint keeps a ``{proxy+}`` to the api
    function at each level that has routes below it (``/v1/orgs/{org}/models``, a playbook's routes).
    """
    integration = apigw.LambdaIntegration(
        mcp, proxy=True, timeout=Duration.seconds(INTEGRATION_TIMEOUT_SECONDS)
    )
    rest_api.root.add_resource(MCP_RESOURCE).add_method("ANY", integration)
    org = base.add_resource("orgs").add_resource("{org}")
    org.add_proxy(default_integration=api, any_method=True)
    playbook = org.add_resource("playbooks").add_resource("{playbook}")
    playbook.add_proxy(default_integration=api, any_method=True)
    playbook.add_resource(MCP_RESOURCE).add_method("ANY", integration)


#: Routes with no token (``http-api.md``, "API description" and "The web inbox"): the API's description,
#: its rendering, the inbox's static page with its files and sign-in settings, and ``/``'s redirect.
PUBLIC_PATHS: Final = ("openapi.json", "docs", "inbox", "inbox/{name}")


def add_public_routes(rest_api: apigw.RestApi, api: apigw.LambdaIntegration) -> None:
    """``GET`` of :data:`PUBLIC_PATHS` and of ``/`` to the api function, without the authorizer."""
    public = apigw.AuthorizationType.NONE
    methods = [rest_api.root.add_method("GET", api, authorization_type=public)]
    for path in PUBLIC_PATHS:
        methods.append(
            rest_api.root.resource_for_path(path).add_method("GET", api, authorization_type=public)
        )
    for method in methods:
        accept(
            method,
            "AwsSolutions-APIG4",
            "The API's description and its rendering, the web inbox's static page with its script, style and "
            "sign-in settings, and the redirect of / to it: they hold no secret and load before anyone signs "
            "in (http-api.md); every call the inbox makes goes to /v1, behind the JWT authorizer.",
        )
        accept(
            method,
            "AwsSolutions-COG4",
            "A public GET of static content, by design without an authorizer (see APIG4 on the same method).",
        )


#: The OAuth callback (``http-api.md``, "Connections"): the browser comes back from an authorization server
#: with no bearer token; the ``state`` it carries is the binding (``parley.api.oauth``).
OAUTH_CALLBACK_PATH: Final = "v1/oauth/callback"


def add_oauth_callback(rest_api: apigw.RestApi, api: apigw.LambdaIntegration) -> None:
    """``GET`` of :data:`OAUTH_CALLBACK_PATH` to the api function, without the authorizer."""
    method = rest_api.root.resource_for_path(OAUTH_CALLBACK_PATH).add_method(
        "GET", api, authorization_type=apigw.AuthorizationType.NONE
    )
    accept(
        method,
        "AwsSolutions-APIG4",
        "The OAuth callback of connections: a browser comes back from the authorization server without "
        "a bearer token, so the one-time state (bound server-side to the person who asked and to the "
        "connection, expiring in 10 minutes) is the authorization (http-api.md, Connections).",
    )
    accept(
        method,
        "AwsSolutions-COG4",
        "The OAuth callback has no bearer token by design (see APIG4 on the same method).",
    )


class HttpApi(Construct):
    """REST API with a Lambda proxy integration at ``/v1/{proxy+}`` behind the JWT authorizer, traced and
    access-logged."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        settings: StageSettings,
        handler: lambda_.IFunction,
        authorizer: lambda_.IFunction,
        mcp: lambda_.IFunction | None = None,
    ) -> None:
        super().__init__(scope, construct_id)
        self.authorizer = apigw.TokenAuthorizer(
            self,
            "Authorizer",
            authorizer_name=settings.resource_name("jwt"),
            handler=authorizer,
            identity_source=apigw.IdentitySource.header("Authorization"),
            validation_regex=BEARER_JWT_PATTERN,
            results_cache_ttl=Duration.seconds(AUTHORIZER_CACHE_SECONDS),
        )
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
            # Regional: only a regional (or private) API may wait longer than 29 seconds for its integration.
            endpoint_types=[apigw.EndpointType.REGIONAL],
            # Every method, now and later, passes the authorizer first.
            default_method_options=apigw.MethodOptions(
                authorizer=self.authorizer, authorization_type=apigw.AuthorizationType.CUSTOM
            ),
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
        integration = apigw.LambdaIntegration(
            handler, proxy=True, timeout=Duration.seconds(INTEGRATION_TIMEOUT_SECONDS)
        )
        base = self.rest_api.root.add_resource(BASE_PATH)
        base.add_proxy(default_integration=integration, any_method=True)
        if mcp is not None:
            add_mcp_routes(self.rest_api, base, integration, mcp)
        add_public_routes(self.rest_api, integration)
        add_oauth_callback(self.rest_api, integration)
        for response_id, response_type, problem in gateway_problems():
            self.rest_api.add_gateway_response(
                response_id,
                type=response_type,
                status_code=str(problem.status),
                response_headers={
                    "Content-Type": f"'{PROBLEM_MEDIA_TYPE}'",
                    **{name: f"'{value}'" for name, value in problem.headers.items()},
                },
                templates={"application/json": problem_template(problem)},
            )
        self._accept_findings()

    def _accept_findings(self) -> None:
        accept(
            self.rest_api,
            "AwsSolutions-COG4",
            "Every method has the JWT authorizer, a Lambda TOKEN authorizer rather than a Cognito one: it "
            "checks the stack's Cognito user pool tokens and an existing OIDC issuer's alike (signature "
            "against the issuer's JWKS, iss, aud or client_id, exp, nbf) and names the principal the "
            "function looks up.",
        )
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
            "No WAF web ACL: every method needs a JWT checked by the authorizer before any code of ours "
            "runs, and a web ACL bills per month and per request even while idle; attach one to the stage "
            "where the deployment needs rate rules or IP filters (docs/deploy.md).",
        )
        accept(
            self.rest_api,
            "AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/"
            "AmazonAPIGatewayPushToCloudWatchLogs]",
            "The account's API Gateway logging role (needed for access and execution logs) uses the AWS "
            "managed policy that AWS documents for exactly this role.",
        )
