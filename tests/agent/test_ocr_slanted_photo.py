"""A photographed sheet seen at a slant is also read squared, and kept so when that reading gives more
fields; a sheet cut by the picture's edge, one already square, and a scan are read as they are. Every
receipt here is made up."""

from __future__ import annotations

import io

from PIL import Image, ImageDraw, ImageFilter, ImageFont

from agent.reading import documents, pages, reading
from agent.reading.ocr import sheet

LINES = ["IJZERHANDEL VERBEEK B.V.", "Kerkstraat 41, 3811 CV Amersfoort", "Btw NL805524734B01", "",
         "Bonnr. 2231", "Datum: 05-11-2026", "Schroeven 4x40      6,95", "Kitpistool          18,50",
         "Verf wit 2,5 l      22,90", "", "TOTAAL EUR          48,35"]


def receipt(size: tuple[int, int] = (640, 1000), print_size: int = 28) -> Image.Image:
    page = Image.new("L", size, 250)
    draw = ImageDraw.Draw(page)
    y = 40
    for line in LINES:
        draw.text((36, y), line, fill=20, font=ImageFont.load_default(size=print_size))
        y += int(print_size * 1.9)
    return page


def on_a_table(page: Image.Image, *, keystone: float, shift: int = 0, room: float = 1.5) -> Image.Image:
    """The page photographed on a dark table from its near end: its far edge ``keystone`` of its width
    narrower (and ``shift`` pixels to the side); ``room`` is how much wider the picture is than the page."""
    w, h = page.size
    width, height = int(w * room), int(h * (1 + (room - 1) / 2))
    inset = keystone * w / 2
    left, top = (width - w) / 2, (height - h) / 2
    seen = [(left + inset + shift, top), (left + w - inset + shift, top), (left + w, top + h), (left, top + h)]
    to_page = sheet._perspective(seen, [(0, 0), (w, 0), (w, h), (0, h)])
    table = Image.new("L", (width, height), 60)
    table.paste(page.transform((width, height), Image.Transform.PERSPECTIVE, to_page, Image.Resampling.BICUBIC),
                (0, 0), Image.new("L", page.size, 255).transform((width, height), Image.Transform.PERSPECTIVE, to_page))
    return table.filter(ImageFilter.GaussianBlur(0.8))


def jpeg(image: Image.Image) -> bytes:
    out = io.BytesIO()
    image.save(out, "JPEG", quality=85)
    return out.getvalue()


def fields_of(content: bytes) -> dict:
    checked = reading.validate(reading.extract(content, documents.JPEG))
    return {name: field.get("value") for name, field in checked["fields"].items()}


def test_a_receipt_photographed_at_a_slant_is_squared_and_its_total_read(needs_ocr, monkeypatch):
    content = jpeg(on_a_table(receipt(), keystone=0.4, shift=25))
    extracted = reading.extract(content, documents.JPEG)
    assert extracted["ocr"]["squared"] == [1]
    read = fields_of(content)
    assert (read["total_amount"], read["invoice_date"], read["vat_id"]) == ("48.35", "2026-11-05", "NL805524734B01")
    # The preview draws the page as it was read, so the evidence boxes fit it: the sheet, not the table.
    [(_png, width, height)] = pages.render(content, documents.JPEG, ocr=extracted["ocr"])
    assert 1.45 < height / width < 1.65  # the receipt's own shape (1000 x 640 and a margin)
    [(_png, width, height)] = pages.render(content, documents.JPEG)
    assert height / width < 1.35  # the photo's (1250 x 960)
    monkeypatch.setattr(sheet, "KEYSTONE", 0.0)  # never squared: the slanted total line is not read
    assert fields_of(content)["total_amount"] is None


def test_a_squared_reading_that_gives_fewer_fields_is_not_kept(needs_ocr, monkeypatch):
    content = jpeg(on_a_table(receipt(), keystone=0.12))
    assert fields_of(content)["total_amount"] == "48.35"  # read as it is: slanted, but little
    squared = sheet.squared

    def cut_in_half(grey):
        """A squaring whose crop cut the sheet's lower half off (the total and the date with it)."""
        whole = squared(grey)
        return whole.crop((0, 0, whole.width, whole.height // 2))

    monkeypatch.setattr(sheet, "squared", cut_in_half)
    extracted = reading.extract(content, documents.JPEG)
    assert "squared" not in extracted["ocr"]
    checked = reading.validate(extracted)
    assert (checked["fields"]["total_amount"]["value"], checked["fields"]["invoice_date"]["value"]) == (
        "48.35", "2026-11-05")


def test_the_squared_sheet_keeps_the_photos_scale_and_loses_no_edge():
    photo = on_a_table(receipt(), keystone=0.4)
    squared = sheet.squared(photo)
    assert squared is not photo
    # About the page's own size (its near edge, the wider, and its height), with a margin all round.
    assert 640 <= squared.width <= 700 and 1000 <= squared.height <= 1060
    # The page's four corners stand just inside the squared picture's, the table a thin margin round them.
    inside = [squared.getpixel(p) for p in ((30, 30), (squared.width - 30, 30), (30, squared.height - 30),
                                            (squared.width - 30, squared.height - 30))]
    assert min(inside) > 200, inside
    assert squared.getpixel((3, 3)) < 100


def test_a_sheet_already_square_is_read_as_it_is():
    photo = on_a_table(receipt(), keystone=0.0)
    assert sheet.squared(photo) is photo


def test_a_sheet_cut_by_the_pictures_edge_is_read_as_it_is():
    photo = on_a_table(receipt(), keystone=0.4).crop((0, 200, 960, 1250))  # its top runs out of the picture
    assert sheet.squared(photo) is photo


def test_a_page_with_no_table_around_it_is_read_as_it_is():
    page = receipt()
    assert sheet.squared(page) is page
