"""The list, the team's list, a job page and the submit page with real-world names, in a real
browser at 1280 px and 390 px: nothing wider than the window, long names cut with an ellipsis
and whole in their title, dates in one format, a total always with its currency, cards of at
most three lines on a phone, the bulk bar only while rows are selected, saved filters, a value's
evidence shown and the way back to the value on a phone, every tap target at least 44 px, and
the camera's photos sent as one document. No serious or critical axe-core finding (``audit``)."""

from __future__ import annotations

import io
import re
from datetime import UTC, datetime
from pathlib import Path

import pypdf
import pytest

from documents.store import read
from jobs.models import Job
from tests.web.conftest import review_document, review_result

from .audit import audit, overflow
from .conftest import completed_review, off_loop

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ALICE = ("alice", "alice-pass-123")
TAP = 44
LONG_NAMES = [
    "Rechnung_2024-11-05_Müller-Lüdenscheidt_Haustechnik_GmbH_&_Co._KG_RE-2024-004711.pdf",
    "Scan 2024-10-28 14.03.17 - Eingangsrechnung Stadtwerke Bielefeld Strom Abschlag Oktober.pdf",
    "INVOICE-INV-0000982731-AMAZON-WEB-SERVICES-EMEA-SARL-2024-10-31-CONSOLIDATED-BILLING.pdf",
    "Facture_n°F2024-11-0042_Société_Générale_d'Équipements_Électriques_et_Industriels_SAS.pdf",
]
LONG_SUPPLIERS = [
    "Müller-Lüdenscheidt Haustechnik GmbH & Co. KG Niederlassung Nordrhein-Westfalen",
    "Stadtwerke Bielefeld GmbH – Energie- und Wasserversorgung",
    "Amazon Web Services EMEA SARL, Succursale Française",
    "Société Générale d'Équipements Électriques et Industriels SAS",
]
CORPUS = Path(__file__).resolve().parent.parent / "corpus" / "multilingual"
TWO_PAGES = CORPUS / "de" / "06-twopage.pdf"


def reviewed(user, name: str, supplier: str, n: int, *, flagged: str = "") -> Job:
    result = review_result(supplier=supplier, number=f"RE-2024-00471{n}")
    result["fields"]["total_amount"]["value"] = f"{n}2345.67"
    if flagged == "date":  # a date to correct: it reads like every other date in the list
        result["fields"]["invoice_date"] = {"status": "malformed", "value": "2014-11-05",
                                            "detail": "the invoice date is more than ten years old"}
    if flagged == "currency":  # a flagged currency: the total still shows it
        result["fields"]["currency"] = {"status": "malformed", "value": "CHF", "detail": "not the supplier's usual"}
    return completed_review(user, name, result, key=f"fits-{n}", text=f"Invoice {n}")


def set_up(make_member):
    alice = make_member("acme", ALICE[0], password=ALICE[1])
    carol = make_member("acme", "margaret.hamilton-smith.accounts-payable")
    jobs = [reviewed(alice, name, supplier, n, flagged=("date", "currency", "", "")[n])
            for n, (name, supplier) in enumerate(zip(LONG_NAMES, LONG_SUPPLIERS, strict=True))]
    # Sent weeks ago: its time reads like the invoice dates ("5 November 2024 at 14:03"), not "Nov 5, 2024".
    Job.objects.filter(pk=jobs[3].pk).update(created_at=datetime(2024, 11, 5, 14, 3, tzinfo=UTC))
    reviewed(carol, "Lieferschein_und_Rechnung_Wäscherei_Sonnenschein_Mönchengladbach_2024_KW45.pdf",
             "Wäscherei Sonnenschein Mönchengladbach e.K.", 4)
    preview = review_document(alice, TWO_PAGES.read_bytes(),
                              "Rechnung_2024-11-05_Müller-Lüdenscheidt_Haustechnik_GmbH_&_Co._KG_RE-2024-004799.pdf",
                              media_type="application/pdf")
    return jobs, preview


def at(page, width: int, height: int = 844) -> None:
    page.set_viewport_size({"width": width, "height": height})
    page.wait_for_timeout(150)


def fits(page) -> None:
    widths = overflow(page)
    assert widths["scroll"] <= widths["inner"], widths


