"""Reading scans and photos: Tesseract's words, in the same Layout a text PDF gives.

A PDF page without a text layer is rendered (pypdfium2) at ``DPI`` and read by Tesseract; a
PNG, JPEG or TIFF upload is turned upright (its EXIF orientation), straightened (a projection
estimate of its skew) and scaled to about ``DPI`` before it is read. Every word keeps its box,
converted to PDF points (``px * 72 / dpi``, origin top-left, as ``agent.reading.layout``), and its
confidence (0-100), so evidence and preview use one convention and the field reading
(``agent.reading.fields``) runs on the OCR layout exactly as on a text layer.

Tesseract is called through its C API (``libtesseract``, Debian's ``tesseract-ocr``) in this
process, not as a ``tesseract`` command: OCR then runs inside the review's isolated child and
counts against that child's own CPU-time and memory limits (``jobs.worker.sandbox``), so a run
past the CPU limit is the child's ``SIGXCPU`` like any other handler's, and a child process of
its own would escape them. The models load once per child and serve its following jobs. The
pixels reach Tesseract as a buffer: no image file is written.

A text PDF's images that carry text (a letterhead, a scanned page behind a page number) are
read too, into their page's lines where they print (``embedded``); text printed up or down a
scanned page's margin is read turned (``margins``).

Images are decoded only here, in the worker's child; acceptance (``agent.reading.documents``) reads
their declared size and frame count and never their pixels.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Generator
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Any

from documents.errors import DamagedDocument

from .. import documents
from ..layout import Layout, Line, Word, lines_of_words
from . import embedded, ink, margins, script
from .language import DETECT_BANDS, DETECT_DPI, DETECT_WORDS, language, told
from .scans import (
    DPI,
    MAX_PAGE_PIXELS,
    MAX_SKEW,
    MAX_UPSCALE,
    PHOTO_WIDTH_INCHES,
    SKEW_THUMBNAIL,
    dpi_for,
    pages_of,
    skew,
    slanted_pages,
)
from .tesseract import LANGUAGES, NOT_INSTALLED, PAGE_SEGMENTATION, Engine, Found, Unavailable

__all__ = [
    "DETECT_DPI", "DETECT_WORDS", "DPI", "LANGUAGES", "LEADER", "LIBRARY", "LOW_CONFIDENCE", "MAX_PAGE_PIXELS",
    "MAX_SKEW", "MAX_UPSCALE", "NOT_INSTALLED", "PAD", "PAGE_SEGMENTATION", "PHOTO_WIDTH_INCHES", "SKEW_THUMBNAIL",
    "PageLimit", "Reading", "Unavailable", "available", "complete_pdf", "engine", "language", "low_confidence_words",
    "pages_of", "read_image", "skew", "told",
]

# A word read with less confidence than this (0-100) makes the field it is evidence for "to check".
LOW_CONFIDENCE = 70
LIBRARY = "tesseract"  # a test names a missing library to see the review without OCR
# Each page's OCR within its own time section: ``PageLimit(page)`` is entered around it (the
# review's extract step gives ``JobContext.time_limit``; elsewhere nothing is enforced).
PageLimit = Callable[[int], AbstractContextManager[Any]]


@dataclass
class Reading:
    """Which pages were read by OCR, each one's confidence, and the whole document's."""

    pages: list[int] = field(default_factory=list)
    confidences: list[float] = field(default_factory=list)
    languages: str = ""  # what the pages were read in, told from the first one
    images: list[int] = field(default_factory=list)  # pages with a text layer whose images were read
    turned: list[int] = field(default_factory=list)  # pages read turned a quarter (scanned on their side)
    turned_degrees: list[int] = field(default_factory=list)  # each one's turn, counter-clockwise
    squared: list[int] = field(default_factory=list)  # photos of a slanted sheet read squared (``sheet``)
    scale: float = 1.0  # the pages read scaled down by this much (large print)

    def to_json(self) -> dict[str, Any] | None:
        if not self.pages:
            return {"pages": [], "images": self.images} if self.images else None
        return {"pages": self.pages, **({"images": self.images} if self.images else {}),
                **({"turned": self.turned, "turned_degrees": self.turned_degrees} if self.turned else {}),
                **({"squared": self.squared} if self.squared else {}),
                **({"scale": round(self.scale, 2)} if self.scale < 1 else {}),
                "page_confidence": [round(c, 1) for c in self.confidences],
                "confidence": round(sum(self.confidences) / len(self.confidences), 1),
                "languages": self.languages, "dpi": DPI}


_engine: Engine | None = None


def engine() -> Engine:
    """This process's Tesseract, loaded on first use; raises ``Unavailable`` without it."""
    global _engine
    if _engine is None or _engine.library != LIBRARY or _engine.detector is None:
        if _engine is not None:
            _engine.close()
            _engine = None
        _engine = Engine(LIBRARY)
    return _engine


