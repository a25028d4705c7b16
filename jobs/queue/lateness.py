"""Whether the workers keep up: jobs that could run but have waited longer than expected.

No worker has taken them: the workers are stopped, or too few for the work. Read by the
submitters' pages (to say that their jobs are delayed) and by staff's (to say why); a page
that finds it late tells the apps, with ``queue_delayed``, so staff are alerted once per delay.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db.models import Count, Min
from django.dispatch import Signal

from jobs.conf import queue_settings
from jobs.models import Job

# The queue was found late (``wait``), or looked at by staff, with ``now``: sent by whoever looked,
# outside any transition (a listener raises or lowers its alert with a conditional write of its own).
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


# A page that shows a waiting job looks at most this often per process: lateness needs no
# fresher a figure, and a waiting job's page polls every few seconds.
MEMO_SECONDS = 5.0
_memo: dict[timedelta, tuple[float, Wait]] = {}


def noticed(*, now: datetime, always: bool = False) -> Wait:
    """``wait`` (at most once per ``MEMO_SECONDS`` in this process), and ``queue_delayed`` sent
    with a fresh one when it is late, or whatever it is when ``always`` (staff's landing: the
    listener lowers its alert when the queue is on time again)."""
    expected = expected_wait()
    kept = _memo.get(expected)
    if kept is not None and time.monotonic() - kept[0] < MEMO_SECONDS and not always:
        return kept[1]
    found = wait(now=now)
    _memo[expected] = (time.monotonic(), found)
    if found.delayed or always:
        queue_delayed.send(sender=Wait, wait=found, now=now)
    return found


def forget() -> None:
    """Drop the memo (a test that changes the queue and looks again at once)."""
    _memo.clear()
