"""OCR: scans and photos read by Tesseract into the same Layout and the same field reading as a
text PDF; images accepted from their headers alone, bombs refused without decoding; a field
OCR was unsure of is to check; without Tesseract a scan is unreadable and says why.

The OCR tests skip, with the reason, where Tesseract or its language packs are missing;
``REQUIRE_OCR=1`` (CI) makes that a failure. Pages are rendered at 150-200 dpi where that is
enough: OCR costs about a second of CPU per page.
"""

from __future__ import annotations

import io
import itertools
import json
import os
import re
import shutil
import struct
import zlib
from datetime import date
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from agent import samples
from agent.management.commands.reviewbench import same
from agent.reading import documents, fields, ocr, reading
from agent.reading.layout import Layout, Line, Word
from agent.review import tools, workflow
from documents.errors import DamagedDocument, DocumentUnpacksTooLarge
from jobs.errors import PayloadTooLarge
from jobs.models import Job

from .acceptance import MEMORY_BOUND_MB, TIME_BOUND_S, accept_in_a_child, stored_files

CORPUS = Path(__file__).resolve().parents[1] / "corpus" / "multilingual"
TRUTH = json.loads((CORPUS / "truth.json").read_text(encoding="utf-8"))
TODAY = date(2026, 6, 1)
SAMPLE_TRUTH = {"supplier_name": "Nordlicht Bürobedarf GmbH", "vat_id": "DE136695976",
                "invoice_number": "INV-2026-0142", "invoice_date": "2026-03-14", "currency": "EUR",
                "total_amount": "1333.87", "iban": "DE89370400440532013000"}


def rendered(pdf: Path, dpi: int) -> list:
    """The PDF's pages as grey PIL images at ``dpi`` (pdfium, as a scanner would see them)."""
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(pdf.read_bytes())
    try:
        return [document[i].render(scale=dpi / 72, grayscale=True).to_pil().convert("L") for i in range(len(document))]
    finally:
        document.close()


def image_only_pdf(pages: list, dpi: int) -> bytes:
    """A scan: the page images wrapped in a PDF with no text layer."""
    out = io.BytesIO()
    pages[0].save(out, "PDF", save_all=True, append_images=pages[1:], resolution=dpi)
    return out.getvalue()


def wrong_fields(checked: dict, truth: dict) -> dict:
    return {name: checked["fields"][name].get("value") for name, expected in truth.items()
            if expected and not (checked["fields"][name].get("value")
                                 and same(name, expected, checked["fields"][name]["value"]))}


# --- a scan and a photo, read as a text PDF is ----------------------------------------------


def test_a_scanned_pdf_is_read_by_ocr_with_its_evidence_boxes_where_the_text_layer_has_them(needs_ocr):
    source = CORPUS / "de" / "01-letter.pdf"
    scan = image_only_pdf(rendered(source, 200), 200)
    assert documents.check_document(content=scan, name="scan.pdf", content_type="") == documents.PDF

    extracted = reading.extract(scan, documents.PDF, today=TODAY)
    assert extracted["ocr"]["pages"] == [1] and extracted["ocr"]["languages"] == "deu+eng"
    assert extracted["ocr"]["confidence"] > 80 and extracted["warnings"] == []
    checked = reading.validate(extracted, today=TODAY)
    assert checked["reading"] == "scan" and checked["readable"]
    assert wrong_fields(checked, TRUTH["de/01-letter.pdf"]) == {}

    # The same boxes, in points from the page's top-left, as the text layer's: the same words
    # across (within a few points), over the same line (OCR's line band may be taller).
    text = reading.validate(reading.extract(source.read_bytes(), documents.PDF, today=TODAY), today=TODAY)
    for name in ("invoice_number", "total_amount", "iban"):
        (x0, top, x1, bottom), (tx0, ttop, tx1, tbottom) = (checked["fields"][name]["evidence"]["box"],
                                                            text["fields"][name]["evidence"]["box"])
        assert abs(x0 - tx0) < 4 and abs(x1 - tx1) < 4, name
        assert top <= (ttop + tbottom) / 2 <= bottom and bottom - top < 2 * (tbottom - ttop), name
    note = tools.review_note({**checked, "pages": 1, "source": "document", "document_name": "scan.pdf",
                              "warnings": [], "has_text": True, "ocr": extracted["ocr"]})
    assert "Read from a scan (page 1, OCR confidence" in note and "please check the values" in note


