"""``manage.py leaselab --lease 10 --crash before-effect``: the lease experiment, as text or JSON."""

from __future__ import annotations

import argparse
import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from ops import lab


class Command(BaseCommand):
    help = ("Run the lease experiment with the real queue operations on a logical clock, against a "
            "throwaway SQLite database (never the live one), and print the timeline.")

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--lease", type=int, required=True, help="lease in logical seconds, 5 to 30")
        parser.add_argument("--crash", choices=lab.CRASHES, default="none",
                            help="where the first worker stops: none, before-effect, after-marker")
        parser.add_argument("--json", action="store_true", dest="as_json", help="print the timeline as JSON")
        # The child process the command starts for itself; refused on any database but a new file.
        parser.add_argument("--in-throwaway-database", action="store_true", help=argparse.SUPPRESS)

    def handle(self, *args: Any, lease: int, crash: str, as_json: bool, in_throwaway_database: bool,
               **options: Any) -> None:
        try:
            if in_throwaway_database:
                timeline = lab.experiment(lease=lease, crash=crash).as_dict()
            else:
                timeline = lab.run(lease=lease, crash=crash)
        except lab.LabError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(json.dumps(timeline, indent=2) if as_json else lab.as_text(timeline))
