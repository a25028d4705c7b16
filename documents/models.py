"""A job's document: what was accepted with it and where it is kept, one row per job that has one.

The queue's job row holds the work; this row, committed in the same transaction (``documents.accept``),
holds the document the work reads. A job of pasted text, or of a kind that takes no document, has none.
"""

from __future__ import annotations

from django.db import models

from jobs.models import Job


class Document(models.Model):
    """Immutable: written once with its job, never changed after acceptance."""

    job = models.OneToOneField(Job, primary_key=True, on_delete=models.CASCADE, related_name="document")
    name = models.CharField(max_length=255, help_text="Storage name of the accepted document.")
    original_name = models.CharField(max_length=255, blank=True, help_text="The sent file's name.")
    content_type = models.CharField(max_length=100, blank=True)
    size = models.PositiveBigIntegerField()
    sha256 = models.CharField(max_length=64)

    def __str__(self) -> str:
        return f"{self.original_name or 'document'} (job {self.job_id})"


def of(job: Job) -> Document | None:
    """The job's document, or None: a job without one has no row (the reverse one-to-one raises)."""
    try:
        return job.document
    except Document.DoesNotExist:
        return None


def original_name(job: Job) -> str:
    """The name the job's document was sent under; "" without a document (pasted text)."""
    document = of(job)
    return document.original_name if document is not None else ""
