"""The positioned reading of a page: words, lines, columns, and the bounds and refusals of reading."""

from __future__ import annotations

import pytest

from agent.reading import documents, layout
from documents.errors import DamagedDocument, UnsupportedDocument
from tests.pdfs import make_pdf


def test_words_come_with_their_boxes_in_reading_order():
    content = make_pdf([(300, 100, "right column"), (50, 100, "Left column"), (50, 60, "Top line")])
    read = layout.read_layout(content, documents.PDF)
    assert read.pages == 1 and read.sizes[0] == pytest.approx([595.3, 841.9], abs=0.5)
    assert [line.text.split() for line in read.lines] == [["Top", "line"], ["Left", "column", "right", "column"]]
    top = read.lines[0]
    assert [w.text for w in top.words] == ["Top", "line"]
    x0, top_y, x1, bottom = top.box
    assert 49 <= x0 <= 51 and top_y < 60 < bottom and x1 > x0
    assert all(w.x0 < w.x1 and w.top < w.bottom for line in read.lines for w in line.words)


def test_a_wide_gap_between_columns_stays_visible_in_the_line_text():
    content = make_pdf([(50, 100, "Invoice number"), (300, 100, "INV-42"), (50, 120, "one two")])
    lines = [line.text for line in layout.read_layout(content, documents.PDF).lines]
    assert lines[0].startswith("Invoice number  ") and lines[0].endswith("INV-42")  # two spaces or more
    assert lines[1] == "one two"  # an ordinary space stays one


def test_lines_are_numbered_by_page():
    read = layout.read_layout(make_pdf([(50, 100, "Page text")], pages=2), documents.PDF)
    assert [line.page for line in read.lines] == [1, 2]
    assert read.text == "Page text\nPage text"


def test_the_layout_survives_its_json_checkpoint():
    read = layout.read_layout(make_pdf([(50, 100, "Total"), (300, 100, "EUR 12.50")]), documents.PDF)
    data = read.to_json()
    again = layout.Layout.from_json(data)
    assert again.text == read.text and again.pages == read.pages
    assert again.lines[0].box == pytest.approx(read.lines[0].box, abs=0.1)
    assert isinstance(data["lines"][0][2][0][0], str)  # compact: a word is [text, x0, top, x1, bottom]


def test_the_json_is_bounded_by_the_text_limit(monkeypatch):
    monkeypatch.setattr(documents, "MAX_TEXT_CHARS", 30)
    read = layout.Layout.from_text("\n".join(["twelve chars"] * 10))
    assert len(layout.Layout.from_json(read.to_json()).text) <= 30


def test_reading_a_pdf_stops_at_the_text_limit(monkeypatch):
    monkeypatch.setattr(documents, "MAX_TEXT_CHARS", 40)
    content = make_pdf([(50, 40 + 14 * row, f"line number {row} of many") for row in range(40)])
    read = layout.read_layout(content, documents.PDF)
    assert 0 < len(read.text) <= 80 and len(read.lines) < 40


def test_text_and_docx_come_without_boxes_paged_like_read_text():
    text = "Invoice number: 42\n" + "x" * (documents.CHARS_PER_PAGE + 10)
    read = layout.read_layout(text.encode(), documents.TEXT)
    assert read.lines[0].text == "Invoice number: 42" and read.lines[0].box is None
    assert read.pages == 2 and read.lines[-1].page == 1  # a line belongs to the page it starts on
    assert layout.Layout.from_text("a\nb").text == "a\nb"


def test_a_damaged_pdf_is_refused_as_read_text_refuses_it():
    with pytest.raises(DamagedDocument):
        layout.read_layout(b"%PDF-1.7\n garbage with no objects", documents.PDF)


def test_an_unknown_media_type_is_refused():
    with pytest.raises(UnsupportedDocument):
        layout.read_layout(b"whatever", "image/png")


def test_a_pdf_pdfium_reads_as_empty_is_refused_as_read_text_refuses_it():
    from tests import hostile

    with pytest.raises(DamagedDocument):  # pypdf: a recursive content stream, damaged for good
        layout.read_layout(hostile.recursive_pdf(), documents.PDF)


def test_a_page_without_text_is_an_empty_layout_with_its_size():
    from fpdf import FPDF

    pdf = FPDF(unit="pt", format="A4")
    pdf.add_page()
    read = layout.read_layout(bytes(pdf.output()), documents.PDF)
    assert (read.text, read.pages, len(read.sizes)) == ("", 1, 1)


def test_ligatures_are_read_as_their_letters():
    from pathlib import Path

    from fpdf import FPDF

    font = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
    if not font.exists():
        pytest.skip("needs a font with ligature glyphs")
    pdf = FPDF(unit="pt", format="A4")
    pdf.add_font("dejavu", "", str(font))
    pdf.set_font("dejavu", size=10)
    pdf.add_page()
    pdf.text(50, 100, "Umsatzsteuer-Identi\ufb01kationsnummer DE136695976")
    assert layout.read_layout(bytes(pdf.output()), documents.PDF).text.startswith("Umsatzsteuer-Identifikations")
