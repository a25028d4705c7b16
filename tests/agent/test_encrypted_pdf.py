"""Encrypted PDFs: one with only an owner password (anyone may open it) is accepted and read like
any other; one that needs a password to be opened is refused, in words."""

from __future__ import annotations

import io

import pytest
from fpdf import FPDF
from pypdf import PdfReader, PdfWriter

from agent.reading import documents, reading
from documents.errors import UnsupportedDocument


def invoice_pdf() -> bytes:
    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("helvetica", size=11)
    for line in ("Kestrel Tooling GmbH", "Hafenstrasse 4, 28195 Bremen", "USt-IdNr. DE136695976", "",
                 "Rechnung Nr. RE-8841", "Rechnungsdatum: 02.03.2026", "",
                 "Gesamtbetrag: 1.190,00 EUR", "IBAN DE89 3704 0044 0532 0130 00"):
        pdf.cell(0, 7, line, new_x="LMARGIN", new_y="NEXT")
    return bytes(pdf.output())


def encrypted(content: bytes, *, user: str, algorithm: str) -> bytes:
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(content)))
    writer.encrypt(user_password=user, owner_password="only-the-owner-edits", algorithm=algorithm,
                   permissions_flag=0)  # printing and copying forbidden: what an owner password is for
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


@pytest.mark.parametrize("algorithm", ["RC4-128", "AES-128", "AES-256"])
def test_a_pdf_with_only_an_owner_password_is_accepted_and_read(algorithm):
    content = encrypted(invoice_pdf(), user="", algorithm=algorithm)
    assert PdfReader(io.BytesIO(content)).is_encrypted

    assert documents.check_document(content=content, name="x.pdf", content_type="") == documents.PDF
    extracted = reading.extract(content, documents.PDF)
    assert "Rechnung Nr. RE-8841" in extracted["text"]
    checked = reading.validate(extracted)
    assert checked["fields"]["invoice_number"]["value"] == "RE-8841"
    assert checked["fields"]["total_amount"]["value"] == "1190.00"
    assert "RE-8841" in documents.read_text(content, documents.PDF).text  # pypdf's reading too


def test_a_pdf_that_needs_a_password_to_open_is_refused_in_words():
    content = encrypted(invoice_pdf(), user="secret", algorithm="AES-128")

    with pytest.raises(UnsupportedDocument) as refused:
        documents.check_document(content=content, name="x.pdf", content_type="")
    assert "password" in refused.value.message and "needed to open it" in refused.value.message
    with pytest.raises(UnsupportedDocument):
        reading.extract(content, documents.PDF)