def test_a_photo_turned_by_its_exif_tag_skewed_and_jpeg_compressed_is_read(needs_ocr):
    from PIL import Image, ImageOps

    page = rendered(samples.CLEAN_PDF, 200)[0]
    skewed = page.rotate(3, resample=Image.Resampling.BICUBIC, expand=True, fillcolor=255)
    # The camera held sideways: the pixels lie turned, and the EXIF Orientation tag (6) says so.
    sideways = skewed.transpose(Image.Transpose.ROTATE_90)
    exif = Image.Exif()
    exif[0x0112] = 6
    out = io.BytesIO()
    sideways.convert("RGB").save(out, "JPEG", quality=70, exif=exif.tobytes())
    photo = out.getvalue()
    assert documents.check_document(content=photo, name="IMG_0042.HEIC", content_type="image/heic") == documents.JPEG

    upright = Image.open(io.BytesIO(photo))
    assert abs(ocr.skew(ImageOps.exif_transpose(upright).convert("L")) - (-3)) <= 0.5
    extracted = reading.extract(photo, documents.JPEG, today=TODAY)
    assert extracted["ocr"]["pages"] == [1] and extracted["pages"] == 1
    assert extracted["ocr"]["languages"] == ocr.LANGUAGES  # English first, the others for words it reads badly
    checked = reading.validate(extracted, today=TODAY)
    # Read English first, a German supplier's umlaut comes out plain (a limit of Tesseract's models).
    assert wrong_fields(checked, SAMPLE_TRUTH) == {"supplier_name": "Nordlicht Burobedarf GmbH"}
    width, height = Layout.from_json(extracted["layout"]).sizes[0]
    assert 550 < width < 650 and height > width  # upright, about an A4 page's width in points


def test_a_png_and_a_multipage_tiff_are_sniffed_from_their_bytes(needs_ocr):
    pages = rendered(CORPUS / "en" / "03-twopage.pdf", 200)
    out = io.BytesIO()
    pages[0].save(out, "TIFF", save_all=True, append_images=pages[1:], compression="tiff_lzw", dpi=(200, 200))
    tiff = out.getvalue()
    assert documents.sniff(tiff) == documents.TIFF
    assert documents.check_document(content=tiff, name="invoice.pdf", content_type="application/pdf") == documents.TIFF
    assert documents.check_image(tiff) == [page.size for page in pages]
    extracted = reading.extract(tiff, documents.TIFF, today=TODAY)
    assert extracted["ocr"]["pages"] == [1, 2] and extracted["pages"] == 2
    assert wrong_fields(reading.validate(extracted, today=TODAY), TRUTH["en/03-twopage.pdf"]) == {}
    png = io.BytesIO()
    pages[0].save(png, "PNG")
    assert documents.check_document(content=png.getvalue(), name="a.txt", content_type="text/plain") == documents.PNG


def test_a_scan_goes_through_the_review_and_its_note_says_it_was_read_from_a_scan(needs_ocr, review_job, claim):
    from agent.review.planner import LocalPlanner

    from .conftest import drive

    job = review_job(samples.SCANNED_PDF)
    drive(claim(), LocalPlanner())
    job.refresh_from_db()
    assert job.state == "completed" and job.result["reading"] == "scan" and job.result["ocr"]["pages"] == [1]
    assert {job.result["fields"][name]["status"] for name in fields.REQUIRED} == {"present"}
    assert "Read from a scan (page 1, OCR confidence" in job.result["draft"]
    from agent import presentation

    shown = presentation.present(job.result)["source"]
    assert shown.startswith("Read from a scan (page 1, OCR confidence ") and shown.endswith("please check the values.")
    summary = workflow.summarize(job.result)
    assert (summary.outcome, summary.reference) == ("ok", "Nordlicht Bürobedarf GmbH · INV-2026-0142")


