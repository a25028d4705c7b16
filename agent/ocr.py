"""Reading scans and photos: Tesseract's words, in the same Layout a text PDF gives.

A PDF page without a text layer is rendered (pypdfium2) at ``DPI`` and read by Tesseract; a
PNG, JPEG or TIFF upload is turned upright (its EXIF orientation), straightened (a projection
estimate of its skew) and scaled to about ``DPI`` before it is read. Every word keeps its box,
converted to PDF points (``px * 72 / dpi``, origin top-left, as ``agent.layout``), and its
confidence (0-100), so evidence and preview use one convention and the field reading
(``agent.fields``) runs on the OCR layout exactly as on a text layer.

Tesseract is called through its C API (``libtesseract``, Debian's ``tesseract-ocr``) in this
process, not as a ``tesseract`` command: OCR then runs inside the review's isolated child and
counts against that child's own CPU-time and address-space limits (``jobs.sandbox``), so a run
past the CPU limit is the child's ``SIGXCPU`` like any other handler's, and a child process of
its own would escape them. The models load once per child and serve its following jobs. The
pixels reach Tesseract as a buffer: no image file is written.

Images are decoded only here, in the worker's child; acceptance (``agent.documents``) reads
their declared size and frame count and never their pixels.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import io
import logging
import os
from dataclasses import dataclass, field
from typing import Any, Iterator

from jobs.errors import DamagedDocument

from . import documents
from .layout import Layout, Line, Word, _lines

log = logging.getLogger("agent.ocr")

# Debian's seven packs; Tesseract tries the next model only for words the first reads badly.
LANGUAGES = "eng+deu+fra+nld+spa+ita+pol"
DPI = 300  # what Tesseract reads invoices best at: 10 pt text is ~40 px tall
# A page rendered or scaled to more pixels than this is read at a lower resolution instead
# (an A4 page at 300 dpi is 8.7 million pixels; A3 17.4).
MAX_PAGE_PIXELS = 36_000_000
# A page whose text layer has fewer characters than this is read as a scan (a page number or a
# scanner's stamp is no text layer).
MIN_TEXT_CHARS = 16
# A word read with less confidence than this (0-100) makes the field it is evidence for "to check".
LOW_CONFIDENCE = 70
# A photo without a resolution of its own is scaled as an A4 page's width seen at DPI.
PHOTO_WIDTH_INCHES = 8.27
# Skew estimated from a thumbnail this wide, over +-MAX_SKEW degrees.
SKEW_THUMBNAIL = 800
MAX_SKEW = 8.0
LIBRARY = "tesseract"  # a test names a missing library to see the review without OCR
NOT_INSTALLED = "OCR is not installed on this server (Debian's tesseract-ocr), so a scan cannot be read"


class Unavailable(Exception):
    """Tesseract or its language packs are not installed here."""


@dataclass
class Reading:
    """Which pages were read by OCR, each one's confidence, and the whole document's."""

    pages: list[int] = field(default_factory=list)
    confidences: list[float] = field(default_factory=list)

    def to_json(self) -> dict[str, Any] | None:
        if not self.pages:
            return None
        return {"pages": self.pages, "page_confidence": [round(c, 1) for c in self.confidences],
                "confidence": round(sum(self.confidences) / len(self.confidences), 1),
                "languages": LANGUAGES, "dpi": DPI}


# --- Tesseract ---------------------------------------------------------------------------


class _Engine:
    """One TessBaseAPI with the languages loaded, reused for every page this process reads."""

    def __init__(self, library: str) -> None:
        os.environ.setdefault("OMP_THREAD_LIMIT", "1")  # one core per job: threads cost more CPU than they save
        path = ctypes.util.find_library(library) if "/" not in library and ".so" not in library else library
        if not path:
            raise Unavailable(NOT_INSTALLED)
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            raise Unavailable(NOT_INSTALLED) from None
        lib.TessBaseAPICreate.restype = ctypes.c_void_p
        lib.TessBaseAPIInit3.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p]
        lib.TessBaseAPISetVariable.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p]
        lib.TessBaseAPISetPageSegMode.argtypes = [ctypes.c_void_p, ctypes.c_int]
        lib.TessBaseAPISetImage.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, ctypes.c_int,
                                            ctypes.c_int, ctypes.c_int]
        lib.TessBaseAPISetSourceResolution.argtypes = [ctypes.c_void_p, ctypes.c_int]
        lib.TessBaseAPIRecognize.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        lib.TessBaseAPIGetTsvText.argtypes = [ctypes.c_void_p, ctypes.c_int]
        lib.TessBaseAPIGetTsvText.restype = ctypes.c_void_p  # freed with TessDeleteText
        lib.TessDeleteText.argtypes = [ctypes.c_void_p]
        lib.TessBaseAPIClear.argtypes = [ctypes.c_void_p]
        self.lib = lib
        self.api = lib.TessBaseAPICreate()
        if lib.TessBaseAPIInit3(self.api, None, LANGUAGES.encode()) != 0:
            raise Unavailable("OCR is installed without its language packs (tesseract-ocr-eng, -deu, -fra, -nld, "
                              "-spa, -ita, -pol), so a scan cannot be read")
        lib.TessBaseAPISetPageSegMode(self.api, 3)  # PSM_AUTO: blocks and columns found on the page
        lib.TessBaseAPISetVariable(self.api, b"debug_file", b"/dev/null")

    def words(self, pixels: bytes | ctypes.Array[ctypes.c_char] | Any, width: int, height: int, stride: int,
              dpi: float) -> list[tuple[str, int, int, int, int, float]]:
        """The words of one 8-bit grey image: text, left, top, width, height (pixels), confidence."""
        lib = self.lib
        lib.TessBaseAPISetImage(self.api, pixels, width, height, 1, stride)
        lib.TessBaseAPISetSourceResolution(self.api, round(dpi))
        try:
            if lib.TessBaseAPIRecognize(self.api, None) != 0:
                return []
            raw = lib.TessBaseAPIGetTsvText(self.api, 0)
            try:
                tsv = ctypes.string_at(raw).decode("utf-8", errors="replace") if raw else ""
            finally:
                if raw:
                    lib.TessDeleteText(raw)
        finally:
            lib.TessBaseAPIClear(self.api)
        found = []
        for row in tsv.splitlines():
            cells = row.split("\t")
            if len(cells) < 12 or cells[0] != "5" or not cells[11].strip():
                continue
            try:
                left, top, w, h = (int(c) for c in cells[6:10])
                conf = float(cells[10])
            except ValueError:
                continue
            found.append((cells[11].strip(), left, top, w, h, max(conf, 0.0)))
        return found


_engine: _Engine | None = None


def engine() -> _Engine:
    """This process's Tesseract, loaded on first use; raises ``Unavailable`` without it."""
    global _engine
    if _engine is None or getattr(_engine, "library", LIBRARY) != LIBRARY:
        _engine = _Engine(LIBRARY)
        _engine.library = LIBRARY  # type: ignore[attr-defined]
    return _engine


