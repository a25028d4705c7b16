"""Finding the invoice XML: a standalone XML, or a PDF's attachment, bounded as the PDF is."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from agent.reading import documents
from documents.errors import DocumentUnpacksTooLarge

from .parsing import MAX_XML_BYTES, root_kind

if TYPE_CHECKING:
    from pypdf import PdfReader
    from pypdf.generic import EmbeddedFile

log = logging.getLogger("agent.einvoice")

XML = documents.XML

# Attachments looked at in a PDF: an invoice PDF has one to a handful.
MAX_ATTACHMENTS = 20
# Attachment names the standards give the invoice XML, in the order they are preferred
# (a PDF carrying both a ZUGFeRD 1.0 and a Factur-X XML is read from the newer one).
INVOICE_ATTACHMENTS = ("factur-x.xml", "xrechnung.xml", "zugferd-invoice.xml")


def find_xml(content: bytes, media_type: str) -> tuple[str, bytes] | None:
    """The invoice XML as (attachment name, bytes), or None when the document carries none.

    A standalone XML is itself (name ""). A PDF's attachments are read through pypdf's
    embedded-file API on the reader ``documents`` bounds (object and page limits), each
    unpacked to at most MAX_XML_BYTES: the standard invoice names first, then any other
    ``.xml`` attachment whose root is an invoice. A PDF that cannot be read raises the same
    refusals as ``documents.read_text``; an attachment under a standard invoice name that
    unpacks past the limit is refused (DocumentUnpacksTooLarge): no invoice XML is that large.
    """
    if media_type == XML:
        return "", content
    if media_type != documents.PDF:
        return None
    reader, _ = documents.pdf_reader(content)
    candidates = _xml_attachments(reader)
    candidates.sort(key=lambda item: _attachment_rank(item[0]))
    for name, entry in candidates:
        standard = _attachment_rank(name) < len(INVOICE_ATTACHMENTS)
        try:
            xml = _attachment_content(name, entry)
        except DocumentUnpacksTooLarge:
            if standard:
                raise
            continue  # not under an invoice's name, and too large to be one: not the invoice
        if xml is not None and (standard or root_kind(xml) is not None):
            return name, xml
    return None


def _xml_attachments(reader: PdfReader) -> list[tuple[str, EmbeddedFile]]:
    """The PDF's embedded files named ``*.xml``, at most MAX_ATTACHMENTS looked at."""
    found: list[tuple[str, EmbeddedFile]] = []
    try:
        for number, entry in enumerate(reader.attachment_list):
            if number >= MAX_ATTACHMENTS:
                break
            name = entry.name
            if isinstance(name, str) and name.lower().endswith(".xml"):
                found.append((name, entry))
    except Exception as exc:  # noqa: BLE001  a damaged name tree raises anything
        log.warning("pdf attachments unreadable: %s", type(exc).__name__)
    return found


def _attachment_rank(name: str) -> int:
    lowered = name.lower()
    return INVOICE_ATTACHMENTS.index(lowered) if lowered in INVOICE_ATTACHMENTS else len(INVOICE_ATTACHMENTS)


def _attachment_content(name: str, entry: EmbeddedFile) -> bytes | None:
    """The attachment's bytes, unpacked to at most MAX_XML_BYTES; None if unreadable."""
    from pypdf import apply_configuration
    from pypdf.errors import LimitReachedError

    limit = MAX_XML_BYTES + 1
    too_large = DocumentUnpacksTooLarge(
        f"the PDF's attached file {documents.part_name(name)} unpacks to more than "
        f"{documents.megabytes(MAX_XML_BYTES)}; an invoice XML is far smaller, and at most "
        f"{documents.megabytes(MAX_XML_BYTES)} is read", field="document")
    try:
        declared = entry.size
        if isinstance(declared, int) and declared > MAX_XML_BYTES:
            raise too_large
        with apply_configuration(maximum_declared_stream_length=limit, zlib_maximum_output_length=limit,
                                 lzw_maximum_output_length=limit, run_length_maximum_output_length=limit,
                                 brotli_maximum_output_length=limit, jbig2_maximum_output_length=limit,
                                 array_based_stream_maximum_output_length=limit,
                                 stream_decoding_work_maximum_length=4 * limit):
            data = entry.content
    except DocumentUnpacksTooLarge:
        raise
    except Exception as exc:  # noqa: BLE001  a damaged stream raises anything
        if documents.caused_by(exc, LimitReachedError):
            raise too_large from None
        if documents.caused_by(exc, MemoryError):
            raise MemoryError from None
        log.warning("pdf attachment unreadable: %s", type(exc).__name__)
        return None
    if not isinstance(data, bytes):
        return None
    if len(data) > MAX_XML_BYTES:
        raise too_large
    return data
