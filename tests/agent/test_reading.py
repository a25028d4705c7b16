"""agent.reading.reading: what extract keeps, and how validate picks each field, its evidence and the findings.

The e-invoice reader is a stand-in here (``FakeEInvoices``, the interface of agent.reading.einvoice),
so these tests pin the wiring: the XML's fields win, a field the XML lacks comes from the
page, the page is compared with the XML, and ``read_xml=False`` never looks at an XML.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from agent import samples
from agent.reading import documents, fields, findings, reading
from agent.review import workflow
from agent.review.planner import LocalPlanner
from jobs.models import Job
from tests.pdfs import CHANGED_IBAN_PAGE, factur_x_with_page

from .conftest import drive

TODAY = date(2026, 6, 1)
PDF = "application/pdf"


def xml_field(value: str | None, element: str) -> dict[str, Any]:
    if value is None:
        return {"status": "missing", "value": None, "detail": "not in the e-invoice", "evidence": None}
    return {"status": "present", "value": value, "detail": "",
            "evidence": {"source": "xml", "page": None, "text": f"<{element}> {value}", "box": None,
                         "element": element}}


@dataclass
class FakeInvoice:
    profile: str
    fields: dict[str, dict[str, Any]]
    findings: list[str] = field(default_factory=list)
    also_read: dict[str, dict[str, Any]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"profile": self.profile, "fields": self.fields, "findings": self.findings, "also_read": self.also_read}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> FakeInvoice:
        return cls(data["profile"], data["fields"], data["findings"], data.get("also_read") or {})


class FakeEInvoices:
    """agent.reading.einvoice's interface: every PDF carries this XML; a standalone XML is itself."""

    EInvoice = FakeInvoice

    def __init__(self, **values: str | None) -> None:
        self.values = {"supplier_name": "Nordlicht Bürobedarf GmbH", "vat_id": "DE136695976",
                       "invoice_number": "INV-2026-0142", "invoice_date": "2026-03-14", "currency": "EUR",
                       "total_amount": "1333.87", "iban": "DE89 3704 0044 0532 0130 00", **values}
        self.looked: list[str] = []
        self.findings: list[str] = []
        self.profile = "Factur-X EN 16931"

    def find_xml(self, content: bytes, media_type: str) -> tuple[str, bytes] | None:
        self.looked.append(media_type)
        if media_type == reading.XML:
            return "invoice.xml", content
        return ("factur-x.xml", b"<rsm:CrossIndustryInvoice/>") if media_type == PDF else None

    def read_einvoice(self, xml: bytes, *, today: date | None = None) -> FakeInvoice:
        return FakeInvoice(self.profile, {name: xml_field(self.values[name], f"ram:{name}")
                                                 for name in fields.REQUIRED}, list(self.findings))

    def compare(self, xml_fields: dict, text_fields: dict, *, text: str = "") -> list[str]:
        return [f"The visible page shows {name} {text_fields[name]['value']}, the e-invoice "
                f"{xml_fields[name]['value']}." for name in ("total_amount", "invoice_number", "iban")
                if xml_fields[name].get("value") and text_fields[name].get("value")
                and xml_fields[name]["value"] != text_fields[name]["value"]]


@pytest.fixture
def einvoices(monkeypatch):
    def install(**values: str | None) -> FakeEInvoices:
        fake = FakeEInvoices(**values)
        monkeypatch.setattr(reading, "_einvoice", lambda: fake)
        return fake

    return install


# --- extract ---------------------------------------------------------------------------------


def test_extract_keeps_the_text_its_layout_the_pages_and_no_e_invoice_without_one():
    extracted = reading.extract(samples.CLEAN_PDF.read_bytes(), PDF, today=TODAY)
    assert set(extracted) == {"text", "layout", "einvoice", "pages", "has_text", "warnings", "ocr", "other_documents"}
    assert extracted["has_text"] and extracted["pages"] == 1 and extracted["einvoice"] is None
    assert "Nordlicht" in extracted["text"] and extracted["warnings"] == []
    json.dumps(extracted)  # it goes into the checkpoint as it is


def test_extract_of_inline_text_and_of_a_scan(no_ocr):
    inline = reading.extract(None, documents.TEXT, samples.PLAIN_TEXT.read_text(), today=TODAY)
    assert inline["has_text"] and inline["einvoice"] is None
    scan = reading.extract(samples.SCANNED_PDF.read_bytes(), PDF, today=TODAY)
    assert not scan["has_text"] and any("no text layer" in w for w in scan["warnings"])


def test_an_embedded_e_invoice_is_read_and_the_page_too(einvoices):
    einvoices()
    extracted = reading.extract(samples.CLEAN_PDF.read_bytes(), PDF, today=TODAY)
    assert extracted["einvoice"]["profile"] == "Factur-X EN 16931" and extracted["has_text"]


def test_read_xml_false_never_looks_for_an_xml(einvoices):
    fake = einvoices()
    extracted = reading.extract(samples.CLEAN_PDF.read_bytes(), PDF, today=TODAY, read_xml=False)
    assert extracted["einvoice"] is None and fake.looked == []


