"""Page images for the document beside its review: drawn at a reading size, bounded, the image
itself (upright, scaled) for a scan or a photo, and never a reason for a review to fail."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from PIL import Image

from agent.reading import documents, pages
from agent.review.planner import LocalPlanner
from documents import store as stored

from .conftest import drive

CORPUS = Path(__file__).resolve().parent.parent / "corpus" / "multilingual"


def png_size(content: bytes) -> tuple[int, int]:
    with Image.open(io.BytesIO(content)) as image:
        assert image.format == "PNG"
        return image.size


def encoded(image: Image.Image, fmt: str, **options) -> bytes:
    out = io.BytesIO()
    image.save(out, fmt, **options)
    return out.getvalue()


def test_a_pdf_page_is_drawn_at_120_dpi_as_a_small_png():
    drawn = pages.render((CORPUS / "nl" / "05-letter.pdf").read_bytes(), documents.PDF)
    assert len(drawn) == 1
    content, width, height = drawn[0]
    assert png_size(content) == (width, height)
    assert abs(width - 992) <= 1 and abs(height - 1403) <= 1  # A4 at 120 dpi
    assert len(content) < 80_000


def test_a_huge_page_is_drawn_within_the_pixel_bounds():
    from fpdf import FPDF

    pdf = FPDF(unit="pt", format=(14_000, 14_000))  # a page about 5 m on a side
    pdf.add_page()
    [(content, width, height)] = pages.render(bytes(pdf.output()), documents.PDF)
    assert max(width, height) <= pages.MAX_SIDE and width * height <= pages.MAX_PIXELS
    assert png_size(content) == (width, height)


def test_a_photo_is_its_own_page_turned_upright_and_scaled():
    photo = Image.new("RGB", (4000, 3000), (250, 250, 245))  # a landscape sensor image...
    exif = Image.Exif()
    exif[0x0112] = 6  # ...of a portrait page: the camera says "rotate 90° clockwise to view"
    [(content, width, height)] = pages.render(encoded(photo, "JPEG", exif=exif), "image/jpeg")
    assert height > width and max(width, height) <= pages.MAX_SIDE
    assert png_size(content) == (width, height)


def test_each_page_of_a_tiff_is_a_page_and_a_png_is_one(monkeypatch):
    monkeypatch.setattr(pages, "MAX_SECONDS", 600.0)  # the pages counted, not the time a busy machine takes
    sheets = [Image.new("L", (850, 1100), shade) for shade in (255, 235)]
    tiff = encoded(sheets[0], "TIFF", save_all=True, append_images=sheets[1:])
    drawn = pages.render(tiff, "image/tiff")
    assert len(drawn) == 2 and len({(w, h) for _, w, h in drawn}) == 1
    assert all(max(w, h) <= pages.MAX_SIDE and w * h <= pages.MAX_PIXELS and h > w for _, w, h in drawn)
    assert len(pages.render(encoded(sheets[0], "PNG"), "image/png")) == 1


def test_types_without_pages_are_not_drawn():
    assert not pages.drawable(documents.DOCX) and not pages.drawable(documents.TEXT)
    assert pages.render(b"Invoice 7", documents.TEXT) == []


def test_a_page_that_cannot_be_drawn_leaves_no_preview_and_the_review_goes_on(review_job, claim, monkeypatch):
    def broken(content, media_type, **kwargs):
        raise RuntimeError("pdfium could not draw it")

    monkeypatch.setattr(pages, "render", broken)
    job = review_job(CORPUS / "nl" / "05-letter.pdf")
    assert drive(claim(), LocalPlanner()).state == "completed"
    job.refresh_from_db()
    assert stored.page_images(job.document.name) == []
    assert job.result["fields"]["invoice_number"]["status"] == "present"


@pytest.mark.parametrize("media_type", ["image/png", documents.PDF])
def test_nonsense_bytes_draw_nothing_rather_than_fail(media_type):
    with pytest.raises(Exception):  # noqa: B017  whatever the library raises: pages.keep logs it and goes on
        pages.render(b"\x89PNG\r\n\x1a\n not really" if media_type == "image/png" else b"%PDF-1.7 no", media_type)


def test_each_value_read_has_its_box_in_percent_of_its_page():
    from agent.presentation import boxes

    def read(value, page, box, source="text"):
        return {"value": value, "evidence": {"source": source, "page": page, "text": "", "box": box, "element": None}}

    result = {
        "page_sizes": [[600.0, 800.0], [600.0, 800.0]],
        "fields": {
            "invoice_number": {"status": "present", **read("7", 1, [60, 80, 120, 96])},
            "total_amount": {"status": "to_check", **read("12.00", 2, [0, 0, 1, 1]),
                             "candidates": [read("12.00", 2, [300, 400, 360, 412]), read("21.00", 1, [30, 8, 90, 16])]},
            "iban": {"status": "present", **read("DE89", 1, None, source="xml")},  # the e-invoice's: no page
            "vat_id": {"status": "present", **read("DE1", 3, [1, 1, 2, 2])},  # a page of no known size
            "currency": {"status": "missing", "value": None, "evidence": None},
        },
    }
    drawn = {box.id: box for box in boxes(result)}
    assert set(drawn) == {"box-invoice_number", "box-total_amount-1", "box-total_amount-2"}
    number = drawn["box-invoice_number"]
    # 60..120 of 600 points across, 80..96 of 800 down, with 0.4 % of the page around it.
    assert (number.page, number.left, number.top, number.width, number.height) == (1, 9.6, 9.6, 10.8, 2.8)
    assert (drawn["box-total_amount-1"].page, drawn["box-total_amount-1"].label) == (2, "Total amount, reading 1")
    assert drawn["box-total_amount-2"].tone == "to_check"
    assert boxes({**result, "page_sizes": []}) == []  # a review from before page sizes were kept
