"""The AWS adapters behind the ports (Step Functions, EventBridge Scheduler and the timer queue, the
boto3 error translation) and the wiring of a deployed function's runtime from its environment."""
