"""A job's document on staff's job list and page (``jobs.admin.kind_triage.JobInput``): its name in
the list and the search, its metadata, the scope's other jobs of the same file, its download and
its page images. Registered for the site by ``DocumentsConfig.ready()``."""

from __future__ import annotations

from django.db.models import CharField, Expression, Q, QuerySet, Value
from django.db.models.functions import Coalesce
from django.utils.html import format_html

from jobs.admin.kind_triage import Opened
from jobs.models import Job

from . import store
from .models import of


class StoredDocuments:
    def name(self) -> Expression:
        return Coalesce("document__original_name", Value(""), output_field=CharField())

    def search(self, term: str) -> Q | None:
        return Q(document__original_name__icontains=term)

    def has(self, job: Job) -> bool:
        return of(job) is not None

    def summary(self, job: Job) -> str:
        document = of(job)
        if document is None:
            return "—"
        return format_html("{} ({}, {} bytes)<br>SHA-256 <code>{}</code>", document.original_name or "document",
                           document.content_type or "unknown type", f"{document.size:,}", document.sha256)

    def same(self, job: Job) -> QuerySet[Job] | None:
        document = of(job)
        if document is None:
            return None
        return Job.objects.filter(document__sha256=document.sha256)

    def open(self, job: Job) -> Opened | None:
        document = of(job)
        stored = store.open_document(document.name) if document is not None else None
        if document is None or stored is None:
            return None
        return Opened(stored[0], stored[1], store.download_type(document.content_type),
                      store.download_filename(document.original_name))

    def open_page(self, job: Job, number: int) -> Opened | None:
        document = of(job)
        image = store.open_page_image(document.name, number) if document is not None else None
        return Opened(image, None, store.PAGE_MEDIA_TYPE) if image is not None else None


STORED_DOCUMENTS = StoredDocuments()
