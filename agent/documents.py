"""Which documents the review accepts, and reading their text within fixed bounds.

Acceptance (``check_document``) runs in the web process and trusts the bytes, not the
client's file name or media type. It never reads a whole document: it sniffs the format
and checks only what the document declares about its structure, before anything is
inflated or stored. For a DOCX that is the zip's central directory (the number of parts,
each part's declared unpacked size and compression ratio, their total, the compression
method, and a main document part); for a PDF the cross-reference table (the number of
objects, and before that the object markers pypdf would rebuild a damaged table from) and
the page tree (the number of pages); for a standalone XML (an e-invoice) that it declares no
DTD; for a PNG, JPEG or TIFF (a scan or a photo) each page's declared width and height and,
for a TIFF, the number of pages, read from the headers by hand: no pixel is decoded in the web
process (``agent.ocr`` decodes and reads them in the worker). No text is extracted. A document
over a limit is refused with an error that names the limit.

Extraction (``read_text``) runs in the worker and is bounded whatever acceptance let
through: a DOCX's main part is streamed through an XML parser that builds no tree and stops
at ``MAX_TEXT_CHARS`` characters or ``MAX_DOCX_ELEMENTS`` elements, after the same structural
checks; a PDF is read page by page with pypdf until the text limit. A document that cannot
be read raises the same refusals acceptance uses (``jobs.errors``): they are caused by the
bytes, so reading them again would fail again. A standalone XML has no visible page: its
text is empty, and ``agent.einvoice`` reads its data.
"""

from __future__ import annotations

import io
import logging
import re
import struct
import zipfile
import zlib
from dataclasses import dataclass, field
from xml.parsers import expat

import pypdf  # noqa: F401  imported once by the web process, not by every check's forked child

from jobs.errors import (
    AcceptanceError,
    DamagedDocument,
    DocumentTooComplex,
    DocumentUnpacksTooLarge,
    InvalidPayload,
    PayloadTooLarge,
    Reason,
    UnsupportedDocument,
)

log = logging.getLogger("agent.documents")

PDF = "application/pdf"
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
TEXT = "text/plain"
XML = "application/xml"  # an e-invoice on its own (UN/CEFACT CII or UBL 2.1): read by agent.einvoice
PNG = "image/png"
JPEG = "image/jpeg"
TIFF = "image/tiff"
IMAGES = (PNG, JPEG, TIFF)  # scans and photos: read by OCR (agent.ocr)

MB = 1024 * 1024
MAX_DOCUMENT_BYTES = 5 * MB
MAX_PAGES = 20
MAX_TEXT_CHARS = 100_000
# A plain-text or DOCX "page" for the page limit: what fits on a printed page, roughly.
CHARS_PER_PAGE = 3_000
SUPPORTED = ("PDF, DOCX, plain text (UTF-8), an e-invoice XML (UN/CEFACT CII or UBL 2.1), or a scan or photo "
             "(PNG, JPEG or TIFF)")
# The messages of the refusals the submit form words by their reason (jobs.errors.Reason): for
# API clients and staff. The form never reads them, so they may be reworded freely.
UNRECOGNISED = f"unsupported document type: send {SUPPORTED}"
NO_INPUT = "send a document, or the text to review in payload.text"
INPUT_TWICE = "send a document or payload.text, not both"

