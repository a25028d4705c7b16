"""Reading scans and photos: Tesseract's words, in the same Layout a text PDF gives.

A PDF page without a text layer is rendered (pypdfium2) at ``DPI`` and read by Tesseract; a
PNG, JPEG or TIFF upload is turned upright (its EXIF orientation), straightened (a projection
estimate of its skew) and scaled to about ``DPI`` before it is read. Every word keeps its box,
converted to PDF points (``px * 72 / dpi``, origin top-left, as ``agent.layout``), and its
confidence (0-100), so evidence and preview use one convention and the field reading
(``agent.fields``) runs on the OCR layout exactly as on a text layer.

Tesseract is called through its C API (``libtesseract``, Debian's ``tesseract-ocr``) in this
process, not as a ``tesseract`` command: OCR then runs inside the review's isolated child and
counts against that child's own CPU-time and memory limits (``jobs.worker.sandbox``), so a run
past the CPU limit is the child's ``SIGXCPU`` like any other handler's, and a child process of
its own would escape them. The models load once per child and serve its following jobs. The
pixels reach Tesseract as a buffer: no image file is written.

Images are decoded only here, in the worker's child; acceptance (``agent.documents``) reads
their declared size and frame count and never their pixels.
"""

from __future__ import annotations

import atexit
import ctypes
import ctypes.util
import io
import logging
import os
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Any, Callable, Generator

from jobs.errors import DamagedDocument

from . import documents
from .layout import Layout, Line, Word, _lines

log = logging.getLogger("agent.ocr")

# Debian's seven packs (English first); Tesseract tries the next model only for words the
# first reads badly. A document is read in its own language and English (``language``).
LANGUAGES = "eng+deu+fra+nld+spa+ita+pol"
DPI = 300  # what Tesseract reads invoices best at: 10 pt text is ~40 px tall
# A page rendered or scaled to more pixels than this is read at a lower resolution instead
# (an A4 page at 300 dpi is 8.7 million pixels; A3 17.4).
MAX_PAGE_PIXELS = 36_000_000
# A word read with less confidence than this (0-100) makes the field it is evidence for "to check".
LOW_CONFIDENCE = 70
# A photo without a resolution of its own is scaled as an A4 page's width seen at DPI.
PHOTO_WIDTH_INCHES = 8.27
MAX_UPSCALE = 4.0  # a 75 dpi scan is read at 300; a smaller picture is read at four times its size
# Skew estimated from a thumbnail this wide, over +-MAX_SKEW degrees.
SKEW_THUMBNAIL = 800
MAX_SKEW = 8.0
# Tesseract's page segmentation: 4 reads the page as one column of lines of any size. The lines
# are rebuilt from the words' positions anyway (as a text layer's are); 3 (find blocks and
# columns) dropped a receipt's right-hand amounts and reads no better on invoices (ocrbench).
PAGE_SEGMENTATION = 4
LIBRARY = "tesseract"  # a test names a missing library to see the review without OCR
# Each page's OCR within its own time section: ``PageLimit(page)`` is entered around it (the
# review's extract step gives ``JobContext.time_limit``; elsewhere nothing is enforced).
PageLimit = Callable[[int], AbstractContextManager[Any]]
NOT_INSTALLED = "OCR is not installed on this server (Debian's tesseract-ocr), so a scan cannot be read"


class Unavailable(Exception):
    """Tesseract or its language packs are not installed here."""


@dataclass
class Reading:
    """Which pages were read by OCR, each one's confidence, and the whole document's."""

    pages: list[int] = field(default_factory=list)
    confidences: list[float] = field(default_factory=list)
    languages: str = ""  # what the pages were read in, told from the first one

    def to_json(self) -> dict[str, Any] | None:
        if not self.pages:
            return None
        return {"pages": self.pages, "page_confidence": [round(c, 1) for c in self.confidences],
                "confidence": round(sum(self.confidences) / len(self.confidences), 1),
                "languages": self.languages, "dpi": DPI}