def available() -> str | None:
    """None when OCR can run here, else why not (in words)."""
    try:
        engine()
    except Unavailable as exc:
        return str(exc)
    return None


# --- Pages -------------------------------------------------------------------------------


def _page_layout(words: list[Found], page: int, dpi: float) -> list[Line]:
    """Tesseract's words in points, grouped into lines as a text layer's are.

    A word's box is as tall as its line (a text layer's characters are as tall as their font,
    whatever their letters), so the gaps between words read alike. A "word" far lower than its
    line is a leader of dots or a rule read as letters ("ccc eee"): left out. Tesseract's line
    runs from the tallest letter to the lowest descender; a text layer's box is the font's whole
    height, about a quarter taller (``PAD``): padded so, the same gap reads as the same space."""
    scale = 72.0 / dpi
    placed = []
    for w in words:
        line_height = max(w.line_height, w.height)
        if w.height < LEADER * line_height and not set(w.text) <= _LEADER_CHARS:
            continue
        band = (w.line_top, w.line_top + line_height) if w.line_height else (w.top, w.top + w.height)
        top, bottom = band[0] - PAD[0] * (band[1] - band[0]), band[1] + PAD[1] * (band[1] - band[0])
        placed.append(Word(w.text.translate(_SPELLING), w.left * scale, top * scale, (w.left + w.width) * scale,
                           bottom * scale, w.conf))
    return lines_of_words(page, placed)


LEADER = 0.35
PAD = (0.15, 0.1)
_LEADER_CHARS = set(".-_=·…")


# Quotes and dashes Tesseract reads as their typographic forms, read as printed ASCII.
_SPELLING = str.maketrans({"\u2014": "-", "\u2013": "-", "\u2018": "'", "\u2019": "'", "\u201c": '"',
                           "\u201d": '"', "\ufb01": "fi", "\ufb02": "fl"})


def _confidence(lines: list[Line]) -> float:
    """A page's confidence: its words' confidences, weighted by their length."""
    weights = [(len(w.text), w.conf if w.conf is not None else 0.0) for line in lines for w in line.words]
    total = sum(n for n, _ in weights)
    return sum(n * c for n, c in weights) / total if total else 0.0


def _unlimited(page: int) -> AbstractContextManager[Any]:
    return nullcontext()


def complete_pdf(content: bytes, read: Layout, *, page_limit: PageLimit = _unlimited) -> tuple[Layout, Reading]:
    """The PDF's layout with every page that has no text layer read by OCR (raises ``Unavailable``)."""
    chars: dict[int, int] = {}
    for line in read.lines:
        chars[line.page] = chars.get(line.page, 0) + len(line.text.strip())
    if sum(chars.values()) >= documents.MAX_TEXT_CHARS:
        return read, Reading()
    # A page with no character of text is read as a scan; one with a few ("Page 2 of 2") is not.
    scans = [page for page in range(1, read.pages + 1) if not chars.get(page)]
    result = Reading()
    try:  # the images on its pages with text: a letterhead, a logo, a scanned appendix page
        images = embedded.read_images(content, read, engine, page_limit=page_limit)
    except Unavailable:
        if scans:
            raise
        images = {}
    result.images = sorted(images)
    if not scans:
        if not images:
            return read, result
        return Layout(pages=read.pages, lines=_bounded(embedded.merged(read.lines, images)), sizes=read.sizes), result
    tesseract = engine()
    sizes = [list(size) for size in read.sizes]
    lines = embedded.merged([line for line in read.lines if line.page not in scans], images)
    for page in scans:
        with page_limit(page):
            rendered = _rendered(content, page)
            if rendered is None:  # a blank page: nothing drawn on it to read
                continue
            page_lines, read_as, _dpi = _read_page(tesseract, *rendered, page, result)
            if page in result.turned and page <= len(sizes):  # read on its side: its boxes are the turned page's
                sizes[page - 1] = [sizes[page - 1][1], sizes[page - 1][0]]
            del rendered, read_as
        if page_lines:  # a page OCR found nothing on is no page "read from a scan"
            lines.extend(page_lines)
            result.pages.append(page)
            result.confidences.append(_confidence(page_lines))
    lines.sort(key=lambda line: line.page)  # stable: each page's lines stay in reading order
    return Layout(pages=read.pages, lines=_bounded(lines), sizes=sizes), result


