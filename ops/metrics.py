"""Prometheus figures computed from the database at scrape time.

Workers are separate processes (and may be on several hosts), so no process's memory
holds the truth; the job table and its events do. Each scrape builds a fresh
``CollectorRegistry`` with ``JobsCollector``, which reads:

- ``jobsite_jobs{state,kind}`` (gauge): jobs in each state, by kind.
- ``jobsite_oldest_queued_job_age_seconds`` (gauge): since acceptance of the oldest queued job.
- ``jobsite_job_transitions_total{from,to}`` (counter): events that moved a job.
- ``jobsite_stale_rejections_total`` (counter): fenced writes that changed nothing.
- ``jobsite_recoveries_total{to}`` (counter): expired leases and passed deadlines swept.
- ``jobsite_claim_to_complete_seconds`` and ``jobsite_queue_wait_seconds`` (histograms):
  over the completions / first claims of the last ``WINDOW`` only, so a scrape stays cheap.
  Read them with ``histogram_quantile`` directly (not over ``rate()``): they describe the
  recent window, not a lifetime.

Counters add what retention deleted (``RetiredCount``) to the live count in one SQL
statement, so they never go down. Labels are only state, kind, from and to: never job
ids, tenants, payload or document text.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from datetime import datetime, timedelta

from django.db import connection
from django.db.models import Count, Min
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector

from jobs import kinds
from jobs.clock import queue_clock
from jobs.models import Job, JobEvent

from . import measures
from .models import RetiredCount

CONTENT_TYPE = CONTENT_TYPE_LATEST  # the exposition format /metrics answers in
WINDOW = timedelta(hours=1)
# Seconds: jobs here take from well under a second to the 10-minute deadline.
SERVICE_BUCKETS = (0.1, 0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 600)
WAIT_BUCKETS = (0.1, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600, 1800)


class JobsCollector(Collector):
    def __init__(self, *, now: Callable[[], datetime] = queue_clock.now, window: timedelta = WINDOW) -> None:
        self.now = now
        self.window = window

    def collect(self) -> Iterator[Metric]:
        now = self.now()
        yield self._jobs()
        yield self._oldest_queued(now)
        yield from self._counters()
        since = now - self.window
        yield histogram("jobsite_claim_to_complete_seconds",
                        f"Seconds from claim to completion, for completions in the last {_span(self.window)}.",
                        measures.service_times(since=since, until=now), SERVICE_BUCKETS)
        yield histogram("jobsite_queue_wait_seconds",
                        f"Seconds from acceptance to first claim, for first claims in the last {_span(self.window)}.",
                        measures.queue_waits(since=since, until=now), WAIT_BUCKETS)

    def _jobs(self) -> Metric:
        family = GaugeMetricFamily("jobsite_jobs", "Jobs in each state, by kind.", labels=["state", "kind"])
        counts = {(r["state"], r["kind"]): r["n"] for r in Job.objects.order_by().values("state", "kind")
                  .annotate(n=Count("id"))}
        kind_names = sorted({kind for _, kind in counts} | {k.name for k in kinds.offered_kinds()})
        for kind in kind_names:
            for state in Job.State.values:
                family.add_metric([state, kind], counts.get((state, kind), 0))
        return family

    def _oldest_queued(self, now: datetime) -> Metric:
        oldest = Job.objects.filter(state=Job.State.QUEUED).aggregate(at=Min("created_at"))["at"]
        return GaugeMetricFamily(
            "jobsite_oldest_queued_job_age_seconds",
            "Seconds since the oldest queued job was accepted (0 when none is queued).",
            value=max((now - oldest).total_seconds(), 0) if oldest else 0,
        )

    def _counters(self) -> Iterable[Metric]:
        transitions = CounterMetricFamily("jobsite_job_transitions", "Job state transitions, from JobEvent.",
                                          labels=["from", "to"])
        stale = CounterMetricFamily("jobsite_stale_rejections",
                                    "Fenced writes that changed nothing: stale epoch, expired lease or deadline.")
        recoveries = CounterMetricFamily("jobsite_recoveries",
                                         "Jobs the recovery sweep moved (expired lease or deadline), by new state.",
                                         labels=["to"])
        stale_total = 0
        for metric, from_state, to_state, n in counted_events():
            if metric == RetiredCount.Metric.TRANSITIONS:
                transitions.add_metric([from_state or "none", to_state], n)
            elif metric == RetiredCount.Metric.STALE_REJECTIONS:
                stale_total += n
            else:
                recoveries.add_metric([to_state], n)
        stale.add_metric([], stale_total)
        return transitions, stale, recoveries


def counted_events() -> list[tuple[str, str, str, int]]:
    """(metric, from, to, count): live events plus retired counts, in one statement (one snapshot)."""
    events, retired = JobEvent._meta.db_table, RetiredCount._meta.db_table
    sql = f"""
        SELECT metric, from_state, to_state, SUM(n) FROM (
            SELECT CASE WHEN to_state = '' THEN 'stale_rejections' ELSE 'transitions' END AS metric,
                   CASE WHEN to_state = '' THEN '' ELSE from_state END AS from_state, to_state, COUNT(*) AS n
            FROM {events} GROUP BY 1, 2, 3
            UNION ALL
            SELECT 'recoveries', '', to_state, COUNT(*) FROM {events} WHERE actor = 'recovery' GROUP BY to_state
            UNION ALL
            SELECT metric, from_state, to_state, value FROM {retired}
        ) AS counted GROUP BY metric, from_state, to_state ORDER BY metric, from_state, to_state
    """  # noqa: S608  the tables of our own models; no values
    with connection.cursor() as cursor:
        cursor.execute(sql)
        return [(m, f, t, int(n)) for m, f, t, n in cursor.fetchall()]


def histogram(name: str, documentation: str, values: list[float], bounds: tuple[float, ...]) -> Metric:
    buckets = [(_bound(b), sum(1 for v in values if v <= b)) for b in bounds]
    buckets.append(("+Inf", len(values)))
    family = HistogramMetricFamily(name, documentation)
    family.add_metric([], buckets, sum_value=sum(values))
    return family


def exposition(collector: JobsCollector | None = None) -> bytes:
    """The text format, from a registry made for this scrape alone."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(collector or JobsCollector())
    return generate_latest(registry)


def _bound(value: float) -> str:
    return f"{float(value)}"


def _span(window: timedelta) -> str:
    seconds = int(window.total_seconds())
    return f"{seconds // 3600} h" if seconds % 3600 == 0 else f"{seconds} s"
