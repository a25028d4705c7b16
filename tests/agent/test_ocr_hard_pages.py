"""OCR of the pages that are hard to read: a faded receipt photographed in a shadow, a long
receipt's photo (bounded in pixels, so in time), a scan left as it is when its paper is even."""

from __future__ import annotations

import io

from PIL import Image, ImageChops, ImageDraw, ImageFilter, ImageFont

from agent.reading import documents, ocr, pages, reading
from agent.reading.layout import Layout
from agent.reading.ocr import scans

RECEIPT = ["CAFE LINDENHOF", "Marktplatz 3, 79098 Freiburg", "USt-IdNr. DE136695976", "", "Beleg-Nr. 4471",
           "Datum: 14.03.2026", "2 x Cappuccino      7,80", "1 x Kuchen          3,90", "", "SUMME EUR          11,70"]


def faded_receipt(*, depth: int, shadow: float, size: tuple[int, int] = (600, 900),
                  print_size: int = 26) -> Image.Image:
    """Thermal print ``depth`` grey levels darker than its paper, the paper falling from white on
    one side to ``shadow`` of its brightness on the other (a phone's shadow), slightly blurred."""
    print_ = Image.new("L", size, 0)
    draw = ImageDraw.Draw(print_)
    y = 30
    for line in RECEIPT:
        draw.text((30, y), line, fill=depth, font=ImageFont.load_default(size=print_size))
        y += int(print_size * 1.7)
    light = Image.linear_gradient("L").rotate(-90).resize(size)
    paper = light.point(lambda v: int(245 - v * shadow))
    return ImageChops.subtract(paper, print_).filter(ImageFilter.GaussianBlur(0.7))


def png(image: Image.Image) -> bytes:
    out = io.BytesIO()
    image.save(out, "PNG")
    return out.getvalue()


def test_a_faded_receipt_in_a_shadow_is_read(needs_ocr):
    content = png(faded_receipt(depth=45, shadow=0.55))
    checked = reading.validate(reading.extract(content, documents.PNG))
    values = {name: field.get("value") for name, field in checked["fields"].items()}
    assert values["total_amount"] == "11.70", values
    assert values["vat_id"] == "DE136695976" and values["invoice_date"] == "2026-03-14", values


def test_even_paper_with_dark_print_is_left_as_it_is():
    page = faded_receipt(depth=200, shadow=0.0)
    assert scans.flattened(page) is page
    uneven = faded_receipt(depth=45, shadow=0.55)
    flat = scans.flattened(uneven)
    assert flat is not uneven
    # The paper is white on the lit side and in the shadow alike; the print stays darker than it.
    assert uneven.crop((0, 700, 100, 900)).getextrema()[1] < 150
    assert flat.crop((500, 700, 600, 900)).getextrema()[0] > 245
    assert flat.crop((0, 700, 100, 900)).getextrema()[0] > 245
    assert flat.crop((20, 20, 400, 480)).getextrema()[0] < 230


def test_a_long_receipt_photo_is_read_within_one_a4_page_of_pixels(needs_ocr):
    photo = Image.new("L", (950, 3400), 235)  # no resolution of its own: taken for an A4 page's width
    pages = scans.pages_of(png(photo))
    grey, _dpi = next(pages)
    pages.close()
    assert grey.width * grey.height <= scans.MAX_PAGE_PIXELS * 1.01  # each side rounded
    assert grey.width > 950  # still scaled up towards the resolution Tesseract reads best


def test_a_receipt_scanned_on_its_side_is_turned_and_read(needs_ocr):
    upright = faded_receipt(depth=200, shadow=0.0)
    for angle in (90, 270):
        content = png(upright.rotate(angle, expand=True, fillcolor=245))
        extracted = reading.extract(content, documents.PNG)
        assert extracted["ocr"]["turned"] == [1]
        values = {name: field.get("value") for name, field in reading.validate(extracted)["fields"].items()}
        assert values["total_amount"] == "11.70" and values["vat_id"] == "DE136695976", values
        # The boxes are the turned page's: the page is as tall as the receipt, not as wide.
        width, height = Layout.from_json(extracted["layout"]).sizes[0]
        assert height > width


def test_the_preview_of_a_page_read_on_its_side_is_turned_as_it_was_read(needs_ocr):
    upright = faded_receipt(depth=200, shadow=0.0)
    on_its_side = upright.rotate(90, expand=True, fillcolor=245)
    as_pdf = io.BytesIO()
    on_its_side.convert("RGB").save(as_pdf, "PDF", resolution=100)
    for content, media_type in ((png(on_its_side), documents.PNG), (as_pdf.getvalue(), documents.PDF)):
        extracted = reading.extract(content, media_type)
        turns = pages.turns_of(extracted["ocr"])
        assert turns == {1: 270}, media_type  # a quarter turn back upright
        [(_image, width, height)] = pages.render(content, media_type, ocr=extracted["ocr"])
        assert height > width, media_type  # as tall as the receipt, as the evidence boxes' page is
        [(_image, width, height)] = pages.render(content, media_type)  # the same page as it was sent
        assert width > height, media_type


def test_an_upright_page_is_not_turned(needs_ocr):
    extracted = reading.extract(png(faded_receipt(depth=200, shadow=0.0)), documents.PNG)
    assert "turned" not in extracted["ocr"]