def read_whole_pages(content: bytes, read: Layout, numbers: list[int], result: Reading, *,
                     page_limit: PageLimit = _unlimited) -> Layout:
    """The PDF's layout with what OCR reads on the whole of pages ``numbers`` added where the
    layout has no word (``embedded.read_pages``); the pages it added words to join ``result.images``.
    Raises ``Unavailable`` without Tesseract."""
    found = embedded.read_pages(content, read, numbers, engine, page_limit=page_limit)
    result.images = sorted({*result.images, *found})
    if not found:
        return read
    return Layout(pages=read.pages, lines=_bounded(embedded.merged(read.lines, found)), sizes=read.sizes)


def _read_page(tesseract: Engine, image: Any, dpi: float, number: int,
               result: Reading) -> tuple[list[Line], Any, float]:
    """One page's lines, and the page as read with its resolution; the first page with words on
    it also tells the language (an English pass at DETECT_DPI), which its following pages are
    read in, the scale they are read at (``_scale_for``) and, when that pass finds almost
    nothing legible, whether the page lies on its side (``_turn``)."""
    languages = result.languages
    if not languages:
        factor = max(1, round(dpi / DETECT_DPI))
        small = image.reduce(factor) if factor > 1 else image
        found: list[Found] = []
        bands = _bands(small.width, small.height, DETECT_BANDS)
        read_bands = 0
        for box in bands:
            found += tesseract.read(small.crop(box), dpi / factor, "eng")
            read_bands += 1
            if told(found) is not None:
                break
        if told(found) is None and _legible(found) < TURN_WORDS:
            angle, turned_found = _turn(tesseract, small, dpi / factor, found)
            if angle:
                image, found = image.rotate(angle, expand=True, fillcolor=255), turned_found
                result.turned.append(number)
                result.turned_degrees.append(angle)
        languages = language(found)
        if languages == LANGUAGES and len(found) * len(bands) / max(read_bands, 1) > DENSE_WORDS:
            languages = "eng"  # a dense page: see DENSE_WORDS
        elif languages == LANGUAGES and _illegible(found):
            languages = "eng"  # specks, not words: see ILLEGIBLE_SHARE
        if told(found) is None and script.needs_script(found, legible=_legible(found)):
            languages = script.languages_for(tesseract, image, dpi) or languages
        if len(found) >= DETECT_WORDS:
            result.languages = languages
            result.scale = _scale_for(found, factor)
    if result.scale < 1:  # print larger than Tesseract needs (a receipt photographed close): fewer pixels
        from PIL import Image

        image = image.resize((max(1, round(image.width * result.scale)), max(1, round(image.height * result.scale))),
                             Image.Resampling.BOX)
        dpi *= result.scale
    words = tesseract.read(image, dpi, languages)
    if script.reads_cjk(languages):
        words = script.glued(words)
    margin_lines, strips = margins.read_margins(tesseract, image, dpi, words, languages=languages,
                                                  number=number)
    if strips:  # what the line-by-line reading made of the turned print there is noise
        words = [w for w in words if not any(x0 <= w.left + w.width / 2 <= x1 for x0, x1 in strips)]
    return _page_layout(words, number, dpi) + margin_lines, image, dpi


# A page the language pass finds this many words on (counted over the quarters it read, for
# the whole page) is read in English alone when it would be read in all seven: Tesseract tries
# every other model on each word English reads badly, and on a dense page of codes and amounts
# that is nearly every word (35 CPU s for one 300 dpi A4 page of a hundred rows, against 7.5 in
# English; an ordinary invoice holds 150 to 400 words, and all seven cost it a quarter more).
DENSE_WORDS = 900
# A first page whose language pass, upright or turned, finds few legible words (under TURN_WORDS)
# and those a small share of what it read (noise, a photo of a texture, a page too faint to read)
# is read in English alone too: the other six models are tried on every word English reads badly,
# which on such a page is every speck (a page of noise took 12.5 s of CPU in all seven, past the
# review's budget). A sparse page whose few words are legible (a short letter) is read in all seven.
ILLEGIBLE_SHARE = 0.25


