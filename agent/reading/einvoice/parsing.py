"""Parsing safely: an e-invoice XML from strangers read without DTD, entities or network, within limits."""

from __future__ import annotations

import io
import re
from typing import Any, TypeAlias

from agent.reading import documents

MAX_XML_BYTES = documents.MAX_DOCUMENT_BYTES
# A long e-invoice (hundreds of lines) has a few tens of thousands of elements.
MAX_XML_ELEMENTS = 200_000

CII = "urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100"
ZUGFERD_1 = "urn:ferd:CrossIndustryDocument:invoice:1p0"
UBL_INVOICE = "urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"
UBL_CREDIT_NOTE = "urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2"
# An lxml element. lxml ships no type information and its stubs are no dependency of ours, so
# to mypy an element is Any; the alias names what the value is.
Element: TypeAlias = Any

ROOTS = {
    (CII, "CrossIndustryInvoice"): "cii",
    (ZUGFERD_1, "CrossIndustryDocument"): "zugferd1",
    (UBL_INVOICE, "Invoice"): "ubl",
    (UBL_CREDIT_NOTE, "CreditNote"): "ubl",
}


class Refused(Exception):
    """The XML is not read; the message says why, in plain words."""


def parse(xml: bytes, *, root_only: bool = False) -> Element:
    """The XML's root element, parsed without DTD, entities or network, within the limits.

    Raises Refused with a plain-words reason when it is not read. ``root_only`` stops at the
    root's start tag: enough to tell what the document is.
    """
    from lxml import etree

    if len(xml) > MAX_XML_BYTES:
        raise Refused(f"the e-invoice XML is {documents.megabytes(len(xml))}, larger than any invoice; at most "
                       f"{documents.megabytes(MAX_XML_BYTES)} is read")
    if not xml.strip():
        raise Refused("the e-invoice XML is empty")
    if documents.declares_dtd(xml):
        raise Refused(DTD_REFUSED)
    # Start tags counted on the bytes first (C speed): a flood of elements is refused before
    # the parser hands each one to Python.
    starts = xml.count(b"<") - xml.count(b"</") - xml.count(b"<!") - xml.count(b"<?")
    if starts > MAX_XML_ELEMENTS:
        raise Refused(_TOO_MANY_ELEMENTS)
    events = etree.iterparse(io.BytesIO(xml), events=("start",), resolve_entities=False, no_network=True,
                             load_dtd=False, huge_tree=False, dtd_validation=False, remove_comments=True,
                             remove_pis=True)
    count = 0
    try:
        for _, element in events:
            if count == 0:
                info = element.getroottree().docinfo
                if info.doctype or info.internalDTD is not None:  # declared in a way the scan did not see
                    raise Refused(DTD_REFUSED)
                if root_only:
                    return element
            count += 1
            if count > MAX_XML_ELEMENTS:
                raise Refused(_TOO_MANY_ELEMENTS)
    except etree.XMLSyntaxError as exc:
        raise Refused(_syntax_finding(exc)) from None
    root = events.root
    if root is None:
        raise Refused("the e-invoice XML has no root element")
    return root


_TOO_MANY_ELEMENTS = (f"the e-invoice XML has more than {MAX_XML_ELEMENTS:,} elements, far more than any invoice; "
                      "not read")
DTD_REFUSED = "the XML declares a DTD (a document type), which e-invoices never do; not read"


def _syntax_finding(exc: Exception) -> str:
    message = str(getattr(exc, "msg", None) or exc)
    if "depth" in message.lower():
        return "the e-invoice XML is nested far deeper than any invoice; not read"
    message = re.sub(r"\s*\(<string>, line \d+\)\s*$", "", message)
    message = re.sub(r",\s*line \d+, column \d+\s*$", "", message)[:120]
    line, column = getattr(exc, "position", None) or (getattr(exc, "lineno", 0), 0)
    where = f" at line {line}, column {column}" if line else ""
    return f"the e-invoice XML is not well-formed{where} ({message}), so none of its values could be read"


def root_kind(xml: bytes) -> str | None:
    """The invoice syntax of the XML's root element, or None (unreadable or not an invoice)."""
    try:
        root = parse(xml, root_only=True)
    except MemoryError:
        raise
    except Exception:  # noqa: BLE001  Refused, or the parser on hostile bytes: not an invoice
        return None
    return ROOTS.get(qname(root))


def qname(element: Element) -> tuple[str, str]:
    from lxml import etree

    if not isinstance(element.tag, str):
        return "", ""
    name = etree.QName(element)
    return name.namespace or "", name.localname