def in_window(page, box) -> bool:
    size = page.viewport_size
    return box is not None and box["x"] >= 0 and box["x"] + box["width"] <= size["width"] \
        and box["y"] >= 0 and box["y"] + box["height"] <= size["height"]


def tall_enough(page, selectors: list[str]) -> None:
    """Each control a finger uses is a target of at least 44 x 44 px (measured where it is shown)."""
    for selector in selectors:
        found = [el for el in page.locator(selector).all() if el.is_visible()]
        assert found, selector
        for element in found:
            box = element.bounding_box()
            assert box and box["height"] >= TAP - 0.5 and box["width"] >= TAP - 0.5, (selector, box)


def lines_of(page, row: str) -> dict:
    """The lines a card takes: its shown cells from top to bottom, a cell that starts below the
    line so far starting the next; and its tallest cell (each is one line high at most)."""
    return page.evaluate("""(row) => {
      const cells = [...document.querySelectorAll(`${row} > th, ${row} > td`)]
        .filter(c => c.offsetParent !== null).map(c => c.getBoundingClientRect())
        .sort((a, b) => a.top - b.top);
      let lines = 0, bottom = -Infinity;
      for (const cell of cells) {
        if (cell.top >= bottom - 2) { lines += 1; bottom = cell.bottom; } else bottom = Math.max(bottom, cell.bottom);
      }
      return {lines, tallest: Math.max(...cells.map(c => c.height))};
    }""", row)


def test_the_list_fits_with_real_names_at_both_widths(make_member, login):
    jobs, preview = off_loop(set_up, make_member)
    page = login(*ALICE, start="/jobs")
    at(page, 1280, 900)
    fits(page)

    # 1280 px: every column within the window, Work and Submitted too; names cut, whole in their title.
    for heading in ("Document", "Supplier", "Total", "Work", "Submitted"):
        box = page.locator("table.jobs thead th", has_text=heading).first.bounding_box()
        assert box and box["x"] + box["width"] <= 1280, heading
    first = f"#job-{jobs[0].pk}"
    name = page.locator(f"{first} th.col-document a")
    assert name.get_attribute("title") == LONG_NAMES[0] and name.inner_text() == LONG_NAMES[0]
    assert name.evaluate("a => a.scrollHeight > a.clientHeight + 1")  # cut, at two lines
    supplier = page.locator(f"{first} td.col-supplier")
    assert supplier.get_attribute("title") == LONG_SUPPLIERS[0]
    assert supplier.evaluate("td => td.scrollWidth > td.clientWidth && getComputedStyle(td).textOverflow == 'ellipsis'")
    assert supplier.evaluate("td => { const r = document.createRange(); r.selectNodeContents(td); "
                             "return new Set([...r.getClientRects()].map(x => Math.round(x.top))).size; }") == 1
    # Dates in one format, a date to correct too; a total keeps a flagged currency.
    assert page.inner_text(f"{first} td.col-date") == "5 November 2014"
    assert page.inner_text(f"#job-{jobs[1].pk} td.col-total") == "CHF 12,345.67"
    assert page.inner_text(f"#job-{jobs[2].pk} td.col-date") == "14 March 2026"
    assert re.fullmatch(r"5 November 2024 at \d\d:\d\d", page.inner_text(f"#job-{jobs[3].pk} td.col-submitted"))

    the_bulk_bar_and_saved_filters(page, first)
    on_a_phone_cards_of_three_lines(page, jobs, first)
    the_teams_list_fits(page)
    the_evidence_and_the_way_back_on_a_phone(page, preview)


def the_bulk_bar_and_saved_filters(page, first: str) -> None:
    # The bulk bar only while rows are selected.
    assert page.is_hidden("#bulk")
    page.click(f"{first} .select-row")
    assert page.is_visible("#bulk") and page.inner_text("[data-bulk-count]") == "With the 1 selected:"
    # Said to a screen reader as it appears and goes: a polite live region there from the page's load.
    said = page.locator("#bulk-said")
    assert said.get_attribute("role") == "status" and said.text_content().startswith("1 selected. Their actions")
    page.click(f"{first} .select-row")
    assert page.is_hidden("#bulk") and said.text_content() == "None selected."

    # Saved filters: the list's filters kept under a name, picked again from the list.
    page.goto("/jobs?state=completed&sort=-total")
    page.click("#save-filter summary")
    page.fill("#id_filter_name", "Erledigt, größte zuerst – Haustechnik und Stadtwerke")
    page.click("#save-filter-button")
    page.wait_for_selector("#work-message")
    chip = page.locator(".saved-filter a")
    assert chip.inner_text() == "Erledigt, größte zuerst – Haustechnik und Stadtwerke"
    assert chip.get_attribute("aria-current") == "true"
    page.goto("/jobs")
    page.click(".saved-filter a")
    page.wait_for_url("**/jobs?state=completed&sort=-total")
    audit(page, "list-long-names")