# --- Tesseract ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Found:
    """A word as Tesseract reports it, in pixels, with its line's band."""

    text: str
    left: int
    top: int
    width: int
    height: int
    conf: float
    line_top: int
    line_height: int


class _Engine:
    """Tesseract in this process: one API that reads pages in English to tell the document's
    language, one that reads them in that language (loaded again only when it changes)."""

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
        lib.TessBaseAPIDelete.argtypes = [ctypes.c_void_p]
        lib.TessBaseAPIInit3.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p]
        lib.TessBaseAPIGetDatapath.argtypes = [ctypes.c_void_p]
        lib.TessBaseAPIGetDatapath.restype = ctypes.c_char_p
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
        self.library = library
        self.detector = self._api("eng")
        datapath = (lib.TessBaseAPIGetDatapath(self.detector) or b"").decode(errors="replace")
        missing = [lang for lang in LANGUAGES.split("+") if not os.path.isfile(os.path.join(datapath,
                                                                                           f"{lang}.traineddata"))]
        if missing:
            raise Unavailable(f"OCR is installed without its language packs ({', '.join(missing)}), so a scan "
                              "cannot be read")
        self.reader: Any = None
        self.reader_languages = ""
        atexit.register(self.close)  # freed before the library's own teardown, which warns of leaks

    def close(self) -> None:
        for api in (self.reader, self.detector):
            if api is not None:
                self.lib.TessBaseAPIDelete(api)
        self.reader = self.detector = None
        self.reader_languages = ""

    def _api(self, languages: str) -> Any:
        """A TessBaseAPI with ``languages`` loaded, or ``Unavailable``."""
        api = self.lib.TessBaseAPICreate()
        if self.lib.TessBaseAPIInit3(api, None, languages.encode()) != 0:
            self.lib.TessBaseAPIDelete(api)
            raise Unavailable(f"OCR is installed without its language packs ({languages}), so a scan cannot be read")
        self.lib.TessBaseAPISetPageSegMode(api, PAGE_SEGMENTATION)
        # Tesseract's own messages ("Detected 52 diacritics") go nowhere, never to the worker's log.
        self.lib.TessBaseAPISetVariable(api, b"debug_file", b"/dev/null")
        return api

    def read(self, image: Any, dpi: float, languages: str) -> list[_Found]:
        """The words of an 8-bit grey PIL image read in ``languages`` ("spa+eng")."""
        if languages == "eng":
            return self._words(self.detector, image, dpi)
        if languages != self.reader_languages:
            if self.reader is not None:
                self.lib.TessBaseAPIDelete(self.reader)
                self.reader = None
            self.reader = self._api(languages)
            self.reader_languages = languages
        return self._words(self.reader, image, dpi)

    def _words(self, api: Any, image: Any, dpi: float) -> list[_Found]:
        """Text, left, top, width, height (pixels), confidence, and the top and height of its line."""
        lib = self.lib
        pixels = image.tobytes()
        lib.TessBaseAPISetImage(api, pixels, image.width, image.height, 1, image.width)
        lib.TessBaseAPISetSourceResolution(api, round(dpi))
        try:
            if lib.TessBaseAPIRecognize(api, None) != 0:
                return []
            raw = lib.TessBaseAPIGetTsvText(api, 0)
            try:
                tsv = ctypes.string_at(raw).decode("utf-8", errors="replace") if raw else ""
            finally:
                if raw:
                    lib.TessDeleteText(raw)
        finally:
            lib.TessBaseAPIClear(api)
        found = []
        line = (0, 0)
        for row in tsv.splitlines():
            cells = row.split("\t")
            if len(cells) < 12 or cells[0] not in ("4", "5"):
                continue
            try:
                left, top, w, h = (int(c) for c in cells[6:10])
                conf = float(cells[10])
            except ValueError:
                continue
            if cells[0] == "4":
                line = (top, h)
            elif cells[11].strip():
                found.append(_Found(cells[11].strip(), left, top, w, h, max(conf, 0.0), *line))
        return found


