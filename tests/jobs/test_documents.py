"""Accepted documents are stored once per tenant: nothing one tenant sends can be observed by another."""

from __future__ import annotations

import pytest

from jobs import document_store, queue
from jobs.document_store import Upload
from jobs.models import Job

INVOICE = b"Supplier: Initech\nTotal: EUR 10.00\n"


@pytest.fixture(autouse=True)
def _echo_kind(register_kind):
    from jobs.kinds import Kind

    register_kind(Kind(name="test.document", handler=lambda ctx: {}, accepts_document=True,
                       max_document_bytes=4096, diagnostic=True))


def upload(clock, user, key: str) -> Job:
    return queue.accept(scope_id=user.tenant_id, user_id=user.pk, kind="test.document", payload={},
                        operation_key=key, now=clock.now(), offered_only=False,
                        document=Upload(INVOICE, "invoice.txt", "text/plain")).job


def test_the_same_bytes_from_two_tenants_are_two_files(clock, alice, bob):
    mine = upload(clock, alice, "a-1")
    theirs_path = document_store.path(f"{bob.tenant_id}/{mine.document_sha256[:2]}/{mine.document_sha256}")
    assert not theirs_path.exists()  # alice's upload left nothing where bob's would go

    theirs = upload(clock, bob, "b-1")

    assert mine.document_sha256 == theirs.document_sha256
    assert mine.document != theirs.document
    assert mine.document.startswith(f"{alice.tenant_id}/") and theirs.document.startswith(f"{bob.tenant_id}/")
    assert document_store.path(theirs.document) == theirs_path
    assert document_store.read(mine.document) == document_store.read(theirs.document) == INVOICE


def test_one_tenant_storing_the_same_bytes_twice_keeps_one_file(clock, alice, make_member):
    colleague = make_member("acme")
    first = upload(clock, alice, "a-1")
    second = upload(clock, colleague, "c-1")
    assert first.document == second.document
    assert sum(1 for p in document_store.path("").rglob("*") if p.is_file()) == 1
