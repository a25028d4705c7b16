"""Fixtures for the web tests: API and browser clients for members, jobs in each state."""

from __future__ import annotations

import itertools

import pytest
from django.test import Client

from jobs import kinds, queue, tokens
from tests.conftest import claim_first

_keys = itertools.count(1)


def _echo(ctx):
    return {"echo": ctx.payload}


# A diagnostic kind that takes text and small documents, so the web tests do not depend on
# the agent app's document_review kind.
ECHO = kinds.Kind(
    name="webtest.echo",
    handler=_echo,
    payload_schema={"type": "object", "properties": {"text": {"type": "string", "maxLength": 4000}},
                    "additionalProperties": False},
    max_payload_bytes=8 * 1024,
    accepts_document=True,
    max_document_bytes=4 * 1024,
    diagnostic=True,
    description="Echoes its payload; for the web tests.",
)


@pytest.fixture(autouse=True)
def _web_settings(settings):
    settings.JOBS = {**settings.JOBS, "DIAGNOSTIC_KINDS": True}


@pytest.fixture(autouse=True)
def echo_kind(register_kind):
    """Every web test may submit ``webtest.echo``; it is gone again after each test."""
    return register_kind(ECHO)


@pytest.fixture
def api_client():
    """A client that speaks as API clients do: a bearer token, no CSRF token, no session."""

    def make(user) -> Client:
        return Client(headers={"Authorization": f"Bearer {tokens.issue(user)}"}, enforce_csrf_checks=True)

    return make


@pytest.fixture
def browser_client():
    """A logged-in browser: session cookie, HTML Accept header, CSRF enforced."""

    def make(user) -> Client:
        client = Client(headers={"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"}, enforce_csrf_checks=True)
        client.force_login(user)
        return client

    return make


@pytest.fixture
def completed_job(accept, clock):
    """Accept a job as alice, then claim and complete it with ``result``."""

    def make(result: dict, **kwargs):
        job = accept(**kwargs)
        claim = claim_first(job, now=clock.now(), worker="test")
        assert queue.complete(job_id=job.pk, epoch=claim.epoch, result=result, now=clock.now())
        job.refresh_from_db()
        return job

    return make


def key() -> str:
    return f"key-{next(_keys)}"


_earlier = itertools.count(1)


def review_result(*, supplier="Nordlicht Bürobedarf GmbH", number="INV-2026-0142", iban_status="present",
                  readable=True) -> dict:
    """A document_review result of the shape agent.workflow.result makes."""
    present = lambda value: {"status": "present", "value": value, "detail": ""}  # noqa: E731
    fields = {
        "supplier_name": present(supplier), "vat_id": present("DE136695976"), "invoice_number": present(number),
        "invoice_date": present("2026-03-14"), "currency": present("EUR"), "total_amount": present("1234.50"),
        "iban": present("DE89 3704 0044 0532 0130 00"),
    }
    if iban_status == "malformed":
        fields["iban"] = {"status": "malformed", "value": "DE00 1234", "detail": "not a valid IBAN: checksum"}
    if not readable:
        fields = {name: {"status": "missing", "value": None, "detail": "no text"} for name in fields}
    draft = "Review of the invoice (1 page)\n"
    if not readable or iban_status != "present":
        draft += "\nTo ask the supplier (ready to paste into your email):\nPlease send a corrected invoice."
    return {"fields": fields, "draft": draft, "steps": [], "warnings": [], "pages": 1, "readable": readable}


@pytest.fixture
def reviewed(clock, alice):
    """A document_review job of ``user`` (alice) for an uploaded text document, completed with
    ``result`` and the kind's own summary of it, as a worker completes one."""

    def make(result: dict, *, name: str = "invoice.txt", user=None, batch: str = ""):
        from datetime import timedelta

        from jobs.documents import Upload

        user = user or alice
        now = clock.now() - timedelta(seconds=next(_earlier))  # older than any other queued job: claimed first
        job = queue.accept(tenant_id=user.tenant_id, user_id=user.pk, kind="document_review", payload={},
                           operation_key=f"reviewed-{next(_keys)}", now=now, batch=batch,
                           document=Upload(f"Invoice {name}".encode(), name, "text/plain")).job
        claim = claim_first(job, now=clock.now(), worker="test")
        summary = kinds.get("document_review").summarize(result)
        assert queue.complete(job_id=job.pk, epoch=claim.epoch, result=result, now=clock.now(), summary=summary)
        job.refresh_from_db()
        return job

    return make
