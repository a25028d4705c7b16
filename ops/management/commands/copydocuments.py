"""``manage.py copydocuments --out FOLDER`` / ``--in FOLDER``: back up, restore or move the documents."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from documents import store as document_store
from ops import documents


class Command(BaseCommand):
    help = ("Copy every stored document and page image out of the document store into FOLDER (--out), "
            "or from FOLDER into the store (--in). Nothing is overwritten on either side.")

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        way = parser.add_mutually_exclusive_group(required=True)
        way.add_argument("--out", type=Path, metavar="FOLDER", help="copy the store into FOLDER (a backup)")
        way.add_argument("--in", dest="into", type=Path, metavar="FOLDER",
                         help="copy FOLDER into the store (a restore, or a move from MEDIA_ROOT)")

    def handle(self, *args: Any, out: Path | None, into: Path | None, **options: Any) -> None:
        say = self.stdout.write if options["verbosity"] > 1 else _quiet
        try:
            if out is not None:
                out.mkdir(parents=True, exist_ok=True)
                done = documents.copy_out(out.absolute(), say=say)
                where = f"to {out}"
            elif into is not None:
                if not into.is_dir():
                    raise CommandError(f"{into} is not a folder")
                done = documents.copy_in(into.absolute(), say=say)
                where = f"from {into}"
            else:
                raise CommandError("say --out FOLDER or --in FOLDER")
        except document_store.StoreUnavailable as exc:
            raise CommandError(f"the document store cannot be reached: {exc}") from None
        self.stdout.write(f"Copied {done.copied} file(s) ({done.bytes} bytes) {where}; "
                          f"{done.present} already there, left as they were.")


def _quiet(line: str) -> None:
    """Names are only written from verbosity 2."""