def test_a_standalone_xml_has_no_visible_page_and_no_scan_warning(einvoices):
    einvoices()
    content = b'<?xml version="1.0"?><rsm:CrossIndustryInvoice/>'
    assert reading.media_type(content) == reading.XML
    extracted = reading.extract(content, reading.XML, today=TODAY)
    assert (extracted["text"], extracted["has_text"], extracted["warnings"]) == ("", False, [])
    checked = reading.validate(extracted, today=TODAY)
    assert checked["readable"] and checked["reading"] == "e-invoice: Factur-X EN 16931"
    assert {checked["fields"][name]["status"] for name in fields.REQUIRED} == {"present"} and checked["findings"] == []


# --- validate --------------------------------------------------------------------------------


def test_every_value_read_from_the_text_carries_its_page_and_line():
    checked = reading.validate(reading.extract(samples.CLEAN_PDF.read_bytes(), PDF, today=TODAY), today=TODAY)
    assert (checked["reading"], checked["findings"], checked["readable"]) == ("text", [], True)
    for name in fields.REQUIRED:
        found = checked["fields"][name]
        assert found["status"] == "present", name
        evidence = found["evidence"]
        assert evidence["source"] == "text" and evidence["page"] == 1 and 0 < len(evidence["text"]) <= 200, name
    assert "INV-2026-0142" in checked["fields"]["invoice_number"]["evidence"]["text"]


def test_a_field_not_found_has_no_evidence():
    checked = reading.validate(reading.extract(samples.MISSING_FIELDS_PDF.read_bytes(), PDF, today=TODAY),
                               today=TODAY)
    assert checked["fields"]["iban"]["status"] == "missing" and checked["fields"]["iban"]["evidence"] is None


def test_the_e_invoices_fields_win_and_say_so(einvoices):
    einvoices(supplier_name="Nordlicht Bürobedarf GmbH & Co. KG")
    checked = reading.validate(reading.extract(samples.CLEAN_PDF.read_bytes(), PDF, today=TODAY), today=TODAY)
    assert checked["reading"] == "e-invoice: Factur-X EN 16931" and checked["findings"] == []
    supplier = checked["fields"]["supplier_name"]
    assert supplier["value"] == "Nordlicht Bürobedarf GmbH & Co. KG"
    assert supplier["evidence"]["source"] == "xml" and supplier["evidence"]["element"] == "ram:supplier_name"


def test_a_field_the_e_invoice_lacks_is_read_from_the_page(einvoices):
    einvoices(iban=None)
    checked = reading.validate(reading.extract(samples.CLEAN_PDF.read_bytes(), PDF, today=TODAY), today=TODAY)
    iban = checked["fields"]["iban"]
    assert iban["value"] == "DE89 3704 0044 0532 0130 00" and iban["evidence"]["source"] == "text"


def test_the_page_disagreeing_with_the_xml_and_the_xmls_own_defects_are_findings(einvoices):
    fake = einvoices(iban="NL91 ABNA 0417 1643 00")
    fake.findings = ["The totals do not add up (EN 16931 BR-CO-15)."]
    checked = reading.validate(reading.extract(samples.CLEAN_PDF.read_bytes(), PDF, today=TODAY), today=TODAY)
    assert findings.words(checked["findings"]) == [
        "The totals do not add up (EN 16931 BR-CO-15).",
        "The visible page shows iban DE89 3704 0044 0532 0130 00, the e-invoice NL91 ABNA 0417 1643 00.",
    ]
    assert checked["fields"]["iban"]["value"] == "NL91 ABNA 0417 1643 00"  # the XML's, flagged, never swapped


def test_an_e_invoice_nothing_could_be_read_from_leaves_the_page_to_speak(einvoices):
    fake = einvoices(**dict.fromkeys(fields.REQUIRED))
    fake.profile, fake.findings = "", ["the e-invoice XML is not well-formed at line 1, column 38"]
    checked = reading.validate(reading.extract(samples.CLEAN_PDF.read_bytes(), PDF, today=TODAY), today=TODAY)
    assert checked["reading"] == "text" and findings.words(checked["findings"]) == fake.findings
    assert {checked["fields"][name]["evidence"]["source"] for name in fields.REQUIRED} == {"text"}
    standalone = reading.validate(reading.extract(b"<?xml version='1.0'?><x", reading.XML, today=TODAY), today=TODAY)
    assert (standalone["reading"], standalone["readable"]) == ("e-invoice", False)


def test_the_workflow_keeps_reading_and_findings_and_puts_the_document_under_alices_action(einvoices, review_job,
                                                                                          claim):
    einvoices(total_amount="1300.00")
    job = review_job(samples.CLEAN_PDF)
    drive(claim(), LocalPlanner())
    job = Job.objects.get(pk=job.pk)
    assert job.result["reading"] == "e-invoice: Factur-X EN 16931"
    assert findings.words(job.result["findings"]) == [
        "The visible page shows total_amount 1333.87, the e-invoice 1300.00."]
    summary = workflow.summarize(job.result)
    assert (summary.outcome, summary.text, summary.needs_action) == ("to_correct", "1 to check", True)
    assert "Findings:\n- The visible page shows total_amount 1333.87" in job.result["draft"]


