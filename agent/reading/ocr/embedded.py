"""A text PDF's images that carry text (a letterhead, a logo with the company's details, a scanned
page), read by OCR and placed in the page's layout where the image stands, at its printed size.

Which images: on the first page every image tall and wide enough to hold a line of print
(``MIN_HEIGHT`` x ``MIN_WIDTH`` points and ``MIN_PIXELS`` pixels tall: an icon or a rule holds
none); on the other pages only an image covering at least ``SCANNED_PAGE`` of the page among
few words of text (a scanned appendix behind a page number or a stamp). A page whose text is
all invisible is a scan with its own OCR layer: its images are not read again. At most
``MAX_IMAGES`` per page, the largest first.

How: the image's place on the page is rendered by pdfium (its mask, turn and crop applied) at
``LOGO_DPI`` (a scanned page at ``scans.DPI``), never past ``MAX_UPSCALE`` times the image's own
resolution nor ``scans.MAX_PAGE_PIXELS``. Words the page's text layer already holds there (text
printed over the image) are not added twice, and a word Tesseract is unsure of (a graphic read
as letters) is left out. Each page's images are read inside that page's OCR time section.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from ..documents import MAX_IMAGE_PIXELS
from ..layout import Layout, Line, Word, lines_of_words
from .language import told_text
from .scans import DPI, MAX_PAGE_PIXELS, MAX_UPSCALE
from .tesseract import Engine

MIN_HEIGHT = 10.0  # points: a line of 8 pt print
MIN_WIDTH = 30.0
MIN_PIXELS = 16  # an image fewer pixels tall holds no legible letter
MAX_IMAGES = 6
MAX_OBJECTS = 200  # image objects looked at on a page (a page of tiles holds thousands)
SCANNED_PAGE = 0.5  # share of the page an image covers to be read on a page after the first
SPARSE_WORDS = 40  # a page with more words of text than this is read from its text layer
LOGO_DPI = 200  # a letterhead's print is large: 200 dpi reads it as 300 does, in half the pixels
MIN_CONFIDENCE = 60  # an image word read with less is a graphic taken for letters ("GS)" for a logo's knot)
OVERLAP = 0.3  # an OCR word this much inside a text-layer word is that word again
_LANGUAGE_LINES = 200  # the text layer's first lines tell the language the images are read in


def read_images(content: bytes, read: Layout, tesseract: Callable[[], Engine], *,
                page_limit: Any) -> dict[int, list[Line]]:
    """The lines OCR reads in the images of the PDF's pages that have a text layer, by page
    (``tesseract()`` is called only when an image is to be read)."""
    import pypdfium2 as pdfium

    with_text = {line.page for line in read.lines if line.text.strip()}
    # A letterhead is read in English, the model loaded anyway (names need no dictionary); a
    # scanned page in the language the text layer is written in, then English.
    told = told_text(word for line in read.lines[:_LANGUAGE_LINES] for word in line.text.split())
    languages = "eng" if told is None or told == "eng" else f"{told}+eng"
    found: dict[int, list[Line]] = {}
    try:
        document = pdfium.PdfDocument(content)
    except pdfium.PdfiumError:
        return found
    try:
        for number in sorted(with_text):
            words = [w for line in read.lines if line.page == number for w in line.words]
            with page_limit(number):
                lines = _page_images(document, number, words, tesseract, languages)
            if lines:
                found[number] = lines
    finally:
        document.close()
    return found


def read_pages(content: bytes, read: Layout, numbers: list[int], tesseract: Callable[[], Engine], *,
               page_limit: Any) -> dict[int, list[Line]]:
    """What OCR reads on the whole of pages ``numbers`` of a PDF with a text layer, where neither
    its text layer nor its images already read hold a word: the print of an image ``read_images``
    leaves (too small, or on a page after the first), and whatever else the page draws there. Only
    a page holding such an image (``_unread_image``) is read, at ``LOGO_DPI``, inside its OCR time
    section; a page turned, or a scan with its own OCR layer, is left."""
    import pypdfium2 as pdfium

    found: dict[int, list[Line]] = {}
    try:
        document = pdfium.PdfDocument(content)
    except pdfium.PdfiumError:
        return found
    try:
        for number in numbers:
            if not 1 <= number <= len(document):
                continue
            words = [w for line in read.lines if line.page == number for w in line.words]
            with page_limit(number):
                page = document[number - 1]
                try:
                    width, height = page.get_size()
                    if page.get_rotation() != 0 or _ocr_layer(page) or not _unread_image(page, number, width,
                                                                                          height):
                        continue
                    placed = [w for w in _read_box(page, (0.0, 0.0, width, height), width, height,
                                                   native_dpi=LOGO_DPI, scanned=False, tesseract=tesseract(),
                                                   languages="eng")
                              if not any(_overlap(w, t) > OVERLAP for t in words)]
                finally:
                    page.close()
            lines = lines_of_words(number, placed)
            if lines:
                found[number] = lines
    finally:
        document.close()
    return found


def _unread_image(page: Any, number: int, width: float, height: float) -> bool:
    """Whether the page holds an image ``read_images`` left unread that could carry a line of print:
    on the first page one below its size (a line of small print), on another one smaller than a
    scanned page."""
    import pypdfium2 as pdfium

    for index, image in enumerate(page.get_objects(filter=[pdfium.raw.FPDF_PAGEOBJ_IMAGE], max_depth=2)):
        if index >= MAX_OBJECTS:
            break
        left, bottom, right, top = image.get_bounds()
        if min(image.get_px_size()) < MIN_PIXELS or right - left <= 0 or top - bottom <= 0:
            continue
        if number == 1 and (right - left < MIN_WIDTH or top - bottom < MIN_HEIGHT):
            return True
        if number > 1 and (right - left) * (top - bottom) < SCANNED_PAGE * width * height:
            return True
    return False


def _page_images(document: Any, number: int, words: list[Word], tesseract: Callable[[], Engine],
                 languages: str) -> list[Line]:
    page = document[number - 1]
    try:
        if page.get_rotation() != 0:
            return []
        width, height = page.get_size()
        boxes = _image_boxes(page, width, height)
        if number > 1:  # a scanned page appended, among few words of text
            boxes = [b for b in boxes if _area(b[0]) >= SCANNED_PAGE * width * height and len(words) < SPARSE_WORDS]
        if not boxes or _ocr_layer(page):
            return []
        placed: list[Word] = []
        spelling = {_confusable(w.text): w.text for w in words}
        for box, native_dpi in boxes[:MAX_IMAGES]:
            scanned = _area(box) >= SCANNED_PAGE * width * height
            inside = [w for w in words if _within(w, box)]
            if scanned and len(inside) >= SPARSE_WORDS:
                continue  # a background under the page's own text
            for word in _read_box(page, box, width, height, native_dpi=native_dpi, scanned=scanned,
                                  tesseract=tesseract(), languages=languages if scanned else "eng"):
                if not any(_overlap(word, t) > OVERLAP for t in inside):
                    # A name the logo prints and the text spells out is spelt as the text does ("OpenAl").
                    placed.append(replace(word, text=spelling.get(_confusable(word.text), word.text)))
        return lines_of_words(number, placed)
    finally:
        page.close()


def _image_boxes(page: Any, width: float, height: float) -> list[tuple[tuple[float, float, float, float], float]]:
    """Each image able to hold print: its box in points (x0, top, x1, bottom; origin top-left,
    within the page) and its own resolution, the largest first, one per place."""
    import pypdfium2 as pdfium

    seen: dict[tuple[int, int, int, int], tuple[tuple[float, float, float, float], float]] = {}
    for index, image in enumerate(page.get_objects(filter=[pdfium.raw.FPDF_PAGEOBJ_IMAGE], max_depth=2)):
        if index >= MAX_OBJECTS:
            break
        left, bottom, right, top = image.get_bounds()
        x0, x1 = max(0.0, left), min(width, right)
        y0, y1 = max(0.0, height - top), min(height, height - bottom)
        pixels_wide, pixels_tall = image.get_px_size()
        if x1 - x0 < MIN_WIDTH or y1 - y0 < MIN_HEIGHT or min(pixels_wide, pixels_tall) < MIN_PIXELS:
            continue
        if pixels_wide * pixels_tall > MAX_IMAGE_PIXELS:  # as an upload of that size would be: not decoded
            continue
        native = 72.0 * max(pixels_wide / max(right - left, 1.0), pixels_tall / max(top - bottom, 1.0))
        seen[(round(x0), round(y0), round(x1), round(y1))] = ((x0, y0, x1, y1), native)
    return sorted(seen.values(), key=lambda item: -_area(item[0]))


def _ocr_layer(page: Any) -> bool:
    """Whether every character of the page's text is invisible: a scanner's OCR over its image."""
    import pypdfium2 as pdfium

    visible = invisible = 0
    for index, text in enumerate(page.get_objects(filter=[pdfium.raw.FPDF_PAGEOBJ_TEXT], max_depth=2)):
        if index >= MAX_OBJECTS * 10:
            break
        if pdfium.raw.FPDFTextObj_GetTextRenderMode(text.raw) == pdfium.raw.FPDF_TEXTRENDERMODE_INVISIBLE:
            invisible += 1
        else:
            visible += 1
    return invisible > 0 and visible == 0


def _read_box(page: Any, box: tuple[float, float, float, float], width: float, height: float, *,
              native_dpi: float, scanned: bool, tesseract: Engine, languages: str) -> list[Word]:
    """The words of the page's rendering inside ``box``, placed on the page in points."""
    x0, top, x1, bottom = box
    wanted = float(DPI if scanned else LOGO_DPI)
    area = (x1 - x0) * (bottom - top) / 72.0 / 72.0
    dpi = min(wanted, native_dpi * MAX_UPSCALE, (MAX_PAGE_PIXELS / max(area, 1e-6)) ** 0.5)
    bitmap = page.render(scale=dpi / 72.0, grayscale=True, crop=(x0, height - bottom, width - x1, top))
    try:
        grey = bitmap.to_pil().convert("L")
    finally:
        bitmap.close()
    low, high = grey.getextrema()
    if high - low < 40:  # flat: nothing printed in it
        return []
    scale = 72.0 / dpi
    words = []
    for w in tesseract.read(grey, dpi, languages):
        if w.conf < MIN_CONFIDENCE or not any(c.isalnum() for c in w.text):
            continue
        line_top, line_height = (w.line_top, max(w.line_height, w.height)) if w.line_height else (w.top, w.height)
        words.append(Word(w.text, x0 + w.left * scale, top + line_top * scale, x0 + (w.left + w.width) * scale,
                          top + (line_top + line_height) * scale, w.conf))
    return words


