"""The document beside its review, in a real browser at 1280 px and 390 px: the page image with a
box where each value was read, a field's "read from page N" showing its page and its box,
previous and next, the original as a download, another tenant's 404, nothing the
Content-Security-Policy refuses and no serious or critical axe-core finding.

The review runs in this process exactly as a worker runs it (``review_document``), page images
included. Scans and photos need the OCR reading (``agent.reading.ocr``) and Tesseract: without them
those cases skip and say why.
"""

from __future__ import annotations

import importlib.util
import io
import shutil
from pathlib import Path

import pytest

from tests.web.conftest import review_document

from .audit import WIDTHS, audit
from .conftest import off_loop
from .csp import refused, watch

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ALICE = ("alice", "alice-pass-123")
BOB = ("bob", "bob-pass-123")
CORPUS = Path(__file__).resolve().parent.parent / "corpus" / "multilingual"
TWO_PAGES = CORPUS / "de" / "06-twopage.pdf"  # the total and the currency are read on page 2


def row(page, label: str):
    return page.locator("#fields tr", has=page.locator(f"th:text-is('{label}')"))


def in_window(page, box: dict) -> bool:
    size = page.viewport_size
    return box["y"] >= 0 and box["y"] + box["height"] <= size["height"] and box["x"] + box["width"] <= size["width"]


def shown_page(page) -> str:
    return page.locator("#document figure.page:not([hidden])").get_attribute("data-page")


def drawn_where_it_says(page, box_id: str) -> None:
    """The box sits on its page's image at the percentages it was given."""
    rect = page.locator(f"#{box_id}")
    image = rect.locator("xpath=ancestor::div[contains(@class,'page-sheet')]/img")
    at, on = rect.bounding_box(), image.bounding_box()
    assert at and on
    for name, origin, extent, attr in (("x", "x", "width", "x"), ("y", "y", "height", "y")):
        percent = float(rect.get_attribute(attr))
        assert abs(at[origin] - (on[origin] + percent / 100 * on[extent])) <= 3, (box_id, name)
    assert at["x"] + at["width"] <= on["x"] + on["width"] + 3 and at["y"] + at["height"] <= on["y"] + on["height"] + 3


def click_evidence(page, label: str, expected_page: str) -> None:
    """Click where a field was read: its page shows, its box is marked and scrolled into view."""
    link = row(page, label).locator(".evidence a")
    box_id = link.get_attribute("data-show-box")
    link.click()
    assert shown_page(page) == expected_page
    assert page.locator(f"#{box_id}").get_attribute("class").split()[-1] == "current"
    assert page.locator("rect.current").count() == 1
    assert in_window(page, page.locator(f"#{box_id}").bounding_box()), (label, page.viewport_size)
    drawn_where_it_says(page, box_id)


