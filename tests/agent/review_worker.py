"""A one-job worker for the kill tests: recover, claim, run the review, complete.

Run as a child process with the test database in DATABASE_URL. It prints one line per
milestone (``claimed <job> <epoch>``, ``checkpoint <n> <tool>``, ``completed``), and with
``--block-after-step N`` it stops after that checkpoint commits, so the test can kill it
between steps. The planner is chosen by the environment, as in production.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from datetime import timedelta


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lease", type=float, default=30)
    parser.add_argument("--block-after-step", type=int, default=0)
    args = parser.parse_args()

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "jobsite.settings")
    import django

    django.setup()
    from agent.review import planner, steps, workflow
    from jobs import queue
    from jobs.clock import SystemClock
    from jobs.context import JobContext

    clock = SystemClock()
    queue.recover(now=clock.now())
    claim = queue.claim(now=clock.now(), worker=f"review-worker-{os.getpid()}", lease=timedelta(seconds=args.lease))
    if claim is None:
        print("nothing to claim", flush=True)
        return 3
    print(f"claimed {claim.job_id} {claim.epoch}", flush=True)

    def after_step(sender: object, *, step: int, **kwargs: object) -> None:
        print(f"checkpoint {step} {steps.SEQUENCE[step - 1]}", flush=True)
        if step == args.block_after_step:
            print("blocking", flush=True)
            time.sleep(3600)

    workflow.step_committed.connect(after_step)
    ctx = JobContext(claim, clock=clock)
    result = workflow.run(ctx, planner=planner.from_env())
    outcome = queue.complete(job_id=claim.job_id, epoch=claim.epoch, result=result, now=clock.now())
    print("completed" if outcome else f"rejected {outcome.reason}", flush=True)
    return 0 if outcome else 1


if __name__ == "__main__":
    sys.exit(main())