def test_leptonica_says_nothing_on_the_workers_stderr_once_ocr_is_up(needs_ocr, capfd):
    """Tesseract's image library prints its own errors ("box outside rectangle", which a small image in a text
    PDF's page gave) straight to file descriptor 2, the worker's log."""
    import ctypes
    import ctypes.util

    ocr.engine()
    lept = ctypes.CDLL(ctypes.util.find_library("lept"))
    lept.boxCreate.restype = ctypes.c_void_p
    lept.boxClipToRectangle.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int]
    lept.boxClipToRectangle.restype = ctypes.c_void_p
    box = lept.boxCreate(50, 50, 10, 10)
    assert lept.boxClipToRectangle(box, 20, 20) is None  # outside: the call that complains
    lept.boxDestroy(ctypes.byref(ctypes.c_void_p(box)))
    assert "Error in" not in capfd.readouterr().err


def test_a_text_pdf_with_a_blank_page_is_not_read_as_a_scan():
    from fpdf import FPDF

    document = FPDF()
    document.add_page()
    document.set_font("helvetica", size=11)
    document.cell(text="Invoice no.: INV-7   Total due: EUR 10.00")
    document.add_page()  # the blank back of the sheet: nothing drawn, nothing to OCR
    extracted = reading.extract(bytes(document.output()), documents.PDF, today=TODAY)
    assert extracted["ocr"] is None and extracted["pages"] == 2
    assert reading.validate(extracted, today=TODAY)["reading"] == "text"


# --- bombs: refused from their headers, in bounded memory, nothing decoded -----------------


def png_bomb(side: int = 20_000) -> bytes:
    """A valid 1-bit PNG of side x side white pixels: tens of KB that decode to 400 million pixels."""
    row = b"\x00" + b"\xff" * ((side + 7) // 8)
    packer = zlib.compressobj(9)
    data = b"".join(packer.compress(row) for _ in range(side)) + packer.flush()

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", side, side, 1, 0, 0, 0, 0))
            + chunk(b"IDAT", data) + chunk(b"IEND", b""))


def tiff_of_many_pages(pages: int = 5_000) -> bytes:
    """A little-endian TIFF whose chain holds ``pages`` one-pixel images (one shared strip)."""
    entries = [(256, 3, 1, 1), (257, 3, 1, 1), (258, 3, 1, 8), (259, 3, 1, 1), (262, 3, 1, 1),
               (273, 4, 1, 8), (278, 3, 1, 1), (279, 4, 1, 1)]
    size = 2 + 12 * len(entries) + 4
    out = bytearray(b"II*\x00" + struct.pack("<I", 9) + b"\x00")  # header, then the strip (one pixel) at 8
    for index in range(pages):
        at = 9 + index * size
        nxt = at + size if index + 1 < pages else 0
        out += struct.pack("<H", len(entries))
        for tag, kind, count, value in entries:
            out += struct.pack("<HHI", tag, kind, count) + (struct.pack("<HH", value, 0) if kind == 3
                                                           else struct.pack("<I", value))
        out += struct.pack("<I", nxt)
    return bytes(out)


def jpeg_declaring(width: int = 60_000, height: int = 60_000) -> bytes:
    """A JPEG header whose frame declares width x height (and no scan after it)."""
    sof = struct.pack(">BHHB", 8, height, width, 1) + b"\x01\x11\x00"
    return b"\xff\xd8" + b"\xff\xc0" + struct.pack(">H", len(sof) + 2) + sof + b"\xff\xd9"


@pytest.mark.parametrize("build, error, message", [
    (png_bomb, DocumentUnpacksTooLarge, "declares 20,000 x 20,000 pixels (400 million)"),
    (tiff_of_many_pages, PayloadTooLarge, "the TIFF has more than 20 pages"),
    (jpeg_declaring, DocumentUnpacksTooLarge, "declares 60,000 x 60,000 pixels"),
], ids=["png 20000x20000", "tiff 5000 pages", "jpeg 60000x60000"])
def test_an_image_bomb_is_refused_from_its_headers(build, error, message):
    bomb = build()
    assert len(bomb) < documents.MAX_DOCUMENT_BYTES
    with pytest.raises(error, match=re.escape(message)):
        documents.check_document(content=bomb, name="photo.png", content_type="image/png")


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("build, code", [(png_bomb, "413 unpacks_too_large"), (tiff_of_many_pages, "413 too_large"),
                                         (jpeg_declaring, "413 unpacks_too_large")],
                         ids=["png 20000x20000", "tiff 5000 pages", "jpeg 60000x60000"])
