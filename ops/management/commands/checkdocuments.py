"""``manage.py checkdocuments``: job rows without their document, stored files without a row."""

from __future__ import annotations

import argparse
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from documents import store as document_store
from ops import documents

SHOWN = 50  # names listed of each kind; the counts are whole
JOBS_SHOWN = 10  # job ids listed for one missing document


class Command(BaseCommand):
    help = ("List job rows whose document is not in the document store, and stored files no job row names. "
            "Exits 1 when a row's document is missing.")

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--all", action="store_true", help=f"list every name (default: the first {SHOWN})")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            found = documents.check()
        except document_store.StoreUnavailable as exc:
            raise CommandError(f"the document store cannot be reached: {exc}") from None
        shown = None if options["all"] else SHOWN
        self.stdout.write(f"{found.rows} job row(s) with a document, {found.stored} stored file(s).")
        self.stdout.write(f"Rows without their document: {len(found.missing)} document(s)")
        for name, jobs in list(found.missing.items())[:shown]:
            more = len(jobs) - JOBS_SHOWN
            self.stdout.write(f"  missing {name}  jobs {', '.join(map(str, jobs[:JOBS_SHOWN]))}"
                              + (f" and {more} more" if more > 0 else ""))
        self.stdout.write(f"Stored files without a row: {len(found.unreferenced)} "
                          "(retention's sweep removes them an hour after they were written)")
        for name in found.unreferenced[:shown]:
            self.stdout.write(f"  unreferenced {name}")
        if found.missing:
            raise CommandError(f"{len(found.missing)} document(s) named by job rows are not in the store", returncode=1)
