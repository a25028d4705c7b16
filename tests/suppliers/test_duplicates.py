"""Duplicates however they arrive: a PDF and a scan of one invoice, a copy with a VAT id and one without,
the register's supplier, the same number, total and date; matched again after a correction or a
confirmation; the page says which key matched; never across tenants."""

from __future__ import annotations

import pytest
from django.urls import reverse

from agent import samples
from agent.inbox import corrections, work
from agent.review import duplicates
from agent.samples.make_samples import invoice_lines
from jobs.clock import queue_clock
from tests.agent.conftest import require_ocr
from tests.suppliers.conftest import text_invoice
from web import status

NAME = "Nordlicht Bürobedarf".encode()


def small_scan(lines: list[str]) -> bytes:
    """A scan of the invoice's head and totals (no text layer), on a small page: quick to OCR."""
    from fpdf import FPDF
    from PIL import Image, ImageDraw, ImageFont

    kept = [line for line in lines if line and not line.startswith(" ")][:20]
    image = Image.new("L", (900, 40 + 30 * len(kept)), 255)
    draw = ImageDraw.Draw(image)
    font = ImageFont.truetype("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", 20)
    for i, line in enumerate(kept):
        draw.text((20, 20 + i * 30), line, fill=0, font=font)
    pdf = FPDF(format=(image.width * 25.4 / 150, image.height * 25.4 / 150))
    pdf.add_page()
    pdf.image(image, x=0, y=0, w=pdf.w, h=pdf.h)
    return bytes(pdf.output())


def duplicate_of(job):
    return status.duplicates_of([job]).get(job.pk)


def shown_codes(job) -> list[str]:
    """The codes of the findings the job's page and its gates read (its result as shown now)."""
    return [f["code"] for f in status.shown_result(type(job).objects.get(pk=job.pk)).get("findings") or []]


def duplicate_finding(job):
    return next((f for f in job.result["findings"] if isinstance(f, dict) and f["code"] == "duplicate"), None)


def test_a_pdf_and_a_scan_of_one_invoice_the_vat_id_read_on_one_only(reviewed):
    require_ocr()
    first = reviewed(samples.CLEAN_PDF.read_bytes())
    scan = reviewed(small_scan(invoice_lines(vat=None)), name="scan.pdf")
    assert scan.result["reading"] == "scan" and scan.result["fields"]["vat_id"]["status"] == "missing"
    assert first.result["fields"]["vat_id"]["value"] == "DE136695976"
    found = duplicate_of(scan)
    assert found.job_id == first.pk and found.match != "same file"
    finding = duplicate_finding(scan)
    assert finding == {"code": "duplicate", "field": None, "blocks": True, "words": finding["words"]}
    assert f"#{first.pk}" in finding["words"] and found.match in finding["words"] and scan.outcome != "ok"


def test_a_copy_with_a_vat_id_and_one_without_are_the_same_supplier_and_number(reviewed, browser, alice):
    first = reviewed(text_invoice(vat=None))
    with_vat = reviewed(text_invoice(), name="with-vat.txt")
    found = duplicate_of(with_vat)
    assert (found.job_id, found.match) == (first.pk, "same supplier name and invoice number")
    assert duplicate_finding(with_vat)["blocks"] and with_vat.outcome != "ok"
    browser.force_login(alice)
    page = browser.get(reverse("job_detail", args=[with_vat.pk])).content.decode()
    assert "Possible duplicate" in page and "same supplier name and invoice number" in page  # which key matched


def test_the_same_number_total_and_date_under_another_supplier_name_is_flagged(reviewed):
    first = reviewed(text_invoice(vat=None))
    renamed = reviewed(text_invoice(vat=None).replace(NAME, b"Nordl1cht Burobedarf"))
    assert renamed.result["fields"]["supplier_name"]["value"].startswith("Nordl1cht")
    found = duplicate_of(renamed)
    assert (found.job_id, found.match) == (first.pk, "same invoice number, total and date")
    # Another number from the same supplier is another invoice.
    assert duplicate_of(reviewed(text_invoice(vat=None, number="INV-2026-0143"))) is None


def test_the_registers_supplier_joins_a_name_and_a_vat_id(reviewed, import_csv):
    import_csv("name,tax_ids\nNordlicht Bürobedarf GmbH,DE136695976\n")
    first = reviewed(text_invoice().replace(b"Supplier: " + NAME + b" GmbH", b"Supplier: NB Office"))
    assert first.result["fields"]["supplier_name"]["value"] != "Nordlicht Bürobedarf GmbH"
    later = reviewed(text_invoice(vat=None, date="15 March 2026"))
    found = duplicate_of(later)
    assert (found.job_id, found.match) == (first.pk, "same registered supplier and invoice number")


