"""The review, driven in-process as a worker would: claim, run the handler, complete."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from agent import samples
from agent.models import Checkpoint
from agent.reading.fields import ALSO_READ
from agent.review import workflow
from agent.review.planner import LocalPlanner
from documents import rules
from documents.errors import UnsupportedDocument
from jobs import kinds, queue
from jobs.errors import InvalidPayload, PayloadTooLarge
from jobs.models import Job

from .conftest import drive

FIELDS = ("supplier_name", "vat_id", "invoice_number", "invoice_date", "currency", "total_amount", "iban")


def statuses(job: Job) -> dict[str, str]:
    """The required fields' statuses (the fields read only when printed may be missing)."""
    return {name: f["status"] for name, f in Job.objects.get(pk=job.pk).result["fields"].items()
            if name not in ALSO_READ}


def test_the_kind_is_registered_from_the_agent_app_with_its_limits_pages_and_triage():
    from agent import review_pages
    from jobs.admin import kind_triage
    from web import kind_pages

    kind = kinds.offered("document_review")
    assert kind is not None and rules.accepts_document(kind.name) and rules.max_bytes(kind.name) == 5 * 1024 * 1024
    assert kind_pages.of(kind.name) is review_pages.PAGES and kind_triage.of(kind.name) is review_pages.TRIAGE


def test_the_invoice_date_is_checked_against_the_jobs_clock_not_the_machines(review_job, claim, clock, pdf):
    clock.advance(days=-90)  # the logical clock now stands before the invoice's 14 March 2026
    review_job(pdf)
    ctx = claim()
    result = workflow.run(ctx, planner=LocalPlanner())
    date_field = result["fields"]["invoice_date"]
    assert date_field["status"] == "malformed" and "future" in date_field["detail"]


def test_a_clean_invoice_pdf_completes_with_every_field_present(review_job, claim, pdf):
    job = review_job(pdf)
    ctx = claim()
    result = workflow.run(ctx, planner=LocalPlanner())
    assert queue.complete(job_id=ctx.job_id, epoch=ctx.epoch, result=result, now=ctx.now())

    job.refresh_from_db()
    assert job.state == "completed"
    saved = job.result
    assert set(saved) == {"fields", "also_read", "draft", "steps", "warnings", "pages", "page_sizes", "readable",
                          "reading", "findings", "ocr"}
    assert set(saved["fields"]) == set(FIELDS)
    assert all(f["status"] == "present" for f in saved["fields"].values()), saved["fields"]
    # Each value says where it was read: the page and the printed line.
    assert all(f["evidence"]["source"] == "text" and f["evidence"]["page"] == 1 and f["evidence"]["text"]
               for f in (saved["fields"][name] for name in FIELDS)), saved["fields"]
    assert "DE89 3704 0044 0532 0130 00" in saved["fields"]["iban"]["evidence"]["text"]
    assert (saved["reading"], saved["findings"]) == ("text", [])
    assert saved["fields"]["iban"]["value"] == "DE89 3704 0044 0532 0130 00"
    assert saved["fields"]["vat_id"]["value"] == "DE136695976"
    assert saved["fields"]["invoice_date"]["value"] == "2026-03-14"
    assert saved["fields"]["total_amount"]["value"] == "1333.87"
    assert saved["fields"]["currency"]["value"] == "EUR"
    assert [s["tool"] for s in saved["steps"]] == ["extract", "validate", "draft"]
    assert all(set(s) == {"tool", "at"} and datetime.fromisoformat(s["at"]) for s in saved["steps"])
    assert saved["pages"] == 1 and saved["warnings"] == []
    assert "nothing to ask the supplier" in saved["draft"]
    assert job.document.sha256 and job.document.content_type == "application/pdf"


def test_the_checkpoint_is_written_after_every_step(review_job, claim, pdf, after_step):
    review_job(pdf)
    ctx = claim()
    seen = []
    after_step(lambda n: seen.append((n, Checkpoint.objects.get(job_id=ctx.job_id).next_step)))
    workflow.run(ctx, planner=LocalPlanner())
    assert seen == [(1, "validate"), (2, "draft"), (3, "")]
    progress = workflow.progress(ctx.job_id)
    assert progress["step_index"] == 3 and progress["next_step"] == ""
    assert set(progress) >= {"step_index", "next_step", "latest_output", "updated_at"}


def test_progress_shows_staff_neither_the_text_nor_its_layout(review_job, claim, pdf, after_step):
    review_job(pdf)
    ctx = claim()
    shown = []
    after_step(lambda n: shown.append(workflow.progress(ctx.job_id)))
    workflow.run(ctx, planner=LocalPlanner())
    after_extract = shown[0]["latest_output"]
    assert after_extract["text"].endswith("characters, not shown)")
    assert after_extract["layout"] in (None, "(the page layout, not shown)")
    assert "Nordlicht" not in str(after_extract["layout"])


