"""Fixtures for the register's tests: reviews run in-process as a worker would, documents marked handled."""

from __future__ import annotations

import itertools
from io import StringIO

import pytest
from django.contrib.auth.models import Permission
from django.core.management import call_command
from django.test import Client

from agent.inbox import work
from agent.review import workflow
from agent.review.planner import LocalPlanner
from agent.samples.make_samples import invoice_lines
from documents import acceptance
from documents.store import Upload
from jobs import kinds, queue
from jobs.context import JobContext
from tests.conftest import claim_first

_keys = itertools.count(1)
NORDLICHT_IBAN = "DE89 3704 0044 0532 0130 00"
OTHER_IBAN = "GB82 WEST 1234 5698 7654 32"


def text_invoice(**changes) -> bytes:
    """The sample invoice (Nordlicht Bürobedarf GmbH, DE136695976) as a text file, changed as asked."""
    return ("\n".join(invoice_lines(**changes)) + "\n").encode()


@pytest.fixture
def browser(db):
    """A browser's client: it asks for HTML, so a refusal comes back as the page with its errors."""
    return Client(headers={"Accept": "text/html"})


def may_change_register(user):
    user.user_permissions.add(Permission.objects.get(codename="change_supplier", content_type__app_label="suppliers"))
    return type(user).objects.get(pk=user.pk)  # the permission cache starts afresh


@pytest.fixture
def reviewed(clock, alice):
    """Accept and run the real review of ``content`` as ``user`` (alice), completed as a worker would."""

    def reviewed_(content: bytes, *, user=None, name: str | None = None):
        user = user or alice
        clock.advance(seconds=1)
        pdf = content.startswith(b"%PDF")
        job = acceptance.accept(scope_id=user.tenant_id, user_id=user.pk, kind="document_review", payload={},
                                operation_key=f"register-{next(_keys)}", now=clock.now(),
                                document=Upload(content, name or ("invoice.pdf" if pdf else "invoice.txt"),
                                           "application/pdf" if pdf else "text/plain")).job
        claim = claim_first(job, now=clock.now())
        result = workflow.run(JobContext(claim, clock=clock), planner=LocalPlanner())
        summary = kinds.get("document_review").summarize(result)
        assert queue.complete(job_id=job.pk, epoch=claim.epoch, result=result, now=clock.now(), summary=summary)
        job.refresh_from_db()
        return job

    return reviewed_


@pytest.fixture
def handled(clock):
    """Mark a reviewed job handled, as its tenant's member (accepting what findings stand with
    ``reason``: without one, a blocking finding refuses it)."""

    def handled_(job, user, reason=None):
        return work.change(tenant_id=job.scope_id, job_id=job.pk, by_id=user.pk, now=clock.now(),
                           state=work.State.HANDLED.value, reason=reason)

    return handled_


def codes(job) -> list[str]:
    return [f["code"] for f in job.result["findings"] if isinstance(f, dict)]


@pytest.fixture
def import_csv(tmp_path):
    """Import ``text`` as a CSV file with the command; its output."""

    def import_(text: str, tenant: str = "acme") -> str:
        path, out = tmp_path / "suppliers.csv", StringIO()
        path.write_text(text, encoding="utf-8")
        call_command("importsuppliers", str(path), "--tenant", tenant, stdout=out)
        return out.getvalue()

    return import_
