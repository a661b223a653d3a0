"""Accepting a cdk-nag finding, always with its reason.

cdk-nag 3 runs as a policy-validation plugin (registered in ``application``): every finding that is not
acknowledged fails the synth. A construct acknowledges its own findings where it creates their cause, so
the reason sits next to the code it excuses. An acknowledgement covers the construct and all it contains,
whenever they are added.
"""

from __future__ import annotations

from aws_cdk import Acknowledgment, Validations
from constructs import IConstruct


def accept(scope: IConstruct, rule: str, reason: str) -> None:
    """Acknowledge ``rule`` for ``scope`` and its children.

    ``rule`` is a rule id (``AwsSolutions-L1``) or one finding of a granular rule
    (``AwsSolutions-IAM5[Resource::*]``), as the validation report prints it.
    """
    Validations.of(scope).acknowledge(Acknowledgment(id=rule, reason=reason))