def test_the_web_process_refuses_an_image_bomb_in_bounded_memory_and_stores_nothing(build, code, alice, tmp_path,
                                                                                   media_root):
    report = accept_in_a_child(build(), alice, tmp_path, media_root)
    assert report["outcome"].startswith(f"refused {code}: "), report["outcome"]
    assert report["peak_mb"] - report["baseline_mb"] < 20  # headers only: the PNG alone would decode to 400 MB
    assert report["peak_mb"] - report["baseline_mb"] < MEMORY_BOUND_MB and report["seconds"] < TIME_BOUND_S
    assert not Job.objects.exists() and stored_files(media_root) == []


@pytest.mark.parametrize("content", [b"\x89PNG\r\n\x1a\n\x00\x00", b"\xff\xd8\xff\xe0\x00\x10JFIF",
                                     b"II*\x00\xff\xff\xff\x7f"], ids=["png", "jpeg", "tiff"])
def test_a_damaged_image_header_is_refused_as_damaged(content):
    with pytest.raises(DamagedDocument, match="the image is damaged"):
        documents.check_document(content=content, name="x", content_type="")


# --- confidence, and no Tesseract ----------------------------------------------------------


def scanned_layout(iban_confidence: float, iban: str = "DE89 3704 0044 0532 0130 00") -> dict:
    """An OCR reading of a small invoice whose IBAN was read with ``iban_confidence``."""
    rows = [("Supplier: Nordlicht Bürobedarf GmbH", 95), ("VAT ID: DE136695976", 95),
            ("Invoice no.: INV-2026-0142", 95), ("Invoice date: 14 March 2026", 95), ("Total due: EUR 1,333.87", 95),
            (f"IBAN: {iban}", iban_confidence)]
    lines = []
    for number, (text, conf) in enumerate(rows):
        top, x, words = 100 + 20 * number, 50.0, []
        for index, part in enumerate(text.split(" ")):
            words.append(Word(part, x, top, x + 6 * len(part), top + 12, 95 if index == 0 else conf))
            x += 6 * len(part) + 4
        lines.append(Line(page=1, words=words, text=text))
    read = Layout(pages=1, lines=lines, sizes=[[595.0, 842.0]])
    return {"text": read.text, "layout": read.to_json(), "einvoice": None, "pages": 1, "has_text": True,
            "warnings": [], "ocr": {"pages": [1], "confidence": 90.0, "page_confidence": [90.0]}}


def test_a_sliver_of_a_picture_is_read_at_most_four_times_its_size():
    # Found by the fuzz (tests/fuzz): a 67-byte PNG of 1 x 44 pixels, taken for an A4 page's
    # width, was blown up to 36 million pixels and took 1 GB to read.
    from PIL import Image

    out = io.BytesIO()
    Image.new("L", (1, 44), 255).save(out, "PNG")
    pages = ocr.pages_of(out.getvalue())
    image, _dpi = next(pages)
    pages.close()
    assert image.height <= 44 * ocr.MAX_UPSCALE * 1.1 and image.width <= 64  # a margin, no more


def test_a_blank_page_is_read_as_it_is_not_turned():
    # Every angle levels a blank page alike; it was turned by the first angle tried (-8.4
    # degrees), and Tesseract read a third more pixels of nothing.
    from PIL import Image

    out = io.BytesIO()
    Image.new("L", (2480, 3508), 255).save(out, "PNG", dpi=(300, 300))
    pages = ocr.pages_of(out.getvalue())
    image, dpi = next(pages)
    pages.close()
    assert image.size == (2480, 3508) and round(dpi) == 300


# --- the language a scan is read in ----------------------------------------------------------


def found(text: str) -> list:
    """Words as Tesseract's English pass reports them (positions play no part in the language)."""
    return [ocr.Found(word, 0, 0, 10, 10, 90.0, 0, 10) for word in text.split()]


