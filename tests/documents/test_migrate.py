"""A database migrated before the documents left the job row keeps every job's document: the
migration copies the five columns into ``documents_document`` (only for the jobs that had a
document) before the queue's migration drops them, and going back puts them back."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.db.migrations.loader import MigrationLoader

BEFORE = [("jobs", "0012_job_scope"), ("documents", None)]
COPY, DROP = ("documents", "0001_initial"), ("jobs", "0013_job_document_moved_out")
SHA = "b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9"


def migrate(targets):
    """Migrate to ``targets``; the models as the database then has them."""
    MigrationExecutor(connection).migrate(targets)
    loader = MigrationExecutor(connection).loader
    applied = [key for key in loader.applied_migrations if key in loader.graph.nodes]
    return loader.project_state(applied).apps


def latest():
    executor = MigrationExecutor(connection)
    return executor.loader.graph.leaf_nodes()


@pytest.mark.django_db(transaction=True)  # the schema moves: SQLite's editor runs outside a transaction
def test_each_jobs_document_is_copied_out_of_the_job_row_and_back(alice):
    try:
        old = migrate(BEFORE)
        Job = old.get_model("jobs", "Job")
        now = datetime(2026, 1, 5, tzinfo=UTC)
        common = {"scope_id": alice.tenant_id, "submitted_by_id": alice.pk, "kind": "diagnostic.read",
                  "request_fingerprint": "f", "state": "queued", "available_at": now,
                  "deadline": now + timedelta(minutes=5), "created_at": now, "updated_at": now}
        with_document = Job.objects.create(
            **common, operation_key="k1", document=f"{alice.tenant_id}/b9/{SHA}", document_name="hello.txt",
            document_type="text/plain", document_size=11, document_sha256=SHA)
        pasted = Job.objects.create(**common, operation_key="k2", payload={"text": "Supplier: ACME"})

        new = migrate(latest())
        Document = new.get_model("documents", "Document")
        assert list(Document.objects.values("job_id", "name", "original_name", "content_type", "size", "sha256")) \
            == [{"job_id": with_document.pk, "name": f"{alice.tenant_id}/b9/{SHA}", "original_name": "hello.txt",
                 "content_type": "text/plain", "size": 11, "sha256": SHA}]
        assert not Document.objects.filter(job_id=pasted.pk).exists()
        assert {c.name for c in connection.introspection.get_table_description(connection.cursor(), "jobs_job")} \
            .isdisjoint({"document", "document_name", "document_type", "document_size", "document_sha256"})

        old = migrate(BEFORE)
        rows = old.get_model("jobs", "Job").objects.order_by("pk").values_list(
            "document", "document_name", "document_type", "document_size", "document_sha256")
        assert list(rows) == [(f"{alice.tenant_id}/b9/{SHA}", "hello.txt", "text/plain", 11, SHA),
                              ("", "", "", None, "")]
        assert "documents_document" not in connection.introspection.table_names()
    finally:
        migrate(latest())


def test_the_copy_runs_before_the_columns_are_dropped_though_the_queue_never_names_documents():
    loader = MigrationLoader(None)
    assert COPY in {parent.key for parent in loader.graph.node_map[DROP].parents}
    assert "documents" not in {app for app, _ in loader.get_migration(*DROP).dependencies}
