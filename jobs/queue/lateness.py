"""Whether the workers keep up: jobs that could run but have waited longer than expected.

No worker has taken them: the workers are stopped, or too few for the work. Read by the
submitters' pages (to say that their jobs are delayed) and by staff's (to say why); a page
that looks tells the apps, with ``queue_delayed``, so staff are alerted once per delay.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db.models import Count, Min
from django.dispatch import Signal

from jobs.conf import queue_settings
from jobs.models import Job

# The queue was looked at (``wait``: late or on time), with ``now``: sent by whoever looked, outside
# any transition (a listener raises or lowers its alert with a conditional write of its own).
queue_delayed = Signal()


@dataclass(frozen=True)
class Wait:
    """The jobs that could run and have waited longer than ``expected``, and how many are running."""

    late: int  # claimable since longer than ``expected``
    since: datetime | None  # when the longest-waiting of them became claimable
    running: int  # held by a worker now
    expected: timedelta

    @property
    def delayed(self) -> bool:
        return self.late > 0

    def waited(self, now: datetime) -> timedelta:
        """How long the longest-waiting job has waited (zero when none is late)."""
        return now - self.since if self.since is not None else timedelta(0)


def expected_wait() -> timedelta:
    """How long a claimable job may wait before the queue counts as late (``JOBS["EXPECTED_WAIT_SECONDS"]``)."""
    return queue_settings().expected_wait


def wait(*, now: datetime) -> Wait:
    """Two counts on the state index: the late jobs (with the longest wait), and the running ones."""
    expected = expected_wait()
    late = Job.objects.filter(state=Job.State.QUEUED, available_at__lte=now - expected).aggregate(
        n=Count("id"), since=Min("available_at"))
    running = Job.objects.filter(state=Job.State.LEASED).count() if late["n"] else 0
    return Wait(late=late["n"], since=late["since"], running=running, expected=expected)


def noticed(*, now: datetime) -> Wait:
    """``wait``, and ``queue_delayed`` sent with it, late or on time (listeners raise one alert of
    many notices, and lower it when the queue is on time again)."""
    found = wait(now=now)
    queue_delayed.send(sender=Wait, wait=found, now=now)
    return found
