"""PostgreSQL: what sending a batch claim whole costs against the pipeline it replaced.

``queue.claim_many`` sends a batch of picks as one message (``EXECUTE`` calls of the prepared
claim, ``jobs.sql.postgresql.claim_batch``), so the server never waits on a frozen client
while it holds the batch's rows. Before, the picks were pipelined with ``executemany`` inside
``BEGIN``/``COMMIT`` (``pipelined`` below, kept as the baseline). One process alternates the
two, batch by batch, on the same jobs, so both see the machine's load alike; each batch's
jobs are completed with ``complete_many`` between claims. It prints the claim throughput of
each and their ratio. The database is emptied. Run from the project folder:

    DATABASE_URL=postgresql://postgres@127.0.0.1:5432/claimbatch .venv/bin/python bench/claimbatch.py [--batch 32]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path.cwd()))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "jobsite.settings")


def pipelined(binding: dict[str, Any], picks: int, *, fair: bool = True) -> list[Any]:
    """The batch claim as it was: the picks pipelined by ``executemany`` in an open transaction."""
    from jobs.sql import postgresql
    from jobs.writelock import raw_write_transaction

    rows = []
    with raw_write_transaction(explicit=True) as cursor:
        cursor.executemany(postgresql.claim(fair), [binding] * picks, returning=True)
        while True:
            rows.append(cursor.fetchone())
            if not cursor.nextset():
                break
    return rows


def empty_the_queue() -> None:
    """Every job, event, member and tenant deleted, and the dead rows vacuumed away: the last
    round's would slow every claim."""
    from django.db import connection

    from accounts.models import Tenant, User
    from jobs.models import Job, JobEvent

    JobEvent.objects.all().delete()
    Job.objects.all().delete()
    User.objects.all().delete()
    Tenant.objects.all().delete()
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE jobs_job, jobs_jobevent, jobs_tenant")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=4000, help="Jobs per round.")
    parser.add_argument("--batch", type=int, default=32, help="Picks per claim (the worker's prefetch).")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()

    import django

    django.setup()
    from django.db import connection

    from bench.queuebench import fill
    from jobs import queue
    from jobs.clock import system_clock
    from jobs.sql import ClaimParams, postgresql

    if connection.vendor != "postgresql":
        raise SystemExit("set DATABASE_URL to a PostgreSQL database (it is emptied)")
    ways = {"pipelined (before)": pipelined, "one message (now)": postgresql.claim_batch}
    totals = {name: [0.0, 0] for name in ways}
    for _ in range(args.rounds):
        empty_the_queue()
        fill(args.jobs, fifo_index=False)
        turn = 0
        while True:
            name = list(ways)[turn % 2]
            turn += 1
            now = system_clock.now()
            binding = ClaimParams(now=now, expires=now + timedelta(seconds=30), worker="bench",
                                  actor="worker:bench").binding(postgresql.PostgreSQL().time)
            started = time.perf_counter()
            rows = ways[name](binding, args.batch, fair=True)
            totals[name][0] += time.perf_counter() - started
            claimed = [row for row in rows if row is not None and row[2] == "leased"]
            totals[name][1] += len(claimed)
            if not claimed:
                break
            queue.complete_many(completions=[queue.Completion(row[0], row[3], {"ok": True}) for row in claimed],
                                now=system_clock.now())
    rates = {}
    for name, (seconds, jobs) in totals.items():
        rates[name] = jobs / seconds
        print(f"{name:>20}: {jobs} jobs claimed in batches of {args.batch}, {rates[name]:,.0f} jobs/s "
              f"({seconds / jobs * 1e6:.0f} µs a job)")
    print(f"now / before: {rates['one message (now)'] / rates['pipelined (before)']:.2f}")


if __name__ == "__main__":
    main()
