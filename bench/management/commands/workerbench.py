"""``manage.py workerbench``: real ``runworkers --burst`` processes against a bare driver loop."""

from __future__ import annotations

import argparse
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from bench import workerbench


class Command(BaseCommand):
    help = (
        "Drain N no-op jobs through real `runworkers --burst` processes (1, 2, 4) and through a bare "
        "driver loop of the same statements, huey (SQLite) and Procrastinate (PostgreSQL) at the same process "
        "counts; print jobs/s, ratios and whether each target is met, on SQLite and on PostgreSQL (throwaway "
        "databases). Then the same jobs over many tenants, with tenants taking turns and first come, first served. "
        "Then N no-op tasks through Django's Tasks framework, "
        "under the queue's backend and under django-tasks-db, at CONN_MAX_AGE 0 and 60: rates and ratios."
    )

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--jobs", type=int, default=3000)
        parser.add_argument("--processes", default="1,2,4", help="Comma-separated process counts.")
        parser.add_argument("--postgres", default="postgresql://postgres@127.0.0.1:5432/postgres",
                            help="A PostgreSQL server URL to make throwaway databases on ('' to skip).")
        parser.add_argument("--tasks", type=int, default=3000,
                            help="No-op tasks to drain through Django's Tasks framework, under the queue's backend "
                                 "and under django-tasks-db (0 to skip).")
        parser.add_argument("--task-rounds", type=int, default=2, help="Best of this many drains per task setting.")
        parser.add_argument("--rounds", type=int, default=3,
                            help="Interleaved rounds of the job drains (ours, the bare loop, the peer); best of each.")
        parser.add_argument("--tenants", type=int, default=1000,
                            help="Drain the jobs again spread over this many tenants, with tenants taking turns and "
                                 "first come, first served (0 to skip).")
        parser.add_argument("--tenant-jobs", type=int, default=10000,
                            help="Jobs per fairness drain: two rates this close are compared on drains long enough "
                                 "that a pause of the machine does not decide it.")
        parser.add_argument("--baseline", default="",
                            help="Another checkout's directory (e.g. a git worktree of the code before a change): "
                                 "its runworkers drains the same SQLite jobs too, interleaved: a before/after in one "
                                 "run.")
        parser.add_argument("--no-peers", action="store_true",
                            help="Skip huey (SQLite) and Procrastinate (PostgreSQL).")

    def handle(self, *args: Any, jobs: int, processes: str, postgres: str, tasks: int, task_rounds: int, rounds: int,
               no_peers: bool, tenants: int, tenant_jobs: int, baseline: str,
               **options: Any) -> None:
        try:
            counts = [int(p) for p in processes.split(",")]
        except ValueError:
            raise CommandError("--processes takes numbers, e.g. 1,2,4") from None
        workerbench.run(jobs=jobs, counts=counts, postgres_url=postgres or None, out=self.stdout.write, tasks=tasks,
                        task_rounds=task_rounds, rounds=rounds, peers=not no_peers, tenants=tenants,
                        tenant_jobs=tenant_jobs, baseline=baseline or None)
