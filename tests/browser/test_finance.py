"""The list for finance in a real browser, at 1280 px and 390 px: supplier, invoice number, invoice date
and total with its currency in the table and on the cards; sorting by total from the "Sort by" choice;
the job page's way back keeps the order; the export link carries the reader's zone. No horizontal
overflow and no serious or critical axe-core finding (see ``audit``)."""

from __future__ import annotations

import pytest

from documents import acceptance
from documents.store import Upload
from jobs import kinds, queue
from jobs.clock import system_clock
from jobs.models import Job
from tests.web.conftest import review_result

from .audit import audit
from .conftest import off_loop

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ALICE = ("alice", "alice-pass-123")


def reviewed(user, name: str, *, supplier: str, total: str, currency: str = "EUR") -> Job:
    result = review_result(supplier=supplier, number=f"INV-{name}")
    result["fields"]["total_amount"]["value"] = total
    result["fields"]["currency"]["value"] = currency
    now = system_clock.now()
    job = acceptance.accept(scope_id=user.tenant_id, user_id=user.pk, kind="document_review", payload={},
                            operation_key=f"finance-{name}", now=now,
                            document=Upload(f"Invoice {name}".encode(), f"{name}.txt", "text/plain")).job
    claim = queue.claim(now=now, worker="browser-test")
    assert claim is not None and claim.job_id == job.pk
    summary = kinds.get("document_review").summarize(result)
    assert queue.complete(job_id=job.pk, epoch=claim.epoch, result=result, now=system_clock.now(), summary=summary)
    return job


def order(page) -> list[str]:
    return [row.get_attribute("id") for row in page.locator("#rows tr").all()]


def test_the_list_shows_and_sorts_by_finances_values_at_both_widths(make_member, login):
    alice = off_loop(make_member, "acme", ALICE[0], password=ALICE[1])
    small = off_loop(reviewed, alice, "small", supplier="Zeta Papier GmbH", total="95.50")
    large = off_loop(reviewed, alice, "large", supplier="Aachener Druckerei und Bürobedarf Gesellschaft mbH",
                     total="12345.00", currency="CHF")
    middle = off_loop(reviewed, alice, "middle", supplier="Mitte AG", total="900.00")

    page = login(*ALICE, start="/jobs", timezone_id="Europe/Berlin")
    row = f"#job-{large.pk}"
    assert page.inner_text(f"{row} td[data-label=Supplier]") == "Aachener Druckerei und Bürobedarf Gesellschaft mbH"
    assert page.inner_text(f"{row} td[data-label=Total]") == "CHF 12,345.00"
    assert page.inner_text(f"{row} td[data-label='Invoice date']") == "14 March 2026"
    assert page.inner_text(f"{row} td[data-label='Invoice number']") == "INV-large"
    assert "tz=Europe%2FBerlin" in page.get_attribute("a[data-tz-link]", "href")
    audit(page, "list-finance")

    # Sort by the highest total, from the choice (it submits itself); the order is the totals'.
    page.select_option("#id_sort", "-total")
    page.wait_for_url("**/jobs?sort=-total")
    assert order(page) == [f"job-{large.pk}", f"job-{middle.pk}", f"job-{small.pk}"]

    # At 390 px each row is a card: the supplier and, at its right, the total, within the screen.
    page.set_viewport_size({"width": 390, "height": 844})
    page.wait_for_timeout(150)
    card = page.locator(f"#job-{large.pk}").bounding_box()
    total = page.locator(f"#job-{large.pk} td[data-label=Total]").bounding_box()
    supplier = page.locator(f"#job-{large.pk} td[data-label=Supplier]").bounding_box()
    assert card and total and total["x"] + total["width"] <= card["x"] + card["width"] <= 390
    assert supplier and abs(supplier["y"] - total["y"]) < 2 and supplier["x"] + supplier["width"] <= total["x"]
    audit(page, "list-finance-sorted")
    page.set_viewport_size({"width": 1280, "height": 900})

    # To a document and back: the list comes back in the order it was left.
    page.click(f"#job-{small.pk} .col-document a")
    page.wait_for_url(f"**/jobs/{small.pk}")
    page.click("#back-to-list")
    page.wait_for_url("**/jobs?sort=-total&page=1")
    assert page.input_value("#id_sort") == "-total"
    assert order(page) == [f"job-{large.pk}", f"job-{middle.pk}", f"job-{small.pk}"]
