"""A text PDF's images that carry text are read by OCR into the page's layout where they stand
(a letterhead naming the supplier), and a page of another document appended to the invoice is
named and kept out of its fields. The documents are made here: fpdf2 for the text, Pillow for
the images."""

from __future__ import annotations

import io

from fpdf import FPDF
from PIL import Image, ImageDraw, ImageFont

from agent.reading import documents, reading
from agent.reading.findings import words
from agent.reading.layout import Layout


def letterhead(lines: list[tuple[str, int]], size: tuple[int, int]) -> bytes:
    """A letterhead as a company pastes it in: its name and address drawn on a transparent PNG."""
    image = Image.new("RGBA", size, (255, 255, 255, 0))
    draw = ImageDraw.Draw(image)
    y = 10
    for text, points in lines:
        draw.text((12, y), text, fill=(20, 40, 110, 255), font=ImageFont.load_default(size=points))
        y += int(points * 1.4)
    out = io.BytesIO()
    image.save(out, "PNG")
    return out.getvalue()


def body(pdf: FPDF, lines: list[str], *, top: float) -> None:
    pdf.set_font("helvetica", size=10)
    pdf.set_xy(15, top)
    for line in lines:
        pdf.cell(0, 6, line, new_x="LMARGIN", new_y="NEXT")


INVOICE = ["Rechnung Nr. RE-8841", "Rechnungsdatum: 02.03.2026", "", "Rechnung an:", "Muster Handel AG",
           "Bahnhofstrasse 1", "10115 Berlin", "", "Pos.  Beschreibung           Menge   Preis",
           "1     Drehmomentschluessel    2       500,00", "", "Nettobetrag: 1.000,00 EUR",
           "USt 19 %: 190,00 EUR", "Gesamtbetrag: 1.190,00 EUR", "", "USt-IdNr. DE136695976",
           "IBAN DE89 3704 0044 0532 0130 00"]


def invoice_with_letterhead() -> bytes:
    pdf = FPDF()
    pdf.add_page()
    head = letterhead([("Kestrel Tooling GmbH", 64), ("Hafenstrasse 4, 28195 Bremen", 30)], (1100, 170))
    pdf.image(io.BytesIO(head), x=15, y=10, w=110)  # 110 mm wide: the name prints about 16 pt tall
    body(pdf, INVOICE, top=45)
    return bytes(pdf.output())


def test_a_supplier_named_only_in_the_letterhead_image_is_read_where_and_as_large_as_it_prints(needs_ocr):
    content = invoice_with_letterhead()
    assert "Kestrel" not in documents.read_text(content, documents.PDF).text  # only the image names it

    extracted = reading.extract(content, documents.PDF)
    read = Layout.from_json(extracted["layout"])
    name = next(line for line in read.lines if "Kestrel Tooling GmbH" in line.text)
    first_text = next(line for line in read.lines if "Rechnung Nr." in line.text)
    assert name.page == 1 and name.box is not None and first_text.box is not None
    assert name.box[3] < first_text.box[1], "the letterhead stands above the text, where it is printed"
    assert 42 < name.box[0] < 60  # 15 mm from the page's edge, and a little margin in the image
    height = name.box[3] - name.box[1]
    assert 12 < height < 30, f"a 16 pt name keeps about its printed height, not {height:.1f} pt"
    assert read.lines.index(name) < read.lines.index(first_text)  # in reading order
    assert extracted["ocr"]["images"] == [1] and not extracted["ocr"]["pages"]

    checked = reading.validate(extracted)
    assert checked["reading"] == "text"  # the page is text; only its letterhead was read by OCR
    assert checked["fields"]["supplier_name"]["value"] == "Kestrel Tooling GmbH"
    assert checked["fields"]["total_amount"]["value"] == "1190.00"


def test_an_icon_and_text_printed_over_an_image_are_not_read_again(needs_ocr):
    pdf = FPDF()
    pdf.add_page()
    pdf.image(io.BytesIO(letterhead([("x", 20)], (40, 40))), x=180, y=10, w=5)  # an icon: 14 pt, no print
    # A coloured band with the page's own text printed over it.
    band = Image.new("RGB", (1200, 120), (210, 225, 245))
    out = io.BytesIO()
    band.save(out, "PNG")
    pdf.image(io.BytesIO(out.getvalue()), x=15, y=10, w=150)
    pdf.set_font("helvetica", "B", size=18)
    pdf.set_xy(20, 14)
    pdf.cell(0, 8, "Kestrel Tooling GmbH")
    body(pdf, INVOICE, top=45)

    extracted = reading.extract(bytes(pdf.output()), documents.PDF)
    assert extracted["text"].count("Kestrel") == 1
    assert extracted["ocr"] is None


# --- a page of another document appended ------------------------------------------------------


def scanned_page(lines: list[tuple[str, int]], dpi: int = 200) -> Image.Image:
    """An A4 page as a scanner gives it: grey, the lines drawn in print of ``points`` points."""
    page = Image.new("L", (int(8.27 * dpi), int(11.69 * dpi)), 255)
    draw = ImageDraw.Draw(page)
    y = int(0.8 * dpi)
    for text, points in lines:
        size = int(points * dpi / 72)
        draw.text((int(0.8 * dpi), y), text, fill=0, font=ImageFont.load_default(size=size))
        y += int(size * 1.6)
    return page


