"""Fixtures for the web tests: API and browser clients for members, jobs in each state."""

from __future__ import annotations

import itertools

import pytest
from django.test import Client

from accounts import tokens
from documents import acceptance
from documents.rules import DocumentRules
from jobs import kinds, queue
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
    diagnostic=True,
    description="Echoes its payload; for the web tests.",
)
ECHO_DOCUMENTS = DocumentRules(max_bytes=4 * 1024)


@pytest.fixture(autouse=True)
def _web_settings(settings):
    settings.JOBS = {**settings.JOBS, "DIAGNOSTIC_KINDS": True}


@pytest.fixture(autouse=True)
def echo_kind(register_kind):
    """Every web test may submit ``webtest.echo``; it is gone again after each test."""
    return register_kind(ECHO, documents=ECHO_DOCUMENTS)


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
    """A document_review result of the shape agent.review.workflow.result makes."""
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

        from documents.store import Upload

        user = user or alice
        now = clock.now() - timedelta(seconds=next(_earlier))  # older than any other queued job: claimed first
        job = acceptance.accept(scope_id=user.tenant_id, user_id=user.pk, kind="document_review", payload={},
                                operation_key=f"reviewed-{next(_keys)}", now=now, batch=batch,
                                document=Upload(f"Invoice {name}".encode(), name, "text/plain")).job
        claim = claim_first(job, now=clock.now(), worker="test")
        summary = kinds.get("document_review").summarize(result)
        assert queue.complete(job_id=job.pk, epoch=claim.epoch, result=result, now=clock.now(), summary=summary)
        job.refresh_from_db()
        return job

    return make


def evidenced_review_result(*, einvoice: bool = False) -> dict:
    """A document_review result whose values carry their evidence, as agent.reading.reading gives them.

    From the visible text: each value with its page and printed line (one line long enough to
    have to wrap on a phone), and a total read twice with two different amounts (to check).
    From an e-invoice: each value with its XML element, and the visible page showing another IBAN.
    """
    def text(value, line, page=1, box=(56.0, 120.0, 320.0, 132.0)):
        return {"status": "present", "value": value, "detail": "",
                "evidence": {"source": "text", "page": page, "text": line, "box": list(box), "element": None}}

    def xml(value, element):
        return {"status": "present", "value": value, "detail": "",
                "evidence": {"source": "xml", "page": None, "text": f"<{element.rsplit('/', 1)[-1]}> {value}",
                             "box": None, "element": element}}

    if einvoice:
        fields = {
            "supplier_name": xml("Lieferant GmbH", "ram:SellerTradeParty/ram:Name"),
            "vat_id": xml("DE136695976", "ram:SellerTradeParty/ram:SpecifiedTaxRegistration/ram:ID[@schemeID='VA']"),
            "invoice_number": xml("471102", "rsm:ExchangedDocument/ram:ID"),
            "invoice_date": xml("2026-03-05", "rsm:ExchangedDocument/ram:IssueDateTime/udt:DateTimeString"),
            "currency": xml("EUR", "ram:ApplicableHeaderTradeSettlement/ram:InvoiceCurrencyCode"),
            "total_amount": xml("529.87", "ram:SpecifiedTradeSettlementHeaderMonetarySummation/ram:GrandTotalAmount"),
            "iban": xml("DE89 3704 0044 0532 0130 00",
                        "ram:SpecifiedTradeSettlementPaymentMeans/ram:PayeePartyCreditorFinancialAccount/ram:IBANID"),
        }
        findings = ["The IBAN on the visible page (NL91 ABNA 0417 1643 00) is not the e-invoice's "
                    "(DE89 3704 0044 0532 0130 00): a changed IBAN is a known fraud pattern."]
        reading = "e-invoice: Factur-X EN 16931"
    else:
        fields = {
            "supplier_name": text("Bloemenhandel De Tulp B.V.", "Bloemenhandel De Tulp B.V. · Kerkstraat 12 · "
                                  "1017 GC Amsterdam · KvK 12345678 · Leverancier van snijbloemen en "
                                  "kamerplanten aan bedrijven sinds 1987"),
            "vat_id": text("NL123456789B01", "Btw-nummer NL123456789B01"),
            "invoice_number": text("993548900", "Factuurnummer: 993548900"),
            "invoice_date": text("2026-04-19", "Factuurdatum 19 april 2026"),
            "currency": text("EUR", "Totaal € 717,97"),
            "total_amount": {
                "status": "to_check", "value": None, "detail": "two totals that disagree",
                "evidence": None,
                "candidates": [
                    {"value": "717.97", "evidence": {"source": "text", "page": 1, "text": "Totaal € 717,97",
                                                     "box": [400.0, 610.0, 540.0, 622.0], "element": None}},
                    {"value": "593.36", "evidence": {"source": "text", "page": 2, "text": "Te betalen 593,36",
                                                     "box": [400.0, 200.0, 540.0, 212.0], "element": None}},
                ],
            },
            "iban": text("NL91 ABNA 0417 1643 00", "IBAN NL91ABNA0417164300", page=2),
        }
        findings = []
        reading = "text"
    return {"fields": fields, "draft": "Review of the invoice (2 pages)\n", "steps": [], "warnings": [],
            "pages": 2, "readable": True, "reading": reading, "findings": findings}


def review_document(user, content: bytes, name: str, *, media_type: str = "application/octet-stream"):
    """A document_review job of ``user`` for ``content``, reviewed in this process by the local
    planner exactly as a worker runs it (page images included) and completed with its summary."""
    from datetime import timedelta

    from agent.review import workflow
    from agent.review.planner import LocalPlanner
    from documents.store import Upload
    from jobs.clock import system_clock
    from jobs.context import JobContext

    now = system_clock.now()
    job = acceptance.accept(scope_id=user.tenant_id, user_id=user.pk, kind="document_review", payload={},
                            operation_key=f"review-document-{next(_keys)}", now=now,
                            document=Upload(content, name, media_type)).job
    claim = claim_first(job, now=now, worker="review-test", lease=timedelta(minutes=5))
    result = workflow.run(JobContext(claim), planner=LocalPlanner())
    summary = kinds.get("document_review").summarize(result)
    assert queue.complete(job_id=job.pk, epoch=claim.epoch, result=result, now=system_clock.now(), summary=summary)
    job.refresh_from_db()
    return job