def on_a_phone_cards_of_three_lines(page, jobs, first: str) -> None:
    # 390 px: cards of at most three lines, nothing sideways, every tap target 44 px.
    at(page, 390)
    fits(page)
    for job in jobs:
        shape = lines_of(page, f"#job-{job.pk}")
        assert shape["lines"] <= 3 and shape["tallest"] < 60, (job.pk, shape)
    page.click(f"{first} .select-row")  # the bulk bar's controls are shown while rows are selected
    # A name cut to one line unfolds whole while it has the keyboard's focus.
    name = page.locator(f"{first} th.col-document a")
    one_line = name.bounding_box()["height"]
    page.keyboard.press("Tab")
    assert name.evaluate("a => a === document.activeElement && a.matches(':focus-visible')")
    assert name.bounding_box()["height"] > 1.5 * one_line
    page.keyboard.press("Shift+Tab")
    tall_enough(page, [".site-nav a", ".account a", ".account button", ".quick-filters a", ".saved-filter a",
                       ".saved-filter button", "#save-filter summary", ".select-row", ".list-meta .button",
                       "#bulk-handled", "#bulk-assignee", "#bulk-export", ".filter-buttons button",
                       ".filter-buttons a"])


def the_teams_list_fits(page) -> None:
    # The team's list, with a long submitter's name: as wide as the window at both widths.
    page.goto("/jobs?scope=team")
    assert page.locator("table.jobs td.col-by").count() == 6
    audit(page, "list-team-long-names")
    at(page, 390)  # a long submitter's name is cut too: still three lines a card
    for row in page.locator("#rows tr").all():
        assert lines_of(page, f"#{row.get_attribute('id')}")["lines"] <= 3, row.get_attribute("id")
    at(page, 1280, 900)


def the_evidence_and_the_way_back_on_a_phone(page, preview) -> None:
    # The job page on a phone: a value's evidence shows its box on the page, and a control goes back to it.
    page.goto(f"/jobs/{preview.pk}")
    at(page, 390)
    fits(page)
    link = page.locator("#field-total_amount .evidence a[data-show-box]")
    link.click()
    box = page.locator(f"#{link.get_attribute('data-show-box')}")
    assert "current" in box.get_attribute("class").split() and in_window(page, box.bounding_box())
    back = page.locator("#back-to-field")
    assert back.inner_text() == "Back to Total amount" and in_window(page, back.bounding_box())
    tall_enough(page, [".crumbs a", ".evidence a", "#back-to-field", ".page-pager a", "#download-document",
                       "figure.page:not([hidden]) figcaption a"])
    back.click()
    from playwright.sync_api import expect

    # Playwright's own wait, not wait_for_function: a predicate polled in the page is an eval, which the
    # Content Security Policy refuses (it passed only when the focus had already moved at the first look).
    expect(page.locator("#field-total_amount:focus-within")).to_have_count(1)
    assert in_window(page, link.bounding_box()) and page.is_hidden("#back-to-field")
    audit(page, "job-long-name")


def test_without_script_the_bulk_bar_is_always_there(make_member, login):
    alice = off_loop(make_member, "acme", ALICE[0], password=ALICE[1])
    off_loop(reviewed, alice, LONG_NAMES[0], LONG_SUPPLIERS[0], 0)
    page = login(*ALICE, start="/jobs", java_script_enabled=False)
    assert page.is_visible("#bulk") and page.is_visible("#bulk-handled")
    fits(page)


