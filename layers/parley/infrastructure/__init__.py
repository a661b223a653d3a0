"""Infrastructure written once and read by both the CDK app and the local runtime."""
