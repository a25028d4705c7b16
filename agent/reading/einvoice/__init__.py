"""E-invoices read exactly: the seven fields from the invoice XML, not from the printed page.

An EN 16931 e-invoice carries its data as XML: embedded in a PDF/A-3 (Factur-X, ZUGFeRD 1.0
and 2.x, XRechnung in a PDF) or sent on its own (UN/CEFACT CII, OASIS UBL 2.1 Invoice and
CreditNote: XRechnung, Peppol BIS Billing 3.0). ``find_xml`` finds it, ``read_einvoice``
reads the seven fields from it and says in plain words what is wrong with it, and
``compare`` reports where the visible page disagrees with it (a changed IBAN on the page is
a known fraud pattern).

The XML comes from strangers, so it is parsed without a DTD or entities (a document that
declares a DTD is not read at all: e-invoices never have one), without the network, within
a size, element and depth limit. Bad input never raises: it gives missing fields and a
finding that says why.
"""

from __future__ import annotations

import logging
from datetime import date

from agent.reading import fields as fields  # the checks the XML's values pass, as einvoice.fields

from .attachments import INVOICE_ATTACHMENTS, MAX_ATTACHMENTS, XML, find_xml
from .crosscheck import compare
from .invoice import CENT, EVIDENCE_CHARS, NAMES, REQUIRED_BY_EN16931, EInvoice, short, unread
from .parsing import (
    CII,
    DTD_REFUSED,
    MAX_XML_BYTES,
    MAX_XML_ELEMENTS,
    ROOTS,
    UBL_CREDIT_NOTE,
    UBL_INVOICE,
    ZUGFERD_1,
    Refused,
    parse,
    qname,
)
from .readers import PREFIXES, CIIReader, UBLReader

__all__ = [
    "CENT", "CII", "DTD_REFUSED", "EVIDENCE_CHARS", "INVOICE_ATTACHMENTS", "MAX_ATTACHMENTS", "MAX_XML_BYTES",
    "MAX_XML_ELEMENTS", "NAMES", "PREFIXES", "REQUIRED_BY_EN16931", "ROOTS", "UBL_CREDIT_NOTE", "UBL_INVOICE", "XML",
    "ZUGFERD_1", "EInvoice", "compare", "find_xml", "read_einvoice",
]

log = logging.getLogger("agent.einvoice")


def read_einvoice(xml: bytes, *, today: date | None = None) -> EInvoice:
    """The seven fields of an e-invoice XML, its profile, and its defects in plain words.

    Never raises on bad input: an XML that cannot be read gives every field missing and a
    finding that says why.
    """
    try:
        root = parse(xml)
    except Refused as refused:
        return unread(str(refused))
    except Exception as exc:
        if isinstance(exc, MemoryError):
            raise
        log.warning("e-invoice unreadable: %s", type(exc).__name__)
        return unread("the e-invoice XML could not be read")
    namespace, name = qname(root)
    syntax = ROOTS.get((namespace, name))
    if syntax is None:
        return unread(f"the XML is not an invoice: its root element is {short(name) or 'not an element'}, not a "
                       "UN/CEFACT CII or UBL 2.1 invoice")
    reader = UBLReader(root) if syntax == "ubl" else CIIReader(root, zugferd1=syntax == "zugferd1")
    try:
        read = reader.read(today=today)
    except Exception as exc:
        if isinstance(exc, MemoryError):
            raise
        log.warning("e-invoice fields unreadable: %s", type(exc).__name__)
        return unread("the e-invoice XML could not be read")
    return read