def test_missing_fields_are_reported_and_asked_for(review_job, claim):
    job = review_job(samples.MISSING_FIELDS_PDF)
    drive(claim(), LocalPlanner())
    got = statuses(job)
    assert got["vat_id"] == got["invoice_date"] == got["iban"] == "missing"
    assert got["supplier_name"] == got["invoice_number"] == got["total_amount"] == "present"
    draft = Job.objects.get(pk=job.pk).result["draft"]
    assert "4 of 7 required fields found and valid, 3 not found by the review." in draft
    assert ("Not found by the review (look on the document before asking the supplier):\n- VAT / tax id\n"
            "- Invoice date\n- IBAN / bank account\n") in draft
    # The part for the supplier names the invoice and asks for each field not found, as a request.
    supplier = draft.split("To ask the supplier (ready to paste into your email):\n")[1]
    assert supplier.startswith("Regarding your invoice INV-2026-0142: ")
    assert "- Could you confirm the IBAN of the account we should pay into?" in supplier
    assert "- Could you confirm your VAT id, with its country prefix?" in supplier
    assert "not on the invoice" not in draft


def test_a_bad_iban_is_malformed_by_its_mod_97_checksum(review_job, claim):
    job = review_job(samples.BAD_IBAN_PDF)
    drive(claim(), LocalPlanner())
    iban = Job.objects.get(pk=job.pk).result["fields"]["iban"]
    assert iban["status"] == "malformed" and "check digits" in iban["detail"]
    draft = Job.objects.get(pk=job.pk).result["draft"]
    supplier = draft.split("To ask the supplier (ready to paste into your email):\n")[1]
    assert supplier.startswith("Regarding your invoice INV-2026-0142 of 14 March 2026: ")
    # The supplier is told which IBAN failed and why, and asked for the right one: one question only.
    assert ("- Could you check the IBAN of the account we should pay into? We read DE89 3704 0044 0532 0130 01 "
            "(not a valid IBAN: the check digits do not match).") in supplier
    assert supplier.count("\n- ") == 1


def test_a_scanned_pdf_without_text_completes_with_a_warning(review_job, claim, no_ocr):
    job = review_job(samples.SCANNED_PDF)
    drive(claim(), LocalPlanner())
    saved = Job.objects.get(pk=job.pk).result
    assert set(statuses(job).values()) == {"missing"}
    assert any("no text layer" in w for w in saved["warnings"])
    assert any("OCR is not installed" in w for w in saved["warnings"])
    # Nothing could be read, so the note asks for a readable copy; it says nothing about single
    # fields of an invoice nobody could read.
    draft = saved["draft"]
    assert "No text could be read" in draft and "Found:" not in draft and "Not found" not in draft
    assert "- Please send us a readable copy of the invoice, preferably a PDF with selectable text" in draft
    assert not [label for label in ("VAT", "IBAN", "invoice number", "total") if label in draft]


@pytest.mark.parametrize("sample, number", [(samples.PLAIN_TEXT, "INV-2026-0143"), (samples.DOCX, "INV-2026-0144")])
def test_plain_text_and_docx_documents_are_reviewed(review_job, claim, sample, number):
    job = review_job(sample)
    drive(claim(), LocalPlanner())
    saved = Job.objects.get(pk=job.pk).result
    assert saved["fields"]["invoice_number"]["value"] == number
    assert set(statuses(job).values()) == {"present"}


def test_inline_text_is_reviewed_without_a_document(review_job, claim):
    job = review_job(text=samples.PLAIN_TEXT.read_text())
    drive(claim(), LocalPlanner())
    assert set(statuses(job).values()) == {"present"}
    assert Job.objects.get(pk=job.pk).result["draft"].startswith("Review of the pasted text")


def test_a_job_with_neither_text_nor_document_is_refused_at_acceptance(review_job):
    with pytest.raises(InvalidPayload, match="send a document"):
        review_job()
    assert not Job.objects.exists()


def test_a_job_with_both_text_and_document_is_refused_at_acceptance(review_job):
    with pytest.raises(InvalidPayload, match="not both"):
        review_job(samples.CLEAN_PDF, text="Invoice 1")
    assert not Job.objects.exists()


# --- acceptance -----------------------------------------------------------------------


def test_an_oversized_document_is_refused_at_acceptance(review_job):
    with pytest.raises(PayloadTooLarge, match="larger than"):
        review_job(samples.oversized_pdf())
    assert not Job.objects.exists()


def test_a_document_over_the_page_limit_is_refused_at_acceptance(review_job):
    with pytest.raises(PayloadTooLarge, match="25 pages; at most 20"):
        review_job(samples.TOO_MANY_PAGES_PDF)


@pytest.mark.parametrize("content, message", [
    (b"GIF89a" + b"\x00" * 100, "unsupported document type"),
    (b"%PDF-1.7\nthis is not really a pdf", "cannot be read"),
    (b"PK\x03\x04 not a zip", "unsupported document type"),
])
def test_unreadable_or_unsupported_documents_are_refused(review_job, content, message):
    with pytest.raises(UnsupportedDocument, match=message):
        review_job(content)


