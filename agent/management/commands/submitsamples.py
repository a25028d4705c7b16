from django.core.management.base import BaseCommand, CommandError

from agent import samples
from jobs import queue
from jobs.clock import queue_clock
from jobs.document_store import Upload
from jobs.errors import AcceptanceError
from jobs.models import User

SUBMITTED = [samples.CLEAN_PDF, samples.MISSING_FIELDS_PDF, samples.BAD_IBAN_PDF, samples.SCANNED_PDF,
             samples.PLAIN_TEXT, samples.DOCX]
REFUSED = [samples.TOO_MANY_PAGES_PDF]
BATCH = "sample-invoices"


class Command(BaseCommand):
    help = ("Submit the sample invoices as document_review jobs for USERNAME, as one batch (for the demo); "
            "idempotent: a second run finds the same jobs.")

    def add_arguments(self, parser):
        parser.add_argument("username")

    def handle(self, *args, username: str, **options):
        user = User.objects.filter(username=username).first()
        if user is None or user.tenant_id is None:
            raise CommandError(f"no member named {username!r}")
        for path in SUBMITTED + REFUSED:
            try:
                accepted = queue.accept(
                    tenant_id=user.tenant_id, user_id=user.pk, kind="document_review", payload={},
                    operation_key=f"sample-{path.name}", now=queue_clock.now(), batch=BATCH,
                    document=Upload(path.read_bytes(), path.name, "application/octet-stream"),
                )
            except AcceptanceError as exc:
                self.stdout.write(f"  {path.name:<30} refused: {exc.code}: {exc.message}")
                continue
            self.stdout.write(f"  {path.name:<30} job {accepted.job.pk} ({'new' if accepted.created else 'existing'})")
        self.stdout.write(f"  the batch's page: /batches/{BATCH}")
