"""A model call that failed, as the run's rejection (``reasoning-format.md``, "How a run ends", "What
the rejections say"): the provider's rejection of the model, the schema or a setting, and a request
too long, are ``conflict``, ``unworkable`` (409); the rest is ``unavailable`` (503) — rejected
credentials with the status, a rate limit with the seconds when the provider said, a provider that
cannot be reached, cannot serve now or does not answer in time, an untrusted certificate (the operator
must act). ``ModelCallFailed.detail`` names the provider and the status and holds no credential."""

from __future__ import annotations

from typing import TYPE_CHECKING

from parley.errors import Problem

if TYPE_CHECKING:
    from parley.models import ModelCallFailed


def failure_problem(failure: ModelCallFailed) -> Problem:
    detail = failure.detail.rstrip(".") + "."
    if failure.kind in ("rejected", "too_long"):
        return Problem("conflict", detail, kind="unworkable")
    if failure.kind == "rate_limited" and failure.retry_after_seconds is not None:
        seconds = max(1, round(failure.retry_after_seconds))
        return Problem("unavailable", f"{detail} Try again in {seconds} seconds.")
    if failure.kind == "timed_out":
        return Problem("unavailable", f"{detail} Try again later.", because="model_unavailable")
    if failure.kind == "certificate_untrusted":
        return Problem(
            "unavailable", f"{detail} The operator must act: the provider's certificate is not trusted."
        )
    if failure.kind == "credentials_rejected":
        return Problem("unavailable", f"{detail} The operator must check the provider's key.")
    return Problem("unavailable", f"{detail} Try again later.")
