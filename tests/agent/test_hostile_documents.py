"""Hostile documents: refused at acceptance from what they declare, or bounded at extraction.

Acceptance runs in the web process: it must refuse a bomb without unpacking it, in bounded
memory and time, and store nothing. A document whose structure is fine but whose reading
fails (or would be endless) is accepted; extraction then fails it for good, not retried:
the same bytes would fail the same way on every attempt.
"""

from __future__ import annotations

import io
import time
import zipfile

import pytest
from django.test import Client

from accounts import tokens
from agent import samples
from agent.reading import documents
from agent.review.planner import LocalPlanner
from documents.errors import DamagedDocument, DocumentTooComplex, DocumentUnpacksTooLarge, UnsupportedDocument
from jobs.models import Job
from tests import hostile

from .acceptance import MEMORY_BOUND_MB, TIME_BOUND_S, accept_in_a_child, stored_files
from .conftest import drive

# --- acceptance: refused from what the document declares --------------------------------


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("build, limit", [
    (hostile.docx_bomb, "word/document.xml unpacks to 200.0 MB; at most 20 MB per part is accepted"),
    (hostile.docx_empty_runs, "word/document.xml unpacks to 682 times its packed size; at most 200 times"),
], ids=["docx bomb", "three million empty runs"])
def test_a_docx_that_unpacks_too_far_is_refused_at_acceptance_in_bounded_memory_and_time(
        build, limit, alice, tmp_path, media_root):
    report = accept_in_a_child(build(), alice, tmp_path, media_root)
    assert report["outcome"].startswith("refused 413 unpacks_too_large: ")
    assert limit in report["outcome"]
    assert report["peak_mb"] - report["baseline_mb"] < MEMORY_BOUND_MB
    assert report["seconds"] < TIME_BOUND_S
    assert not Job.objects.exists()
    assert stored_files(media_root) == []


@pytest.mark.django_db(transaction=True)
def test_the_acceptance_probe_accepts_and_stores_an_ordinary_invoice(alice, tmp_path, media_root):
    # The same probe, on a document it must accept: its figures measure a real acceptance.
    report = accept_in_a_child(samples.DOCX.read_bytes(), alice, tmp_path, media_root)
    assert report["outcome"] == f"accepted {Job.objects.get().pk}"
    assert len(stored_files(media_root)) == 1


@pytest.mark.parametrize("build, error, message", [
    (hostile.docx_bomb, DocumentUnpacksTooLarge, "unpacks to 200.0 MB"),
    (hostile.docx_empty_runs, DocumentUnpacksTooLarge, "682 times its packed size"),
    (hostile.pdf_xref_bomb, DocumentTooComplex, "at most 50,000 objects"),
    (hostile.pdf_page_tree_bomb, DocumentTooComplex, "structural limit"),
], ids=["docx bomb", "empty runs", "pdf xref bomb", "pdf page tree bomb"])
def test_hostile_structure_is_refused_quickly_and_nothing_is_stored(review_job, media_root, build, error, message):
    document = build()
    started = time.perf_counter()
    with pytest.raises(error, match=message) as refused:
        review_job(document)
    assert time.perf_counter() - started < TIME_BOUND_S
    assert refused.value.status == 413
    assert not Job.objects.exists()
    assert stored_files(media_root) == []


def test_the_http_api_answers_a_docx_bomb_with_413_and_its_code(alice, media_root):
    client = Client(headers={"Authorization": f"Bearer {tokens.issue(alice)}"})
    upload = io.BytesIO(hostile.docx_bomb())
    upload.name = "invoice.docx"
    response = client.post("/jobs", {"kind": "document_review", "idempotency_key": "bomb-1", "document": upload})
    assert response.status_code == 413
    body = response.json()
    assert body["error"] == "unpacks_too_large"
    assert "word/document.xml unpacks to 200.0 MB; at most 20 MB per part" in body["detail"]
    assert not Job.objects.exists() and stored_files(media_root) == []


def docx_with_parts(count: int) -> bytes:
    """A small DOCX of ``count`` parts in all (three of them the package's own)."""
    return hostile.docx(hostile.paragraphs("Invoice no: 1"),
                        extra={f"customXml/item{n}.xml": b"<x/>" for n in range(count - 3)})


def test_a_docx_of_too_many_parts_is_refused(review_job):
    with pytest.raises(DocumentTooComplex, match="the DOCX has 1,001 parts; at most 1,000 are accepted"):
        review_job(docx_with_parts(documents.MAX_DOCX_PARTS + 1))
    review_job(docx_with_parts(documents.MAX_DOCX_PARTS))


def test_a_docx_packed_with_another_method_than_words_is_refused(review_job):
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(docx_with_parts(3))) as source, zipfile.ZipFile(out, "w") as copy:
        for info in source.infolist():
            method = zipfile.ZIP_BZIP2 if info.filename == "word/document.xml" else zipfile.ZIP_DEFLATED
            copy.writestr(info.filename, source.read(info), compress_type=method)
    with pytest.raises(UnsupportedDocument, match="compression method Word does not use") as refused:
        review_job(out.getvalue())
    assert (refused.value.status, refused.value.code) == (415, "unsupported_media_type")


