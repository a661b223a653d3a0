"""HTTP requests as API Gateway REST proxy events, and proxy results as HTTP."""

from __future__ import annotations

import base64

from aws_lambda_powertools.utilities.data_classes import APIGatewayProxyEvent

from parley.local.events import api_gateway_event, http_reply

PATH = "/v1/orgs/acme/playbooks/campaigns/definitions/interaction"


def test_a_request_becomes_a_rest_proxy_event() -> None:
    event = api_gateway_event(
        "post",
        PATH + "?limit=2&tag=a&tag=b&empty=",
        [
            ("Host", "127.0.0.1:8000"),
            ("Content-Type", "application/json"),
            ("X-Many", "1"),
            ("X-Many", "2"),
            ("User-Agent", "curl/8"),
        ],
        b'{"name": "x"}',
        source_ip="10.0.0.7",
    )

    assert event["resource"] == "/v1/{proxy+}"
    assert event["path"] == PATH
    assert event["httpMethod"] == "POST"
    assert event["pathParameters"] == {"proxy": PATH.removeprefix("/v1/")}
    assert event["headers"]["Content-Type"] == "application/json"
    assert event["headers"]["X-Many"] == "2"
    assert event["multiValueHeaders"]["X-Many"] == ["1", "2"]
    assert event["queryStringParameters"] == {"limit": "2", "tag": "b", "empty": ""}
    assert event["multiValueQueryStringParameters"]["tag"] == ["a", "b"]
    assert event["body"] == '{"name": "x"}'
    assert event["isBase64Encoded"] is False
    context = event["requestContext"]
    assert context["identity"]["sourceIp"] == "10.0.0.7"
    assert context["identity"]["userAgent"] == "curl/8"
    assert context["stage"] == "local"
    assert context["path"] == "/local" + PATH
    assert context["httpMethod"] == "POST"
    assert len(context["requestId"]) == 36
    parsed = APIGatewayProxyEvent(event)
    assert parsed.headers["content-type"] == "application/json"
    assert parsed.json_body == {"name": "x"}


def test_no_body_no_query() -> None:
    event = api_gateway_event("GET", "/a%20b", [], b"")

    assert (event["body"], event["queryStringParameters"], event["multiValueQueryStringParameters"]) == (
        None,
        None,
        None,
    )
    assert event["path"] == "/a b"
    assert (event["resource"], event["pathParameters"]) == ("/{proxy+}", {"proxy": "a b"})
    assert event["headers"] is None


def test_a_body_that_is_not_utf8_is_base64() -> None:
    event = api_gateway_event("POST", "/x", [], b"\xff\x00")

    assert event["isBase64Encoded"] is True
    assert base64.b64decode(event["body"]) == b"\xff\x00"


def test_a_proxy_result_becomes_http() -> None:
    reply = http_reply(
        {
            "statusCode": 405,
            "multiValueHeaders": {"Allow": ["GET, PUT"], "Set-Cookie": ["a=1", "b=2"]},
            "headers": {"Allow": "ignored", "X-One": "1"},
            "body": "{}",
            "isBase64Encoded": False,
        }
    )

    assert reply.status == 405
    assert reply.headers == [
        ("Allow", "GET, PUT"),
        ("Set-Cookie", "a=1"),
        ("Set-Cookie", "b=2"),
        ("X-One", "1"),
    ]
    assert reply.body == b"{}"
    assert (
        http_reply(
            {"statusCode": 200, "body": base64.b64encode(b"\x01").decode(), "isBase64Encoded": True}
        ).body
        == b"\x01"
    )
