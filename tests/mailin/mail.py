"""Messages as senders' mail programs make them, and the documents they carry (made here)."""

from __future__ import annotations

import base64
import io
import itertools
import zipfile
from email.message import EmailMessage
from email.utils import make_msgid

from tests.pdfs import make_pdf

_numbers = itertools.count(1)

UBL = b"""<?xml version="1.0" encoding="UTF-8"?>
<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"
 xmlns:cac="urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2"
 xmlns:cbc="urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2">
 <cbc:CustomizationID>urn:cen.eu:en16931:2017</cbc:CustomizationID>
 <cbc:ID>MAIL-%d</cbc:ID>
 <cbc:IssueDate>2026-11-02</cbc:IssueDate>
 <cbc:DocumentCurrencyCode>EUR</cbc:DocumentCurrencyCode>
 <cac:AccountingSupplierParty><cac:Party><cac:PartyLegalEntity>
  <cbc:RegistrationName>Harbour Paper Supplies GmbH</cbc:RegistrationName>
 </cac:PartyLegalEntity></cac:Party></cac:AccountingSupplierParty>
 <cac:LegalMonetaryTotal><cbc:PayableAmount currencyID="EUR">119.00</cbc:PayableAmount></cac:LegalMonetaryTotal>
</Invoice>
"""

# A 1x1 PNG: what an HTML signature shows inline as its logo.
LOGO = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                     "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082")


def invoice_pdf(number: int | None = None) -> bytes:
    n = number or next(_numbers)
    return make_pdf([(40, 60, "Harbour Paper Supplies GmbH"), (40, 90, f"Invoice number MAIL-{n}"),
                     (40, 120, "Total 119.00 EUR")])


def ubl_xml(number: int | None = None) -> bytes:
    return UBL % (number or next(_numbers))


def zipped(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, content in files.items():
            archive.writestr(name, content)
    return buffer.getvalue()


def message(*, sender: str, to: str, attachments: list[tuple[str, str, bytes]] = (),
            message_id: str | None = None, html_logo: bool = False) -> bytes:
    """A message with a text body and ``(name, media type, bytes)`` attachments."""
    mail = EmailMessage()
    mail["From"] = f"Alice Example <{sender}>"
    mail["To"] = to
    mail["Subject"] = "Invoices for November"
    mail["Message-ID"] = message_id or make_msgid(domain="mail.example")
    mail.set_content("Hello, two invoices attached.\n-- \nAlice")
    if html_logo:
        mail.add_alternative('<p>Hello, two invoices attached.</p><img src="cid:logo@example">', subtype="html")
        mail.get_payload()[1].add_related(LOGO, "image", "png", cid="<logo@example>")
    for name, media, content in attachments:
        main, sub = media.split("/")
        mail.add_attachment(content, maintype=main, subtype=sub, filename=name)
    return bytes(mail)


def raw_message(*, sender: str, to: str, message_id: str, attachments: list[tuple[str, str, bytes]]) -> bytes:
    """A message with large attachments, encoded in one go (the email package takes seconds
    to encode tens of megabytes line by line)."""
    parts = [(f"From: {sender}\r\nTo: {to}\r\nSubject: Scans\r\nMessage-ID: {message_id}\r\nMIME-Version: 1.0\r\n"
              'Content-Type: multipart/mixed; boundary="part"\r\n\r\n--part\r\nContent-Type: text/plain\r\n\r\n'
              "The scans.\r\n").encode()]
    for name, media, content in attachments:
        parts.append((f"--part\r\nContent-Type: {media}\r\nContent-Transfer-Encoding: base64\r\n"
                      f'Content-Disposition: attachment; filename="{name}"\r\n\r\n').encode())
        parts.append(base64.encodebytes(content).replace(b"\n", b"\r\n"))
    return b"".join(parts) + b"--part--\r\n"
