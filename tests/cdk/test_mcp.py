"""The MCP front door on AWS (http-api.md, "The MCP front door"): the ``mcp`` function, its two routes
behind the same authorizer as every method, and the api function still reached everywhere else."""

from __future__ import annotations

import re
from typing import Any

import pytest
from aws_cdk.assertions import Template
from cfn import function_named_in, render, resource

from parley.infrastructure.functions import function_named

pytestmark = pytest.mark.cdk


def _path_of(template: Template, resource_id: str) -> str:
    """The resource's whole path, from the API's root (``/v1/orgs/{org}``)."""
    parts: list[str] = []
    current: Any = {"Ref": resource_id}
    resources = template.to_json()["Resources"]
    while isinstance(current, dict) and "Ref" in current:
        body = resources[current["Ref"]]
        if body["Type"] != "AWS::ApiGateway::Resource":
            break
        parts.append(body["Properties"]["PathPart"])
        current = body["Properties"]["ParentId"]
    return "/" + "/".join(reversed(parts))


#: The routes that need no token (cdk/parley_cdk/api.py, PUBLIC_PATHS and the OAuth callback), each a GET
#: to the api function.
PUBLIC = ("/", "/openapi.json", "/docs", "/inbox", "/inbox/{name}", "/v1/oauth/callback")


def _routes(template: Template) -> dict[str, tuple[str, str, dict[str, Any]]]:
    """``path -> (method, the logical id of the function it invokes, the method's properties)``."""
    routes = {}
    for method in template.find_resources("AWS::ApiGateway::Method").values():
        properties = method["Properties"]
        resource_id = properties["ResourceId"]
        path = (
            "/"
            if not isinstance(resource_id, dict) or "Ref" not in resource_id
            else _path_of(template, resource_id["Ref"])
        )
        function = re.search(r"\$\{(\w+)\.Arn\}", str(render(properties["Integration"]["Uri"])))
        assert function is not None, properties["Integration"]
        routes[path] = (properties["HttpMethod"], function.group(1), properties)
    return routes


def test_the_mcp_function_is_built_from_its_own_folder(dev: Template) -> None:
    _, function = function_named_in(dev, "mcp")
    definition = function_named("mcp")

    assert definition.asset_dir == "functions/mcp"
    assert function["Properties"]["Handler"] == "handler.handler"
    assert function["Properties"]["Timeout"] == definition.timeout_s == function_named("api").timeout_s


def test_the_two_endpoints_go_to_the_mcp_function_and_the_rest_to_the_api(dev: Template) -> None:
    mcp_id, _ = function_named_in(dev, "mcp")
    api_id, _ = function_named_in(dev, "api")
    routes = _routes(dev)

    assert routes["/mcp"][:2] == ("ANY", mcp_id)
    assert routes["/v1/orgs/{org}/playbooks/{playbook}/mcp"][:2] == ("ANY", mcp_id)
    # Below a static segment API Gateway does not fall back to /v1/{proxy+}: each level keeps its own.
    for path in ("/v1/{proxy+}", "/v1/orgs/{org}/{proxy+}", "/v1/orgs/{org}/playbooks/{playbook}/{proxy+}"):
        assert routes[path][:2] == ("ANY", api_id), path
    for path in PUBLIC:
        assert routes[path][:2] == ("GET", api_id), path
    assert len(routes) == 5 + len(PUBLIC)


def test_every_method_passes_the_authorizer_but_the_public_pages(dev: Template) -> None:
    for path, (_, _, properties) in _routes(dev).items():
        if path in PUBLIC:
            assert properties["AuthorizationType"] == "NONE", path
            continue
        assert properties["AuthorizationType"] == "CUSTOM", path
        assert "AuthorizerId" in properties, path


def test_api_gateway_may_invoke_the_mcp_function(dev: Template) -> None:
    mcp_id, _ = function_named_in(dev, "mcp")
    permissions = [
        p["Properties"]
        for p in dev.find_resources("AWS::Lambda::Permission").values()
        if p["Properties"]["FunctionName"] == {"Fn::GetAtt": [mcp_id, "Arn"]}
    ]

    assert {p["Principal"] for p in permissions} == {"apigateway.amazonaws.com"}
    assert any("/mcp" in str(render(p["SourceArn"])) for p in permissions)


def test_the_stack_names_the_mcp_url(dev: Template) -> None:
    outputs = dev.to_json()["Outputs"]

    assert str(render(outputs["McpUrl"]["Value"])).endswith("/mcp")
    assert resource(dev, function_named_in(dev, "mcp")[0])["Type"] == "AWS::Lambda::Function"