# DOCX structure, from the zip's central directory (what each part declares; nothing is
# inflated to check it). A Word invoice has 10 to 30 parts and a few hundred KB unpacked;
# its XML packs 3 to 35 times smaller (a machine-made, very repetitive one up to ~70),
# images about 1 to 1. Bombs pack hundreds of times smaller.
MAX_DOCX_PARTS = 1_000
MAX_DOCX_PART_BYTES = 20 * MB
MAX_DOCX_UNPACKED_BYTES = 50 * MB
MAX_DOCX_RATIO = 200
DOCX_RATIO_FROM_BYTES = 1 * MB  # smaller parts may pack as well as they like: they stay small
DOCX_COMPRESSION = {zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED}  # what Word writes
DOCX_MAIN_PART = "word/document.xml"
# Extraction reads at most this many XML elements of the main part (a heavily formatted
# 20-page invoice has well under 200,000).
MAX_DOCX_ELEMENTS = 500_000
# PDF structure: objects in the cross-reference table(s). A 20-page invoice has tens to a
# few thousand.
MAX_PDF_OBJECTS = 50_000
# Nodes visited to count the pages (a 20-page PDF's page tree has a few dozen).
PDF_PAGE_TREE_NODES = 1_000
# Images, from what their headers declare (nothing is decoded to check them): a phone photo is
# 12 to 50 million pixels, an A4 scan at 600 dpi 35 million. A few KB of PNG can declare
# 20,000 x 20,000 (400 million pixels, 1.2 GB decoded), a TIFF thousands of pages.
MAX_IMAGE_PIXELS = 50_000_000
MAX_IMAGE_SIDE = 30_000
MAX_TIFF_TAGS = 500  # entries in one TIFF directory (a scanner writes 10 to 40)
# Cross-reference sections: one per save, plus one per incremental update (a signature, a
# form filled in, an annotation). An invoice has one to a few dozen; pypdf follows each
# section's /Prev and merges its trailer, so thousands of them cost seconds.
MAX_PDF_SECTIONS = 1_000

DAMAGED_PDF = "the PDF is damaged and cannot be read; submit a new copy"
DAMAGED_DOCX = "the DOCX is damaged and cannot be read; submit a new copy"

_ZIP_MAGIC = b"PK\x03\x04"
# A standalone XML: after an optional UTF-8 byte order mark and blanks, an XML declaration,
# a comment, a document type declaration (refused, but as XML) or an element's name.
_XML_START = re.compile(rb"(?:\xef\xbb\xbf)?[ \t\r\n]*+<(?:\?xml[ \t\r\n?]|!--|!DOCTYPE|[A-Za-z_:\x80-\xff])")
_DOCTYPE = re.compile(rb"<!DOCTYPE", re.IGNORECASE)
_ZIP_END = b"PK\x05\x06"
_ZIP_ENTRY = b"PK\x01\x02"  # a central directory entry's signature


@dataclass
class Text:
    """A document's text as extraction sees it, with what went wrong along the way."""

    text: str
    pages: int
    warnings: list[str] = field(default_factory=list)


def check_document(*, content: bytes, name: str, content_type: str) -> str:
    """Refuse an unsupported, damaged or over-limit document; return its real media type.

    Cheap whatever the bytes say: it reads declarations (zip directory, PDF cross-reference
    table and page tree), never the text.
    """
    if content.startswith(_ZIP_MAGIC):
        check_docx(content)
        return DOCX
    media_type = sniff(content)
    if media_type is None:
        raise unrecognised()
    if media_type == XML:
        check_xml(content)
        return XML
    if media_type in IMAGES:
        check_image(content)
        return media_type
    pages = _pdf_reader(content)[1] if media_type == PDF else _text_pages(content.decode("utf-8"))
    _check_pages(pages)
    return media_type


def check_input(*, payload: dict, has_document: bool) -> None:
    """A review needs something to review: an uploaded document or inline ``text``."""
    if not has_document and not payload.get("text"):
        raise InvalidPayload(NO_INPUT, field="payload.text", reason=Reason.NO_INPUT)
    if has_document and payload.get("text"):
        raise InvalidPayload(INPUT_TWICE, field="payload.text", reason=Reason.INPUT_TWICE)


def unrecognised() -> UnsupportedDocument:
    """The refusal of bytes of none of the supported types."""
    return UnsupportedDocument(UNRECOGNISED, field="document", reason=Reason.UNRECOGNISED_TYPE)