def test_the_client_media_type_is_not_trusted(review_job, pdf):
    job = review_job(pdf)  # sent as application/octet-stream
    assert job.document.content_type == "application/pdf"


def test_inline_text_must_fit_the_schema(review_job):
    with pytest.raises(InvalidPayload):
        review_job(text="")
    with pytest.raises(PayloadTooLarge):
        review_job(text="x" * 500_000)


def test_the_stored_document_never_changes_after_acceptance(review_job, pdf, settings):
    import hashlib

    from documents import store as document_store

    job = review_job(pdf)
    assert hashlib.sha256(document_store.read(job.document.name)).hexdigest() == job.document.sha256 == \
        hashlib.sha256(pdf.read_bytes()).hexdigest()


def test_a_stale_worker_cannot_write_a_checkpoint(review_job, claim, clock, pdf):
    review_job(pdf)
    stale = claim(lease=timedelta(seconds=10))
    clock.advance(11)
    queue.recover(now=clock.now())
    fresh = claim(worker="w2")
    with pytest.raises(queue.StaleEpoch):
        workflow.run(stale, planner=LocalPlanner())
    assert not Checkpoint.objects.exists()
    assert drive(fresh, LocalPlanner()).state == "completed"
    assert {s["epoch"] for s in Checkpoint.objects.get().steps} == {fresh.epoch}


# --- under the real worker loop ---------------------------------------------------------


def test_the_worker_loop_runs_a_review_to_completion(review_job, clock, pdf, monkeypatch):
    from jobs.worker import Worker

    monkeypatch.delenv("AGENT_PLANNER", raising=False)
    job = review_job(pdf)
    assert Worker(clock=clock, burst=True).run_one() is True
    job.refresh_from_db()
    assert job.state == "completed"
    assert set(job.result) == {"fields", "also_read", "draft", "steps", "warnings", "pages", "page_sizes",
                               "readable", "reading", "findings", "ocr"}
    # The worker kept an image of each page beside the stored document, once.
    from documents import store as document_store

    assert len(document_store.page_images(job.document.name)) == job.result["pages"] == len(job.result["page_sizes"])


@pytest.mark.parametrize("sample, outcome, text, needs_action", [
    (samples.CLEAN_PDF, "ok", "OK", False),
    (samples.BAD_IBAN_PDF, "to_correct", "1 to correct", True),
    (samples.MISSING_FIELDS_PDF, "to_correct", "3 not found", True),
    (samples.SCANNED_PDF, "unreadable", "unreadable", True),
])
def test_the_worker_stores_the_reviews_outcome_with_the_completion(review_job, clock, monkeypatch, sample, outcome,
                                                                   text, needs_action, no_ocr):
    from jobs.worker import Worker

    monkeypatch.delenv("AGENT_PLANNER", raising=False)
    job = review_job(sample)
    Worker(clock=clock, burst=True).run_one()
    job.refresh_from_db()
    assert (job.state, job.outcome, job.outcome_text, job.needs_action) == ("completed", outcome, text, needs_action)
    # What Alice searches by: the supplier and the invoice number (none on a scan read without OCR).
    expected = "" if outcome == "unreadable" else "Nordlicht Bürobedarf GmbH · INV-2026-0142"
    assert job.reference == expected


def test_the_worker_loop_records_a_refusal_with_its_code(review_job, clock, pdf, monkeypatch):
    from agent.review.steps import Proposal
    from jobs.worker import Worker

    class Emailer:
        def propose(self, ctx, view, save):
            return Proposal("send_email", {"job_id": view.job_id})

    monkeypatch.setattr("agent.review.planner.from_env", Emailer)
    job = review_job(pdf)
    Worker(clock=clock, burst=True).run_one()
    job.refresh_from_db()
    assert job.state == "dead"
    assert job.last_error.startswith("tool_not_allowed: proposal rejected at step 1: tool 'send_email' is not allowed")


def test_a_worker_asked_to_stop_stops_between_steps_and_keeps_the_checkpoint(review_job, claim, pdf, after_step):
    review_job(pdf)
    ctx = claim()
    after_step(lambda n: ctx.stop.set())
    with pytest.raises(kinds.JobFailed, match="stopped between steps"):
        workflow.run(ctx, planner=LocalPlanner())
    assert Checkpoint.objects.get().step_index == 1


def test_submitsamples_submits_the_samples_once_and_reports_the_refused_one(alice):
    from io import StringIO

    from django.core.management import call_command

    out = StringIO()
    call_command("submitsamples", "alice", stdout=out)
    call_command("submitsamples", "alice", stdout=out)
    assert Job.objects.filter(kind="document_review", scope=alice.tenant).count() == 6
    said = out.getvalue()
    assert said.count("invoice-too-many-pages.pdf") == 2 and "not sent: The document has 25 pages" in said
    assert "too_large" not in said and "already sent: http://" in said  # words and absolute links, never codes
    assert "the batch's page: http://" in said
