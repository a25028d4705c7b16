"""``manage.py loadbench``: the site under a mixed load behind nginx and gunicorn, on SQLite and PostgreSQL."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from bench import loadbench


class Command(BaseCommand):
    help = ("Run the production stack on loopback (nginx, gunicorn, runworkers --processes 2) on a fresh database "
            "and load it for a while: documents uploaded at a steady rate, pollers asking about their jobs once a "
            "second (as many again for the second half), a member browsing the list. Prints the time from upload "
            "to a finished review per kind of document, the pollers' and pages' latency, reviews per minute per "
            "core, peak memory and where a review's time goes, then the targets.")

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--minutes", type=float, default=2.0, help="length of the load on each store (default 2)")
        parser.add_argument("--per-minute", type=float, default=12.0, help="uploads a minute (default 12)")
        parser.add_argument("--pollers", type=int, default=100,
                            help="clients polling once a second; as many more join halfway (default 100)")
        parser.add_argument("--processes", type=int, default=2, help="runworkers processes (default 2)")
        parser.add_argument("--gunicorn-workers", type=int, default=None,
                            help="gunicorn workers (default: deploy/gunicorn.conf.py's, two a core and one)")
        parser.add_argument("--postgres", default="postgresql://postgres@127.0.0.1:5432/postgres",
                            help="a PostgreSQL server to create the run's database on; '' for SQLite only")
        parser.add_argument("--no-sqlite", action="store_true", help="PostgreSQL only")
        parser.add_argument("--warm-ups", type=int, default=loadbench.WARM_UPS,
                            help="one-page documents reviewed before the clock starts, not counted")
        parser.add_argument("--only", nargs="+", choices=sorted(loadbench.SHORT_NAMES), default=None,
                            help="upload only these kinds of document (default: the whole mix)")
        parser.add_argument("--site", type=Path, default=loadbench.ROOT,
                            help="run another checkout's code under the same load (e.g. a worktree of the code before)")
        parser.add_argument("--json", action="store_true", dest="as_json", help="also print the figures as JSON")

    def handle(self, *args: Any, minutes: float, per_minute: float, pollers: int, processes: int,
               gunicorn_workers: int | None, postgres: str, no_sqlite: bool, warm_ups: int, only: list[str] | None,
               site: Path, as_json: bool, **options: Any) -> None:
        if (minutes <= 0 or minutes > 60 or per_minute <= 0 or pollers < 1 or pollers > 500 or processes < 1
                or not 0 <= warm_ups <= 20):
            raise CommandError("--minutes in (0, 60], --per-minute > 0, --pollers in [1, 500], --processes ≥ 1, "
                               "--warm-ups in [0, 20]")
        if not (site / "manage.py").is_file():
            raise CommandError(f"--site {site} holds no manage.py")
        stores = ([None] if not no_sqlite else []) + ([postgres] if postgres else [])
        if not stores:
            raise CommandError("nothing to measure: --no-sqlite and no --postgres")
        reports = []
        for url in stores:
            try:
                report = loadbench.run(database_url=url, seconds=minutes * 60, per_minute=per_minute,
                                       pollers=pollers, processes=processes, gunicorn_workers=gunicorn_workers,
                                       warm_ups=warm_ups, only=only, site=site.resolve(), out=sys.stderr)
            except RuntimeError as exc:
                raise CommandError(str(exc)) from None
            reports.append(report)
            self.stdout.write(loadbench.table(report))
            self.stdout.write("\n".join(["", f"Targets ({loadbench.TARGETS}):", *loadbench.verdicts(report), ""]))
        if as_json:
            self.stdout.write(json.dumps(reports, indent=2))