def sniff(content: bytes) -> str | None:
    """The media type the bytes really are, or None: the client's claim is not evidence."""
    if content.startswith(b"%PDF-"):
        return PDF
    if content.startswith(_ZIP_MAGIC):
        try:
            return DOCX if any(info.filename == DOCX_MAIN_PART for info in _docx_parts(content)) else None
        except (UnsupportedDocument, DocumentTooComplex):
            return None
    image = _image_type(content)
    if image is not None:
        return image
    if b"\x00" in content:
        return None
    try:
        content.decode("utf-8")
    except UnicodeDecodeError:
        return None
    # Checked before plain text, which an XML also is; "<" and no name after it stays text.
    return XML if _XML_START.match(content) else TEXT


def read_text(content: bytes, media_type: str) -> Text:
    """The text of an accepted document, at most MAX_TEXT_CHARS, with extraction warnings.

    Raises the refusals of ``jobs.errors`` (damaged, over a limit, unsupported) for a
    document that cannot be read: the same bytes would fail the same way again.
    """
    warnings: list[str] = []
    if media_type == PDF:
        text, pages = _pdf_text(content)
    elif media_type == DOCX:
        text = _docx_text(content)
        pages = _text_pages(text)
        if pages > MAX_PAGES:  # checked here: acceptance does not read a DOCX's text
            raise PayloadTooLarge(f"the document has more than {MAX_PAGES * CHARS_PER_PAGE:,} characters, over "
                                  f"{MAX_PAGES} pages of {CHARS_PER_PAGE:,}; at most {MAX_PAGES} pages are "
                                  "accepted", field="document")
    elif media_type == TEXT:
        text = content.decode("utf-8", errors="replace")
        pages = _text_pages(text)
    elif media_type == XML:
        return Text(text="", pages=1, warnings=[])  # no visible page: agent.einvoice reads its data
    else:
        raise unrecognised()
    if not text.strip():
        warnings.append("no text layer: the document looks scanned; ask for a text PDF or check it by eye")
    if len(text) > MAX_TEXT_CHARS:
        text = text[:MAX_TEXT_CHARS]
        warnings.append(f"text cut to the first {MAX_TEXT_CHARS} characters")
    return Text(text=text, pages=pages, warnings=warnings)


def inline_text(text: str) -> Text:
    """Inline payload text, read like a plain-text document."""
    return read_text(text.encode("utf-8"), TEXT)