def test_the_camera_takes_several_pages_as_one_document(make_member, new_context, tmp_path):
    off_loop(make_member, "acme", ALICE[0], password=ALICE[1])
    # A phone: a touch screen that cannot hover.
    page = new_context(viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True).new_page()
    page.goto("/jobs/new")
    page.fill("#id_username", ALICE[0])
    page.fill("#id_password", ALICE[1])
    page.click("button[type=submit]")
    page.wait_for_url("**/jobs/new")
    camera = page.locator("#id_photo")
    assert camera.get_attribute("accept") == "image/*" and camera.get_attribute("capture") == "environment"
    assert page.inner_text("label[for=id_photo]") == "Take a photo"
    # Words for touch: nothing of dropping where nothing can be dragged.
    assert page.evaluate("matchMedia('(hover: none)').matches")
    assert page.is_hidden(".dropzone-text") and "drop" not in page.inner_text("main").lower()
    tall_enough(page, ["label[for=id_photo]", "#id_document", ".site-nav a", ".account a"])
    audit(page, "submit-camera")

    # Two photos, one at a time as a phone's camera gives them: two pages of one document.
    from tests.web.test_photos import jpeg

    for n, colour in enumerate([(200, 30, 30), (30, 160, 60)], start=1):
        photo = tmp_path / f"IMG_20241105_14030{n}.jpg"
        photo.write_bytes(jpeg(colour, size=(300, 400)))
        camera.set_input_files(str(photo))
    assert page.locator("[data-photo-list] .name").all_inner_texts() == ["Page 1", "Page 2"]
    assert page.inner_text("label[for=id_photo]") == "Take a photo of the next page"
    page.click("#submit-form button[type=submit]")
    page.wait_for_url(re.compile(r"/jobs/\d+$"))
    document = off_loop(Job.objects.select_related("document").get).document
    assert document.original_name == "IMG_20241105_140301 (2 pages).pdf" and document.content_type == "application/pdf"
    assert len(pypdf.PdfReader(io.BytesIO(off_loop(read, document.name))).pages) == 2

    # A box to tick is a 44 px target with its words (the notifications setting).
    page.goto("/account/notifications")
    tall_enough(page, ["label:has(input[type=checkbox])"])


def test_the_notification_settings_on_a_phone(make_member, login):
    # No address: the box is off and cannot be ticked, a prompt says why; every control a finger's size.
    off_loop(make_member, "acme", "nomail", password="nomail-pass-123")
    page = login("nomail", "nomail-pass-123", start="/account/notifications")
    at(page, 390)
    fits(page)
    assert page.is_visible("#no-email") and page.is_disabled("#email-me") and not page.is_checked("#email-me")
    tall_enough(page, ["label:has(#email-me)", "#every-minutes", "#notification-settings button"])
    # The minutes box is drawn like every other field of the site, not the browser's bare one.
    minutes = page.locator("#every-minutes").evaluate(
        "el => { const s = getComputedStyle(el); return [s.borderTopWidth, s.borderTopColor, s.width]; }")
    assert minutes[:2] == ["1px", "rgb(159, 179, 200)"] and float(minutes[2].removesuffix("px")) > 300
    page.fill("#every-minutes", "0")
    page.click("#notification-settings button")
    page.wait_for_selector("#error-every-minutes")
    assert page.get_attribute("#every-minutes", "aria-invalid") == "true"
    audit(page, "notification-settings-no-email")


def test_the_submit_and_batch_pages_fit_long_names(make_member, login, tmp_path):
    off_loop(make_member, "acme", ALICE[0], password=ALICE[1])
    page = login(*ALICE)
    # Files chosen with long real-world names: listed, each with its Remove button, nothing sideways.
    chosen = []
    for n, name in enumerate(LONG_NAMES):
        path = tmp_path / name.replace(".pdf", ".txt")
        path.write_text(f"Invoice {n}\nTotal: EUR 1{n}.00", encoding="utf-8")
        chosen.append(str(path))
    page.set_input_files("#id_document", chosen)
    assert page.locator("[data-chosen] li").count() == len(LONG_NAMES)
    audit(page, "submit-long-names")
    page.click("#submit-form button[type=submit]")
    page.wait_for_url(re.compile(r"/batches/[\w-]+$"))
    assert page.locator("table.jobs tbody tr").count() == len(LONG_NAMES)
    audit(page, "batch-long-names")
