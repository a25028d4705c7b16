"""``manage.py queuebench``: the queue's claim -> complete path against a bare sqlite3 loop."""

from __future__ import annotations

import argparse
import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from bench import queuebench


class Command(BaseCommand):
    help = (
        "Benchmark the queue on throwaway SQLite files: the project's claim -> complete path "
        "against a bare sqlite3 loop of the same statements, at synchronous=FULL and NORMAL; "
        "one process against two; claim time at two queue depths; what tenants taking turns costs "
        "against a first-in first-out claim. Prints the figures."
    )

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--jobs", type=int, default=5000, help="Jobs to drain per measurement.")
        parser.add_argument("--depths", default="1000,100000", help="Two queue depths for the claim time.")
        parser.add_argument("--rounds", type=int, default=2, help="Best of this many drains per setting.")
        parser.add_argument("--tenants", type=int, default=1000,
                            help="Tenants sharing the queue for the fairness figures.")
        parser.add_argument("--json", action="store_true", dest="as_json", help="Also print the figures as JSON.")
        parser.add_argument("--role", choices=sorted(queuebench.ROLES), help="(internal) run one child role.")
        parser.add_argument("--role-args", default="{}", help="(internal) the role's arguments as JSON.")

    def handle(self, *args: Any, jobs: int, depths: str, rounds: int, tenants: int, as_json: bool, role: str | None,
               role_args: str, **options: Any) -> None:
        if role:
            # A child process of the benchmark: one role on the database its DATABASE_URL names.
            result = queuebench.ROLES[role](**json.loads(role_args))
            self.stdout.write(json.dumps(result or {}))
            return
        try:
            small, large = (int(d) for d in depths.split(","))
        except ValueError:
            raise CommandError("--depths takes two numbers, e.g. 1000,100000") from None
        figures = queuebench.run(jobs=jobs, depths=(small, large), rounds=rounds, tenants=tenants,
                                 out=self.stdout.write)
        if as_json:
            self.stdout.write(json.dumps(figures))