def _illegible(found: list[Found]) -> bool:
    legible = _legible(found)
    return legible < TURN_WORDS and legible < ILLEGIBLE_SHARE * max(len(found), 1)


def _bands(width: int, height: int, bands: int) -> list[tuple[int, int, int, int]]:
    """The page cut across into ``bands`` of equal height, top first."""
    edges = [round(i * height / bands) for i in range(bands + 1)]
    return [(0, top, width, bottom) for top, bottom in itertools.pairwise(edges) if bottom > top]


# Tesseract reads print whose words are about this many pixels tall (10 pt at 300 dpi) as well
# as larger print, in fewer pixels: a page whose words are more than LARGE_PRINT times as tall
# (a receipt photographed close: 60 to 85 pixels) is read scaled down to it, at most to
# SMALLEST_SCALE. Told from the legible words of the language pass, for the whole document.
WORD_PIXELS = 32
LARGE_PRINT = 1.5
SMALLEST_SCALE = 0.4


def _scale_for(found: list[Found], factor: int) -> float:
    heights = sorted(w.height * factor for w in found if w.conf >= LOW_CONFIDENCE and
                     sum(c.isalnum() for c in w.text) >= 3)
    if len(heights) < DETECT_WORDS:
        return 1.0
    median = heights[len(heights) // 2]
    return max(SMALLEST_SCALE, WORD_PIXELS / median) if median > LARGE_PRINT * WORD_PIXELS else 1.0


# A first page on which the language pass finds fewer legible words than this (confident, of
# three letters or more) is also read turned a quarter each way, at DETECT_DPI; it is turned
# when one way reads TURN_GAIN times as many. A receipt scanned on its side: 2 words upright,
# 53 turned (0.5 s of CPU more, for such a page only).
TURN_WORDS = 10
TURN_GAIN = 3


def _legible(found: list[Found]) -> int:
    return sum(1 for w in found if w.conf >= LOW_CONFIDENCE and sum(c.isalnum() for c in w.text) >= 3)


def _turn(tesseract: Engine, small: Any, dpi: float, found: list[Found]) -> tuple[int, list[Found]]:
    """The quarter turn (counter-clockwise degrees) that makes the page legible, and its words; 0 when none does."""
    best, best_found, upright = 0, found, _legible(found)
    for angle in (90, 270):
        turned = tesseract.read(small.rotate(angle, expand=True, fillcolor=255), dpi, "eng")
        if _legible(turned) >= max(TURN_GAIN * max(upright, 1), TURN_WORDS, _legible(best_found) + 1):
            best, best_found = angle, turned
    return best, best_found


def _rendered(content: bytes, number: int) -> tuple[Any, float] | None:
    """The page rendered at DPI (less for a huge page), as an 8-bit grey PIL image whose coloured print
    reads dark (``ink``); None for a page with nothing drawn on it."""
    import pypdfium2 as pdfium

    try:
        document = pdfium.PdfDocument(content)
    except pdfium.PdfiumError:
        raise DamagedDocument(documents.DAMAGED_PDF, field="document") from None
    try:
        page = document[number - 1]
        try:
            if pdfium.raw.FPDFPage_CountObjects(page.raw) == 0:
                return None
            width, height = page.get_size()
            dpi = dpi_for(width / 72.0, height / 72.0)
            bitmap = page.render(scale=dpi / 72.0, may_draw_forms=True)  # in colour: ``ink``
            try:
                return ink.grey(bitmap.to_pil()), dpi
            finally:
                bitmap.close()
        finally:
            page.close()
    finally:
        document.close()


def _bounded(lines: list[Line]) -> list[Line]:
    kept, size = [], 0
    for line in lines:
        size += len(line.text) + 1
        if size > documents.MAX_TEXT_CHARS:
            break
        kept.append(line)
    return kept


# --- Images ------------------------------------------------------------------------------


def read_image(content: bytes, *, page_limit: PageLimit = _unlimited,
               judge: Callable[[Layout], tuple[int, ...]] | None = None) -> tuple[Layout, Reading]:
    """A PNG, JPEG or TIFF read by OCR, each frame a page (raises ``Unavailable``). With ``judge`` (how
    well a layout reads: larger is better), a photo of a slanted sheet is also read squared, and kept
    so when the judge scores it higher."""
    tesseract = engine()
    result = Reading()
    lines: list[Line] = []
    sizes: list[list[float]] = []
    pages = pages_of(content)
    try:
        _read_pages(tesseract, pages, page_limit=page_limit, lines=lines, sizes=sizes, result=result)
    finally:
        pages.close()  # the image file is closed with its generator
    if judge is not None:
        lines = _squared_where_read_better(tesseract, content, judge, page_limit=page_limit, lines=lines,
                                           sizes=sizes, result=result)
    return Layout(pages=len(sizes), lines=_bounded(lines), sizes=sizes), result


def _squared_where_read_better(tesseract: Engine, content: bytes, judge: Callable[[Layout], tuple[int, ...]], *,
                               page_limit: PageLimit, lines: list[Line], sizes: list[list[float]],
                               result: Reading) -> list[Line]:
    """The pages' lines, with each photo of a slanted sheet read again squared (``sheet``) and kept so
    when ``judge`` scores the whole reading higher: squaring moves the crop's edge near the print and
    changes the scale, which cost some real photos their shop's name, so the reading decides, page by
    page, not the sheet's shape alone. OCR's own confidence cannot: it rated a slanted receipt's reading
    that lost its total line above the squared one that read it."""
    slanted = slanted_pages(content)
    as_read: tuple[int, ...] | None = None  # the judge's score of the reading kept so far
    try:
        for number, squared, squared_dpi in slanted:
            if number > len(sizes) or number in result.turned or not result.languages:
                continue  # a page read turned, or with too few words to tell its language: as it was read
            index = result.pages.index(number)
            with page_limit(number):
                squared_lines, image, dpi = _read_page(tesseract, squared, squared_dpi, number, result)
            squared_sizes = [*sizes[:number - 1], [image.width * 72.0 / dpi, image.height * 72.0 / dpi],
                             *sizes[number:]]
            others = [line for line in lines if line.page != number]
            squared_layout = Layout(pages=len(sizes), lines=_bounded(sorted(others + squared_lines,
                                                                            key=lambda line: line.page)),
                                    sizes=squared_sizes)
            if as_read is None:
                as_read = judge(Layout(pages=len(sizes), lines=_bounded(lines), sizes=sizes))
            score = judge(squared_layout)
            if score <= as_read:
                continue
            lines, sizes[:], as_read = list(squared_layout.lines), squared_sizes, score
            result.confidences[index] = _confidence(squared_lines)
            result.squared.append(number)
    finally:
        slanted.close()
    return lines


def _read_pages(tesseract: Engine, pages: Generator[tuple[Any, float], None, None], *, page_limit: PageLimit,
                lines: list[Line], sizes: list[list[float]], result: Reading) -> None:
    for number in range(1, documents.MAX_PAGES + 1):
        with page_limit(number):
            prepared = next(pages, None)
            if prepared is None:
                break
            image, dpi = prepared
            page_lines, image, dpi = _read_page(tesseract, image, dpi, number, result)
        sizes.append([image.width * 72.0 / dpi, image.height * 72.0 / dpi])
        lines.extend(page_lines)
        result.pages.append(number)
        result.confidences.append(_confidence(page_lines))


# --- Confidence of the fields --------------------------------------------------------------


def low_confidence_words(read: Layout, page: int, box: list[float]) -> list[Word]:
    """The OCR words inside an evidence box read with less than LOW_CONFIDENCE."""
    return [w for w in scanned_words(read, page, box) if (w.conf or 0.0) < LOW_CONFIDENCE]


def scanned_words(read: Layout, page: int, box: list[float]) -> list[Word]:
    """The words inside an evidence box that OCR read (a text layer's words have no confidence)."""
    x0, top, x1, bottom = box
    found = []
    for line in read.lines:
        if line.page != page:
            continue
        for word in line.words:
            if word.conf is None:
                continue
            middle_x, middle_y = (word.x0 + word.x1) / 2, (word.top + word.bottom) / 2
            if x0 - 1 <= middle_x <= x1 + 1 and top - 1 <= middle_y <= bottom + 1:
                found.append(word)
    return found