def available() -> str | None:
    """None when OCR can run here, else why not (in words)."""
    try:
        engine()
    except Unavailable as exc:
        return str(exc)
    return None


# --- Pages -------------------------------------------------------------------------------


def _page_layout(words: list[tuple[str, int, int, int, int, float]], page: int, dpi: float) -> list[Line]:
    """Tesseract's words in points, grouped into lines as a text layer's are."""
    scale = 72.0 / dpi
    placed = [Word(text.translate(_SPELLING), left * scale, top * scale, (left + w) * scale, (top + h) * scale, conf)
              for text, left, top, w, h, conf in words]
    return _lines(page, placed)


# Quotes and dashes Tesseract reads as their typographic forms, read as printed ASCII.
_SPELLING = str.maketrans({"\u2014": "-", "\u2013": "-", "\u2018": "'", "\u2019": "'", "\u201c": '"',
                           "\u201d": '"', "\ufb01": "fi", "\ufb02": "fl"})


def _confidence(lines: list[Line]) -> float:
    """A page's confidence: its words' confidences, weighted by their length."""
    weights = [(len(w.text), w.conf if w.conf is not None else 0.0) for line in lines for w in line.words]
    total = sum(n for n, _ in weights)
    return sum(n * c for n, c in weights) / total if total else 0.0


