"""A job and its document commit together or not at all, and a retry is answered as before the
document had a row of its own: the same bytes under the same key get the same job, other bytes a
conflict; a kind with no document rules takes none."""

from __future__ import annotations

import hashlib
import json
import re

import pytest

from documents import acceptance
from documents.errors import UnsupportedDocument
from documents.models import Document
from documents.rules import DocumentRules
from documents.store import Upload
from jobs import queue
from jobs.errors import OperationKeyConflict
from jobs.kinds import Kind
from jobs.models import Job
from jobs.queue import KeptInput

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _kinds(register_kind):
    register_kind(Kind(name="test.document", handler=lambda ctx: {}, diagnostic=True),
                  documents=DocumentRules(max_bytes=4096))
    register_kind(Kind(name="test.payload", handler=lambda ctx: {}, diagnostic=True))


def send(clock, user, content: bytes = b"Invoice 1", *, key: str = "k-1", kind: str = "test.document"):
    return acceptance.accept(scope_id=user.tenant_id, user_id=user.pk, kind=kind, payload={}, operation_key=key,
                             now=clock.now(), offered_only=False, document=Upload(content, "a.txt", "text/plain"))


def test_the_job_and_its_document_row_commit_together(clock, alice):
    accepted = send(clock, alice)
    document = Document.objects.get(job=accepted.job)
    assert (document.original_name, document.content_type, document.size) == ("a.txt", "text/plain", 9)
    assert document.name == f"{alice.tenant_id}/{document.sha256[:2]}/{document.sha256}"


def test_a_failing_attach_leaves_no_job(clock, alice):
    def attach(job: Job) -> None:
        raise RuntimeError("the input's row could not be written")

    with pytest.raises(RuntimeError):
        queue.accept(scope_id=alice.tenant_id, user_id=alice.pk, kind="test.payload", payload={}, operation_key="k",
                     now=clock.now(), offered_only=False, keep_input=lambda kind: KeptInput("d" * 64, attach))
    assert not Job.objects.exists()


def test_a_retry_gets_its_job_and_attaches_nothing_more(clock, alice):
    first = send(clock, alice)
    again = send(clock, alice)
    assert (again.created, again.job.pk) == (False, first.job.pk)
    assert Document.objects.count() == 1


def test_other_bytes_under_the_same_key_are_a_conflict(clock, alice):
    send(clock, alice)
    with pytest.raises(OperationKeyConflict):
        send(clock, alice, b"Invoice 2")
    with pytest.raises(OperationKeyConflict):  # and no document at all, as pasted text is
        acceptance.accept(scope_id=alice.tenant_id, user_id=alice.pk, kind="test.document", payload={},
                          operation_key="k-1", now=clock.now(), offered_only=False)
    assert (Job.objects.count(), Document.objects.count()) == (1, 1)


def test_the_fingerprint_folds_the_digest_as_the_document_column_did(clock, alice):
    """A job accepted before the move keeps answering its retries: the digest is in the same place."""
    accepted = send(clock, alice)
    digest = accepted.job.document.sha256
    assert accepted.job.request_fingerprint == hashlib.sha256(json.dumps(["test.document", "{}", digest]).encode()) \
        .hexdigest()
    same = queue.accept(scope_id=alice.tenant_id, user_id=alice.pk, kind="test.document", payload={},
                        operation_key="k-1", now=clock.now(), offered_only=False,
                        keep_input=lambda kind: KeptInput(digest, lambda job: None))
    assert (same.created, same.job.pk) == (False, accepted.job.pk)


def test_a_kind_without_document_rules_takes_no_document(clock, alice):
    with pytest.raises(UnsupportedDocument, match=re.escape("kind 'test.payload' takes no document")) as refused:
        send(clock, alice, kind="test.payload")
    assert (refused.value.code, refused.value.status, refused.value.field) == ("unsupported_media_type", 415,
                                                                                "document")
    assert not Job.objects.exists()
