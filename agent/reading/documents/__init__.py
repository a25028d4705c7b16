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
process (``agent.reading.ocr`` decodes and reads them in the worker). No text is extracted. A document
over a limit is refused with an error that names the limit.

Extraction (``read_text``) runs in the worker and is bounded whatever acceptance let
through: a DOCX's main part is streamed through an XML parser that builds no tree and stops
at ``MAX_TEXT_CHARS`` characters or ``MAX_DOCX_ELEMENTS`` elements, after the same structural
checks; a PDF is read page by page with pypdf until the text limit. A document that cannot
be read raises the same refusals acceptance uses (``jobs.errors``): they are caused by the
bytes, so reading them again would fail again. A standalone XML has no visible page: its
text is empty, and ``agent.reading.einvoice`` reads its data.
"""


from __future__ import annotations

import re
from dataclasses import dataclass, field

import pypdf  # noqa: F401  imported once by the web process, not by every check's forked child

from documents.errors import DocumentTooComplex, UnsupportedDocument
from jobs.errors import PayloadTooLarge

from ..limits import MAX_DOCUMENT_BYTES, MB
from .docx import ZIP_MAGIC, DocxText, check_docx, docx_parts, docx_text
from .images import DAMAGED_IMAGE, TOO_MANY_PIXELS, check_image, image_refusal, image_type
from .pdf import caused_by, check_pdf_markers, pdf_reader, pdf_text
from .rules import (
    CHARS_PER_PAGE,
    DAMAGED_DOCX,
    DAMAGED_PDF,
    DOCX,
    DOCX_COMPRESSION,
    DOCX_MAIN_PART,
    DOCX_RATIO_FROM_BYTES,
    IMAGES,
    INPUT_TWICE,
    JPEG,
    MAX_DOCX_ELEMENTS,
    MAX_DOCX_PART_BYTES,
    MAX_DOCX_PARTS,
    MAX_DOCX_RATIO,
    MAX_DOCX_UNPACKED_BYTES,
    MAX_EXIF_BYTES,
    MAX_ICC_BYTES,
    MAX_IMAGE_PIXELS,
    MAX_IMAGE_SIDE,
    MAX_PAGES,
    MAX_PDF_OBJECTS,
    MAX_PDF_SECTIONS,
    MAX_TEXT_CHARS,
    MAX_TIFF_TAGS,
    NO_INPUT,
    PDF,
    PDF_PAGE_TREE_NODES,
    PNG,
    SUPPORTED,
    TEXT,
    TIFF,
    UNRECOGNISED,
    XML,
    check_input,
    check_pages,
    megabytes,
    part_name,
    unrecognised,
)

__all__ = [
    "CHARS_PER_PAGE", "DAMAGED_DOCX", "DAMAGED_IMAGE", "DAMAGED_PDF", "DOCX", "DOCX_COMPRESSION", "DOCX_MAIN_PART",
    "DOCX_RATIO_FROM_BYTES", "IMAGES", "INPUT_TWICE", "JPEG", "MAX_DOCUMENT_BYTES", "MAX_DOCX_ELEMENTS",
    "MAX_DOCX_PARTS", "MAX_DOCX_PART_BYTES", "MAX_DOCX_RATIO", "MAX_DOCX_UNPACKED_BYTES", "MAX_EXIF_BYTES",
    "MAX_ICC_BYTES", "MAX_IMAGE_PIXELS", "MAX_IMAGE_SIDE", "MAX_PAGES", "MAX_PDF_OBJECTS", "MAX_PDF_SECTIONS",
    "MAX_TEXT_CHARS", "MAX_TIFF_TAGS", "MB", "NO_INPUT", "PDF", "PDF_PAGE_TREE_NODES", "PNG", "SUPPORTED", "TEXT",
    "TIFF", "TOO_MANY_PIXELS", "UNRECOGNISED", "XML", "DocxText", "Text",
    "caused_by", "check_document", "check_docx", "check_image", "check_input", "check_pages", "check_pdf_markers",
    "check_xml", "declared_encoding", "declares_dtd", "image_refusal", "inline_text", "megabytes", "part_name",
    "pdf_reader", "read_text", "sniff", "unrecognised",
]

# A standalone XML: after an optional UTF-8 byte order mark and blanks, an XML declaration,
# a comment, a document type declaration (refused, but as XML) or an element's name.
_XML_START = re.compile(rb"(?:\xef\xbb\xbf)?[ \t\r\n]*+<(?:\?xml[ \t\r\n?]|!--|!DOCTYPE|[A-Za-z_:\x80-\xff])")
_DOCTYPE = re.compile(rb"<!DOCTYPE", re.IGNORECASE)
# The XML declaration (at the very start, after a byte order mark) and its encoding, in the
# spelling the XML specification allows. Only UTF-8 and UTF-16 are read: in any other encoding
# (UTF-7, EBCDIC) the bytes scanned for a DTD are not what the parser reads.
_XML_DECLARATION = re.compile(rb"(?:\xef\xbb\xbf)?<\?xml[ \t\r\n][^>]{0,200}?\?>")
_XML_ENCODING = re.compile(rb"encoding[ \t\r\n]*=[ \t\r\n]*(['\"])([A-Za-z][A-Za-z0-9._-]{0,39})\1")
_XML_ENCODINGS = {"utf-8", "utf8", "utf-16", "utf16", "utf-16le", "utf-16be"}


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
    if content.startswith(ZIP_MAGIC):
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
    pages = pdf_reader(content)[1] if media_type == PDF else _text_pages(content.decode("utf-8"))
    check_pages(pages)
    return media_type


def sniff(content: bytes) -> str | None:
    """The media type the bytes really are, or None: the client's claim is not evidence."""
    if content.startswith(b"%PDF-"):
        return PDF
    if content.startswith(ZIP_MAGIC):
        try:
            return DOCX if any(info.filename == DOCX_MAIN_PART for info in docx_parts(content)) else None
        except (UnsupportedDocument, DocumentTooComplex):
            return None
    image = image_type(content)
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
        text, pages = pdf_text(content)
    elif media_type == DOCX:
        text = docx_text(content)
        pages = _text_pages(text)
        if pages > MAX_PAGES:  # checked here: acceptance does not read a DOCX's text
            raise PayloadTooLarge(f"the document has more than {MAX_PAGES * CHARS_PER_PAGE:,} characters, over "
                                  f"{MAX_PAGES} pages of {CHARS_PER_PAGE:,}; at most {MAX_PAGES} pages are "
                                  "accepted", field="document")
    elif media_type == TEXT:
        text = content.decode("utf-8", errors="replace")
        pages = _text_pages(text)
    elif media_type == XML:
        return Text(text="", pages=1, warnings=[])  # no visible page: agent.reading.einvoice reads its data
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