def complete_pdf(content: bytes, read: Layout) -> tuple[Layout, Reading]:
    """The PDF's layout with every page that has no text layer read by OCR (raises ``Unavailable``)."""
    chars: dict[int, int] = {}
    for line in read.lines:
        chars[line.page] = chars.get(line.page, 0) + len(line.text.strip())
    if sum(chars.values()) >= documents.MAX_TEXT_CHARS:
        return read, Reading()
    scans = [page for page in range(1, read.pages + 1) if chars.get(page, 0) < MIN_TEXT_CHARS]
    if not scans:
        return read, Reading()
    tesseract = engine()
    result = Reading()
    lines = [line for line in read.lines if line.page not in scans]
    for page, image, dpi in _rendered(content, scans):
        page_lines = _page_layout(tesseract.words(*image, dpi=dpi), page, dpi)
        lines.extend(page_lines)
        result.pages.append(page)
        result.confidences.append(_confidence(page_lines))
    lines.sort(key=lambda line: line.page)  # stable: each page's lines stay in reading order
    return Layout(pages=read.pages, lines=_bounded(lines), sizes=read.sizes), result


def _rendered(content: bytes, pages: list[int]) -> Iterator[tuple[int, tuple[Any, int, int, int], float]]:
    """Each page rendered in 8-bit grey at DPI (less for a huge page), one at a time."""
    import pypdfium2 as pdfium

    try:
        document = pdfium.PdfDocument(content)
    except pdfium.PdfiumError:
        raise DamagedDocument(documents.DAMAGED_PDF, field="document") from None
    try:
        for number in pages:
            page = document[number - 1]
            try:
                width, height = page.get_size()
                dpi = _dpi_for(width / 72.0, height / 72.0)
                bitmap = page.render(scale=dpi / 72.0, grayscale=True, may_draw_forms=True)
                try:
                    buffer = (ctypes.c_char * (bitmap.stride * bitmap.height)).from_buffer(bitmap.buffer)
                    yield number, (buffer, bitmap.width, bitmap.height, bitmap.stride), dpi
                    del buffer
                finally:
                    bitmap.close()
            finally:
                page.close()
    finally:
        document.close()


def _dpi_for(width_in: float, height_in: float) -> float:
    """DPI, or less for a page that would be more than MAX_PAGE_PIXELS at DPI."""
    area = max(width_in * height_in, 1e-6)
    return min(float(DPI), (MAX_PAGE_PIXELS / area) ** 0.5)


def _bounded(lines: list[Line]) -> list[Line]:
    kept, size = [], 0
    for line in lines:
        size += len(line.text) + 1
        if size > documents.MAX_TEXT_CHARS:
            break
        kept.append(line)
    return kept


# --- Images ------------------------------------------------------------------------------


def read_image(content: bytes) -> tuple[Layout, Reading]:
    """A PNG, JPEG or TIFF read by OCR, each frame a page (raises ``Unavailable``)."""
    tesseract = engine()
    result = Reading()
    lines: list[Line] = []
    sizes: list[list[float]] = []
    for number, (image, dpi) in enumerate(pages_of(content), 1):
        pixels = image.tobytes()
        page_lines = _page_layout(tesseract.words(pixels, image.width, image.height, image.width, dpi=dpi),
                                  number, dpi)
        sizes.append([image.width * 72.0 / dpi, image.height * 72.0 / dpi])
        lines.extend(page_lines)
        result.pages.append(number)
        result.confidences.append(_confidence(page_lines))
    return Layout(pages=len(sizes), lines=_bounded(lines), sizes=sizes), result