def test_a_first_page_of_parties_and_addresses_is_told_german_by_the_languages_own_words():
    # The first page of a German e-invoice's rendering, as the English pass read it: no invoice
    # word but "Leistungsdatum"; "vom", "und", "der", "Verkaufer" tell German, so it is read in
    # German first, not in all seven languages.
    page = found("Mietrechnung Nr. 9314110911/00/M/00/N vom 01.10.2018 Liefer- und Leistungsdatum : 29.09.2018 "
                 "Verkaufer: Nummer : 549910 Kaufer/Leistungsempfanger: Qualifizierung der Textart")
    assert ocr.language(page) == "deu+eng"
    assert ocr.language(found("Invoice 2026-114 from Acme: please pay the total amount")) == ocr.LANGUAGES
    assert ocr.language(found("Acme Ltd 12 High Street")) == ocr.LANGUAGES  # no language stands out


class Answering:
    """Tesseract's stand-in: answers each read with the next words given, and notes what it was asked."""

    library = ocr.LIBRARY
    detector = object()

    def __init__(self, *answers: list) -> None:
        self.answers = list(answers)
        self.asked: list[tuple[tuple[int, int], str]] = []

    def read(self, image, dpi, languages):
        self.asked.append((image.size, languages))
        return self.answers.pop(0)


