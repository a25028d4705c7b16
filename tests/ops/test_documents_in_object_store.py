"""Operations on documents kept in an object store (SeaweedFS on loopback): retention deletes
objects with their rows, the check lists rows without objects and objects without rows, and
the documents are copied out to a folder and back in (a backup and its restore)."""

from __future__ import annotations

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from documents import store as document_store
from ops import retention

pytestmark = pytest.mark.django_db

MONTH = timedelta(days=30)
PNG = b"\x89PNG\r\n\x1a\n"


def stored(in_state, state: str, content: bytes):
    upload = document_store.Upload(content=content, name="invoice.txt", content_type="text/plain")
    job = in_state(state, document=upload)
    assert job.document.name  # read now: the row goes with a pruned job
    return job


def test_retention_deletes_a_pruned_jobs_objects_and_pages_and_keeps_a_shared_one(object_store, in_state, clock,
                                                                                 monkeypatch):
    monkeypatch.setattr(retention, "DOCUMENT_GRACE", timedelta(0))  # object times are the store's: none is old
    orphan = stored(in_state, "dead", b"only this job's invoice")
    assert document_store.store_page_images(orphan.document.name, [(PNG + b"1", 1, 1)])
    shared_old = stored(in_state, "completed", b"shared invoice")
    clock.advance(days=40)
    still_used = stored(in_state, "completed", b"shared invoice")
    object_store.client().put_object(Bucket="docket-test", Key=f"{object_store.prefix}/9/ab/stray", Body=b"x")

    report = retention.prune(older_than=MONTH, now=clock.now())

    assert (report.jobs, report.documents, report.strays) == (2, 1, 1)
    assert set(object_store.keys(object_store.prefix)) == {still_used.document.name} == {shared_old.document.name}


def test_retention_leaves_an_object_stored_within_the_grace(object_store, in_state, clock):
    job = stored(in_state, "completed", b"an invoice re-sent a moment ago")
    clock.advance(days=40)
    report = retention.prune(older_than=MONTH, now=clock.now())
    assert (report.jobs, report.documents) == (1, 0)
    assert set(object_store.keys(object_store.prefix)) == {job.document.name}


def test_the_check_lists_rows_without_objects_and_objects_without_rows(object_store, in_state):
    kept = stored(in_state, "completed", b"kept")
    lost = stored(in_state, "queued", b"lost")
    document_store.delete(lost.document.name)
    object_store.client().put_object(Bucket="docket-test", Key=f"{object_store.prefix}/9/ab/stray", Body=b"x")
    out = StringIO()
    with pytest.raises(CommandError) as failed:
        call_command("checkdocuments", stdout=out)
    assert failed.value.returncode == 1
    text = out.getvalue()
    assert f"missing {lost.document.name}  jobs {lost.pk}" in text
    assert "unreferenced 9/ab/stray" in text
    assert kept.document.name not in text

    document_store.delete_file("9/ab/stray")
    document_store.copy_in(lost.document.name, b"lost")
    out = StringIO()
    call_command("checkdocuments", stdout=out)
    assert "Rows without their document: 0" in out.getvalue() and "without a row: 0" in out.getvalue()


def test_documents_copied_out_and_back_in_are_the_same_objects(object_store, in_state, tmp_path):
    job = stored(in_state, "completed", b"an invoice to keep")
    assert document_store.store_page_images(job.document.name, [(PNG + b"1", 3, 4)])
    before = object_store.keys(object_store.prefix)

    call_command("copydocuments", "--out", str(tmp_path / "backup"), stdout=StringIO())
    assert {p.relative_to(tmp_path / "backup").as_posix(): p.read_bytes()
            for p in (tmp_path / "backup").rglob("*") if p.is_file()} == before
    document_store.delete(job.document.name)
    assert object_store.keys(object_store.prefix) == {}

    out = StringIO()
    call_command("copydocuments", "--in", str(tmp_path / "backup"), stdout=out)
    assert object_store.keys(object_store.prefix) == before
    assert "Copied 3 file(s)" in out.getvalue()
    assert [p.number for p in document_store.page_images(job.document.name)] == [1]
    again = StringIO()
    call_command("copydocuments", "--in", str(tmp_path / "backup"), stdout=again)
    assert "Copied 0 file(s)" in again.getvalue() and "3 already there" in again.getvalue()


def test_documents_move_from_one_hosts_disk_into_the_object_store(seaweed, settings, in_state, tmp_path):
    job = stored(in_state, "completed", b"kept on this host's disk")  # the filesystem, MEDIA_ROOT
    media_root = document_store.path("")
    seaweed.use(settings, "t-moved")
    call_command("copydocuments", "--in", str(media_root), stdout=StringIO())
    assert document_store.read(job.document.name) == b"kept on this host's disk"
