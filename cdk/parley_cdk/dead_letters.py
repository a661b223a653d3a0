"""Where asynchronous work goes when it keeps failing, so that nothing is lost silently.

The timer function is invoked asynchronously twice over: by EventBridge Scheduler (each schedule) and by
the functions of ``MAY_RUN_NOW`` (work due at once). The reason function is invoked asynchronously by the
functions of ``MAY_REASON``, once for each reasoning run they start. Three queues catch what gives up:

- :attr:`DeadLetters.timer_failures`: the timer's on-failure destination, an event Lambda tried three
  times (the first call and two retries) or kept past its age; the record holds the event and the error.
- :attr:`DeadLetters.schedule_failures`: each schedule's dead-letter queue
  (``PARLEY_SCHEDULE_DEAD_LETTER_ARN``), an event EventBridge Scheduler could not hand to the timer at
  all (throttled past its retries, a missing permission).
- :attr:`DeadLetters.reason_failures`: the reason function's on-failure destination, a run whose
  invocation failed (Lambda does not try a run again) or could not start within its age.

Each is alarmed on (``monitoring``); a message in one is work to look at and, once fixed, to replay.
"""

from __future__ import annotations

from aws_cdk import Duration
from aws_cdk import aws_iam as iam
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from parley_cdk.nag import accept
from parley_cdk.settings import StageSettings

#: SQS keeps a message at most 14 days: time to notice the alarm and replay.
RETENTION = Duration.days(14)


class DeadLetters(Construct):
    def __init__(self, scope: Construct, construct_id: str, *, settings: StageSettings) -> None:
        super().__init__(scope, construct_id)
        self.timer_failures = self._queue("TimerFailures", settings.resource_name("timer-failures"), settings)
        self.schedule_failures = self._queue(
            "ScheduleFailures", settings.resource_name("schedule-dead-letters"), settings
        )
        self.reason_failures = self._queue(
            "ReasonFailures", settings.resource_name("reason-failures"), settings
        )

    def _queue(self, construct_id: str, name: str, settings: StageSettings) -> sqs.Queue:
        queue = sqs.Queue(
            self,
            construct_id,
            queue_name=name,
            encryption=sqs.QueueEncryption.SQS_MANAGED,
            enforce_ssl=True,
            retention_period=RETENTION,
            removal_policy=settings.removal_policy,
        )
        accept(
            queue,
            "AwsSolutions-SQS3",
            "This queue is itself a dead-letter queue (of the timer's or the reason function's "
            "asynchronous invocations, or of EventBridge Scheduler), which cdk-nag only recognizes as "
            "such for an SQS redrive policy.",
        )
        return queue

    def allow_sending_schedule_failures(self, grantee: iam.IGrantable) -> None:
        """The schedules' role may put what it could not deliver into the schedules' queue."""
        grantee.grant_principal.add_to_principal_policy(
            iam.PolicyStatement(actions=["sqs:SendMessage"], resources=[self.schedule_failures.queue_arn])
        )