# --- XML --------------------------------------------------------------------------------


def check_xml(content: bytes) -> None:
    """Refuse a standalone XML that declares a DTD (e-invoices never do, entity tricks always do),
    or an encoding other than UTF-8 or UTF-16 (in which the scan for a DTD would not see one).

    Cheap: a scan of the bytes, nothing is parsed here. Whether the XML is well-formed and an
    invoice is the review's to say (agent.reading.einvoice), in words, with the rest of the review.
    """
    encoding = declared_encoding(content)
    if encoding is not None and encoding.lower() not in _XML_ENCODINGS:
        shown = encoding if len(encoding) <= 40 and encoding.isprintable() else "an unreadable one"
        raise UnsupportedDocument(f"the XML declares the encoding {shown!r}; an e-invoice is in UTF-8 (or UTF-16): "
                                  "save it as UTF-8 and send it again", field="document")
    if declares_dtd(content):
        raise UnsupportedDocument("the XML declares a document type (DTD), which e-invoices never do; send "
                                  f"{SUPPORTED}", field="document")


def declared_encoding(xml: bytes) -> str | None:
    """The encoding the XML declaration names; None without one. A declaration that names one
    unreadably gives "" (refused: what the parser would make of it is a guess)."""
    declaration = _XML_DECLARATION.match(xml)
    if declaration is None or b"encoding" not in declaration.group(0):
        return None
    named = _XML_ENCODING.search(declaration.group(0))
    return named.group(2).decode("ascii") if named else ""


def declares_dtd(xml: bytes) -> bool:
    """Whether the bytes hold a document type declaration (in UTF-8, ASCII or UTF-16)."""
    return any(pattern in xml for pattern in _DOCTYPE_MARKERS) or bool(_DOCTYPE.search(xml))


_DOCTYPE_MARKERS = ("<!DOCTYPE".encode("utf-16-le"), "<!DOCTYPE".encode("utf-16-be"))