def _text_pages(text: str) -> int:
    return max(1, -(-len(text) // CHARS_PER_PAGE))


def _check_pages(pages: int) -> None:
    if pages > MAX_PAGES:
        raise PayloadTooLarge(f"the document has {pages} pages; at most {MAX_PAGES} are accepted", field="document")
    if pages == 0:
        raise UnsupportedDocument("the document has no pages", field="document")


# --- Images -----------------------------------------------------------------------------

_PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
_JPEG_MAGIC = b"\xff\xd8\xff"
_TIFF_MAGIC = (b"II*\x00", b"MM\x00*")
# JPEG frame headers (SOF0-SOF15 but DHT, JPG and DAC): the image's declared height and width.
_JPEG_SOF = {0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF}
DAMAGED_IMAGE = "the image is damaged and cannot be read; submit a new copy"


def _image_type(content: bytes) -> str | None:
    if content.startswith(_PNG_MAGIC):
        return PNG
    if content.startswith(_JPEG_MAGIC):
        return JPEG
    if content[:4] in _TIFF_MAGIC:
        return TIFF
    return None


def check_image(content: bytes) -> list[tuple[int, int]]:
    """Each page's declared width and height, once every one is within the limits.

    Reads the headers only, by hand (PNG's IHDR, JPEG's frame header, TIFF's chain of image
    directories, at most MAX_PAGES + 1 of them): no pixel is decoded and no image library runs
    in the web process. A PNG or JPEG is one page (an animation's or a multi-picture JPEG's
    other frames are not read); a TIFF's pages are its directories.
    """
    media_type = _image_type(content)
    if media_type == PNG:
        sizes = [_png_size(content)]
    elif media_type == JPEG:
        sizes = [_jpeg_size(content)]
    elif media_type == TIFF:
        sizes = _tiff_sizes(content)
    else:
        raise unrecognised()
    _check_pages(len(sizes))
    for width, height in sizes:
        refusal = image_refusal(width, height)
        if refusal is not None:
            raise refusal
    return sizes


def image_refusal(width: int, height: int) -> AcceptanceError | None:
    """The refusal for an image that declares a size over the limits, or None."""
    if width <= 0 or height <= 0:
        return DamagedDocument(DAMAGED_IMAGE, field="document")
    if width > MAX_IMAGE_SIDE or height > MAX_IMAGE_SIDE or width * height > MAX_IMAGE_PIXELS:
        return DocumentUnpacksTooLarge(
            f"the image declares {width:,} x {height:,} pixels ({width * height / 1e6:,.0f} million); at most "
            f"{MAX_IMAGE_PIXELS // 1_000_000} million pixels and {MAX_IMAGE_SIDE:,} on a side are accepted",
            field="document")
    return None


def _png_size(content: bytes) -> tuple[int, int]:
    if len(content) < 24 or content[12:16] != b"IHDR":
        raise DamagedDocument(DAMAGED_IMAGE, field="document")
    width, height = struct.unpack_from(">II", content, 16)
    return width, height


def _jpeg_size(content: bytes) -> tuple[int, int]:
    """The first frame header's size, walking the marker segments up to the scan."""
    at = 2
    while at + 4 <= len(content):
        if content[at] != 0xFF:
            break
        marker = content[at + 1]
        if marker == 0xFF:  # fill byte
            at += 1
            continue
        if marker in (0x01, 0xD0, 0xD1, 0xD2, 0xD3, 0xD4, 0xD5, 0xD6, 0xD7):  # no length
            at += 2
            continue
        (length,) = struct.unpack_from(">H", content, at + 2)
        if marker in _JPEG_SOF:
            if at + 9 > len(content):
                break
            height, width = struct.unpack_from(">HH", content, at + 5)
            return width, height
        if marker in (0xDA, 0xD9) or length < 2:  # the scan or the end before any frame header
            break
        at += 2 + length
    raise DamagedDocument(DAMAGED_IMAGE, field="document")


def _tiff_sizes(content: bytes) -> list[tuple[int, int]]:
    """Each image directory's width and height, following the chain at most MAX_PAGES + 1 steps."""
    order = "<" if content.startswith(b"II") else ">"
    try:
        (offset,) = struct.unpack_from(order + "I", content, 4)
        sizes: list[tuple[int, int]] = []
        seen: set[int] = set()
        while offset:
            if offset in seen:
                raise DamagedDocument(DAMAGED_IMAGE, field="document")  # a loop in the chain
            seen.add(offset)
            if len(seen) > MAX_PAGES:
                raise PayloadTooLarge(f"the TIFF has more than {MAX_PAGES} pages; at most {MAX_PAGES} are accepted",
                                      field="document")
            (entries,) = struct.unpack_from(order + "H", content, offset)
            if entries > MAX_TIFF_TAGS:
                raise DamagedDocument(DAMAGED_IMAGE, field="document")
            width = height = 0
            for index in range(entries):
                tag, kind = struct.unpack_from(order + "HH", content, offset + 2 + 12 * index)
                if tag in (256, 257):  # ImageWidth, ImageLength: SHORT or LONG
                    fmt = order + ("H" if kind == 3 else "I")
                    (value,) = struct.unpack_from(fmt, content, offset + 2 + 12 * index + 8)
                    width, height = (value, height) if tag == 256 else (width, value)
            sizes.append((width, height))
            (offset,) = struct.unpack_from(order + "I", content, offset + 2 + 12 * entries)
    except struct.error:
        raise DamagedDocument(DAMAGED_IMAGE, field="document") from None
    return sizes


# --- XML --------------------------------------------------------------------------------


def check_xml(content: bytes) -> None:
    """Refuse a standalone XML that declares a DTD: e-invoices never do, entity tricks always do.

    Cheap: a scan of the bytes, nothing is parsed here. Whether the XML is well-formed and an
    invoice is the review's to say (agent.einvoice), in words, with the rest of the review.
    """
    if declares_dtd(content):
        raise UnsupportedDocument("the XML declares a document type (DTD), which e-invoices never do; send "
                                  f"{SUPPORTED}", field="document")


def declares_dtd(xml: bytes) -> bool:
    """Whether the bytes hold a document type declaration (in UTF-8, ASCII or UTF-16)."""
    return any(pattern in xml for pattern in _DOCTYPE_MARKERS) or bool(_DOCTYPE.search(xml))


_DOCTYPE_MARKERS = ("<!DOCTYPE".encode("utf-16-le"), "<!DOCTYPE".encode("utf-16-be"))


# --- DOCX -------------------------------------------------------------------------------


def check_docx(content: bytes) -> dict[str, zipfile.ZipInfo]:
    """The DOCX's parts by name, once its declared structure is within every limit.

    Reads the zip's end record (for the part count) and then its central directory (for
    each part's declared sizes); inflates nothing. Python's zipfile never inflates a part
    past its declared size (a part that lies fails its CRC check), so the declared sizes
    bound what extraction can be made to unpack.
    """
    infos = _docx_parts(content)
    parts = {info.filename: info for info in infos}
    if DOCX_MAIN_PART not in parts:
        raise unrecognised()
    if len(parts) < len(infos):  # readers disagree on which copy of a part counts
        raise DamagedDocument("the DOCX is damaged (it names a part twice) and cannot be read; submit a new copy",
                              field="document")
    total = 0
    for info in infos:
        part = _part_name(info.filename)
        if info.compress_type not in DOCX_COMPRESSION:
            raise UnsupportedDocument(f"the DOCX packs {part} with a compression method Word does not use; "
                                      "save it again from your word processor", field="document")
        if info.flag_bits & 0x1:
            raise UnsupportedDocument("the DOCX is encrypted; send it without a password", field="document")
        if info.file_size > MAX_DOCX_PART_BYTES:
            raise DocumentUnpacksTooLarge(f"{part} unpacks to {_mb(info.file_size)}; at most "
                                          f"{_mb(MAX_DOCX_PART_BYTES)} per part is accepted", field="document")
        ratio = info.file_size / max(info.compress_size, 1)
        if info.file_size > DOCX_RATIO_FROM_BYTES and ratio > MAX_DOCX_RATIO:
            raise DocumentUnpacksTooLarge(f"{part} unpacks to {ratio:,.0f} times its packed size; at most "
                                          f"{MAX_DOCX_RATIO} times is accepted for a part over "
                                          f"{_mb(DOCX_RATIO_FROM_BYTES)}", field="document")
        total += info.file_size
    if total > MAX_DOCX_UNPACKED_BYTES:
        raise DocumentUnpacksTooLarge(f"the DOCX unpacks to {_mb(total)}; at most {_mb(MAX_DOCX_UNPACKED_BYTES)} "
                                      "is accepted", field="document")
    return parts


def _docx_parts(content: bytes) -> list[zipfile.ZipInfo]:
    """The zip's directory, read only once its end record declares a bounded part count."""
    declared = _zip_declared_parts(content)
    if declared is not None and declared > MAX_DOCX_PARTS:
        raise DocumentTooComplex(_too_many_parts(declared), field="document")
    # zipfile reads entries for as many bytes as the end record gives the directory, not
    # for as many entries as it declares: an end record may understate them. Every entry
    # starts with its signature, so counting those bounds what zipfile can be made to build.
    entries = content.count(_ZIP_ENTRY)
    if entries > MAX_DOCX_PARTS:
        raise DocumentTooComplex(_too_many_parts(entries), field="document")
    try:
        with zipfile.ZipFile(io.BytesIO(content)) as archive:
            infos = archive.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, EOFError, OSError):
        raise unrecognised() from None
    if len(infos) > MAX_DOCX_PARTS:
        raise DocumentTooComplex(_too_many_parts(len(infos)), field="document")
    return infos


def _zip_declared_parts(content: bytes) -> int | None:
    """The number of entries the zip's end record declares (ZIP64's marker counts as many).

    Read before ``zipfile`` builds an object per entry: 5 MB can describe ~100,000 of them.
    """
    at = content.rfind(_ZIP_END, max(0, len(content) - 22 - 0xFFFF))
    if at < 0 or at + 22 > len(content):
        return None
    (entries,) = struct.unpack_from("<H", content, at + 10)
    return entries


def _too_many_parts(count: int) -> str:
    return f"the DOCX has {count:,} parts; at most {MAX_DOCX_PARTS:,} are accepted"


def _part_name(name: str) -> str:
    return name if len(name) <= 80 and name.isprintable() else "a part"


def _mb(size: int) -> str:
    return f"{size / MB:,.1f} MB" if size % MB else f"{size // MB} MB"


def _docx_text(content: bytes) -> str:
    """The main part's text, streamed: no tree, at most MAX_TEXT_CHARS and MAX_DOCX_ELEMENTS."""
    parts = check_docx(content)
    reader = _DocxText()
    parser = reader.parser()
    try:
        with zipfile.ZipFile(io.BytesIO(content)) as archive, archive.open(parts[DOCX_MAIN_PART]) as part:
            while chunk := part.read(64 * 1024):
                parser.Parse(chunk, False)
            parser.Parse(b"", True)
    except _Enough:
        pass
    except (expat.ExpatError, zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError, RuntimeError,
            NotImplementedError) as exc:
        log.warning("docx unreadable: %s", type(exc).__name__)
        raise DamagedDocument(DAMAGED_DOCX, field="document") from None
    return "".join(reader.parts)


class _Enough(Exception):
    """The text limit is reached: stop reading, keep what was read."""


class _DocxText:
    """The text of WordprocessingML, from parser events (python-docx's reading, without a tree).

    Paragraphs end with a newline (at most one blank line in a row); a table row is its
    cells joined by two spaces (the field patterns read "IBAN  NL91 ..." as a label and
    its value); tabs and breaks inside runs become tab and newline. ``mc:Fallback``
    repeats its ``mc:Choice`` for old readers and is skipped.
    """

    W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
    MC = "http://schemas.openxmlformats.org/markup-compatibility/2006"

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.size = 0
        self.newlines = 0  # newlines just emitted, in a row
        self.elements = 0
        self.in_text = False
        self.runs = 0  # open w:r elements
        self.skipping = 0  # depth inside mc:Fallback
        self.rows: list[int] = []  # per open w:tr: cells started
        self.cells: list[bool] = []  # per open w:tc: a paragraph has ended in it

    def parser(self) -> expat.XMLParserType:
        parser = expat.ParserCreate(namespace_separator=" ")
        parser.buffer_text = True
        parser.StartElementHandler = self.start
        parser.EndElementHandler = self.end
        parser.CharacterDataHandler = self.characters
        # Word never writes a DTD: refusing one refuses every entity trick with it.
        parser.StartDoctypeDeclHandler = self.doctype
        parser.EntityDeclHandler = self.doctype
        return parser

    def emit(self, text: str) -> None:
        if text == "\n":
            if self.newlines >= 2:  # one blank line is layout; a thousand are padding
                return
            self.newlines += 1
        else:
            self.newlines = 0
        self.parts.append(text)
        self.size += len(text)
        if self.size > MAX_TEXT_CHARS:
            raise _Enough

    def start(self, name: str, attributes: dict) -> None:
        self.elements += 1
        if self.elements > MAX_DOCX_ELEMENTS:
            raise DocumentTooComplex(f"the DOCX has more than {MAX_DOCX_ELEMENTS:,} XML elements in its text; "
                                     f"at most {MAX_DOCX_ELEMENTS:,} are read", field="document")
        if self.skipping or name == f"{self.MC} Fallback":
            self.skipping += 1
            return
        ns, _, tag = name.rpartition(" ")
        if ns != self.W:
            return
        if tag == "r":
            self.runs += 1
        elif tag == "t":
            self.in_text = True
        elif tag == "p":
            if self.cells and self.cells[-1]:
                self.emit("\n")  # a second paragraph in the same table cell
        elif tag == "tr":
            self.rows.append(0)
        elif tag == "tc":
            if self.rows:
                if self.rows[-1]:
                    self.emit("  ")
                self.rows[-1] += 1
            self.cells.append(False)
        elif self.runs and tag in ("tab", "ptab"):
            self.emit("\t")
        elif self.runs and tag in ("br", "cr"):
            self.emit("\n")
        elif self.runs and tag == "noBreakHyphen":
            self.emit("-")

    def end(self, name: str) -> None:
        if self.skipping:
            self.skipping -= 1
            return
        ns, _, tag = name.rpartition(" ")
        if ns != self.W:
            return
        if tag == "r":
            self.runs -= 1
        elif tag == "t":
            self.in_text = False
        elif tag == "p":
            if self.cells:
                self.cells[-1] = True
            else:
                self.emit("\n")
        elif tag == "tc" and self.cells:
            self.cells.pop()
        elif tag == "tr" and self.rows:
            self.rows.pop()
            self.emit("\n")

    def characters(self, data: str) -> None:
        if self.in_text and not self.skipping:
            self.emit(data)

    def doctype(self, *args: object) -> None:
        raise expat.ExpatError("a document type declaration in a DOCX part")


# --- PDF --------------------------------------------------------------------------------


def _pdf_reader(content: bytes):
    """A pypdf reader and the page count, once the PDF's declared structure is within limits.

    Reads the cross-reference table(s) and the page tree, never a content stream. pypdf
    stops reading a cross-reference stream that declares more than MAX_PDF_OBJECTS
    entries before it builds them, and a file with more object markers than that is refused
    before pypdf may rebuild a damaged table from them.
    """
    from pypdf import PdfReader, apply_configuration
    from pypdf.errors import LimitReachedError

    check_pdf_markers(content)
    try:
        reader = PdfReader(io.BytesIO(content), xref_stream_maximum_entries=MAX_PDF_OBJECTS)
        if reader.is_encrypted:
            raise UnsupportedDocument("the PDF is encrypted; send it without a password", field="document")
        objects = sum(len(table) for table in reader.xref.values()) + len(reader.xref_objStm)
        if objects > MAX_PDF_OBJECTS:
            raise DocumentTooComplex(_too_many_objects(objects), field="document")
        declared = _declared_pages(reader)
        if declared is not None and declared > MAX_PAGES:
            raise PayloadTooLarge(f"the document has {declared} pages; at most {MAX_PAGES} are accepted",
                                  field="document")
        # A page tree may lie about its /Count and name the same subtree many times over.
        with apply_configuration(page_tree_maximum_entries=PDF_PAGE_TREE_NODES,
                                 page_tree_maximum_page_entries=PDF_PAGE_TREE_NODES * 100):
            pages = len(reader.pages)
    except AcceptanceError:
        raise
    except Exception as exc:  # noqa: BLE001  a damaged file raises anything, RecursionError included
        if _caused_by(exc, LimitReachedError):
            raise DocumentTooComplex(f"the PDF is over a structural limit: at most {MAX_PDF_OBJECTS:,} objects "
                                     f"and {MAX_PAGES} pages are accepted", field="document") from None
        log.warning("pdf unreadable: %s", type(exc).__name__)
        raise DamagedDocument(DAMAGED_PDF, field="document") from None
    return reader, pages


def check_pdf_markers(content: bytes) -> None:
    """Refuse a PDF whose bytes hold more structure than pypdf may read, before it reads any.

    Counted, not parsed (tens of milliseconds for 5 MB), and each count bounds what pypdf
    would build from it before any limit on the result could be checked: object markers
    (it rebuilds a damaged cross-reference table from every one), cross-reference entries
    (it builds one for each line of a valid table, up to one per 20 bytes of the file), and
    cross-reference sections (it follows every /Prev). A /Size is not counted: an embedded
    file's /Size is its length in bytes; pypdf bounds a cross-reference stream's own.
    """
    markers = content.count(_OBJECT_MARKER)
    if markers > MAX_PDF_OBJECTS:
        raise DocumentTooComplex(_too_many_objects(markers), field="document")
    entries = sum(1 for _ in _XREF_ENTRY.finditer(content))
    if entries > MAX_PDF_OBJECTS:
        raise DocumentTooComplex(_too_many_objects(entries), field="document")
    # "xref" opens each classic table ("startxref" only points at one); "/XRef" types each
    # cross-reference stream (its "/XRefStm" variant names one more in a hybrid file).
    sections = content.count(b"xref") - content.count(b"startxref") + content.count(b"/XRef")
    if sections > MAX_PDF_SECTIONS:
        raise DocumentTooComplex(f"the PDF has {sections:,} cross-reference sections (saved or updated that "
                                 f"many times); at most {MAX_PDF_SECTIONS:,} are accepted", field="document")


# What pypdf looks for when it rebuilds a cross-reference table ("12 0 obj"): counting it
# bounds the number of objects any reading of the file can find.
_OBJECT_MARKER = b" obj"
# A classic cross-reference entry: offset, generation, in use or free.
_XREF_ENTRY = re.compile(rb"\d{10}[ ]\d{5}[ ][fn]")


def _caused_by(exc: BaseException, kind: type[BaseException]) -> bool:
    """Whether ``kind`` is ``exc`` or in its chain (pypdf wraps its limits in read errors)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, kind):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


def _declared_pages(reader) -> int | None:
    """The page tree's declared /Count: refuses a long PDF before walking its tree."""
    try:
        count = reader.trailer["/Root"]["/Pages"]["/Count"]
    except (KeyError, TypeError, AttributeError):
        return None
    return count if isinstance(count, int) else None


def _too_many_objects(count: int) -> str:
    return f"the PDF has {count:,} objects; at most {MAX_PDF_OBJECTS:,} are accepted"


def _pdf_text(content: bytes) -> tuple[str, int]:
    """The text of each page in turn until MAX_TEXT_CHARS, and the page count."""
    from pypdf.errors import LimitReachedError

    reader, pages = _pdf_reader(content)
    _check_pages(pages)
    parts: list[str] = []
    size = 0
    for number, page in enumerate(reader.pages, 1):
        if size > MAX_TEXT_CHARS:
            break
        try:
            part = page.extract_text() or ""
        except Exception as exc:  # noqa: BLE001  a damaged page raises anything, RecursionError included
            if _caused_by(exc, MemoryError):  # the job's memory limit: the worker says so in words
                raise MemoryError from None
            if _caused_by(exc, LimitReachedError):
                raise DocumentTooComplex(f"page {number} of the PDF is too complex to read: its content is over "
                                         "the reader's limits", field="document") from None
            log.warning("pdf page %d unreadable: %s", number, type(exc).__name__)
            raise DamagedDocument(DAMAGED_PDF, field="document") from None
        parts.append(part)
        size += len(part)
    return "\n".join(parts), pages