def test_large_print_is_read_scaled_down(needs_ocr):
    # A receipt photographed close: words about 80 pixels tall where Tesseract needs 32.
    content = png(faded_receipt(depth=200, shadow=0.0, size=(1800, 2700), print_size=78))
    extracted = reading.extract(content, documents.PNG)
    assert 0.4 <= extracted["ocr"]["scale"] < 0.6
    values = {name: field.get("value") for name, field in reading.validate(extracted)["fields"].items()}
    assert values["total_amount"] == "11.70" and values["vat_id"] == "DE136695976", values
    # The boxes stay in the page's points: the total's line lies in the receipt's upper half.
    box = reading.validate(extracted)["fields"]["total_amount"]["evidence"]["box"]
    width, height = Layout.from_json(extracted["layout"]).sizes[0]
    assert box[3] < height / 2 and box[2] < width


def test_the_legal_line_printed_up_the_margin_is_read_where_it_prints(needs_ocr):
    dpi = 200
    page = Image.new("L", (int(8.27 * dpi), int(11.69 * dpi)), 255)
    draw = ImageDraw.Draw(page)
    y = int(1.0 * dpi)
    for line in ["Kestrel Tooling", "Rechnung Nr. RE-8841", "Rechnungsdatum: 02.03.2026", "",
                 "Drehmomentschluessel    2 x 500,00", "Gesamtbetrag: 1.190,00 EUR"]:
        draw.text((int(1.2 * dpi), y), line, fill=0, font=ImageFont.load_default(size=int(11 * dpi / 72)))
        y += int(0.3 * dpi)
    legal = "Kestrel Tooling GmbH  USt-IdNr. DE136695976  IBAN DE89 3704 0044 0532 0130 00"
    strip = Image.new("L", (int(9 * dpi), int(0.25 * dpi)), 255)
    ImageDraw.Draw(strip).text((0, 4), legal, fill=0, font=ImageFont.load_default(size=int(8 * dpi / 72)))
    page.paste(strip.rotate(90, expand=True), (int(0.3 * dpi), int(1.5 * dpi)))  # read bottom to top
    out = io.BytesIO()
    page.save(out, "PNG", dpi=(dpi, dpi))

    extracted = reading.extract(out.getvalue(), documents.PNG)
    values = {name: field.get("value") for name, field in reading.validate(extracted)["fields"].items()}
    assert values["vat_id"] == "DE136695976", values
    assert (values["iban"] or "").replace(" ", "") == "DE89370400440532013000", values
    read = Layout.from_json(extracted["layout"])
    margin = next(line for line in read.lines if "DE136695976" in line.text)
    assert margin.box is not None and margin.box[2] < 0.08 * read.sizes[0][0]  # in the left margin
    assert margin.box[3] - margin.box[1] > 200  # running up the page


def test_a_page_without_margin_text_is_read_once(needs_ocr, monkeypatch):
    calls = []
    real = ocr.margins.read_margins

    def counted(*args, **kwargs):
        lines, strips = real(*args, **kwargs)
        calls.append(strips)
        return lines, strips

    monkeypatch.setattr(ocr.margins, "read_margins", counted)
    reading.extract(png(faded_receipt(depth=200, shadow=0.0)), documents.PNG)
    assert calls == [[]]


def test_the_models_of_the_last_languages_stay_loaded(needs_ocr, monkeypatch):
    tesseract = ocr.engine()
    loaded = []
    real = tesseract._api
    monkeypatch.setattr(tesseract, "_api", lambda languages: loaded.append(languages) or real(languages))
    monkeypatch.setattr(tesseract, "readers", {})
    blank = Image.new("L", (60, 60), 255)
    for languages in ("deu+eng", "fra+eng", "deu+eng", "spa+eng", "ita+eng", "deu+eng", "fra+eng"):
        tesseract.read(blank, 300, languages)
    assert loaded == ["deu+eng", "fra+eng", "spa+eng", "ita+eng", "fra+eng"]  # fra+eng used least lately
    assert list(tesseract.readers) == ["ita+eng", "deu+eng", "fra+eng"]
    assert len(tesseract.readers) == ocr.tesseract.MAX_READERS
    for api in tesseract.readers.values():  # the process's own models come back with monkeypatch
        tesseract.lib.TessBaseAPIDelete(api)


def test_a_page_with_nothing_legible_on_it_is_read_in_english_alone(needs_ocr, monkeypatch):
    """Specks everywhere and no word: every other model tried on every speck cost a page of noise
    12.5 s of CPU (the fuzz found it); a page with legible words is still read in all seven."""
    import random

    engine = ocr.engine()
    asked: list[str] = []
    read = engine.read
    monkeypatch.setattr(engine, "read", lambda image, dpi, languages: asked.append(languages) or read(image, dpi,
                                                                                                      languages))
    rng = random.Random(7)
    noise = Image.frombytes("L", (900, 1200), bytes(rng.choice((0, 255, 255, 255)) for _ in range(900 * 1200)))
    ocr.read_image(png(noise.filter(ImageFilter.GaussianBlur(0.6))))
    assert ocr.LANGUAGES not in asked and asked[-1] == "eng"
    asked.clear()
    ocr.read_image(png(faded_receipt(depth=200, shadow=0.0)))
    assert ocr.LANGUAGES in asked  # legible words, no language told: all seven