_engine: _Engine | None = None


def engine() -> _Engine:
    """This process's Tesseract, loaded on first use; raises ``Unavailable`` without it."""
    global _engine
    if _engine is None or _engine.library != LIBRARY or _engine.detector is None:
        if _engine is not None:
            _engine.close()
            _engine = None
        _engine = _Engine(LIBRARY)
    return _engine


def available() -> str | None:
    """None when OCR can run here, else why not (in words)."""
    try:
        engine()
    except Unavailable as exc:
        return str(exc)
    return None


# --- Language ----------------------------------------------------------------------------

# Words invoices print, per language (accents left off: the English pass reads none), then a
# few words of the language's own that none of the other six prints ("und", "het", "oraz"). A
# first page of parties and addresses has few invoice words (a German e-invoice's rendering:
# "Verkäufer", "Käufer", "vom", "und"); told no language, it was read in all seven, English
# first: a quarter more CPU than German and English, and no field better (ocrbench).
_WORDS = {
    "eng": "invoice total amount due date payment bank account number tax bill subtotal description quantity price "
           "thank terms customer "
           "the and with please your",
    "deu": "rechnung rechnungsnummer rechnungsdatum betrag summe gesamt gesamtbetrag mwst ust zahlbar bankverbindung "
           "steuernummer netto brutto datum menge preis bezeichnung zahlung vielen dank lieferant kunde "
           "verkaufer kaufer bestellung lieferung leistungsdatum einzelpreis beschreibung steuer "
           "und der das von vom mit bitte fur",
    "fra": "facture montant tva echeance numero paiement net ttc ht siret quantite prix designation total merci "
           "reglement date client "
           "les et pour avec votre vos",
    "nld": "factuur factuurnummer factuurdatum bedrag totaal btw betaling vervaldatum rekening kvk omschrijving "
           "aantal prijs bedankt datum klant "
           "het van voor uw bij",
    "spa": "factura fecha importe iva cif nif vencimiento pago numero cantidad precio descripcion gracias base "
           "imponible total cliente "
           "el los las para",
    "ita": "fattura data importo totale iva partita scadenza pagamento imponibile quantita prezzo descrizione "
           "grazie numero cliente "
           "di della per gli",
    "pol": "faktura kwota razem nip sprzedawca nabywca termin platnosci zaplaty brutto netto data ilosc cena nazwa "
           "wystawienia sprzedazy slownie "
           "dla oraz nie za",
}
_LANGUAGE_WORDS = {lang: frozenset(words.split()) for lang, words in _WORDS.items()}
# Resolution of the English pass that tells the language: a ninth of the pixels of DPI. It
# tells the corpus's languages as 150 dpi does, in 0.29 s of CPU a page instead of 0.42. It
# reads the top half of the page (title, parties, the table's head), and the bottom half only
# when the top tells no language: the same languages told in a third less CPU (ocrbench).
DETECT_DPI = 100
DETECT_WORDS = 5  # fewer words than this tell nothing: the next page is asked again


def told(words: list[_Found]) -> str | None:
    """The language whose invoice words stand out among ``words`` ("deu"), None when none does."""
    import unicodedata

    seen = set()
    for word in words:
        plain = unicodedata.normalize("NFKD", word.text.casefold()).encode("ascii", "ignore").decode()
        seen.add(plain.strip(".,:;()#/-"))
    scores = sorted(((len(seen & vocabulary), lang) for lang, vocabulary in _LANGUAGE_WORDS.items()), reverse=True)
    (best, lang), (second, _) = scores[0], scores[1]
    return None if best < 2 or best == second else lang


