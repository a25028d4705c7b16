"""``manage.py backupdb PATH``: a consistent copy of the job store, taken while the site runs."""

from __future__ import annotations

import argparse
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from ops.backup import BackupError, backup


class Command(BaseCommand):
    help = ("Copy the database to PATH (a new file) while workers and the web keep running: SQLite "
            "through its online backup API, PostgreSQL with pg_dump --format=custom. Every job "
            "accepted before the copy began is in it. Documents under MEDIA_ROOT are not: copy "
            "them afterwards (see docs/operations.md, Backup and restore).")

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("path", help="the file to write; it must not exist")
        parser.add_argument("--database", default="default", help="the database alias (default: default)")

    def handle(self, *args: Any, path: str, database: str, **options: Any) -> None:
        try:
            made = backup(path, using=database)
        except BackupError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"Backed up {made.jobs} job(s) to {made.path} ({made.size} bytes, {made.store}) "
                          f"as of {made.taken_at:%Y-%m-%d %H:%M:%S} UTC. To restore it, stop the site first: "
                          "see docs/operations.md, Backup and restore.")
