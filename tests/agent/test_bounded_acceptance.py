"""Acceptance is bounded by construction: cheap counts refuse known-expensive structure before
it is paid for, and the structural check runs in a child process bounded in CPU, memory and
wall-clock time, so no upload holds a web worker for more than a few seconds whatever its
bytes make the reader do. Past the bound the document is refused with a clear code.
"""

from __future__ import annotations

import resource
import time

import pytest

from documents import store as document_store
from documents.errors import DocumentNotChecked, DocumentTooComplex
from documents.rules import DocumentRules
from documents.store import Upload
from jobs import bounded
from jobs.kinds import Kind
from jobs.models import Job
from tests import hostile
from tests.hostile import pdf_to_rebuild


def cpu_seconds() -> float:
    """CPU used by this process and its waited-for children (the checks' forks) so far."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@pytest.mark.parametrize("build, message", [
    (pdf_to_rebuild, r"the PDF has 2\d\d,\d{3} objects; at most 50,000 are accepted"),
    (hostile.pdf_long_xref, "the PDF has 255,000 objects; at most 50,000 are accepted"),
    (lambda: hostile.pdf_long_xref(declare=False), "the PDF has 255,000 objects; at most 50,000 are accepted"),
    (hostile.pdf_prev_chain, "the PDF has 38,326 cross-reference sections .*; at most 1,000 are accepted"),
    (hostile.docx_hidden_entries, "the DOCX has 50,126 parts; at most 1,000 are accepted"),
], ids=["xref to rebuild", "255k-entry xref", "255k-entry xref, /Size 4", "/Prev chain", "understated DOCX"])
def test_structure_known_to_be_expensive_is_refused_before_it_is_paid_for(review_job, media_root, build, message):
    document = build()
    started = cpu_seconds()
    with pytest.raises(DocumentTooComplex, match=message) as refused:
        review_job(document)
    spent = cpu_seconds() - started
    print(f"\n{len(document):,} bytes refused in {spent * 1000:.0f} ms of CPU (web process and its check)")
    assert spent < 1.0
    assert (refused.value.code, refused.value.status) == ("too_complex", 413)
    assert not Job.objects.exists() and not list(media_root.rglob("*.*"))


def checking(check) -> tuple[Kind, DocumentRules]:
    """A kind whose document check is ``check``, and its document rules."""
    return Kind(name="test.checked", handler=lambda ctx: {}), DocumentRules(check=check)


def spin(**kwargs):
    while True:
        pass


def hog(**kwargs):
    held = [bytearray(1024 * 1024) for _ in range(4096)]
    return str(len(held))


def stall(**kwargs):
    time.sleep(60)
    return "text/plain"


def test_a_pdf_the_counts_miss_is_stopped_by_the_bound_and_refused_as_too_complex(review_job, media_root):
    """39,000 cross-reference streams with an escaped type name: within every counted limit,
    2.5 s of CPU in pypdf, accepted before; now killed at the check's bound."""
    document = hostile.pdf_xref_stream_chain()
    assert len(document) <= document_store.CHECK_MEMORY_MB * 1024 * 1024 and len(document) < 5 * 1024 * 1024
    started, cpu = time.monotonic(), cpu_seconds()
    with pytest.raises(DocumentTooComplex, match="the document is too complex to check") as refused:
        review_job(document)
    seconds, spent = time.monotonic() - started, cpu_seconds() - cpu
    print(f"\n{len(document):,} bytes refused by the bound after {seconds:.2f} s ({spent:.2f} s of CPU)")
    assert seconds < document_store.CHECK_WALL_SECONDS + 1.0
    assert spent < document_store.CHECK_CPU_SECONDS + 0.5
    assert refused.value.code == "too_complex" and not Job.objects.exists()


@pytest.fixture
def quick_bound(monkeypatch):
    monkeypatch.setattr(document_store, "CHECK_CPU_SECONDS", 1)
    monkeypatch.setattr(document_store, "CHECK_WALL_SECONDS", 1.5)
    monkeypatch.setattr(document_store, "CHECK_MEMORY_MB", 64)


@pytest.mark.parametrize("check, why, wall", [(spin, "cpu", 10.0), (hog, "memory", 10.0), (stall, "wall", 1.5)])
def test_a_check_past_its_bound_is_killed_and_the_document_refused_as_too_complex(quick_bound, monkeypatch, check,
                                                                                   why, wall, caplog):
    """A reader the counts do not know about: the bound, not the reader, ends it."""
    monkeypatch.setattr(document_store, "CHECK_WALL_SECONDS", wall)  # the CPU bound first, however busy the machine
    started = time.monotonic()
    with pytest.raises(DocumentTooComplex, match="the document is too complex to check: reading its structure "
                                                 "takes more than the 1 s of processor time") as refused:
        document_store.bounded_check(Upload(b"x", "x.pdf", "application/pdf"), *checking(check))
    assert time.monotonic() - started < wall + 1.0
    assert refused.value.code == "too_complex"
    assert f"over its {why} bound" in caplog.text


def test_a_check_that_runs_out_of_its_batchs_time_is_refused_to_be_sent_again_alone(quick_bound):
    upload, checked = Upload(b"x", "x.pdf", "application/pdf"), checking(stall)
    with document_store.checks_end_by(time.monotonic() + 0.5), pytest.raises(DocumentNotChecked) as refused:
        document_store.bounded_check(upload, *checked)
    assert (refused.value.code, refused.value.message) == ("not_checked_in_time",
                                                           "not checked in time: send it again on its own")
    with document_store.checks_end_by(time.monotonic() + 0.1), pytest.raises(DocumentNotChecked):
        document_store.bounded_check(upload, *checking(lambda **kwargs: 1 / 0))  # never started


def test_the_check_answers_from_its_child_what_it_would_have_in_process():
    assert bounded.run(lambda: "application/pdf", cpu_seconds=1, memory_mb=64, wall=5) == "application/pdf"
    with pytest.raises(DocumentTooComplex, match="the PDF has 2"):  # a refusal travels whole, field and all
        document_store.bounded_check(Upload(pdf_to_rebuild(), "x.pdf", "application/pdf"),
                                     *checking(__import__("agent.reading.documents").reading.documents.check_document))