def two_pages(second: list[str] | Image.Image) -> bytes:
    pdf = FPDF()
    pdf.set_auto_page_break(False)
    pdf.add_page()
    pdf.set_font("helvetica", "B", size=16)
    pdf.set_xy(15, 12)
    pdf.cell(0, 8, "Kestrel Tooling GmbH")
    body(pdf, INVOICE, top=30)
    pdf.add_page()
    if isinstance(second, Image.Image):
        out = io.BytesIO()
        second.save(out, "PNG")
        pdf.image(io.BytesIO(out.getvalue()), x=0, y=0, w=210)
        pdf.set_font("helvetica", size=8)
        pdf.set_xy(180, 285)
        pdf.cell(0, 5, "Seite 2/2")  # the scanning office's page number: a few words of text
    else:
        body(pdf, second, top=15)
    return bytes(pdf.output())


WORK_ORDER = [("Arbeitsauftrag Nr. AA-5521", 16), ("Elektro Brenner KG", 12), ("Werkstrasse 9, 80331 Muenchen", 11),
              ("", 11), ("Montage Schaltschrank     8 Std", 11), ("Gesamtbetrag: 9.999,00 EUR", 12),
              ("IBAN DE02 1203 0000 0000 2020 51", 11)]


def test_a_scanned_work_order_appended_to_the_invoice_is_named_and_its_total_never_competes(needs_ocr):
    content = two_pages(scanned_page(WORK_ORDER))
    extracted = reading.extract(content, documents.PDF)
    assert "9.999,00" not in extracted["text"] and "Rechnung Nr. RE-8841" in extracted["text"]
    assert [o["page"] for o in extracted["other_documents"]] == [2]
    assert extracted["ocr"]["images"] == [2]  # the page has a line of text: its scan was read as an image

    checked = reading.validate(extracted)
    assert checked["fields"]["total_amount"]["value"] == "1190.00"
    assert checked["fields"]["iban"]["value"].replace(" ", "") == "DE89370400440532013000"
    assert any(f.startswith("page 2 appears to be another document") and "Arbeitsauftrag" in f
               for f in words(checked["findings"])), checked["findings"]


def test_a_second_invoice_appended_is_named_and_a_continued_invoice_is_not():
    other = ["Rechnung Nr. RE-9107", "Rechnungsdatum: 11.03.2026", "Gesamtbetrag: 77.000,00 EUR"]
    extracted = reading.extract(two_pages(other), documents.PDF)
    assert [o["page"] for o in extracted["other_documents"]] == [2]
    checked = reading.validate(extracted)
    assert checked["fields"]["total_amount"]["value"] == "1190.00"
    assert checked["fields"]["invoice_number"]["value"] == "RE-8841"
    assert any("page 2" in f and "RE-9107" in f for f in words(checked["findings"]))

    # Its own second page: the title and number again, or no title at all (the terms), stays the invoice's.
    for continued in (["Rechnung Nr. RE-8841", "Seite 2", "Zahlbar ohne Abzug"],
                      ["Allgemeine Geschaeftsbedingungen", "1. Geltung"],
                      ["Lieferschein", "Zahlbar ohne Abzug"],  # a heading of the invoice, with no number of its own
                      ["Bestellung 4711-B", "Zahlbar ohne Abzug"]):  # the buyer's order, invoiced here
        extracted = reading.extract(two_pages(continued), documents.PDF)
        assert extracted["other_documents"] == []
        assert "Zahlbar" in extracted["text"] or "Geltung" in extracted["text"]
        assert reading.validate(extracted)["findings"] == []


def test_an_invoice_from_another_supplier_without_a_number_is_told_by_its_tax_id():
    other = ["Rechnung", "Elektro Brenner KG", "USt-IdNr. DE129273398", "Gesamtbetrag: 2.000,00 EUR"]
    extracted = reading.extract(two_pages(other), documents.PDF)
    assert [o["page"] for o in extracted["other_documents"]] == [2]
    assert "DE129273398" in words(reading.validate(extracted)["findings"])[0]


def test_a_bank_account_printed_only_in_a_small_image_on_the_last_page_is_read_before_it_is_called_missing(
        needs_ocr):
    """The first page's text names the supplier; the IBAN is only in a footer image on page 2, too
    small for a scanned page: the last page is read whole by OCR before the IBAN is called missing."""
    footer = letterhead([("IBAN DE89 3704 0044 0532 0130 00", 34)], (900, 70))
    pdf = FPDF()
    pdf.add_page()
    body(pdf, [line for line in INVOICE if not line.startswith("IBAN")], top=20)
    pdf.add_page()
    body(pdf, ["Allgemeine Geschaeftsbedingungen", "Zahlbar innerhalb von 14 Tagen."], top=20)
    pdf.image(io.BytesIO(footer), x=15, y=260, w=90)
    content = bytes(pdf.output())
    assert "DE89" not in documents.read_text(content, documents.PDF).text  # only the image prints it

    extracted = reading.extract(content, documents.PDF)
    checked = reading.validate(extracted)
    iban = checked["fields"]["iban"]
    assert iban["status"] == "present" and iban["value"] == "DE89 3704 0044 0532 0130 00", iban
    assert iban["evidence"]["page"] == 2 and 2 in extracted["ocr"]["images"]


def test_a_text_pdf_whose_fields_are_all_in_its_text_is_not_read_again(needs_ocr, monkeypatch):
    from agent.reading import ocr

    def never(*args, **kwargs):
        raise AssertionError("read whole although nothing was missing")

    monkeypatch.setattr(ocr, "read_whole_pages", never)
    pdf = FPDF()
    pdf.add_page()
    body(pdf, ["Kestrel Tooling GmbH", *INVOICE], top=20)
    checked = reading.validate(reading.extract(bytes(pdf.output()), documents.PDF))
    assert checked["fields"]["iban"]["status"] == "present"
