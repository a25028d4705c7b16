"""The one place tests reach into a running worker process: pauses at named points.

Some properties can only be shown by stopping a real worker process at an exact moment: a
worker paused like a frozen VM with a batch of claims in hand, or killed between a handler's
end and its completion's commit. The worker calls ``checkpoint(point, jobs)`` at the points
below; it does nothing unless the process was started with one of these variables in its
environment, which only the tests set (they are not settings, and production never sets them):

- ``JOBS_FREEZE_AT=<point>``: the first time the worker handles more than one job at that
  point (a claim or batch of several, or jobs held beside the one starting) it logs
  ``event=freezing`` and sends itself SIGSTOP, as a paused VM would. Once: after SIGCONT it
  goes on as usual.
- ``JOBS_COMPLETER_PAUSE=<seconds>``: before each completion batch commits, the worker logs
  ``event=completion_pending`` for each job in it and waits that long.
- ``JOBS_START_TRACE=<path>``: just before the worker writes a job's start (which spends its
  attempt), it appends "job epoch" to that file, for the one job it is about to hand to its
  handler; a test reads it beside the queue's events to see that no attempt was spent on a
  job the worker was not starting.
"""

from __future__ import annotations

import logging
import os
import signal
import time
from collections.abc import Sequence

from ..logs import event

log = logging.getLogger("jobs.worker")

POINTS = {
    "claim": "before a claim of several jobs is sent",
    "claimed": "after a claim of several jobs returned, before any of them starts",
    "handler": "as a handler starts, with prefetched jobs held",
    "complete": "before a completion batch of several jobs is sent",
}

# The point still to freeze at (none, or the one named): emptied once the worker has frozen.
_freeze_at = {os.environ.get("JOBS_FREEZE_AT", "")} - {""}
_completer_pause = float(os.environ.get("JOBS_COMPLETER_PAUSE") or 0)
_start_trace = os.environ.get("JOBS_START_TRACE", "")
if _freeze_at - POINTS.keys():
    raise ValueError(f"JOBS_FREEZE_AT={next(iter(_freeze_at))!r}: not one of {sorted(POINTS)}")


def checkpoint(point: str, jobs: int) -> None:
    """Freeze here if ``JOBS_FREEZE_AT`` names this point and ``jobs`` is more than one."""
    if jobs <= 1 or point not in _freeze_at:
        return
    _freeze_at.discard(point)  # once
    event(log, logging.WARNING, "freezing", point=point, jobs=jobs, pid=os.getpid())
    os.kill(os.getpid(), signal.SIGSTOP)


def before_commit(jobs: Sequence[tuple[int, int]]) -> None:
    """``JOBS_COMPLETER_PAUSE``: say which (job, epoch) wait to commit, then wait; then the
    ``complete`` freeze point."""
    if _completer_pause:
        for job_id, epoch in jobs:
            event(log, logging.INFO, "completion_pending", job=job_id, epoch=epoch, pause_s=_completer_pause)
        time.sleep(_completer_pause)
    checkpoint("complete", len(jobs))


def starting(job_id: int, epoch: int) -> None:
    """``JOBS_START_TRACE``: the worker is about to write this claim's start and run it (one
    ``write`` of an appended line: it survives the process's SIGKILL)."""
    if _start_trace:
        with open(_start_trace, "a") as out:
            out.write(f"{job_id} {epoch}\n")
