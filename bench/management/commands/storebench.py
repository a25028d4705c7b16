"""``manage.py storebench``: documents accepted per second and the review drain, files against an object store."""

from __future__ import annotations

import argparse
import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from bench import storebench


class Command(BaseCommand):
    help = ("Accept N documents and drain them through real `runworkers --burst` processes, once with the "
            "documents under MEDIA_ROOT and once in an S3-compatible object store (the one DOCUMENTS_STORE=s3 "
            "names, or SeaweedFS on loopback), on throwaway SQLite databases. Prints the figures.")

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--documents", type=int, default=200, help="documents per store (default 200)")
        parser.add_argument("--size", type=int, default=32 * 1024, help="bytes per document (default 32 KB)")
        parser.add_argument("--processes", type=int, default=2, help="runworkers processes (default 2)")
        parser.add_argument("--kind", choices=storebench.KINDS, default="document_review",
                            help="the kind each document is accepted for (default document_review)")
        parser.add_argument("--json", action="store_true", dest="as_json", help="also print the figures as JSON")
        parser.add_argument("--role-args", help="(internal) accept documents in this process, as JSON")

    def handle(self, *args: Any, documents: int, size: int, processes: int, kind: str, as_json: bool,
               role_args: str | None, **options: Any) -> None:
        if role_args:
            self.stdout.write(json.dumps(storebench.accept(**json.loads(role_args))))
            return
        if documents < 1 or size < 1 or processes < 1:
            raise CommandError("--documents, --size and --processes must be at least 1")
        try:
            figures = storebench.run(documents=documents, size=size, processes=processes, kind=kind,
                                     out=self.stdout.write)
        except RuntimeError as exc:
            raise CommandError(str(exc)) from None
        if as_json:
            self.stdout.write(json.dumps(figures))