def language(words: list[_Found]) -> str:
    """The languages to read a document in: its own first, then English; all seven, English
    first, for an English one and when no language stands out among the words of its first
    page (for an English invoice the others still save a word English reads badly: a VAT id,
    an invoice number, in ocrbench)."""
    lang = told(words)
    return LANGUAGES if lang is None or lang == "eng" else f"{lang}+eng"


# --- Pages -------------------------------------------------------------------------------


def _page_layout(words: list[_Found], page: int, dpi: float) -> list[Line]:
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
    return _lines(page, placed)


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
    if not scans:
        return read, Reading()
    tesseract = engine()
    result = Reading()
    lines = [line for line in read.lines if line.page not in scans]
    for page in scans:
        with page_limit(page):
            rendered = _rendered(content, page)
            if rendered is None:  # a blank page: nothing drawn on it to read
                continue
            page_lines = _read_page(tesseract, *rendered, page, result)
            del rendered
        if page_lines:  # a page OCR found nothing on is no page "read from a scan"
            lines.extend(page_lines)
            result.pages.append(page)
            result.confidences.append(_confidence(page_lines))
    lines.sort(key=lambda line: line.page)  # stable: each page's lines stay in reading order
    return Layout(pages=read.pages, lines=_bounded(lines), sizes=read.sizes), result


def _read_page(tesseract: _Engine, image: Any, dpi: float, number: int, result: Reading) -> list[Line]:
    """One page's lines; the first page with words on it also tells the language (an English
    pass at DETECT_DPI), which its following pages are read in."""
    languages = result.languages
    if not languages:
        factor = max(1, round(dpi / DETECT_DPI))
        small = image.reduce(factor) if factor > 1 else image
        middle = small.height // 2
        found: list[_Found] = []
        for box in ((0, 0, small.width, middle), (0, middle, small.width, small.height)):
            found += tesseract.read(small.crop(box), dpi / factor, "eng")
            if told(found) is not None:
                break
        languages = language(found)
        if len(found) >= DETECT_WORDS:
            result.languages = languages
    return _page_layout(tesseract.read(image, dpi, languages), number, dpi)


def _rendered(content: bytes, number: int) -> tuple[Any, float] | None:
    """The page rendered in 8-bit grey at DPI (less for a huge page), as a PIL image; None for a
    page with nothing drawn on it."""
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
            dpi = _dpi_for(width / 72.0, height / 72.0)
            bitmap = page.render(scale=dpi / 72.0, grayscale=True, may_draw_forms=True)
            try:
                return bitmap.to_pil().convert("L"), dpi
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


def read_image(content: bytes, *, page_limit: PageLimit = _unlimited) -> tuple[Layout, Reading]:
    """A PNG, JPEG or TIFF read by OCR, each frame a page (raises ``Unavailable``)."""
    tesseract = engine()
    result = Reading()
    lines: list[Line] = []
    sizes: list[list[float]] = []
    pages = pages_of(content)
    try:
        _read_pages(tesseract, pages, page_limit, lines, sizes, result)
    finally:
        pages.close()  # the image file is closed with its generator
    return Layout(pages=len(sizes), lines=_bounded(lines), sizes=sizes), result


def _read_pages(tesseract: _Engine, pages: Generator[tuple[Any, float], None, None], page_limit: PageLimit,
                lines: list[Line], sizes: list[list[float]], result: Reading) -> None:
    for number in range(1, documents.MAX_PAGES + 1):
        with page_limit(number):
            prepared = next(pages, None)
            if prepared is None:
                break
            image, dpi = prepared
            page_lines = _read_page(tesseract, image, dpi, number, result)
        sizes.append([image.width * 72.0 / dpi, image.height * 72.0 / dpi])
        lines.extend(page_lines)
        result.pages.append(number)
        result.confidences.append(_confidence(page_lines))


