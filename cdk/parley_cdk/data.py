"""What the stage keeps: the one DynamoDB table, built from ``parley.infrastructure.table.TABLE`` (the
local runtime's too), and the content bucket for what is too large for a table item (``parley.content``).
"""

from __future__ import annotations

from aws_cdk import Duration
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_s3 as s3
from constructs import Construct

from parley.infrastructure.table import TABLE
from parley_cdk.nag import accept
from parley_cdk.settings import StageSettings

#: What keeping content takes: ``parley.aws.content.S3ContentStore`` puts and gets objects, nothing else.
CONTENT_ACTIONS = ("s3:GetObject", "s3:PutObject")


def _string_key(name: str) -> dynamodb.Attribute:
    return dynamodb.Attribute(name=name, type=dynamodb.AttributeType.STRING)


class Data(Construct):
    """On-demand table with the definition's keys and indexes, point-in-time recovery and TTL; and the
    content bucket (encrypted, TLS only, never public; kept with the table in prod)."""

    def __init__(self, scope: Construct, construct_id: str, *, settings: StageSettings) -> None:
        super().__init__(scope, construct_id)
        self.table = dynamodb.Table(
            self,
            "Table",
            partition_key=_string_key(TABLE.partition_key),
            sort_key=_string_key(TABLE.sort_key),
            billing_mode=dynamodb.BillingMode.PAY_PER_REQUEST,
            point_in_time_recovery_specification=dynamodb.PointInTimeRecoverySpecification(
                point_in_time_recovery_enabled=True
            ),
            time_to_live_attribute=TABLE.ttl_attribute,
            deletion_protection=settings.retain_data,
            removal_policy=settings.removal_policy,
        )
        for index in TABLE.indexes:
            self.table.add_global_secondary_index(
                index_name=index.name,
                partition_key=_string_key(index.partition_key),
                sort_key=_string_key(index.sort_key),
                projection_type=(
                    dynamodb.ProjectionType.ALL
                    if index.projection == "ALL"
                    else dynamodb.ProjectionType.INCLUDE
                ),
                non_key_attributes=list(index.included) or None,
            )
        self.content = s3.Bucket(
            self,
            "Content",
            encryption=s3.BucketEncryption.S3_MANAGED,
            enforce_ssl=True,
            block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
            object_ownership=s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
            # Each key is written once (parley.content): versions would only keep copies.
            versioned=False,
            lifecycle_rules=[s3.LifecycleRule(abort_incomplete_multipart_upload_after=Duration.days(1))],
            # Dev: deleting the stack deletes the bucket once it is empty (docs/deploy.md, "Tear down").
            removal_policy=settings.removal_policy,
        )
        accept(
            self.content,
            "AwsSolutions-S1",
            "Server access logs would need a second bucket that fills with a line per read and write of "
            "run content; the objects are only ever read and written by the stage's own functions, whose "
            "calls CloudTrail (data events, where enabled) and X-Ray already show.",
        )

    def allow_keeping_content(self, grantee: iam.IGrantable) -> None:
        """``grantee`` may put and get the bucket's objects (no listing, no deleting)."""
        grantee.grant_principal.add_to_principal_policy(
            iam.PolicyStatement(actions=list(CONTENT_ACTIONS), resources=[self.content.arn_for_objects("*")])
        )