# --- evidence in words ------------------------------------------------------------------------


@pytest.mark.parametrize("evidence, where, quoted", [
    ({"source": "text", "page": 2, "text": "Factuurnummer: 993548900"}, "read from page 2", "Factuurnummer: 993548900"),
    ({"source": "text", "page": None, "text": "IBAN NL91"}, "read from the document's text", "IBAN NL91"),
    ({"source": "xml", "page": None, "text": "<ram:Name> X", "element": "ram:SellerTradeParty/ram:Name"},
     "read from the e-invoice", "ram:SellerTradeParty/ram:Name"),
    ({"source": "model", "page": 1, "text": "Total 5,00"}, "suggested by the model, found on page 1", "Total 5,00"),
    (None, "", ""),
])
def test_where_a_value_was_read_in_words(evidence, where, quoted):
    assert (reading.where(evidence), reading.quoted(evidence)) == (where, quoted)


def test_the_source_in_words():
    assert reading.source_words("e-invoice: Factur-X EN 16931") == "Read from the e-invoice (Factur-X EN 16931)."
    assert reading.source_words("e-invoice") == "Read from the e-invoice."
    assert reading.source_words("text") == "Read from the document's text."
    assert reading.source_words(None) == ""


# --- with the real e-invoice reader (agent.reading.einvoice) -------------------------------------------

CORPUS = Path(__file__).resolve().parent.parent / "corpus" / "einvoices"
FACTUR_X = CORPUS / "pdf" / "zugferd_2p0_EN16931_Einfach.pdf"
STANDALONE = CORPUS / "xml" / "EN16931_Einfach_DueDate.cii.xml"


def test_a_factur_x_pdf_is_read_from_its_xml_with_each_element_as_evidence(review_job, claim):
    job = review_job(FACTUR_X)
    drive(claim(), LocalPlanner())
    result = Job.objects.get(pk=job.pk).result
    assert result["reading"] == "e-invoice: Factur-X EN 16931" and result["readable"]
    supplier = result["fields"]["supplier_name"]
    assert supplier["value"] == "Lieferant GmbH" and supplier["evidence"]["source"] == "xml"
    assert supplier["evidence"]["element"] == "ram:SellerTradeParty/ram:Name"
    # Every value the XML gives names its element (this XML has no IBAN: that one is the page's, if any).
    from_xml = {name: result["fields"][name]["evidence"]["element"] for name in fields.REQUIRED if name != "iban"}
    assert all(element and element.startswith(("ram:", "rsm:")) for element in from_xml.values()), from_xml
    assert "Read from the e-invoice (Factur-X EN 16931). The visible page was compared with it." in result["draft"]


def test_a_standalone_xml_is_reviewed_from_the_xml_alone(review_job, claim):
    job = review_job(STANDALONE)
    assert job.document.content_type == reading.XML
    drive(claim(), LocalPlanner())
    result = Job.objects.get(pk=job.pk).result
    assert result["reading"] == "e-invoice: Factur-X EN 16931" and result["readable"] and result["pages"] == 1
    assert result["warnings"] == [] and "scan" not in result["draft"]
    assert "The visible page was compared" not in result["draft"]
    assert result["fields"]["invoice_number"]["evidence"]["element"] == "rsm:ExchangedDocument/ram:ID"


def test_a_page_showing_another_iban_than_the_xml_is_a_finding_and_the_xmls_iban_stays(review_job, claim):
    job = review_job(factur_x_with_page(CHANGED_IBAN_PAGE))
    drive(claim(), LocalPlanner())
    job = Job.objects.get(pk=job.pk)
    assert job.result["fields"]["iban"]["value"] == "DE88 2008 0000 0970 3757 00"
    assert [f for f in findings.words(job.result["findings"]) if "NL91 ABNA 0417 1643 00" in f and "fraud" in f]
    summary = workflow.summarize(job.result)
    # The second: this XML writes its BuyerReference in no namespace, an element that is ignored and named.
    assert (summary.outcome, summary.text, summary.needs_action) == ("to_correct", "2 to check", True)


def test_ignoring_the_xml_reads_the_page_alone():
    content = factur_x_with_page(CHANGED_IBAN_PAGE)
    checked = reading.validate(reading.extract(content, PDF, today=TODAY, read_xml=False), today=TODAY)
    assert checked["reading"] == "text" and checked["findings"] == []
    assert checked["fields"]["iban"]["value"] == "NL91 ABNA 0417 1643 00"


def test_with_an_e_invoice_the_fields_read_when_printed_come_from_the_visible_page(einvoices):
    einvoices()
    checked = reading.validate(reading.extract(samples.CLEAN_PDF.read_bytes(), PDF, today=TODAY), today=TODAY)
    assert checked["reading"].startswith("e-invoice")
    assert set(checked["fields"]) == set(fields.REQUIRED)
    also = checked["also_read"]  # the XML here gives none of them: the page's
    assert also and set(also) <= set(fields.ALSO_READ)
    assert all(field["status"] in {"present", "to_check"} and field["evidence"]["source"] == "text"
               for field in also.values())