def pages_of(content: bytes) -> Iterator[tuple[Any, float]]:
    """Each frame of the image as OCR reads it (8-bit grey, upright, straightened, about DPI) and
    its resolution: also what a preview shows, so the evidence boxes (points at 72/dpi) fit it."""
    from PIL import Image, ImageOps, UnidentifiedImageError

    documents.check_image(content)  # the declared size and frames again, before any pixel is decoded
    try:
        with Image.open(io.BytesIO(content)) as image:
            frames = getattr(image, "n_frames", 1)
            for index in range(min(frames, documents.MAX_PAGES)):
                image.seek(index)
                frame = ImageOps.exif_transpose(image) if index == 0 else image.copy()
                yield _prepared(frame, image.info.get("dpi"))
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError, EOFError) as exc:
        log.warning("image unreadable: %s", type(exc).__name__)
        raise DamagedDocument("the image is damaged and cannot be read; submit a new copy", field="document") \
            from None


def _prepared(image: Any, declared_dpi: Any) -> tuple[Any, float]:
    from PIL import Image

    grey = image.convert("L")
    dpi = _declared_dpi(declared_dpi)
    if dpi is None:  # a photo: its width as an A4 page's
        dpi = grey.width / PHOTO_WIDTH_INCHES
    factor = DPI / dpi
    if grey.width * grey.height * factor * factor > MAX_PAGE_PIXELS:
        factor = (MAX_PAGE_PIXELS / (grey.width * grey.height)) ** 0.5
    if abs(factor - 1) > 0.1:
        grey = grey.resize((max(1, round(grey.width * factor)), max(1, round(grey.height * factor))),
                           Image.Resampling.LANCZOS)
        dpi *= factor
    angle = skew(grey)
    if abs(angle) >= 0.3:
        grey = grey.rotate(angle, resample=Image.Resampling.BICUBIC, expand=True, fillcolor=255)
    return grey, dpi


def _declared_dpi(value: Any) -> float | None:
    """A scan's own resolution (PNG pHYs, JPEG JFIF, TIFF tags), when it says one that is plausible."""
    try:
        dpi = float(value[0]) if isinstance(value, tuple) else float(value)
    except (TypeError, ValueError, IndexError):
        return None
    return dpi if 100 <= dpi <= 1200 else None


def skew(grey: Any) -> float:
    """The angle (degrees, counter-clockwise) that levels the text lines: the one whose row
    profile is sharpest (lines of text and the gaps between them), tried on a small copy."""
    from PIL import Image, ImageOps

    small = grey.copy()
    small.thumbnail((SKEW_THUMBNAIL, SKEW_THUMBNAIL))
    ink = ImageOps.invert(small.point(lambda v: 0 if v < 160 else 255))

    def sharpness(angle: float) -> float:
        turned = ink.rotate(angle, resample=Image.Resampling.NEAREST, expand=False)
        rows = list(turned.resize((1, turned.height), Image.Resampling.BOX).getdata())
        return float(sum((a - b) ** 2 for a, b in zip(rows, rows[1:], strict=False)))

    best = max((step / 2 for step in range(int(-MAX_SKEW * 2), int(MAX_SKEW * 2) + 1)), key=sharpness)
    fine = max((best + step / 10 for step in range(-4, 5)), key=sharpness)
    return fine


# --- Confidence of the fields --------------------------------------------------------------


def low_confidence_words(read: Layout, page: int, box: list[float]) -> list[Word]:
    """The OCR words inside an evidence box read with less than LOW_CONFIDENCE."""
    x0, top, x1, bottom = box
    found = []
    for line in read.lines:
        if line.page != page:
            continue
        for word in line.words:
            if word.conf is None:
                continue
            middle_x, middle_y = (word.x0 + word.x1) / 2, (word.top + word.bottom) / 2
            if x0 - 1 <= middle_x <= x1 + 1 and top - 1 <= middle_y <= bottom + 1 and word.conf < LOW_CONFIDENCE:
                found.append(word)
    return found
