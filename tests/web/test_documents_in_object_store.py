"""Documents in an S3-compatible object store (SeaweedFS on loopback, tests/objectstore.py):
stored once under the same names, page images visible whole or not at all, served from the
store, and an unreachable store refused with 503 at acceptance and deferred in a worker."""

from __future__ import annotations

import os
import socket
import subprocess
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from documents import acceptance, handling
from documents import store as document_store
from documents.store import Upload
from jobs.context import JobContext
from jobs.kinds import JobDeferred
from jobs.models import Job
from tests.conftest import PYTHON, ROOT, claim_first, drive_to

from .conftest import review_document

PDF = (Path(__file__).resolve().parent.parent / "corpus" / "multilingual" / "de" / "06-twopage.pdf").read_bytes()
TEXT = b"Supplier: Initech\nTotal: EUR 10.00\n"
PNG = b"\x89PNG\r\n\x1a\n"


def accept(user, clock, key: str, content: bytes = TEXT) -> Job:
    return acceptance.accept(scope_id=user.tenant_id, user_id=user.pk, kind="webtest.echo", payload={},
                             operation_key=key, now=clock.now(), offered_only=False,
                             document=Upload(content, "invoice.txt", "text/plain")).job


def closed_endpoint() -> str:
    """An address where nothing listens: a store that is down."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}"


def test_a_document_is_one_object_named_as_on_disk_and_never_rewritten(object_store, alice, clock, media_root):
    job = accept(alice, clock, "k-1")
    assert job.document.name == f"{alice.tenant_id}/{job.document.sha256[:2]}/{job.document.sha256}"
    assert object_store.keys(object_store.prefix) == {job.document.name: TEXT}
    assert not Path(media_root).exists()  # nothing on this host's disk
    assert document_store.read(job.document.name) == TEXT
    first = document_store.modified(job.document.name)

    again = accept(alice, clock, "k-2")  # the same bytes: the same object, touched, not put again
    assert again.document.name == job.document.name
    assert object_store.keys(object_store.prefix) == {job.document.name: TEXT}
    assert document_store.modified(job.document.name) >= first
    assert not document_store.object_storage().put_once(job.document.name, b"other bytes")
    assert document_store.read(job.document.name) == TEXT


def test_page_images_are_visible_only_once_their_manifest_is_put(object_store, alice, clock):
    job = accept(alice, clock, "k-1")
    objects = document_store.object_storage()
    # A set a crash cut short: its images without the manifest are no pages at all.
    objects.put_once(f"{job.document.name}.pages/1.png", PNG + b"half")
    assert document_store.page_images(job.document.name) == []
    assert document_store.open_page_image(job.document.name, 1) is None

    assert document_store.store_page_images(job.document.name, [(PNG + b"one", 10, 20), (PNG + b"two", 30, 40)])
    assert [(p.number, p.width, p.height) for p in document_store.page_images(job.document.name)] == [(1, 10, 20),
                                                                                                 (2, 30, 40)]
    assert not document_store.store_page_images(job.document.name, [(PNG + b"new", 1, 1)])  # written once
    with document_store.open_page_image(job.document.name, 2) as image:
        assert image.read() == PNG + b"two"

    document_store.delete(job.document.name)
    assert object_store.keys(object_store.prefix) == {}


def test_a_review_keeps_its_pages_in_the_store_and_the_web_serves_them_from_there(object_store, alice, browser_client,
                                                                                   media_root):
    job = review_document(alice, PDF, "Rechnung 06.pdf")
    kept = object_store.keys(object_store.prefix)
    name = job.document.name
    assert sorted(kept) == sorted([name, f"{name}.pages/1.png", f"{name}.pages/2.png",
                                   f"{name}.pages/pages.json"])
    assert not Path(media_root).exists()

    client = browser_client(alice)
    page = client.get(f"/jobs/{job.pk}/pages/2.png")
    assert page.status_code == 200 and page["Content-Type"] == "image/png"
    assert b"".join(page.streaming_content) == kept[f"{job.document.name}.pages/2.png"]
    download = client.get(f"/jobs/{job.pk}/document")
    assert download.status_code == 200 and download["Content-Length"] == str(len(PDF))
    assert download["Content-Disposition"].startswith("attachment")
    assert b"".join(download.streaming_content) == PDF

    document_store.delete(job.document.name)
    assert client.get(f"/jobs/{job.pk}/document").status_code == 404
    assert client.get(f"/jobs/{job.pk}/pages/1.png").status_code == 404


def test_an_upload_while_the_store_is_down_is_refused_with_503_and_nothing_is_committed(
        seaweed, settings, alice, api_client):
    seaweed.use(settings, "t-down", endpoint=closed_endpoint())
    response = api_client(alice).post("/jobs", {"kind": "webtest.echo", "document": _file(TEXT)},
                                      headers={"Idempotency-Key": "down-1"})
    assert response.status_code == 503, response.content
    assert response.json()["error"] == "store_unavailable"
    assert response["Retry-After"] == str(document_store.STORE_RETRY_SECONDS)
    assert not Job.objects.exists()


def test_submitting_a_failed_job_again_while_the_store_is_down_answers_503_and_makes_nothing(
        seaweed, object_store, settings, alice, clock, api_client):
    dead = drive_to(accept(alice, clock, "k-1"), "dead", now=clock.now())
    seaweed.use(settings, object_store.prefix, endpoint=closed_endpoint())
    response = api_client(alice).post(f"/jobs/{dead.pk}/again", {"idempotency_key": "again-1"})
    assert response.status_code == 503 and response.json()["error"] == "store_unavailable"
    assert list(Job.objects.values_list("pk", flat=True)) == [dead.pk]


def test_a_worker_that_cannot_reach_the_store_defers_the_job_without_spending_its_attempt(
        seaweed, object_store, settings, alice, clock):
    job = accept(alice, clock, "k-1")
    seaweed.use(settings, object_store.prefix, endpoint=closed_endpoint())
    claim = claim_first(job, now=clock.now(), worker="cut")
    ctx = JobContext(claim, clock=clock)
    with pytest.raises(JobDeferred) as deferred:
        handling.read(ctx)
    assert deferred.value.until == clock.now() + timedelta(seconds=document_store.retry_seconds())
    with pytest.raises(JobDeferred):
        handling.pages_kept(ctx)
    with pytest.raises(JobDeferred):
        handling.keep_pages(ctx, [(b"\x89PNG", 1, 1)])


def test_a_missing_object_is_a_missing_document_not_an_outage(object_store, alice, clock):
    job = accept(alice, clock, "k-1")
    document_store.delete(job.document.name)
    with pytest.raises(FileNotFoundError):
        document_store.read(job.document.name)
    assert document_store.open_document(job.document.name) is None


@pytest.mark.parametrize(("change", "says"), [
    ({"STORE": "ftp"}, "DOCUMENTS_STORE must be"),
    ({"BUCKET": ""}, "DOCUMENTS_S3_BUCKET"),
    ({"BUCKET": "Has_Capitals"}, "DOCUMENTS_S3_BUCKET"),
    ({"ENDPOINT": "s3.example.com"}, "DOCUMENTS_S3_ENDPOINT"),
    ({"ENDPOINT": "https://s3.example.com/bucket/path"}, "DOCUMENTS_S3_ENDPOINT"),
    ({"SECRET_KEY": ""}, "go together"),
    ({"ADDRESSING": "sideways"}, "DOCUMENTS_S3_ADDRESSING"),
    ({"ENCRYPTION": "rot13"}, "DOCUMENTS_S3_ENCRYPTION"),
    ({"KMS_KEY_ID": "key-1"}, "needs DOCUMENTS_S3_ENCRYPTION=aws:kms"),
    ({"CONNECT_TIMEOUT": "0"}, "DOCUMENTS_S3_CONNECT_TIMEOUT"),
    ({"READ_TIMEOUT": "soon"}, "DOCUMENTS_S3_READ_TIMEOUT"),
    ({"RETRY_SECONDS": "-1"}, "DOCUMENTS_RETRY_SECONDS"),
])
def test_object_store_settings_are_checked_at_start_up(settings, change, says):
    settings.DOCUMENTS = {**_GOOD, **change}
    with pytest.raises(ImproperlyConfigured, match=says):
        document_store.check_settings()


def test_a_process_with_a_bad_object_store_setting_does_not_start():
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOCUMENTS_")}
    done = subprocess.run([PYTHON, "manage.py", "check"], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={**env, "DEBUG": "1", "DOCUMENTS_STORE": "s3", "DOCUMENTS_S3_BUCKET": "docs",
                               "DOCUMENTS_S3_ADDRESSING": "sideways"})
    assert done.returncode != 0
    assert "DOCUMENTS_S3_ADDRESSING must be path, virtual or auto, not 'sideways'" in done.stderr


def test_good_object_store_settings_and_the_default_pass(settings):
    settings.DOCUMENTS = dict(_GOOD)
    document_store.check_settings()
    settings.DOCUMENTS = {**_GOOD, "ENCRYPTION": "aws:kms", "KMS_KEY_ID": "arn:aws:kms:eu-west-1:1:key/2"}
    document_store.check_settings()
    settings.DOCUMENTS = {"STORE": "filesystem"}
    document_store.check_settings()


def test_documents_and_page_images_are_encrypted_at_rest_when_the_setting_asks(seaweed, settings, alice, clock):
    secret = b"Supplier: Initech\nIBAN: DE89 3704 0044 0532 0130 00 (encrypted at rest)\n"
    seaweed.use(settings, "t-sse", object_parameters={"ServerSideEncryption": "AES256"})
    job = accept(alice, clock, "k-sse", secret)
    assert document_store.store_page_images(job.document.name, [(PNG + b"page one, at rest", 1, 1)])
    client = seaweed.client()
    for key in (job.document.name, f"{job.document.name}.pages/1.png", f"{job.document.name}.pages/pages.json"):
        assert client.head_object(Bucket="docket-test", Key=f"t-sse/{key}")["ServerSideEncryption"] == "AES256"
    assert document_store.read(job.document.name) == secret
    on_disk = b"".join(p.read_bytes() for p in seaweed.data.rglob("*") if p.is_file())
    assert secret not in on_disk and b"page one, at rest" not in on_disk
    document_store.delete(job.document.name)


_GOOD = {"STORE": "s3", "ENDPOINT": "http://127.0.0.1:8333", "BUCKET": "docket-documents", "PREFIX": "",
         "ACCESS_KEY": "AK", "SECRET_KEY": "SK", "REGION": "eu-west-1", "ADDRESSING": "path", "ENCRYPTION": "",
         "KMS_KEY_ID": "", "CONNECT_TIMEOUT": "3", "READ_TIMEOUT": "10", "RETRY_SECONDS": "10"}


def _file(content: bytes):
    from django.core.files.uploadedfile import SimpleUploadedFile

    return SimpleUploadedFile("invoice.txt", content, content_type="text/plain")
