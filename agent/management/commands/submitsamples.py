from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.urls import reverse

from accounts.models import User
from agent import samples
from documents import acceptance
from documents.store import Upload
from jobs import kinds
from jobs.clock import queue_clock
from jobs.errors import AcceptanceError
from web import refusals

SUBMITTED = [samples.CLEAN_PDF, samples.MISSING_FIELDS_PDF, samples.BAD_IBAN_PDF, samples.SCANNED_PDF,
             samples.PLAIN_TEXT, samples.DOCX]
REFUSED = [samples.TOO_MANY_PAGES_PDF]
BATCH = "sample-invoices"


class Command(BaseCommand):
    help = ("Submit the sample invoices as document_review jobs for USERNAME, as one batch (for the demo); "
            "idempotent: a second run finds the same jobs.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")

    def handle(self, *args: Any, username: str, **options: Any) -> None:
        user = User.objects.filter(username=username).first()
        if user is None or user.tenant_id is None:
            raise CommandError(f"no member named {username!r}")
        kind = kinds.get("document_review")
        for path in SUBMITTED + REFUSED:
            try:
                accepted = acceptance.accept(
                    scope_id=user.tenant_id, user_id=user.pk, kind="document_review", payload={},
                    operation_key=f"sample-{path.name}", now=queue_clock.now(), batch=BATCH,
                    document=Upload(path.read_bytes(), path.name, "application/octet-stream"),
                )
            except AcceptanceError as exc:  # said as the submit form says it, never as its code
                said = refusals.in_words(exc.code, exc.message, exc.field or "", reason=exc.reason, kind=kind,
                                         size=path.stat().st_size)
                self.stdout.write(f"  {path.name:<30} not sent: {said}")
                continue
            url = f"{settings.SITE_URL}{reverse('job_detail', args=[accepted.job.pk])}"
            self.stdout.write(f"  {path.name:<30} {'sent' if accepted.created else 'already sent'}: {url}")
        self.stdout.write(f"  the batch's page: {settings.SITE_URL}{reverse('batch_detail', args=[BATCH])}")
