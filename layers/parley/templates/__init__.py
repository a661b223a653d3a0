"""The one Liquid environment of the runtime, its limits, and the save-time template checks."""
