"""Sample supplier documents, for the tests and the demo (see README.md in this folder).

The committed files are made by ``make_samples.py``. The oversized one is built on demand
by ``oversized_pdf()`` so the repository does not carry megabytes of padding.
"""

from __future__ import annotations

import io
import os
from pathlib import Path

HERE = Path(__file__).resolve().parent

CLEAN_PDF = HERE / "invoice-clean.pdf"
MISSING_FIELDS_PDF = HERE / "invoice-missing-fields.pdf"
BAD_IBAN_PDF = HERE / "invoice-bad-iban.pdf"
SCANNED_PDF = HERE / "invoice-scanned.pdf"
TOO_MANY_PAGES_PDF = HERE / "invoice-too-many-pages.pdf"
PLAIN_TEXT = HERE / "invoice.txt"
DOCX = HERE / "invoice.docx"
TOO_LONG_DOCX = HERE / "invoice-too-long.docx"


def oversized_pdf(limit: int | None = None) -> bytes:
    """The clean invoice with a scan attached that takes it just over the size limit.

    A real-world shape of "too large": a small invoice carrying a big embedded file.
    """
    from pypdf import PdfReader, PdfWriter

    from agent.reading.documents import MAX_DOCUMENT_BYTES

    limit = limit or MAX_DOCUMENT_BYTES
    writer = PdfWriter(clone_from=PdfReader(CLEAN_PDF))
    writer.add_attachment("delivery-scan.bin", os.urandom(limit + 64 * 1024))  # random: does not compress
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()
