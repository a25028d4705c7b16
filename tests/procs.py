"""Child processes for tests that need real OS processes on a real database.

Run as ``python -m tests.procs <command> [args]`` with DATABASE_URL pointing at the test
database (tests/conftest.py's ``child_env()``).
"""

from __future__ import annotations

import os
import sys
import time

import django


def claim_all(worker: str, start_at: str) -> None:
    """Claim until the queue is empty, completing each job; print 'job epoch' per claim."""
    from django.db import connection

    from jobs import queue
    from jobs.clock import system_clock

    # Start together with the sibling process, so the two really race.
    while time.time() < float(start_at):
        time.sleep(0.001)
    while (c := queue.claim(now=system_clock.now(), worker=worker)) is not None:
        queue.complete(job_id=c.job_id, epoch=c.epoch, result={"by": worker}, now=system_clock.now())
        print(c.job_id, c.epoch, flush=True)
    connection.close()


def accept_once(key: str, start_at: str, tenant_id: str, user_id: str) -> None:
    """Accept one job with the given key; print the job id and whether it was created."""
    from jobs import queue
    from jobs.clock import system_clock

    while time.time() < float(start_at):
        time.sleep(0.001)
    acceptance = queue.accept(tenant_id=int(tenant_id), user_id=int(user_id), kind="diagnostic.noop",
                              payload={}, operation_key=key, now=system_clock.now(), offered_only=False)
    print(acceptance.job.pk, acceptance.created, flush=True)


if __name__ == "__main__":
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "jobsite.settings")
    django.setup()
    command, *args = sys.argv[1:]
    {"claim_all": claim_all, "accept_once": accept_once}[command](*args)
