"""When a page or an API client asks again about a job or a batch: soon while it runs, slowly
while staff settle it, never once it is done."""

from __future__ import annotations

import math
from datetime import datetime
from typing import Any

from jobs.models import Job

# Seconds between status polls of a job page while the job is live: start at 1 s, back off to 5 s.
POLL_DELAYS = (1, 1, 2, 3, 5)
# Dead and unknown jobs wait for staff: their page still asks, slowly, so a staff fix shows.
SETTLING_POLL_SECONDS = 30
# API clients are told to wait at most this long between polls (Retry-After).
API_MAX_RETRY_AFTER = 10
LIST_POLL_SECONDS = 3
BATCH_POLL_DELAYS = (2, 2, 3, 5)


def batch_poll_delay(polls: int) -> int:
    return BATCH_POLL_DELAYS[min(polls, len(BATCH_POLL_DELAYS) - 1)]


def poll_count(value: Any) -> int:
    """The ``poll`` counter a status poll carries (how many polls came before it)."""
    try:
        return min(max(int(value), 0), 1000)
    except (TypeError, ValueError):
        return 0


def poll_delay(polls: int) -> int:
    """Seconds before the next status poll of a live job: 1 s at first, backing off to 5 s."""
    return POLL_DELAYS[min(polls, len(POLL_DELAYS) - 1)]


def page_poll_delay(job: Job, polls: int) -> int | None:
    """When the job page asks again: soon while live, slowly while staff settle it, never once done."""
    if not job.is_terminal:
        return poll_delay(polls)
    if job.state in (Job.State.DEAD, Job.State.UNKNOWN):
        return SETTLING_POLL_SECONDS
    return None


def retry_after(job: Job, now: datetime) -> int:
    """Retry-After for API pollers: ask often for young jobs, every 10 s for old ones."""
    age = (now - job.created_at).total_seconds()
    return min(max(math.ceil(age / 10), 1), API_MAX_RETRY_AFTER)


def still_current(if_none_match: str, tag: str) -> bool:
    """Whether an ``If-None-Match`` header names ``tag`` (weak comparison, RFC 9110 13.1.2)."""
    if not if_none_match or not tag:
        return False
    if if_none_match.strip() == "*":
        return True
    wanted = tag.removeprefix("W/")
    return any(candidate.strip().removeprefix("W/") == wanted for candidate in if_none_match.split(","))