def test_a_correction_matches_the_document_again(reviewed, alice):
    first = reviewed(text_invoice(number="INV-2026-0777"))
    misread = reviewed(text_invoice(number="INV-2026-0771", vat=None), name="copy.txt")
    assert duplicate_of(misread) is None
    corrections.correct(job_id=misread.pk, tenant_id=alice.tenant_id, user=alice, field="invoice_number",
                        value="INV-2026-0777", now=queue_clock.now())
    found = duplicate_of(misread)
    assert (found.job_id, found.match) == (first.pk, "same supplier name and invoice number")
    assert shown_codes(misread) == ["duplicate"]
    misread.refresh_from_db()
    assert misread.outcome != "ok"
    # Corrected back: no longer a duplicate, and the finding is gone with it.
    corrections.correct(job_id=misread.pk, tenant_id=alice.tenant_id, user=alice, field="invoice_number",
                        value="INV-2026-0771", now=queue_clock.now())
    assert duplicate_of(misread) is None and shown_codes(misread) == []


def test_a_confirmation_matches_the_document_again_with_what_the_register_knows_now(reviewed, alice, import_csv):
    def confirm(job, field):
        corrections.correct(job_id=job.pk, tenant_id=alice.tenant_id, user=alice, field=field, confirm=True,
                            now=queue_clock.now())

    # Reviewed before the register knew that "NB Office" (its VAT id) and this name are one supplier.
    first = reviewed(text_invoice().replace(b"Supplier: " + NAME + b" GmbH", b"Supplier: NB Office"))
    later = reviewed(text_invoice(vat=None, date="15 March 2026"), name="copy.txt")
    import_csv("name,tax_ids\nNordlicht Bürobedarf GmbH,DE136695976\n")
    assert duplicate_of(later) is None
    confirm(later, "supplier_name")  # matched again: the register now knows its name, not yet the first's id
    assert duplicate_of(later) is None
    confirm(first, "vat_id")  # matched again: the first is the register's supplier too, and the later one follows
    found = duplicate_of(later)
    assert (found.job_id, found.match) == (first.pk, "same registered supplier and invoice number")
    # The result shows it as a finding that blocks: marking it handled asks again, naming it.
    assert shown_codes(later) == ["duplicate"]
    with pytest.raises(work.FindingsStand) as asked:
        work.change(tenant_id=alice.tenant_id, job_id=later.pk, by_id=alice.pk, now=queue_clock.now(),
                    state=work.State.HANDLED.value)
    assert f"possible duplicate of document #{first.pk}" in str(asked.value)


def test_a_correction_of_the_earlier_document_flags_the_later_copy_in_the_list_too(reviewed, alice):
    misread = reviewed(text_invoice(number="INV-2026-0771"))
    copy = reviewed(text_invoice(number="INV-2026-0777"), name="copy.txt")
    assert copy.outcome == "ok" and duplicate_of(copy) is None
    corrections.correct(job_id=misread.pk, tenant_id=alice.tenant_id, user=alice, field="invoice_number",
                        value="INV-2026-0777", now=queue_clock.now())
    copy.refresh_from_db()
    assert duplicate_of(copy).job_id == misread.pk and shown_codes(copy) == ["duplicate"]
    assert copy.outcome != "ok" and copy.needs_action  # the list says so, not only the page
    corrections.correct(job_id=misread.pk, tenant_id=alice.tenant_id, user=alice, field="invoice_number",
                        value="INV-2026-0771", now=queue_clock.now())
    copy.refresh_from_db()
    assert duplicate_of(copy) is None and copy.outcome == "ok"


def test_no_key_matches_across_tenants(reviewed, bob):
    reviewed(text_invoice(vat=None))
    theirs = reviewed(text_invoice(vat=None), user=bob)
    renamed = reviewed(text_invoice(vat=None).replace(NAME, b"Other Name"), user=bob)
    assert duplicate_of(theirs) is None and duplicate_finding(theirs) is None
    assert duplicate_of(renamed).job_id == theirs.pk  # bob's own earlier copy, never alice's


def test_the_same_rules_in_memory_for_the_bench(db):
    def made(job_id, **changes):
        lines = invoice_lines(**changes)
        fields = {"supplier_name": {"value": lines[0]}, "invoice_number": {"value": changes.get("number", "N-1")},
                  "total_amount": {"value": "100"}, "invoice_date": {"value": "2026-03-14"},
                  "vat_id": {"value": changes.get("vat")}}
        return duplicates.fingerprint_of(job_id=job_id, tenant_id=1, sha256=f"{job_id}", fields=fields,
                                         now=queue_clock.now())

    first, copy = made(1, vat="DE136695976", number="N-1"), made(2, vat=None, number="N-1")
    other = made(3, number="N-2")
    assert duplicates.match_among(copy, [first]) == (1, "same supplier name and invoice number")
    assert duplicates.match_among(other, [first, copy]) is None
