"""CloudWatch alarms on what needs a person: a function that fails or is throttled, work in a
dead-letter queue, a run's execution that failed. Each alarm notifies one SNS topic (subscribe an
address with the ``alarm_email`` context, or anything else to the ``AlarmTopicArn`` output).

Each is one standard alarm ($0.10 a month, docs/deploy.md): on the sum over five minutes, missing data
is not breaching, so an idle stage is quiet.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from aws_cdk import Duration
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_cloudwatch_actions as actions
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sns_subscriptions as subscriptions
from aws_cdk import aws_sqs as sqs
from aws_cdk import aws_stepfunctions as sfn
from constructs import Construct

from parley_cdk.compute import construct_name
from parley_cdk.nag import accept
from parley_cdk.settings import StageSettings

PERIOD: Final = Duration.minutes(5)


class Alarms(Construct):
    """The alarm topic and every alarm; :attr:`alarms` by construct id."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        settings: StageSettings,
        functions: Mapping[str, lambda_.IFunction],
        dead_letter_queues: Mapping[str, sqs.IQueue],
        state_machine: sfn.IStateMachine,
        email: str | None,
    ) -> None:
        super().__init__(scope, construct_id)
        self._settings = settings
        self.topic = sns.Topic(
            self,
            "Topic",
            topic_name=settings.resource_name("alarms"),
            display_name=f"Parley {settings.name} alarms",
            enforce_ssl=True,
        )
        accept(
            self.topic,
            "AwsSolutions-SNS2",
            "The topic carries alarm notifications only (alarm name, metric, state), no content; CloudWatch "
            "can publish to an encrypted topic only with a customer managed KMS key, $1 a month of idle "
            "cost for nothing secret.",
        )
        if email:
            self.topic.add_subscription(subscriptions.EmailSubscription(email))
        self._action = actions.SnsAction(self.topic)
        self.alarms: dict[str, cloudwatch.Alarm] = {}
        for name, function in functions.items():
            self._add(
                f"{construct_name(name)}Errors", f"{name}-errors", function.metric_errors(period=PERIOD)
            )
            self._add(
                f"{construct_name(name)}Throttles",
                f"{name}-throttles",
                function.metric_throttles(period=PERIOD),
            )
        for name, queue in dead_letter_queues.items():
            self._add(
                f"{construct_name(name)}Depth",
                f"{name}-waiting",
                queue.metric_approximate_number_of_messages_visible(
                    period=PERIOD, statistic=cloudwatch.Stats.MAXIMUM
                ),
            )
        self._add("RunsFailed", "runs-failed", state_machine.metric_failed(period=PERIOD))

    def _add(self, construct_id: str, name: str, metric: cloudwatch.IMetric) -> None:
        alarm = cloudwatch.Alarm(
            self,
            construct_id,
            alarm_name=self._settings.resource_name(name),
            metric=metric,
            threshold=1,
            evaluation_periods=1,
            comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
            treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
        )
        alarm.add_alarm_action(self._action)
        self.alarms[construct_id] = alarm
