"""Status reads for the web: a tenant's job, its events, its list, and when to ask again.

Polling is the hot read path (every open job page asks every few seconds), so a status
read is two indexed queries: the job by primary key and tenant, then its events by the
``jobevent_job_idx`` index. The payload is never loaded: it is not shown, and it may be
the largest column.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.core.paginator import Page, Paginator
from django.http import Http404

from . import schemas
from .models import Job, JobEvent

STATUS_FIELDS = (
    "id", "tenant_id", "kind", "state", "epoch", "attempts", "max_attempts", "created_at", "updated_at",
    "finished_at", "deadline", "document_name", "document_size", "result",
)
LIST_FIELDS = ("id", "kind", "state", "attempts", "created_at", "updated_at", "finished_at", "document_name")
MAX_EVENTS = 200
PAGE_SIZE = 20
# Seconds between status polls of a job page: start at 1 s, back off to 10 s.
POLL_DELAYS = (1, 1, 2, 3, 5, 8, 10)
LIST_POLL_SECONDS = 3


@dataclass(frozen=True)
class JobStatus:
    job: Job
    events: list[JobEvent]


def job_status(*, tenant_id: int | None, job_id: int) -> JobStatus:
    """The job if it belongs to the tenant. Unknown and foreign ids raise the same Http404."""
    job = job_query(tenant_id=tenant_id, job_id=job_id).first()
    if job is None:
        raise Http404("no such job")
    return JobStatus(job, list(events_query(job_id=job.pk)))


def job_query(*, tenant_id: int | None, job_id: int):
    return Job.objects.for_tenant(tenant_id).filter(pk=job_id).only(*STATUS_FIELDS)


def events_query(*, job_id: int):
    return (JobEvent.objects.filter(job_id=job_id).order_by("id")
            .only("id", "from_state", "to_state", "epoch", "reason", "at")[:MAX_EVENTS])


def job_page(*, tenant_id: int | None, state: str = "", page: Any = 1) -> Page:
    """The tenant's jobs, newest first (job_tenant_idx), optionally in one state."""
    jobs = Job.objects.for_tenant(tenant_id).only(*LIST_FIELDS).order_by("-id")
    if state in Job.State.values:
        jobs = jobs.filter(state=state)
    return Paginator(jobs, PAGE_SIZE).get_page(page)


def poll_count(value: Any) -> int:
    """The ``poll`` counter a status poll carries (how many polls came before it)."""
    try:
        return min(max(int(value), 0), 1000)
    except (TypeError, ValueError):
        return 0


def poll_delay(polls: int) -> int:
    """Seconds before the next status poll: 1 s at first, backing off to 10 s."""
    return POLL_DELAYS[min(polls, len(POLL_DELAYS) - 1)]


def retry_after(job: Job, now: datetime) -> int:
    """Retry-After for API pollers: ask often for young jobs, every 10 s for old ones."""
    age = (now - job.created_at).total_seconds()
    return min(max(math.ceil(age / 10), 1), POLL_DELAYS[-1])


def job_json(status: JobStatus) -> dict[str, Any]:
    """The job as ``GET /jobs/<id>`` answers it in JSON (``schemas.Job``)."""
    return schemas.Job.of(status.job, status.events).to_json()
