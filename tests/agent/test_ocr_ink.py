"""A scanned page's coloured print is read as ink: a logo's yellow letter is not dropped."""

from __future__ import annotations

import io

from agent.reading import layout, ocr
from agent.reading.ocr import ink


def test_light_saturated_colour_reads_dark_and_a_highlighters_wash_stays_lighter_than_its_text():
    from PIL import Image

    pixels = {"yellow letter": (251, 196, 3), "highlighter": (250, 240, 120), "black": (0, 0, 0),
              "white": (255, 255, 255), "grey": (128, 128, 128)}
    image = Image.new("RGB", (len(pixels), 1))
    for x, colour in enumerate(pixels.values()):
        image.putpixel((x, 0), colour)
    grey = dict(zip(pixels, (ink.grey(image).getpixel((x, 0)) for x in range(len(pixels))), strict=True))
    assert grey["yellow letter"] < 145  # darker than its luminance (186): print
    assert grey["highlighter"] > 200  # a wash stays light: the text on it stands out
    assert (grey["black"], grey["white"], grey["grey"]) == (0, 255, 128)
    assert ink.grey(Image.new("L", (2, 2), 200)).getpixel((0, 0)) == 200


def letterhead_scan() -> bytes:
    """An image-only PDF whose letterhead prints a name in colours, one letter yellow (as logos do)."""
    from PIL import Image, ImageDraw, ImageFont

    page = Image.new("RGB", (1200, 900), "white")
    draw = ImageDraw.Draw(page)
    font = ImageFont.load_default(size=64)
    x = 60
    for letter, colour in zip("Vox Oolqa", [(66, 133, 244), (251, 196, 3), (234, 67, 53), (255, 255, 255),
                                             (66, 133, 244), (251, 196, 3), (52, 168, 83), (234, 67, 53),
                                             (66, 133, 244)], strict=True):
        draw.text((x, 60), letter, fill=colour, font=font)
        x += round(draw.textlength(letter, font=font))
    body = ImageFont.load_default(size=30)
    for row, line in enumerate(["Invoice 2026-0412", "Date 02.03.2026", "Consulting, March   1,050.42",
                                "VAT 19 %   199.58", "Total   1,250.00 EUR", "Bank transfer within 14 days",
                                "Thank you for your business"]):
        draw.text((60, 200 + 80 * row), line, fill=(40, 40, 40), font=body)
    out = io.BytesIO()
    page.save(out, "PDF", resolution=150)
    return out.getvalue()


def test_a_scanned_letterhead_with_a_yellow_letter_is_read_whole(needs_ocr):
    content = letterhead_scan()
    read, reading = ocr.complete_pdf(content, layout.read_layout(content, "application/pdf"))
    assert reading.pages == [1]
    assert "Vox Oolqa" in read.text
