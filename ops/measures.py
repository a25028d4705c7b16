"""Reads of what the queue did, from its own rows: durations and rates for the instruments.

Both the capacity planner (``--observed``) and ``/metrics`` read these, so a figure shown
on the page and the one scraped come from the same query. Every read is bounded.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from django.db.models import Max, QuerySet

from jobs.models import Job, JobEvent

if TYPE_CHECKING:
    from .capacity import Workload

MAX_SAMPLES = 10_000  # the most recent matching events a read returns
MAX_SCAN = 200_000  # the most recent events a read looks through (JobEvent has no index on ``at``)


def recent_events() -> QuerySet[JobEvent]:
    """Events among the last ``MAX_SCAN`` by id: a primary-key range, so the cost is bounded.

    Events are appended as things happen, so the newest ids are the newest times.
    """
    last = JobEvent.objects.aggregate(last=Max("id"))["last"] or 0
    return JobEvent.objects.filter(id__gt=last - MAX_SCAN)


def service_times(*, since: datetime, until: datetime, limit: int = MAX_SAMPLES) -> list[float]:
    """Seconds from claim to completion, for completions in [since, until].

    A completion is paired with the claim of the same job and epoch: a redelivered job
    counts from its last claim, which is the work that finished.
    """
    done = list(
        recent_events().filter(from_state=Job.State.LEASED, to_state=Job.State.COMPLETED, at__gte=since, at__lte=until)
        .order_by("-id").values_list("job_id", "epoch", "at")[:limit]
    )
    claims = _claims({job_id for job_id, _, _ in done})
    return [
        (at - claims[(job_id, epoch)]).total_seconds()
        for job_id, epoch, at in done if (job_id, epoch) in claims
    ]


def queue_waits(*, since: datetime, until: datetime, limit: int = MAX_SAMPLES) -> list[float]:
    """Seconds from acceptance to the first claim, for first claims in [since, until]."""
    first_claims = (
        recent_events().filter(from_state=Job.State.QUEUED, to_state=Job.State.LEASED, epoch=1,
                                at__gte=since, at__lte=until)
        .order_by("-id").values_list("at", "job__created_at")[:limit]
    )
    return [(at - created).total_seconds() for at, created in first_claims]


def _claims(job_ids: set[int]) -> dict[tuple[int, int], datetime]:
    rows = JobEvent.objects.filter(job_id__in=job_ids, from_state=Job.State.QUEUED, to_state=Job.State.LEASED)
    return {(job_id, epoch): at for job_id, epoch, at in rows.values_list("job_id", "epoch", "at")}


@dataclass(frozen=True)
class Observed:
    window: timedelta
    arrivals: int
    rate: float  # jobs per second
    completions: int
    service: float | None  # mean seconds claim -> complete; None without completions


def observe(*, window: timedelta, now: datetime) -> Observed:
    """The arrival rate and mean service time the job table shows over ``window``."""
    since = now - window
    arrivals = Job.objects.filter(created_at__gte=since, created_at__lte=now).count()
    times = service_times(since=since, until=now)
    return Observed(
        window=window, arrivals=arrivals, rate=arrivals / window.total_seconds(), completions=len(times),
        service=sum(times) / len(times) if times else None,
    )


def observed_workload(*, window: timedelta, now: datetime, service: float | None = None,
                      **given: Any) -> tuple[Workload, Observed]:
    """A ``capacity.Workload`` whose rate (and service time) the job table supplies.

    ``service`` is the fallback when the window holds no completion to measure; the rest of
    ``given`` goes to ``capacity.workload`` as it is.
    """
    from .capacity import workload

    seen = observe(window=window, now=now)
    service = seen.service if seen.service is not None else service
    if not service:
        raise ValueError(f"no job completed in the last {window}: give the service time yourself")
    return workload(rate=seen.rate, service=service, **given), seen
