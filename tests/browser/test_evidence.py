"""Where each value was read, beside the value, on a finished review: at 1280 px in the table's
value column, at 390 px inside the value's card, long printed lines wrapped, nothing scrolling
sideways, and no serious or critical axe-core finding (see ``audit``)."""

from __future__ import annotations

import pytest

from documents import acceptance
from documents.store import Upload
from jobs.clock import system_clock
from tests.web.conftest import evidenced_review_result

from .audit import WIDTHS, audit
from .conftest import completed_review, off_loop

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ALICE = ("alice", "alice-pass-123")


def reviewed(alice, name: str, result: dict):
    """A review of ``name`` completed with ``result`` and the kind's own summary, as a worker completes one."""
    return completed_review(alice, name, result, key=f"evidence-{name}")


def inside(inner: dict, outer: dict) -> bool:
    return (inner["x"] >= outer["x"] - 0.5 and inner["x"] + inner["width"] <= outer["x"] + outer["width"] + 0.5
            and inner["y"] >= outer["y"] - 0.5 and inner["y"] + inner["height"] <= outer["y"] + outer["height"] + 0.5)


def evidence_beside_values(page) -> None:
    """At each width: every evidence line sits in its value's cell, under the value, within the window."""
    for width, height in WIDTHS.values():
        page.set_viewport_size({"width": width, "height": height})
        page.wait_for_timeout(150)
        cells = page.locator("#fields td.value")
        assert cells.count() == 7
        for index in range(cells.count()):
            cell = cells.nth(index)
            for evidence in cell.locator(".evidence").all():
                box, cell_box = evidence.bounding_box(), cell.bounding_box()
                assert box and cell_box and inside(box, cell_box), (width, evidence.inner_text())
                assert box["x"] + box["width"] <= width, (width, evidence.inner_text())


def test_a_finished_review_shows_each_value_with_the_line_it_was_read_from(make_member, login):
    alice = off_loop(make_member, "acme", *ALICE[:1], password=ALICE[1])
    job = off_loop(reviewed, alice, "factuur-993548900.txt", evidenced_review_result())
    page = login(*ALICE, start=f"/jobs/{job.pk}")
    assert page.inner_text("#status-heading").strip() == "Done — 1 to check"
    assert page.inner_text("#reading") == "Read from the document's text."

    number = page.locator("#fields tr", has=page.locator("th:text-is('Invoice number')"))
    assert number.locator(".value-text").inner_text() == "993548900"
    assert number.locator(".evidence").inner_text() == "read from page 1: Factuurnummer: 993548900"
    total = page.locator("#fields tr", has=page.locator("th:text-is('Total amount')"))
    assert total.locator(".badge").inner_text() == "To check"
    # Each reading with where it was read, and a button to take it as the value.
    readings = [text.partition("\nThis one")[0] for text in total.locator(".candidates li").all_inner_texts()]
    assert readings == ["EUR 717.97\nread from page 1: Totaal € 717,97",
                        "EUR 593.36\nread from page 2: Te betalen 593,36"]
    assert total.get_by_role("button", name="Total amount EUR 593.36").inner_text().startswith("This one")
    # The supplier's name was read from a long footer line: it wraps inside the card on a phone.
    supplier = page.locator("#fields tr", has=page.locator("th:text-is('Supplier name')")).locator(".evidence")
    page.set_viewport_size({"width": 390, "height": 844})
    page.wait_for_timeout(150)
    assert supplier.bounding_box()["height"] > 2 * float(supplier.evaluate("e => getComputedStyle(e).lineHeight")
                                                         .removesuffix("px"))
    evidence_beside_values(page)
    audit(page, "job-evidence-text")


def test_an_e_invoice_review_names_the_elements_and_flags_a_changed_iban(make_member, login):
    alice = off_loop(make_member, "acme", *ALICE[:1], password=ALICE[1])
    job = off_loop(reviewed, alice, "rechnung-471102.txt", evidenced_review_result(einvoice=True))
    page = login(*ALICE, start=f"/jobs/{job.pk}")
    assert page.inner_text("#reading") == "Read from the e-invoice (Factur-X EN 16931)."
    supplier = page.locator("#fields tr", has=page.locator("th:text-is('Supplier name')"))
    assert supplier.locator(".evidence").inner_text() == "read from the e-invoice: ram:SellerTradeParty/ram:Name"
    findings = page.inner_text("#findings")
    assert "The IBAN on the visible page (NL91 ABNA 0417 1643 00) is not the e-invoice's" in findings
    assert "confirm the bank account by phone" in findings
    evidence_beside_values(page)
    audit(page, "job-evidence-einvoice")


@pytest.mark.slow
def test_reviews_run_by_the_worker_show_evidence_on_every_value_found(make_member, login, start_worker):
    from pathlib import Path

    from agent import samples

    factur_x = (Path(__file__).resolve().parent.parent / "corpus" / "einvoices" / "pdf"
                / "zugferd_2p0_EN16931_Einfach.pdf")
    alice = off_loop(make_member, "acme", *ALICE[:1], password=ALICE[1])

    def accept(path):
        return acceptance.accept(scope_id=alice.tenant_id, user_id=alice.pk, kind="document_review", payload={},
                                 operation_key=f"evidence-real-{path.name}", now=system_clock.now(),
                                 document=Upload(path.read_bytes(), path.name, "application/pdf")).job

    jobs = {path.name: off_loop(accept, path) for path in (samples.CLEAN_PDF, factur_x)}
    start_worker()
    page = login(*ALICE, start=f"/jobs/{jobs[samples.CLEAN_PDF.name].pk}")
    for name, source, where in [(samples.CLEAN_PDF.name, "Read from the document's text.", "read from page 1: "),
                                (factur_x.name, "Read from the e-invoice (Factur-X EN 16931).",
                                 "read from the e-invoice: ")]:
        page.goto(f"/jobs/{jobs[name].pk}")
        page.wait_for_selector("#status[data-state=completed]", timeout=60_000)
        assert page.inner_text("#reading") == source
        rows = page.locator("#fields tbody tr")
        found = [rows.nth(i) for i in range(rows.count()) if rows.nth(i).locator(".value-text").inner_text() != "—"]
        said = [row.locator(".evidence").inner_text() for row in found]
        # Every value found says where; a field this XML lacks (its IBAN) may come from the page.
        assert all(s.startswith((where, "read from page ")) for s in said), said
        assert sum(s.startswith(where) for s in said) >= 6, said
        evidence_beside_values(page)
    audit(page, "job-evidence-worker-einvoice")
