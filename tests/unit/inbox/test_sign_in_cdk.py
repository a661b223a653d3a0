"""The inbox's hosted sign-in in the CDK app (``cdk/parley_cdk/auth.py``): the user pool's domain, and what
``Authentication.serve_inbox`` gives the app client (the authorization code grant with PKCE, the page's URL
as callback) and the api function (``PARLEY_INBOX_COGNITO_DOMAIN``, ``PARLEY_INBOX_CLIENT_ID``), synthesized
with a small API in front of one function, as the stack wires them."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.cdk

CDK_DIR = Path(__file__).resolve().parents[3] / "cdk"


def _synthesized(serve: bool, oidc: bool = False) -> tuple[dict[str, Any], list[str]]:
    if str(CDK_DIR) not in sys.path:
        sys.path.insert(0, str(CDK_DIR))
    os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")
    from aws_cdk import App, Stack
    from aws_cdk import aws_apigateway as apigw
    from aws_cdk import aws_lambda as lambda_
    from aws_cdk.assertions import Template
    from cdk_nag import AwsSolutionsChecks

    from parley_cdk.auth import Authentication
    from parley_cdk.options import DeploymentOptions, OidcIssuer
    from parley_cdk.settings import stage_settings

    stack = Stack(App(), "Probe")
    settings = stage_settings("dev")
    options = (
        DeploymentOptions(oidc=OidcIssuer(issuer="https://login.example.com/", audiences=("parley",)))
        if oidc
        else DeploymentOptions()
    )
    auth = Authentication(stack, "Auth", settings=settings, options=options)
    function = lambda_.Function(
        stack,
        "Api",
        runtime=lambda_.Runtime.PYTHON_3_12,
        handler="index.handler",
        code=lambda_.Code.from_inline("def handler(event, context): pass"),
        environment=auth.environment,
    )
    api = apigw.RestApi(stack, "RestApi", deploy_options=apigw.StageOptions(stage_name=settings.name))
    api.root.add_resource("inbox").add_method("GET", apigw.LambdaIntegration(function))
    if serve:
        auth.serve_inbox(function, api)
    template = Template.from_stack(stack).to_json()
    report = AwsSolutionsChecks().validate_scope(auth)
    return template, [violation.rule_name for violation in report.violations]


def _only(template: dict[str, Any], kind: str) -> dict[str, Any]:
    found = [resource for resource in template["Resources"].values() if resource["Type"] == kind]
    assert len(found) == 1, found
    properties: dict[str, Any] = found[0]["Properties"]
    return properties


def _logical_id(template: dict[str, Any], kind: str) -> str:
    return next(key for key, resource in template["Resources"].items() if resource["Type"] == kind)


def _variables(template: dict[str, Any]) -> dict[str, Any]:
    function = _only(template, "AWS::Lambda::Function")
    variables: dict[str, Any] = function["Environment"]["Variables"]
    return variables


def test_the_pool_gets_a_domain_named_for_the_stage_and_account_and_no_oauth_until_the_inbox() -> None:
    template, findings = _synthesized(serve=False)
    domain = _only(template, "AWS::Cognito::UserPoolDomain")
    client = _only(template, "AWS::Cognito::UserPoolClient")

    assert domain["Domain"] == {"Fn::Join": ["", ["parley-dev-", {"Ref": "AWS::AccountId"}]]}
    assert client["AllowedOAuthFlowsUserPoolClient"] is False
    assert "AllowedOAuthFlows" not in client and "CallbackURLs" not in client
    assert "PARLEY_INBOX_COGNITO_DOMAIN" not in _variables(template)
    assert findings == []


def test_serving_the_inbox_gives_the_client_the_code_grant_and_the_api_function_the_sign_in() -> None:
    template, findings = _synthesized(serve=True)
    client = _only(template, "AWS::Cognito::UserPoolClient")
    rest_api = _logical_id(template, "AWS::ApiGateway::RestApi")
    page = {
        "Fn::Join": [
            "",
            [
                "https://",
                {"Ref": rest_api},
                ".execute-api.",
                {"Ref": "AWS::Region"},
                ".",
                {"Ref": "AWS::URLSuffix"},
                "/dev/inbox",
            ],
        ]
    }

    assert client["AllowedOAuthFlowsUserPoolClient"] is True
    assert client["AllowedOAuthFlows"] == ["code"]
    assert client["AllowedOAuthScopes"] == ["openid", "email", "profile"]
    assert client["CallbackURLs"] == [page] and client["LogoutURLs"] == [page]
    assert client["SupportedIdentityProviders"] == ["COGNITO"]
    assert client["GenerateSecret"] is False  # a public client: PKCE instead of a secret
    variables = _variables(template)
    domain = _logical_id(template, "AWS::Cognito::UserPoolDomain")
    assert variables["PARLEY_INBOX_COGNITO_DOMAIN"] == {
        "Fn::Join": [
            "",
            ["https://", {"Ref": domain}, ".auth.", {"Ref": "AWS::Region"}, ".amazoncognito.com"],
        ]
    }
    assert variables["PARLEY_INBOX_CLIENT_ID"] == {
        "Ref": _logical_id(template, "AWS::Cognito::UserPoolClient")
    }
    assert findings == []


def test_with_an_existing_issuer_there_is_no_hosted_sign_in() -> None:
    template, _ = _synthesized(serve=True, oidc=True)

    assert "AWS::Cognito::UserPoolDomain" not in {
        resource["Type"] for resource in template["Resources"].values()
    }
    assert "PARLEY_INBOX_COGNITO_DOMAIN" not in _variables(template)
