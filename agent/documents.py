"""Which documents the review accepts, and reading their text.

Acceptance (``check_document``) trusts the bytes, not the client's file name or media type:
it sniffs the format, opens the document with the same reader extraction will use, and
refuses what it cannot read or what is over the page limit, before anything is stored.
"""

from __future__ import annotations

import io
import logging
import zipfile
from dataclasses import dataclass, field
from typing import Callable

from jobs.errors import InvalidPayload, PayloadTooLarge, UnsupportedDocument

log = logging.getLogger("agent.documents")

PDF = "application/pdf"
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
TEXT = "text/plain"

MAX_DOCUMENT_BYTES = 5 * 1024 * 1024
MAX_PAGES = 20
MAX_TEXT_CHARS = 100_000
# A plain-text or DOCX "page" for the page limit: what fits on a printed page, roughly.
CHARS_PER_PAGE = 3_000
SUPPORTED = "PDF, DOCX or plain text (UTF-8)"


@dataclass
class Text:
    """A document's text as extraction sees it, with what went wrong along the way."""

    text: str
    pages: int
    warnings: list[str] = field(default_factory=list)


def check_document(*, content: bytes, name: str, content_type: str) -> str:
    """Refuse an unreadable, unsupported or too long document; return its real media type."""
    media_type = sniff(content)
    if media_type is None:
        raise UnsupportedDocument(f"unsupported document type: send {SUPPORTED}", field="document")
    pages = _open(content, media_type).pages
    if pages > MAX_PAGES:
        raise PayloadTooLarge(f"the document has {pages} pages; at most {MAX_PAGES} are accepted", field="document")
    if pages == 0:
        raise UnsupportedDocument("the document has no pages", field="document")
    return media_type


def check_input(*, payload: dict, has_document: bool) -> None:
    """A review needs something to review: an uploaded document or inline ``text``."""
    if not has_document and not payload.get("text"):
        raise InvalidPayload("send a document, or the text to review in payload.text", field="payload.text")
    if has_document and payload.get("text"):
        raise InvalidPayload("send a document or payload.text, not both", field="payload.text")


def sniff(content: bytes) -> str | None:
    """The media type the bytes really are, or None: the client's claim is not evidence."""
    if content.startswith(b"%PDF-"):
        return PDF
    if content.startswith(b"PK\x03\x04"):
        try:
            with zipfile.ZipFile(io.BytesIO(content)) as archive:
                if "word/document.xml" in archive.namelist():
                    return DOCX
        except zipfile.BadZipFile:
            return None
        return None
    if b"\x00" in content:
        return None
    try:
        content.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return TEXT


def read_text(content: bytes, media_type: str) -> Text:
    """The text of an accepted document, at most MAX_TEXT_CHARS, with extraction warnings."""
    opened = _open(content, media_type)
    result = Text(text="", pages=opened.pages, warnings=list(opened.warnings))
    text = opened.text()
    if not text.strip():
        result.warnings.append("no text layer: the document looks scanned; ask for a text PDF or check it by eye")
    if len(text) > MAX_TEXT_CHARS:
        text = text[:MAX_TEXT_CHARS]
        result.warnings.append(f"text cut to the first {MAX_TEXT_CHARS} characters")
    result.text = text
    return result


def inline_text(text: str) -> Text:
    """Inline payload text, read like a plain-text document."""
    return read_text(text.encode("utf-8"), TEXT)


@dataclass
class _Opened:
    pages: int
    text: Callable[[], str]
    warnings: list[str] = field(default_factory=list)


def _open(content: bytes, media_type: str) -> _Opened:
    if media_type == PDF:
        return _open_pdf(content)
    if media_type == DOCX:
        return _open_docx(content)
    if media_type == TEXT:
        decoded = content.decode("utf-8", errors="replace")
        return _Opened(pages=max(1, -(-len(decoded) // CHARS_PER_PAGE)), text=lambda: decoded)
    raise UnsupportedDocument(f"unsupported document type: send {SUPPORTED}", field="document")


def _open_pdf(content: bytes) -> _Opened:
    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    try:
        reader = PdfReader(io.BytesIO(content))
        if reader.is_encrypted:
            raise UnsupportedDocument("the PDF is encrypted; send it without a password", field="document")
        pages = len(reader.pages)
    except UnsupportedDocument:
        raise
    except (PyPdfError, ValueError, KeyError, TypeError, OSError) as exc:
        raise UnsupportedDocument(f"the PDF cannot be read ({type(exc).__name__})", field="document") from None

    def text() -> str:
        parts: list[str] = []
        size = 0
        for page in reader.pages:
            if size > MAX_TEXT_CHARS:
                break
            try:
                part = page.extract_text() or ""
            except (PyPdfError, ValueError, KeyError, TypeError) as exc:
                log.warning("pdf page unreadable: %s", type(exc).__name__)
                part = ""
            parts.append(part)
            size += len(part)
        return "\n".join(parts)

    return _Opened(pages=pages, text=text)


def _open_docx(content: bytes) -> _Opened:
    import docx

    try:
        document = docx.Document(io.BytesIO(content))
    except Exception as exc:  # python-docx raises a variety of zip/XML errors
        raise UnsupportedDocument(f"the DOCX cannot be read ({type(exc).__name__})", field="document") from None
    lines = [p.text for p in document.paragraphs]
    for table in document.tables:
        for row in table.rows:
            lines.append("  ".join(cell.text for cell in row.cells))
    text = "\n".join(lines)
    return _Opened(pages=max(1, -(-len(text) // CHARS_PER_PAGE)), text=lambda: text)
