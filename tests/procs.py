"""Child processes for tests that need real OS processes on a real database.

Run as ``python -m tests.procs <command> [args]`` with DATABASE_URL pointing at the test
database (tests/conftest.py's ``child_env()``).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import django


def meet(barrier: str, parties: str) -> None:
    """Connect, then wait for the sibling processes at ``barrier`` (a folder), so they really race."""
    from django.db import connection

    connection.ensure_connection()
    if not barrier:
        return
    Path(barrier, str(os.getpid())).touch()
    deadline = time.monotonic() + 60
    while len(list(Path(barrier).iterdir())) < int(parties) and time.monotonic() < deadline:
        time.sleep(0.0005)


def claim_all(worker: str, barrier: str = "", parties: str = "1") -> None:
    """Claim until the queue is empty, completing each job; print 'job epoch' per claim."""
    from django.db import connection

    from jobs import queue
    from jobs.clock import system_clock

    meet(barrier, parties)
    while (c := queue.claim(now=system_clock.now(), worker=worker)) is not None:
        queue.complete(job_id=c.job_id, epoch=c.epoch, result={"by": worker}, now=system_clock.now())
        print(c.job_id, c.epoch, flush=True)
    connection.close()


def claim_batches(worker: str, barrier: str = "", parties: str = "1", size: str = "8") -> None:
    """Claim up to ``size`` jobs a transaction and complete them as one batch, until the queue
    is empty; print 'job epoch' per claim."""
    from django.db import connection

    from jobs import queue
    from jobs.clock import system_clock

    meet(barrier, parties)
    while claims := queue.claim_many(now=system_clock.now(), worker=worker, limit=int(size)):
        outcomes = queue.complete_many(completions=[queue.Completion(c.job_id, c.epoch, {"by": worker})
                                                    for c in claims], now=system_clock.now())
        assert all(outcomes), outcomes
        for c in claims:
            print(c.job_id, c.epoch, flush=True)
    connection.close()


def accept_once(key: str, barrier: str, parties: str, tenant_id: str, user_id: str) -> None:
    """Accept one job with the given key; print the job id and whether it was created."""
    from jobs import queue
    from jobs.clock import system_clock

    meet(barrier, parties)
    acceptance = queue.accept(scope_id=int(tenant_id), user_id=int(user_id), kind="diagnostic.noop",
                              payload={}, operation_key=key, now=system_clock.now(), offered_only=False)
    print(acceptance.job.pk, acceptance.created, flush=True)


def touch_token(token_id: str, now: str, barrier: str, parties: str) -> None:
    """Record one use of the token at ``now``; print whether this process wrote it."""
    from datetime import datetime

    from accounts import tokens

    meet(barrier, parties)
    print(tokens.touch(int(token_id), now=datetime.fromisoformat(now)), flush=True)


COMMANDS = {"claim_all": claim_all, "claim_batches": claim_batches, "accept_once": accept_once,
            "touch_token": touch_token}


def together(argvs: list[list[str]]) -> None:
    """Each command line in a process of its own, forked from this one once Django is set up
    (no database connection yet: each child opens its own in ``meet``), so that eight racers
    cost one interpreter's start, not eight. Prints each child's output as one JSON list."""
    import contextlib
    import json
    import tempfile
    import traceback

    with contextlib.ExitStack() as files:
        children = []
        for argv in argvs:
            out = files.enter_context(tempfile.TemporaryFile("w+"))
            pid = os.fork()
            if pid == 0:  # the child runs its command and exits: it never returns into this loop
                os.dup2(out.fileno(), 1)
                command, *args = argv
                try:
                    COMMANDS[command](*args)
                    sys.stdout.flush()
                except BaseException:  # noqa: BLE001  whatever it was, the parent sees the traceback and the status
                    traceback.print_exc()
                    os._exit(1)
                os._exit(0)
            children.append((pid, out))
        outputs, failed = [], 0
        for pid, out in children:
            _, status = os.waitpid(pid, 0)
            failed += os.waitstatus_to_exitcode(status) != 0
            out.seek(0)
            outputs.append(out.read())
    print(json.dumps(outputs))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "jobsite.settings")
    django.setup()
    command, *args = sys.argv[1:]
    if command == "together":
        import json

        together(json.loads(args[0]))
    else:
        COMMANDS[command](*args)