@pytest.mark.parametrize(("answers", "detect_reads", "languages"), [
    ((found("Rechnung Nr. 7 vom 01.03.2026 Lieferant Betrag"), found("Menge 2")), 1, "deu+eng"),
    ((found("Acme Ltd 12 High Street London"), found("Invoice total amount due, please pay"), []), 2, ocr.LANGUAGES),
    ((found("Acme Ltd"), found("12 High Street"), found("London"), found("Rechnung vom Lieferant"), []), 4,
     "deu+eng"),
])
def test_the_language_pass_reads_the_next_quarter_of_the_page_only_while_none_has_told_a_language(
        monkeypatch, answers, detect_reads, languages):
    from PIL import Image

    out = io.BytesIO()
    Image.new("L", (2480, 3508), 255).save(out, "PNG", dpi=(300, 300))  # an A4 scan at 300 dpi
    pages = ocr.pages_of(out.getvalue())
    page, _dpi = next(pages)
    pages.close()
    tesseract = Answering(*answers)
    monkeypatch.setattr(ocr, "_engine", tesseract)
    _read, reading_ = ocr.read_image(out.getvalue())
    width, height = -(-page.width // 3), -(-page.height // 3)  # the page reduced to 100 dpi
    edges = [round(i * height / 4) for i in range(5)]
    quarters = [((width, bottom - top), "eng") for top, bottom in itertools.pairwise(edges)]
    assert tesseract.asked == [*quarters[:detect_reads], (page.size, languages)]
    assert reading_.languages == languages


def test_a_field_read_with_low_ocr_confidence_is_to_check_not_present():
    sure = reading.validate(scanned_layout(93), today=TODAY)
    assert {sure["fields"][name]["status"] for name in fields.REQUIRED} == {"present"} and sure["reading"] == "scan"
    unsure = reading.validate(scanned_layout(41), today=TODAY)
    iban = unsure["fields"]["iban"]
    assert (iban["status"], iban["detail"], iban["confidence"]) == ("to_check", reading.LOW_CONFIDENCE, 41)
    assert [n for n in fields.REQUIRED if unsure["fields"][n]["status"] != "present"] == ["iban"]
    summary = workflow.summarize({**unsure, "draft": ""})
    assert (summary.outcome, summary.text) == ("to_correct", "1 to check")
    note = tools.review_note({**unsure, "pages": 1, "source": "document", "document_name": "scan.png",
                              "warnings": [], "has_text": True, "ocr": {"pages": [1], "confidence": 90.0}})
    assert "Read from a scan (page 1, OCR confidence 90 %); please check the values." in note
    assert "read a value from a scan with low confidence" in note and "DE89" in note


def test_an_iban_ocr_read_that_fails_its_check_is_alices_to_check_not_asked_of_the_supplier():
    misread = "DE89 3704 0044 0532 0130 08"  # the last 0 read as an 8: the check digits fail
    scanned = reading.validate(scanned_layout(88, misread), today=TODAY)
    iban = scanned["fields"]["iban"]
    assert (iban["status"], iban["value"]) == ("to_check", misread) and reading.MISREAD in iban["detail"]
    note = tools.review_note({**scanned, "pages": 1, "source": "document", "document_name": "scan.png",
                              "warnings": [], "has_text": True, "ocr": {"pages": [1], "confidence": 90.0}})
    assert "To ask the supplier" not in note and misread in note
    # The same characters in a text layer are as printed: the supplier is asked to check them.
    printed = {**scanned_layout(88, misread), "ocr": None}
    printed["layout"] = Layout.from_text(printed["text"]).to_json()
    typed = reading.validate(printed, today=TODAY)
    assert typed["fields"]["iban"]["status"] == "malformed"
    note = tools.review_note({**typed, "pages": 1, "source": "document", "document_name": "invoice.pdf",
                              "warnings": [], "has_text": True, "ocr": None})
    assert "To ask the supplier" in note and "Could you check the IBAN" in note


def text_page_with_an_image(image_line: str) -> dict:
    """A text PDF's reading (words without confidence) with one line OCR read from an image on it."""
    rows = [("Supplier: Nordlicht Bürobedarf GmbH", None), ("VAT ID: DE136695976", None),
            ("Invoice no.: INV-2026-0142", None), ("Invoice date: 14 March 2026", None),
            ("Total due: EUR 1,333.87", None), ("IBAN: DE89 3704 0044 0532 0130 00", None), (image_line, 91.0)]
    lines = []
    for number, (text, conf) in enumerate(rows):
        top, x, words = 100 + 20 * number, 50.0, []
        for part in text.split(" "):
            words.append(Word(part, x, top, x + 6 * len(part), top + 12, conf))
            x += 6 * len(part) + 4
        lines.append(Line(page=1, words=words, text=text))
    read = Layout(pages=1, lines=lines, sizes=[[595.0, 842.0]])
    return {"text": read.text, "layout": read.to_json(), "einvoice": None, "pages": 1, "has_text": True,
            "warnings": [], "ocr": {"pages": [], "images": [1], "confidence": 91.0}}


def test_an_iban_in_an_image_that_differs_from_the_text_layers_is_to_check_with_both_readings():
    from agent.reading import findings

    checked = findings.settle(reading.validate(text_page_with_an_image("Bank: GB82 WEST 1234 5698 7654 32"),
                                               today=TODAY))
    (found,) = [f for f in checked["findings"] if f["code"] == "text_and_image_disagree"]
    assert found["blocks"] and found["field"] == "iban"
    assert [(r["value"], r["source"]) for r in found["readings"]] == [
        ("DE89 3704 0044 0532 0130 00", "text"), ("GB82 WEST 1234 5698 7654 32", "ocr")]
    iban = checked["fields"]["iban"]
    assert iban["status"] == "to_check" and len(iban["candidates"]) == 2
    assert workflow.summarize({**checked, "draft": ""}).outcome != "ok"
    # The image printing the same account, or none: nothing to say.
    for image_line in ("Bank: DE89 3704 0044 0532 0130 00", "Thank you for your order"):
        agreed = reading.validate(text_page_with_an_image(image_line), today=TODAY)
        assert not [f for f in agreed["findings"] if f["code"] == "text_and_image_disagree"], image_line


def test_without_tesseract_a_scan_is_unreadable_and_says_ocr_is_not_installed(monkeypatch):
    monkeypatch.setattr(ocr, "LIBRARY", "/nonexistent/libtesseract.so.5")
    monkeypatch.setattr(ocr, "_engine", None)
    assert ocr.available() == ocr.NOT_INSTALLED
    extracted = reading.extract(samples.SCANNED_PDF.read_bytes(), documents.PDF, today=TODAY)
    assert not extracted["has_text"] and extracted["ocr"] is None
    assert extracted["warnings"] == [ocr.NOT_INSTALLED, reading.NO_TEXT]
    checked = reading.validate(extracted, today=TODAY)
    assert checked["readable"] is False
    note = tools.review_note({**checked, "pages": 1, "source": "document", "document_name": "scan.pdf",
                              "warnings": extracted["warnings"], "has_text": False})
    assert "No text could be read from the document" in note and "OCR is not installed" in note
    assert "Please send us a readable copy of the invoice" in note
    # An image is accepted all the same (its headers are fine) and reviewed as unreadable.
    png = io.BytesIO()
    rendered(samples.CLEAN_PDF, 50)[0].save(png, "PNG")
    image = reading.extract(png.getvalue(), documents.PNG, today=TODAY)
    assert not image["has_text"] and image["pages"] == 1 and ocr.NOT_INSTALLED in image["warnings"]


# --- the worker's limits -------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_ocr_past_its_cpu_limit_is_killed_and_the_worker_serves_the_next_job(needs_ocr, accept, bob):
    from documents.store import Upload
    from jobs.clock import system_clock
    from tests.workers import drain

    scan = image_only_pdf(rendered(CORPUS / "en" / "03-twopage.pdf", 200), 200)
    heavy = accept("document_review", {}, document=Upload(scan, "scan.pdf", "application/pdf"),
                   now=system_clock.now())
    theirs = accept("document_review", {"text": samples.PLAIN_TEXT.read_text()}, user=bob, now=system_clock.now())
    # Not niced: on a loaded machine a niced child waits for a core past the page's time limit
    # before it has spent its one second of CPU (the CPU limit is what is tested).
    done = drain(JOBS_KIND_LIMITS=json.dumps({"document_review": {"cpu_seconds": 1}}), JOBS_HANDLER_NICE="0")
    assert done.returncode == 0, done.stderr[-2000:]
    heavy.refresh_from_db()
    theirs.refresh_from_db()
    assert (heavy.state, heavy.attempts) == ("dead", 1)
    assert heavy.last_error == "cpu_limit: the job needed more than 1 s of processor time"
    assert theirs.state == "completed" and theirs.leased_by == heavy.leased_by  # the same worker went on


# --- the benchmark -------------------------------------------------------------------------


def test_ocrbench_smoke(needs_ocr, tmp_path):
    if shutil.which("pdftoppm") is None:
        if os.environ.get("REQUIRE_OCR") == "1":
            pytest.fail("REQUIRE_OCR=1 but pdftoppm (poppler-utils) is not installed", pytrace=False)
        pytest.skip("pdftoppm (poppler-utils) is not installed")
    (tmp_path / "multilingual" / "it").mkdir(parents=True)
    shutil.copy(CORPUS / "it" / "01-letter.pdf", tmp_path / "multilingual" / "it")
    (tmp_path / "multilingual" / "truth.json").write_text(json.dumps({"it/01-letter.pdf": TRUTH["it/01-letter.pdf"]}))
    out = StringIO()
    call_command("ocrbench", str(tmp_path / "multilingual"), "--dpi", "150", "--json", stdout=out)
    report = json.loads(out.getvalue())
    italian = report["groups"]["it"]
    assert italian["documents"] == 1 and italian["text"] >= 6 and italian["ratio_150"] >= 0.85
    assert report["speed"]["150"]["pages"] == 1 and report["speed"]["150"]["pages_per_second_per_core"] > 0
    assert 0 <= report["speed"]["150"]["loading_seconds"] < report["speed"]["150"]["cpu_seconds"]


def test_the_engine_counts_the_cpu_of_loading_a_language_set_once_per_load(needs_ocr):
    from PIL import Image

    tesseract, blank = ocr.engine(), Image.new("L", (200, 60), 255)
    kept = tesseract.readers.pop("ita+eng", None)  # unloaded, as after a change of language
    if kept is not None:
        tesseract.lib.TessBaseAPIDelete(kept)
    before = tesseract.loading_seconds
    tesseract.read(blank, 300, "ita+eng")
    loaded = tesseract.loading_seconds
    tesseract.read(blank, 300, "ita+eng")
    assert loaded > before and tesseract.loading_seconds == loaded  # kept loaded: counted once

