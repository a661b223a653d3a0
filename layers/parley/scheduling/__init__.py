"""The scheduler port's AWS adapter: EventBridge Scheduler one-time schedules (``eventbridge``).
Locally ``parley.local.scheduler`` keeps the same promises with a real or a manual clock."""
