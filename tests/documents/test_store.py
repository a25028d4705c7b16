"""Accepted documents are stored once per tenant: nothing one tenant sends can be observed by another."""

from __future__ import annotations

import pytest

from documents import acceptance
from documents import store as document_store
from documents.models import Document
from documents.rules import DocumentRules
from documents.store import Upload
from jobs.kinds import Kind

INVOICE = b"Supplier: Initech\nTotal: EUR 10.00\n"


@pytest.fixture(autouse=True)
def _echo_kind(register_kind):
    register_kind(Kind(name="test.document", handler=lambda ctx: {}, diagnostic=True),
                  documents=DocumentRules(max_bytes=4096))


def upload(clock, user, key: str) -> Document:
    return acceptance.accept(scope_id=user.tenant_id, user_id=user.pk, kind="test.document", payload={},
                             operation_key=key, now=clock.now(), offered_only=False,
                             document=Upload(INVOICE, "invoice.txt", "text/plain")).job.document


def test_the_same_bytes_from_two_tenants_are_two_files(clock, alice, bob):
    mine = upload(clock, alice, "a-1")
    theirs_path = document_store.path(f"{bob.tenant_id}/{mine.sha256[:2]}/{mine.sha256}")
    assert not theirs_path.exists()  # alice's upload left nothing where bob's would go

    theirs = upload(clock, bob, "b-1")

    assert mine.sha256 == theirs.sha256
    assert mine.name != theirs.name
    assert mine.name.startswith(f"{alice.tenant_id}/") and theirs.name.startswith(f"{bob.tenant_id}/")
    assert document_store.path(theirs.name) == theirs_path
    assert document_store.read(mine.name) == document_store.read(theirs.name) == INVOICE


def test_one_tenant_storing_the_same_bytes_twice_keeps_one_file(clock, alice, make_member):
    colleague = make_member("acme")
    first = upload(clock, alice, "a-1")
    second = upload(clock, colleague, "c-1")
    assert first.name == second.name
    assert sum(1 for p in document_store.path("").rglob("*") if p.is_file()) == 1