def pages_of(content: bytes) -> Generator[tuple[Any, float], None, None]:
    """Each frame of the image as OCR reads it (8-bit grey, upright, straightened, about DPI) and
    its resolution: also what a preview shows, so the evidence boxes (points at 72/dpi) fit it."""
    from PIL import Image, ImageOps, UnidentifiedImageError

    declared = documents.check_image(content)  # the declared sizes again, before any pixel is decoded
    try:
        with Image.open(io.BytesIO(content)) as image:
            if image.format not in ("PNG", "JPEG", "TIFF", "MPO"):
                raise DamagedDocument(documents.DAMAGED_IMAGE, field="document")
            for index in range(len(declared) if image.format == "TIFF" else 1):
                image.seek(index)
                refusal = documents.image_refusal(*image.size)  # Pillow's own reading of the size
                if refusal is not None:
                    raise refusal
                dpi = _declared_dpi(image.info.get("dpi"))
                original = image.size
                if image.format in ("JPEG", "MPO"):  # decoded in grey, already reduced for a large photo
                    wanted = DPI / (dpi or image.width / PHOTO_WIDTH_INCHES)
                    image.draft("L", (round(image.width * wanted), round(image.height * wanted)))
                frame = ImageOps.exif_transpose(image) if index == 0 else image.copy()
                yield _prepared(frame, dpi, original if image.format in ("JPEG", "MPO") else None)
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError, EOFError) as exc:
        log.warning("image unreadable: %s", type(exc).__name__)
        raise DamagedDocument("the image is damaged and cannot be read; submit a new copy", field="document") \
            from None


def _prepared(image: Any, dpi: float | None, drafted: tuple[int, int] | None) -> tuple[Any, float]:
    """Grey, scaled to about DPI (a photo without a resolution: as wide as an A4 page), straightened."""
    from PIL import Image

    grey = _grey(image)
    if dpi is None:  # a photo: its width as an A4 page's
        dpi = grey.width / PHOTO_WIDTH_INCHES
    elif drafted is not None:  # a JPEG decoded at a fraction of its declared size: its resolution fell with it
        dpi = dpi * max(grey.width, grey.height) / max(max(drafted), 1)
    # Never blown up more than MAX_UPSCALE: a sliver of a picture (1 x 44 pixels, say) taken
    # for an A4 page's width would otherwise become tens of millions of pixels to read.
    factor = min(DPI / dpi, MAX_UPSCALE)
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


def _grey(image: Any) -> Any:
    """8-bit grey: transparency over white (a screenshot's clear background is no black page),
    16-bit and float scans brought down to 8 bits rather than clipped to white."""
    from PIL import Image

    if image.mode in ("I;16", "I;16B", "I;16L", "I", "F"):
        high = 65535 if image.mode.startswith("I;16") else max(image.getextrema()[1] or 1, 1)
        return image.convert("F").point(lambda v: v * 255.0 / high).convert("L")
    if image.mode in ("RGBA", "LA", "PA") or (image.mode == "P" and "transparency" in image.info):
        # In 8-bit planes, never a second full-colour copy: a 50-million-pixel RGBA is 200 MB already.
        if image.mode in ("P", "PA"):
            image = image.convert("RGBA")
        alpha = image.getchannel("A")
        grey = image.convert("L")
        return Image.composite(grey, Image.new("L", grey.size, 255), alpha)
    return image.convert("L")


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
        rows = turned.resize((1, turned.height), Image.Resampling.BOX).tobytes()
        return float(sum((a - b) ** 2 for a, b in zip(rows, rows[1:], strict=False)))

    # The smallest turn first: where angles score alike (a blank page, no line to level) the
    # page stays as it is, not turned by the first angle tried and a third larger to read.
    coarse = sorted((step / 2 for step in range(int(-MAX_SKEW * 2), int(MAX_SKEW * 2) + 1)), key=abs)
    best = max(coarse, key=sharpness)
    return max((best + step / 10 for step in sorted(range(-4, 5), key=abs)), key=sharpness)


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
