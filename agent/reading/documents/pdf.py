"""A PDF checked from its declared structure (objects, sections, pages), and its text read page by page."""

from __future__ import annotations

import io
import logging
import re
from typing import TYPE_CHECKING

from documents.errors import DamagedDocument, DocumentTooComplex, UnsupportedDocument
from jobs.errors import AcceptanceError, PayloadTooLarge

from .rules import (
    DAMAGED_PDF,
    MAX_PAGES,
    MAX_PDF_OBJECTS,
    MAX_PDF_SECTIONS,
    MAX_TEXT_CHARS,
    PDF_PAGE_TREE_NODES,
    check_pages,
)

if TYPE_CHECKING:
    from pypdf import PdfReader

log = logging.getLogger("agent.documents")


def pdf_reader(content: bytes) -> tuple[PdfReader, int]:
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
            _open_without_password(reader)
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
        if caused_by(exc, LimitReachedError):
            raise DocumentTooComplex(f"the PDF is over a structural limit: at most {MAX_PDF_OBJECTS:,} objects "
                                     f"and {MAX_PAGES} pages are accepted", field="document") from None
        log.warning("pdf unreadable: %s", type(exc).__name__)
        raise DamagedDocument(DAMAGED_PDF, field="document") from None
    return reader, pages


NEEDS_PASSWORD = ("the PDF is protected by a password that is needed to open it; send it without the password "  # noqa: S105  words
                  "(save or print it as a new PDF)")


def _open_without_password(reader: PdfReader) -> None:
    """Open a PDF encrypted with an empty user password, refuse one that needs a password to open.

    An "owner password" only restricts printing or copying in a viewer: anyone may open the
    file (its user password is empty), and so does the review, as pdfium does for the layout.
    """
    from pypdf import PasswordType

    if reader.decrypt("") == PasswordType.NOT_DECRYPTED:
        raise UnsupportedDocument(NEEDS_PASSWORD, field="document")


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


def caused_by(exc: BaseException, kind: type[BaseException]) -> bool:
    """Whether ``kind`` is ``exc`` or in its chain (pypdf wraps its limits in read errors)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, kind):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


def _declared_pages(reader: PdfReader) -> int | None:
    """The page tree's declared /Count: refuses a long PDF before walking its tree."""
    from pypdf.generic import DictionaryObject

    try:
        root = reader.trailer["/Root"]
        tree = root["/Pages"] if isinstance(root, DictionaryObject) else None
        count = tree["/Count"] if isinstance(tree, DictionaryObject) else None
    except (KeyError, TypeError, AttributeError):
        return None
    return count if isinstance(count, int) else None


def _too_many_objects(count: int) -> str:
    return f"the PDF has {count:,} objects; at most {MAX_PDF_OBJECTS:,} are accepted"


def pdf_text(content: bytes) -> tuple[str, int]:
    """The text of each page in turn until MAX_TEXT_CHARS, and the page count."""
    from pypdf.errors import LimitReachedError

    reader, pages = pdf_reader(content)
    check_pages(pages)
    parts: list[str] = []
    size = 0
    for number, page in enumerate(reader.pages, 1):
        if size > MAX_TEXT_CHARS:
            break
        try:
            part = page.extract_text() or ""
        except Exception as exc:  # noqa: BLE001  a damaged page raises anything, RecursionError included
            if caused_by(exc, MemoryError):  # the job's memory limit: the worker says so in words
                raise MemoryError from None
            if caused_by(exc, LimitReachedError):
                raise DocumentTooComplex(f"page {number} of the PDF is too complex to read: its content is over "
                                         "the reader's limits", field="document") from None
            log.warning("pdf page %d unreadable: %s", number, type(exc).__name__)
            raise DamagedDocument(DAMAGED_PDF, field="document") from None
        parts.append(part)
        size += len(part)
    return "\n".join(parts), pages
