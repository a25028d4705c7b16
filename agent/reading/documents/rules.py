"""What the review accepts: the media types, the limits, and its refusals in words."""

from __future__ import annotations

import zipfile
from typing import Any

from documents.errors import Reason as DocumentReason
from documents.errors import UnsupportedDocument
from jobs.errors import InvalidPayload, PayloadTooLarge, Reason

from ..limits import MB

PDF = "application/pdf"
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
TEXT = "text/plain"
XML = "application/xml"  # an e-invoice on its own (UN/CEFACT CII or UBL 2.1): read by agent.reading.einvoice
PNG = "image/png"
JPEG = "image/jpeg"
TIFF = "image/tiff"
IMAGES = (PNG, JPEG, TIFF)  # scans and photos: read by OCR (agent.reading.ocr)

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
# Headers walked in one picture: a JPEG's marker segments, a PNG's chunks (a photo has tens, a PNG
# written a row at a time a few thousand).
MAX_IMAGE_SEGMENTS = 50_000
# Colour profiles and EXIF, which decoders read beside the pixels: a scanner's or a phone's ICC
# profile is 0.5 to 4 KB (Pillow inflates a PNG's to at most 1 MB), and EXIF fits a JPEG's
# 64 KB segment by the format's own rule, which holds it in a PNG and a TIFF too.
MAX_ICC_BYTES = 1 * MB
MAX_EXIF_BYTES = 64 * 1024
# Cross-reference sections: one per save, plus one per incremental update (a signature, a
# form filled in, an annotation). An invoice has one to a few dozen; pypdf follows each
# section's /Prev and merges its trailer, so thousands of them cost seconds.
MAX_PDF_SECTIONS = 1_000

DAMAGED_PDF = "the PDF is damaged and cannot be read; submit a new copy"
DAMAGED_DOCX = "the DOCX is damaged and cannot be read; submit a new copy"


def check_input(*, payload: dict[str, Any], has_document: bool) -> None:
    """A review needs something to review: an uploaded document or inline ``text``."""
    if not has_document and not payload.get("text"):
        raise InvalidPayload(NO_INPUT, field="payload.text", reason=Reason.NO_INPUT)
    if has_document and payload.get("text"):
        raise InvalidPayload(INPUT_TWICE, field="payload.text", reason=Reason.INPUT_TWICE)


def unrecognised() -> UnsupportedDocument:
    """The refusal of bytes of none of the supported types."""
    return UnsupportedDocument(UNRECOGNISED, field="document", reason=DocumentReason.UNRECOGNISED_TYPE)


def part_name(name: str) -> str:
    return name if len(name) <= 80 and name.isprintable() else "a part"


def megabytes(size: int) -> str:
    return f"{size / MB:,.1f} MB" if size % MB else f"{size // MB} MB"


def check_pages(pages: int) -> None:
    if pages > MAX_PAGES:
        raise PayloadTooLarge(f"the document has {pages} pages; at most {MAX_PAGES} are accepted", field="document")
    if pages == 0:
        raise UnsupportedDocument("the document has no pages", field="document")