def test_a_docx_naming_a_part_twice_is_refused_as_damaged(review_job):
    out = io.BytesIO(docx_with_parts(3))
    with pytest.warns(UserWarning, match="Duplicate name"), zipfile.ZipFile(out, "a") as archive:
        archive.writestr("word/document.xml", b"<w:document/>")
    with pytest.raises(DamagedDocument, match="names a part twice") as refused:
        review_job(out.getvalue())
    assert (refused.value.status, refused.value.code) == (400, "damaged_document")


def test_a_damaged_pdf_is_refused_at_acceptance_as_damaged(review_job):
    with pytest.raises(DamagedDocument, match="the PDF is damaged and cannot be read; submit a new copy"):
        review_job(b"%PDF-1.7\nthis is not really a pdf")


# --- accepted, then bounded or failed for good at extraction ---------------------------


def test_the_cpu_heavy_pdf_is_accepted_quickly_because_its_structure_is_ordinary(review_job):
    # Acceptance reads no content stream; bounding the minutes pypdf spends on this file's
    # text is the worker's time limit.
    started = time.perf_counter()
    job = review_job(hostile.cpu_heavy_pdf())
    assert time.perf_counter() - started < TIME_BOUND_S
    assert job.document.content_type == documents.PDF and job.document.size < 200_000


def test_the_recursive_pdf_fails_at_extraction_for_good_not_retried(review_job, claim):
    from pypdf import PdfReader

    with pytest.raises(RecursionError):  # what the document does to pypdf, every time
        PdfReader(io.BytesIO(hostile.recursive_pdf())).pages[0].extract_text()
    job = review_job(hostile.recursive_pdf())  # its structure is fine: accepted
    outcome = drive(claim(), LocalPlanner())
    job.refresh_from_db()
    assert outcome.state == Job.State.DEAD == job.state
    assert job.attempts == 1
    assert job.last_error == "damaged_document: the PDF is damaged and cannot be read; submit a new copy"


def test_a_docx_that_understates_its_size_fails_at_extraction_without_unpacking_more(review_job, claim):
    # Its directory declares 64 KB for a part that inflates to 200 MiB: acceptance cannot
    # tell, and extraction stops at the declared size, where the checksum gives it away.
    job = review_job(hostile.docx_understated())
    started = time.perf_counter()
    drive(claim(), LocalPlanner())
    assert time.perf_counter() - started < TIME_BOUND_S
    job.refresh_from_db()
    assert (job.state, job.attempts) == (Job.State.DEAD, 1)
    assert job.last_error == "damaged_document: the DOCX is damaged and cannot be read; submit a new copy"


def test_extraction_refuses_a_bomb_even_when_acceptance_was_bypassed(review_job, claim):
    from documents import store as stored

    job = review_job(samples.DOCX)
    stored.path(job.document.name).write_bytes(hostile.docx_bomb())  # the stored bytes swapped behind acceptance
    started = time.perf_counter()
    drive(claim(), LocalPlanner())
    assert time.perf_counter() - started < TIME_BOUND_S
    job.refresh_from_db()
    assert (job.state, job.attempts) == (Job.State.DEAD, 1)
    assert job.last_error.startswith("unpacks_too_large: word/document.xml unpacks to 200.0 MB")


def test_a_docx_within_every_declared_limit_is_read_only_up_to_the_element_limit(review_job, claim):
    job = review_job(hostile.docx_many_elements())  # 1.5 MB, 15 MB unpacked, 10 to 1: accepted
    started = time.process_time()  # the handler runs in this process: its CPU, whatever the machine's load
    drive(claim(), LocalPlanner())
    assert time.process_time() - started < TIME_BOUND_S
    job.refresh_from_db()
    assert (job.state, job.attempts) == (Job.State.DEAD, 1)
    assert job.last_error == ("too_complex: the DOCX has more than 500,000 XML elements in its text; "
                              "at most 500,000 are read")


def test_a_docx_longer_than_the_page_limit_fails_at_extraction(review_job, claim):
    line = "Delivery note line with some words on it, numbered " + "x" * 20
    job = review_job(hostile.docx(hostile.paragraphs(*[line] * 1_000)))  # 72,000 characters
    drive(claim(), LocalPlanner())
    job.refresh_from_db()
    assert (job.state, job.attempts) == (Job.State.DEAD, 1)
    assert job.last_error.startswith("too_large: the document has more than 60,000 characters, over 20 pages")


def test_a_docx_with_a_document_type_declaration_is_refused_unread():
    # Word never writes a DTD; refusing one refuses every entity expansion trick with it.
    laughs = hostile.docx([]).replace(b"", b"")  # a valid package, then its main part replaced
    body = (b'<?xml version="1.0"?><!DOCTYPE w:document [<!ENTITY a "aaaaaaaaaa">'
            b'<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>'
            b'<w:document xmlns:w="%s"><w:body><w:p><w:r><w:t>&b;</w:t></w:r></w:p></w:body></w:document>'
            % hostile.W_NS.encode())
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(laughs)) as source, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as copy:
        for info in source.infolist():
            copy.writestr(info.filename, body if info.filename == "word/document.xml" else source.read(info))
    with pytest.raises(DamagedDocument, match="the DOCX is damaged"):
        documents.read_text(out.getvalue(), documents.DOCX)
