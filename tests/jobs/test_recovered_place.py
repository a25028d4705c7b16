"""A frozen worker's jobs keep their place in line: recovery requeues them with their turn.

A real worker process claims 8 jobs at the head of the line (prefetch) and is stopped
(SIGSTOP, a paused VM) as the first of them starts; 70 more of the same tenant's jobs are
queued behind them and two healthy workers start on them. Once the frozen worker's leases
run out, the healthy workers' sweep requeues its 8 jobs, and those are claimed next, ahead
of the backlog that queued after them: each within the lease plus 2 s of the frozen claim
(or, on a machine so loaded that the healthy workers were not yet running when the lease ran
out, within 2 s of their start), while backlog jobs still wait. (Before, recovery cleared a
requeued job's turn, and the next claim stamped it behind the tenant's whole backlog:
11-14.5 s with a lease of 3 s.)
"""

from __future__ import annotations

import os
import signal
import subprocess
from datetime import timedelta

import pytest

from jobs.clock import system_clock
from jobs.models import Job, JobEvent
from tests.conftest import PYTHON, ROOT, child_env, wait_for
from tests.workers import Workers

pytestmark = pytest.mark.slow

LEASE = 2  # seconds
HELD = 8  # the frozen worker's claims
BACKLOG = 70

FROZEN = f"""
import django
django.setup()
from datetime import timedelta
from jobs.worker import Worker
Worker(name="frozen", lease=timedelta(seconds={LEASE}), prefetch={HELD}, poll_interval=0.1).run()
"""


def stopped(pid: int) -> bool:
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()[0] == "T"


def test_a_frozen_workers_jobs_run_again_within_the_lease_and_2_s_ahead_of_the_backlog(
        tmp_path, transactional_db, accept):
    first = accept("diagnostic.sleep", {"seconds": 0.05}, now=system_clock.now())  # teaches it jobs are fast
    held = [accept("diagnostic.sleep", {"seconds": 0.05}, now=system_clock.now()) for _ in range(HELD)]
    with open(tmp_path / "frozen.log", "w") as log:
        frozen = subprocess.Popen([PYTHON, "-c", FROZEN], cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
                                  start_new_session=True,
                                  env=child_env(JOBS_FREEZE_AT="handler", JOBS_PREFETCH_WINDOW="10"))
    healthy = None
    try:
        wait_for(lambda: stopped(frozen.pid), timeout=60)
        frozen_claims = {j: JobEvent.objects.filter(job_id=j.pk, to_state="leased").order_by("id").last()
                         for j in held}
        assert all(e is not None and e.actor == "worker:frozen" for e in frozen_claims.values()), (
            "the frozen worker holds the 8 jobs at the head of the line")
        assert Job.objects.get(pk=first.pk).state == "completed"
        backlog = [accept("diagnostic.sleep", {"seconds": 0.2}, now=system_clock.now()) for _ in range(BACKLOG)]
        healthy = Workers(tmp_path / "healthy.log", "--processes", "2", "--lease", str(LEASE),
                          "--poll-interval", "0.05")
        wait_for(lambda: healthy.text().count("worker_started ") >= 2, timeout=120)
        running_at = system_clock.now()  # (a loaded machine can take longer than the lease to start them)
        wait_for(lambda: Job.objects.filter(pk__in=[j.pk for j in held], state="completed").count() == HELD,
                 timeout=60)
        frozen_at = max(e.at for e in frozen_claims.values())
        again = {j: JobEvent.objects.filter(job_id=j.pk, to_state="leased", epoch__gt=frozen_claims[j].epoch)
                 .order_by("id").first() for j in held}
        late = max(e.at for e in again.values()) - frozen_at
        last_again = max(e.id for e in again.values())
        backlog_before = JobEvent.objects.filter(job_id__in=[j.pk for j in backlog], to_state="leased",
                                                 id__lt=last_again).count()
        print(f"\nfrozen worker's {HELD} jobs claimed again {late.total_seconds():.2f} s after its claim "
              f"(lease {LEASE} s); backlog jobs claimed before the last of them: {backlog_before} of {BACKLOG}")
        # Within the lease and 2 s of the freeze, or 2 s of the healthy workers running if they
        # were not yet when the lease ran out.
        due = max(frozen_at + timedelta(seconds=LEASE), running_at)
        assert max(e.at for e in again.values()) <= due + timedelta(seconds=2), (late, running_at - frozen_at)
        assert backlog_before < BACKLOG // 2  # ahead of most of the backlog queued after them
    finally:
        os.killpg(frozen.pid, signal.SIGKILL)
        frozen.wait(timeout=10)
        if healthy is not None:
            healthy.kill_all()
