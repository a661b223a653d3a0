"""The timer queue (``parley.aws.eventbridge``): work due within 15 minutes (a delivery's next
attempt, the check for a lost one, a conversation's next read) is an SQS message with a per-message
timer (``DelaySeconds``), which the timer function consumes through an event source mapping. SQS makes a
message visible within about a second of its time, so the first reads, which wait 5, 10, 20 and 40
seconds, keep their cadence; EventBridge Scheduler fires by the minute.

A batch reports the messages whose work failed (``batchItemFailures``); each such message comes back
after the visibility timeout, and after :data:`MAX_RECEIVES` receives goes to the queue's dead-letter
queue (alarmed on, like the other two: ``dead_letters``).
"""

from __future__ import annotations

from typing import Final

from aws_cdk import Duration
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as event_sources
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from parley.infrastructure.functions import function_named
from parley_cdk.settings import StageSettings

#: Timed work is idempotent: a message is tried this often before it is a dead letter.
MAX_RECEIVES: Final = 5
#: Messages the timer takes at once: one. Each piece of timed work may call a tool server for up to 40
#: seconds (10 to open, 30 to respond); ten in one invocation would run one after another, delaying the
#: later ones' cadence by minutes and passing the function's timeout. One message an invocation lets
#: Lambda run them side by side, each on its own time.
BATCH_SIZE: Final = 1
#: AWS's advice for an SQS event source: a visibility timeout of at least six times the function's.
VISIBILITY_TIMEOUT: Final = Duration.seconds(6 * function_named("timer").timeout_s)


class TimerQueue(Construct):
    """The queue, its dead-letter queue, and the timer function as its consumer."""

    def __init__(self, scope: Construct, construct_id: str, *, settings: StageSettings) -> None:
        super().__init__(scope, construct_id)
        self.failures = sqs.Queue(
            self,
            "Failures",
            queue_name=settings.resource_name("timer-queue-failures"),
            encryption=sqs.QueueEncryption.SQS_MANAGED,
            enforce_ssl=True,
            retention_period=Duration.days(14),
            removal_policy=settings.removal_policy,
        )
        self.queue = sqs.Queue(
            self,
            "Queue",
            queue_name=settings.resource_name("timer-queue"),
            encryption=sqs.QueueEncryption.SQS_MANAGED,
            enforce_ssl=True,
            visibility_timeout=VISIBILITY_TIMEOUT,
            # Work is due within 15 minutes: a message older than a day is only a dead letter late.
            retention_period=Duration.days(1),
            dead_letter_queue=sqs.DeadLetterQueue(max_receive_count=MAX_RECEIVES, queue=self.failures),
            removal_policy=settings.removal_policy,
        )

    def consume_with(self, timer: lambda_.Function) -> None:
        """The timer function takes the queue's messages (and only it may receive and delete them)."""
        timer.add_event_source(
            event_sources.SqsEventSource(self.queue, batch_size=BATCH_SIZE, report_batch_item_failures=True)
        )

    def allow_sending(self, grantee: iam.IGrantable) -> None:
        """``grantee`` may put timed work in the queue (``sqs:SendMessage`` only)."""
        grantee.grant_principal.add_to_principal_policy(
            iam.PolicyStatement(actions=["sqs:SendMessage"], resources=[self.queue.queue_arn])
        )
