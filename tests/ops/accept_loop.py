"""Accept jobs one at a time and print each id once its row is committed.

``python -m tests.ops.accept_loop TENANT_ID USER_ID`` with DATABASE_URL pointing at the test
database (``tests.conftest.child_env``). Stops after MAX_JOBS or MAX_SECONDS, or when killed.
"""

from __future__ import annotations

import os
import sys
import time

import django

MAX_JOBS = 5000
MAX_SECONDS = 120
PAUSE = 0.005  # between acceptances: a steady load, not a flood on a shared machine


def main(tenant_id: int, user_id: int) -> None:
    from jobs import queue
    from jobs.clock import system_clock

    end = time.monotonic() + MAX_SECONDS
    for n in range(MAX_JOBS):
        if time.monotonic() > end:
            break
        acceptance = queue.accept(scope_id=tenant_id, user_id=user_id, kind="diagnostic.sleep",
                                  payload={"seconds": 0.01}, operation_key=f"load-{os.getpid()}-{n}",
                                  now=system_clock.now(), offered_only=False)
        print(acceptance.job.pk, flush=True)  # after the commit: this job is accepted
        time.sleep(PAUSE)


if __name__ == "__main__":
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "jobsite.settings")
    django.setup()
    main(int(sys.argv[1]), int(sys.argv[2]))