def merged(lines: list[Line], extra: dict[int, list[Line]]) -> list[Line]:
    """The layout's lines with each page's image lines put among them by height on the page."""
    if not extra:
        return lines
    out: list[Line] = []
    waiting = {page: sorted(found, key=_middle) for page, found in extra.items()}
    current: int | None = None
    for line in lines:
        if current is not None and line.page != current:
            out += waiting.pop(current, [])
        current = line.page
        queue = waiting.get(line.page, [])
        if line.words:
            while queue and _middle(queue[0]) < _middle(line):
                out.append(queue.pop(0))
        out.append(line)
    for page in sorted(waiting):
        out += waiting[page]
    out.sort(key=lambda line: line.page)  # stable: each page's lines keep their order
    return out


# Letters OCR confuses in a logo's type, and the punctuation a text layer's word carries.
_CONFUSED = str.maketrans({"l": "i", "1": "i", "|": "i", "!": "i", "0": "o", "5": "s", "8": "b"})


def _confusable(text: str) -> str:
    return text.casefold().strip(".,;:()").translate(_CONFUSED)


def _middle(line: Line) -> float:
    box = line.box
    return (box[1] + box[3]) / 2 if box else 0.0


def _area(box: tuple[float, float, float, float]) -> float:
    return (box[2] - box[0]) * (box[3] - box[1])


def _within(word: Word, box: tuple[float, float, float, float]) -> bool:
    middle_x, middle_y = (word.x0 + word.x1) / 2, (word.top + word.bottom) / 2
    return box[0] <= middle_x <= box[2] and box[1] <= middle_y <= box[3]


def _overlap(word: Word, other: Word) -> float:
    """The share of ``word``'s box that ``other``'s covers."""
    wide = min(word.x1, other.x1) - max(word.x0, other.x0)
    tall = min(word.bottom, other.bottom) - max(word.top, other.top)
    if wide <= 0 or tall <= 0:
        return 0.0
    return wide * tall / max((word.x1 - word.x0) * (word.bottom - word.top), 1e-6)
