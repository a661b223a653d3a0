"""The reading cadence of a conversation (``interaction-format.md``, "Bounds": reads of a conversation).

The page says: "5 seconds after a request joins, then 10, 20 and 40 seconds, then every minute through
the 18th read, then every 5 minutes". Each figure is the wait before the next read: a back-off that
doubles from 5 seconds (5, 10, 20, 40), then settles at a minute through the 18th read, then at 5
minutes. They are not times since the join: read so, reads 2 to 4 would come at 10, 20 and 40 seconds
and every later read would be early (issue 11).

====== ========================================= =========================
read   delay after the previous read (or join)   time since the join
====== ========================================= =========================
1      5 s                                       5 s
2      10 s                                      15 s
3      20 s                                      35 s
4      40 s                                      75 s
5–18   60 s each                                 135 s, 195 s … 915 s
19 on  300 s each                                1215 s, 1515 s, …
====== ========================================= =========================

Each delay is at least the function's ``replies.wait`` ("Reads of a conversation never come sooner
than the function's ``wait``"), and a read answered with ``Retry-After`` waits as long as the server
asks, up to an hour.

Reading is per conversation, not per request: open requests that share a conversation share one
cadence, so the number of reads does not grow with the number of requests. ``number`` counts the
reads since the reading began; the scheduler decides whether a request that joins a conversation
already being read starts the count again ("5 seconds after a request joins").
"""

from __future__ import annotations

import math
from datetime import timedelta
from typing import Final

#: The delays before reads 1 to 4, in seconds, each after the previous read (read 1: after the join),
#: so reads come 5, 15, 35 and 75 seconds after the join.
FIRST_DELAYS: Final[tuple[int, ...]] = (5, 10, 20, 40)
#: Reads after the first four, up to this one, each come a minute after the one before.
MINUTE_READS_THROUGH: Final = 18
MINUTE: Final = timedelta(minutes=1)
#: The delay between reads after the 18th.
LATE_DELAY: Final = timedelta(minutes=5)
#: The longest a ``Retry-After`` is waited for.
RETRY_AFTER_MAX: Final = timedelta(hours=1)


def _schedule_delay(number: int) -> timedelta:
    if number <= len(FIRST_DELAYS):
        return timedelta(seconds=FIRST_DELAYS[number - 1])
    if number <= MINUTE_READS_THROUGH:
        return MINUTE
    return LATE_DELAY


def delay_before_read(number: int, wait: timedelta) -> timedelta:
    """The delay before read ``number`` (1-based) after the previous read, or after the request joined
    for read 1; never below ``wait``. See the module's table."""
    if number < 1:
        raise ValueError(f"reads are numbered from 1, not {number}")
    return max(_schedule_delay(number), wait)


def retry_after_delay(retry_after_seconds: float | None, normal: timedelta) -> timedelta:
    """The delay before the next read after one answered with ``Retry-After``: as long as the server
    asks, up to an hour, and never sooner than the ``normal`` delay. A missing, negative or not finite
    value asks nothing."""
    if retry_after_seconds is None or not math.isfinite(retry_after_seconds) or retry_after_seconds <= 0:
        return normal
    asked = min(timedelta(seconds=retry_after_seconds), RETRY_AFTER_MAX)
    return max(normal, asked)


def time_of_read(number: int, wait: timedelta) -> timedelta:
    """When read ``number`` comes, counted from the join, when no read waits for a ``Retry-After``."""
    if number < 1:
        raise ValueError(f"reads are numbered from 1, not {number}")
    early = min(number, MINUTE_READS_THROUGH)
    total = sum((delay_before_read(n, wait) for n in range(1, early + 1)), timedelta(0))
    return total + (number - early) * delay_before_read(MINUTE_READS_THROUGH + 1, wait)


def reads_within(duration: timedelta, wait: timedelta) -> int:
    """How many reads a conversation gets within ``duration`` of the join (a read exactly at its end
    counts). The same for one open request as for a hundred, since they share the reading."""
    if duration < timedelta(0):
        return 0
    count = 0
    while count < MINUTE_READS_THROUGH and time_of_read(count + 1, wait) <= duration:
        count += 1
    if count < MINUTE_READS_THROUGH:
        return count
    late = delay_before_read(MINUTE_READS_THROUGH + 1, wait)
    return count + (duration - time_of_read(MINUTE_READS_THROUGH, wait)) // late
