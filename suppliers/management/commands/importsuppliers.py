"""``manage.py importsuppliers FILE --tenant SLUG``: the accounting system's suppliers into a tenant's register."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from accounts.models import Tenant
from jobs.clock import queue_clock
from suppliers import imports, services


class Command(BaseCommand):
    help = ("Import a CSV of suppliers (header: name, tax_ids, ibans, currency, usual_min, usual_max) into a "
            "tenant's supplier register. A file with an error changes nothing; each bad line is named.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", type=Path)
        parser.add_argument("--tenant", required=True, help="Tenant slug, e.g. acme.")

    def handle(self, *args: Any, file: Path, tenant: str, **options: Any) -> None:
        found = Tenant.objects.filter(slug=tenant).first()
        if found is None:
            raise CommandError(f"no tenant {tenant!r}")
        try:
            content = file.read_bytes()
        except OSError as exc:
            raise CommandError(f"cannot read {file}: {exc.strerror}") from None
        try:
            rows = imports.parse(content)
            done = services.import_rows(tenant_id=found.pk, rows=rows, by=services.By(name="importsuppliers"),
                                        now=queue_clock.now())
        except imports.ImportRefused as exc:
            raise CommandError("nothing was imported:\n" + "\n".join(exc.errors)) from None
        self.stdout.write(f"Imported {len(rows)} suppliers into {tenant}: {done.created} new, {done.updated} updated.")
