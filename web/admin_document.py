"""What staff's job page in the admin shows of the product, registered with the queue's admin
when the web app loads (``jobs.admin.kind_triage``): the submitter's own document pane
(``web/job_detail.html#document``, ``web.status.document_pane``) with the admin's URLs, and the
address of the submitters' page of the job."""

from __future__ import annotations

from collections.abc import Callable

from django import forms
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.safestring import SafeString

from jobs.models import Job

from .status import document_pane


class AdminDocumentPane:
    """Its pages one at a time with the boxes the result points at (``static/document.js`` shows
    them in place; ``static/admin-document.css`` lays them out in the admin)."""

    shows_documents = True
    media = forms.Media(css={"all": ["admin-document.css"]}, js=["document.js"])

    def render(self, job: Job, *, page_url: Callable[[int], str], download_url: str,
               requested: str | None) -> SafeString:
        pane = document_pane(job, page_url=page_url, download_url=download_url, requested=requested)
        if pane is None:
            return SafeString("")
        return render_to_string("web/job_detail.html#document", {"document": pane})


def submitter_page(job_id: int) -> str:
    return reverse("job_detail", args=[job_id])
