"""``manage.py prunejobs [--older-than 30d]``: retention, in bounded batches (run it daily)."""

from __future__ import annotations

import argparse
from datetime import timedelta
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from jobs.clock import queue_clock
from ops import retention, units

RETENTION = "30d"  # the retention docs/operations.md states; --older-than overrides it


class Command(BaseCommand):
    help = ("Delete completed and dead jobs finished longer ago than --older-than, with their events, "
            "checkpoints and documents no other job uses. Unknown jobs are never touched.")

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--older-than", default=RETENTION,
                            help=f"age since the job finished: 30d, 12h (default {RETENTION})")
        parser.add_argument("--batch", type=int, default=500, help="jobs per transaction (default 500)")
        parser.add_argument("--dry-run", action="store_true", help="count what would go; delete nothing")

    def handle(self, *args: Any, older_than: str, batch: int, dry_run: bool, **options: Any) -> None:
        try:
            age = units.parse_duration(older_than, default_unit="d")
            report = retention.prune(older_than=age, now=queue_clock.now(), batch=batch, dry_run=dry_run,
                                     say=self.stdout.write if options["verbosity"] > 1 else _quiet)
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        verb = "Would delete" if dry_run else "Deleted"
        self.stdout.write(f"{verb} {report.jobs} job(s), {report.events} event(s), "
                          + ("" if dry_run else f"{report.checkpoints} checkpoint(s), ")
                          + f"{report.documents} document(s) in {report.batches} batch(es), "
                          f"{report.strays} stray stored file(s) no job names; "
                          f"finished more than {_span(age)} ago. Unknown jobs are kept for staff.")


def _quiet(line: str) -> None:
    """Progress lines are only written from verbosity 2."""


def _span(age: timedelta) -> str:
    """``30 days``, ``12:00:00``: the age as the operator wrote it, not ``30 days, 0:00:00``."""
    return f"{age.days} day(s)" if age.days and not age.seconds and not age.microseconds else str(age)
