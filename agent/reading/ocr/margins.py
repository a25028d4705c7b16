"""Text printed up or down a scanned page's margin (a company's legal line, its register and
bank), read turned when the margin suggests it, and placed on the page where it prints.

A page is read line by line, left to right, so a line printed vertically comes out as noise
or nothing. Each side strip (``STRIP`` of the page's width) is looked at only when the page's
own words leave it (almost) empty and it holds ink spread along it as print is (not a scanner's black
edge, not a punch hole); then it alone is read turned a quarter each way, and the way that
reads more legible words is kept, when it reads more than twice what the upright reading did.
At most two strips a page, each a sliver of the page to read.
"""

from __future__ import annotations

from typing import Any

from ..layout import Line, Word
from .tesseract import Engine, Found

STRIP = 0.08  # of the page's width, on each side
INK = 128  # a pixel darker than this is ink
MIN_INK = 0.003  # share of the strip's pixels: less is specks
MAX_INK = 0.25  # more is a black edge or a bar, not print
MIN_SPREAD = 0.2  # the ink runs along at least this share of the page's height
MIN_LEGIBLE = 3  # words of three letters or more read confidently, for the reading to count
UPRIGHT_WORDS = 6  # a strip where the page's own reading finds this many is the page's text, not a margin's

LEGIBLE_CONFIDENCE = 70


def read_margins(tesseract: Engine, image: Any, dpi: float, words: list[Found], *, languages: str,
                 number: int) -> tuple[list[Line], list[tuple[int, int]]]:
    """The lines printed up or down the page's side strips, in page points (see module docstring),
    and the strips (left and right edge, in pixels) they were read from."""
    from PIL import Image

    lines: list[Line] = []
    read: list[tuple[int, int]] = []
    width, height = image.size
    strip = max(1, round(STRIP * width))
    for x0 in (0, width - strip):
        x1 = x0 + strip
        upright = sum(1 for w in words if x0 <= w.left + w.width / 2 <= x1 and _legible(w))
        if upright >= UPRIGHT_WORDS:
            continue  # the page's own lines reach into it: a wide page, no margin text
        box = (x0, 0, x1, height)
        if not _printed_along(image.crop(box)):
            continue
        best: tuple[int, int, list[Found]] | None = None
        for angle in (90, 270):
            turned = image.crop(box).rotate(angle, expand=True, fillcolor=255, resample=Image.Resampling.NEAREST)
            found = tesseract.read(turned, dpi, languages)
            legible = sum(1 for w in found if _legible(w))
            if legible >= max(MIN_LEGIBLE, 2 * upright + 1) and (best is None or legible > best[0]):
                best = (legible, angle, found)
        if best is not None:
            lines += _placed(best[2], best[1], x0=x0, strip=strip, height=height, dpi=dpi, number=number)
            read.append((x0, x1))
    return lines, read


def _legible(word: Found) -> bool:
    return word.conf >= LEGIBLE_CONFIDENCE and sum(c.isalnum() for c in word.text) >= 3


def _printed_along(strip: Any) -> bool:
    """Whether the strip holds print-like ink: a small share of its pixels, spread along it."""
    ink = strip.point(lambda v: 255 if v < INK else 0)  # full size: a reduced copy greys thin strokes away
    share = sum(ink.histogram()[255:]) / max(ink.width * ink.height, 1)
    if not MIN_INK <= share <= MAX_INK:
        return False
    profile = ink.reduce((ink.width, 1)) if ink.width > 1 else ink  # each row's share of ink
    inked_rows = sum(1 for v in profile.tobytes() if v > 0)
    return bool(inked_rows >= MIN_SPREAD * ink.height)


def _placed(found: list[Found], angle: int, *, x0: int, strip: int, height: int, dpi: float,
            number: int) -> list[Line]:
    """The turned strip's words back on the page: each of its lines one Line, its words' boxes
    where they print (tall and narrow), in points."""
    scale = 72.0 / dpi
    by_line: dict[tuple[int, int], list[Word]] = {}
    for w in found:
        if w.conf < LEGIBLE_CONFIDENCE / 2 or not any(c.isalnum() for c in w.text):
            continue
        # The turned strip is ``height`` wide and ``strip`` tall. Turned a quarter counter-clockwise
        # (90), its point (u, v) is (strip - v, u) in the strip; clockwise (270), (v, height - u).
        u0, u1, v0, v1 = w.left, w.left + w.width, w.top, w.top + w.height
        if angle == 90:
            px0, px1, top, bottom = x0 + strip - v1, x0 + strip - v0, u0, u1
        else:
            px0, px1, top, bottom = x0 + v0, x0 + v1, height - u1, height - u0
        by_line.setdefault((w.line_top, w.line_height), []).append(
            Word(w.text, px0 * scale, top * scale, px1 * scale, bottom * scale, w.conf))
    return [Line(page=number, words=words, text=" ".join(word.text for word in words))
            for _key, words in sorted(by_line.items())]