def test_alice_reads_a_text_pdf_beside_its_review_and_bob_cannot_reach_it(make_member, login, tmp_path):
    alice = off_loop(make_member, "acme", ALICE[0], password=ALICE[1])
    off_loop(make_member, "globex", BOB[0], password=BOB[1])
    job = off_loop(review_document, alice, TWO_PAGES.read_bytes(), "Rechnung 06.pdf")
    page = login(*ALICE, start=f"/jobs/{job.pk}")
    console = watch(page)
    page.reload()

    # 1280 px: the document beside the review, page 1 of 2 with its boxes.
    page.set_viewport_size(dict(zip(("width", "height"), WIDTHS["1280"], strict=True)))
    fields, pane = page.locator("#fields").bounding_box(), page.locator("#document").bounding_box()
    assert pane["x"] >= fields["x"] + fields["width"] and pane["y"] < fields["y"] + fields["height"]
    assert page.inner_text("#page-label") == "Page 1 of 2" and shown_page(page) == "1"
    assert page.locator("#page-1 img").evaluate("img => img.complete && img.naturalWidth > 900")
    assert page.locator("#page-1 rect.box").count() >= 3
    assert page.is_hidden("#previous-page") and page.is_visible("#next-page")
    click_evidence(page, "Total amount", "2")
    assert page.inner_text("#page-label") == "Page 2 of 2"
    page.click("#previous-page")
    assert shown_page(page) == "1" and page.is_hidden("#previous-page")
    click_evidence(page, "Invoice number", "1")
    page.click("#next-page")
    assert shown_page(page) == "2" and page.is_hidden("#next-page")

    # 390 px: the document under the review, as wide as the screen allows.
    page.set_viewport_size(dict(zip(("width", "height"), WIDTHS["390"], strict=True)))
    page.wait_for_timeout(150)
    fields, pane = page.locator("#fields").bounding_box(), page.locator("#document").bounding_box()
    assert pane["y"] >= fields["y"] + fields["height"] and pane["x"] + pane["width"] <= 390
    click_evidence(page, "Supplier name", "1")
    click_evidence(page, "Currency", "2")

    # Without script, a link to a box is a page of its own: ?page=2#box-... shows page 2 and marks it.
    page.goto(f"/jobs/{job.pk}?page=2#box-total_amount")
    assert shown_page(page) == "2" and page.locator("#box-total_amount.current").count() == 1

    # The original, as it was sent.
    with page.expect_download() as download:
        page.click("#download-document")
    assert download.value.suggested_filename == "Rechnung 06.pdf"
    assert Path(download.value.path()).read_bytes() == TWO_PAGES.read_bytes()

    page.goto(f"/jobs/{job.pk}")
    assert refused(page, console) == []
    audit(page, "job-preview-text-pdf")

    # Bob, of another team: the job, its pages and its document are all the site's usual 404.
    bobs = login(*BOB, start="/jobs")
    assert bobs.goto(f"/jobs/{job.pk}").status == 404
    for path in ("pages/1.png", "document"):
        response = bobs.request.get(f"/jobs/{job.pk}/{path}")
        assert response.status == 404, path
        assert not response.body().startswith((b"\x89PNG", b"%PDF"))


def _ocr_ready() -> str:
    """Why scans and photos cannot be read here, or "" when they can."""
    if importlib.util.find_spec("agent.reading.ocr") is None:
        return "agent.reading.ocr is not there yet (OCR for scans and photos, issue 24)"
    if shutil.which("tesseract") is None:
        return "tesseract is not installed (apt-get install tesseract-ocr)"
    return ""


def scan_of(pdf: Path, *, dpi: int = 200) -> bytes:
    """A scan of the PDF's first page: the page drawn as an image, in a PDF with no text layer."""
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(pdf.read_bytes())
    try:
        image = document[0].render(scale=dpi / 72).to_pil().convert("L")
    finally:
        document.close()
    out = io.BytesIO()
    image.save(out, "PDF", resolution=dpi)
    return out.getvalue()


def photo_of(pdf: Path) -> bytes:
    """A phone photo of the PDF's first page: a JPEG of the page on a darker desk, a little off."""
    import pypdfium2 as pdfium
    from PIL import Image

    document = pdfium.PdfDocument(pdf.read_bytes())
    try:
        sheet = document[0].render(scale=220 / 72).to_pil().convert("RGB")
    finally:
        document.close()
    desk = Image.new("RGB", (sheet.width + 160, sheet.height + 200), (96, 88, 80))
    desk.paste(sheet, (70, 110))
    out = io.BytesIO()
    desk.save(out, "JPEG", quality=88)
    return out.getvalue()


def test_a_scan_and_a_photo_show_their_pages_with_the_boxes_ocr_read(make_member, login):
    why = _ocr_ready()
    if why:
        pytest.skip(f"SKIPPED: scans and photos cannot be read here: {why}")
    alice = off_loop(make_member, "acme", ALICE[0], password=ALICE[1])
    source = CORPUS / "en" / "05-blocks.pdf"
    scan = off_loop(review_document, alice, scan_of(source), "scan.pdf")
    photo = off_loop(review_document, alice, photo_of(source), "photo.jpg")
    page = login(*ALICE, start=f"/jobs/{scan.pk}")
    for job, name in ((scan, "scan"), (photo, "photo")):
        page.goto(f"/jobs/{job.pk}")
        assert page.inner_text("#page-label") == "Page 1 of 1"
        assert page.locator("#page-1 img").evaluate("img => img.complete && img.naturalWidth > 600")
        linked = page.locator("#fields .evidence a")
        assert linked.count() >= 3, name  # most values found have their box on the image
        for width in ("1280", "390"):
            page.set_viewport_size(dict(zip(("width", "height"), WIDTHS[width], strict=True)))
            page.wait_for_timeout(150)
            click_evidence(page, "Invoice number", "1")
        audit(page, f"job-preview-{name}")
