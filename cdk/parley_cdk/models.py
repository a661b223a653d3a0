"""Model calls on AWS (http-api.md, "Model providers"): which Amazon Bedrock resources the functions of
``MAY_CALL_MODELS`` may invoke, from the model ids the stage names (``-c bedrock_models=…``).

A named id is one of two kinds:

- a foundation model's id (``anthropic.claude-sonnet-4-5-20250929-v1:0``): the model in the stage's own
  region, ``arn:<partition>:bedrock:<region>::foundation-model/<id>``;
- a cross-region inference profile's id, the same id behind a geography prefix
  (``us.anthropic.claude-sonnet-4-5-20250929-v1:0``; see :data:`GEOGRAPHY_PREFIXES`). The function calls
  the profile in its own region, ``arn:<partition>:bedrock:<region>:<account>:inference-profile/<id>``,
  and Bedrock sends the request on to the foundation model in one of the profile's destination regions,
  where IAM checks the caller again. So a profile also needs the foundation model in every region it may
  route to: ``arn:<partition>:bedrock:*::foundation-model/<id without the prefix>`` (AWS names a global
  profile's model with an empty region, which ``*`` matches as well).

Nothing here looks anything up: the ARNs are built from the ids, so the synth stays offline.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

from aws_cdk import ArnFormat, Stack

#: The actions of a model call: Converse and InvokeModel (``bedrock:InvokeModel``), and their streaming
#: forms (``bedrock:InvokeModelWithResponseStream``). Nothing else of Bedrock.
MODEL_ACTIONS: Final = ("bedrock:InvokeModel", "bedrock:InvokeModelWithResponseStream")
#: The first dot-separated part of a cross-region inference profile's id: the geography it routes within
#: (``global``: any commercial region). No foundation model's provider is named like one of these.
GEOGRAPHY_PREFIXES: Final = frozenset({"us", "us-gov", "eu", "apac", "jp", "au", "ca", "global"})

#: A Bedrock model or profile id: letters, digits, ``.``, ``-``, ``_`` and ``:`` (the version suffix),
#: starting with a letter or digit. No ``*`` (the stage names each model), no ``/`` (no ARNs).
_MODEL_ID: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,199}")


class BedrockModelError(ValueError):
    """A name that is not a Bedrock model or inference profile id; the message says what is expected."""


def bedrock_model_id(text: str) -> str:
    """``text`` when it is a model id or a cross-region inference profile id; :class:`BedrockModelError`
    otherwise (a wildcard, an ARN, a ``provider/model`` reference of a reasoning function)."""
    if not _MODEL_ID.fullmatch(text) or "." not in text:
        raise BedrockModelError(
            f"{text!r} is not a Bedrock model id: give model ids such as "
            "anthropic.claude-sonnet-4-5-20250929-v1:0 or inference profile ids such as "
            "us.anthropic.claude-sonnet-4-5-20250929-v1:0 (no wildcards, no ARNs, no provider/ such as "
            "bedrock-anthropic/)"
        )
    geography, _, model = text.partition(".")
    if geography in GEOGRAPHY_PREFIXES and "." not in model:
        raise BedrockModelError(
            f"{text!r} is not a Bedrock inference profile id: after the geography {geography}. comes a "
            "model id such as anthropic.claude-sonnet-4-5-20250929-v1:0"
        )
    return text


def routed_model(model_id: str) -> str | None:
    """The foundation model a cross-region inference profile routes to (its id without the geography
    prefix), or ``None`` when ``model_id`` is a foundation model's own id."""
    geography, _, model = model_id.partition(".")
    return model if geography in GEOGRAPHY_PREFIXES else None


def model_arns(stack: Stack, model_ids: Iterable[str]) -> list[str]:
    """Every resource a model call to one of ``model_ids`` is checked against, each once, in order."""
    arns: dict[str, None] = {}
    for model_id in model_ids:
        routed = routed_model(model_id)
        if routed is None:
            arns[foundation_model_arn(stack, model_id)] = None
        else:
            arns[inference_profile_arn(stack, model_id)] = None
            arns[foundation_model_arn(stack, routed, region="*")] = None
    return list(arns)


def foundation_model_arn(stack: Stack, model_id: str, *, region: str | None = None) -> str:
    """A foundation model in the stack's region, or in ``region`` (``*``: any); foundation models belong
    to no account."""
    return stack.format_arn(
        service="bedrock",
        region=region,
        account="",
        resource="foundation-model",
        resource_name=model_id,
        arn_format=ArnFormat.SLASH_RESOURCE_NAME,
    )


def inference_profile_arn(stack: Stack, profile_id: str) -> str:
    """A cross-region (system-defined) inference profile, as the stack's region and account see it."""
    return stack.format_arn(
        service="bedrock",
        resource="inference-profile",
        resource_name=profile_id,
        arn_format=ArnFormat.SLASH_RESOURCE_NAME,
    )


def routed_model_finding(model_id: str) -> str:
    """The cdk-nag finding (AwsSolutions-IAM5) of a profile's foundation model in every region."""
    routed = routed_model(model_id)
    assert routed is not None, f"{model_id} is not an inference profile id"
    return f"AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:bedrock:*::foundation-model/{routed}]"
