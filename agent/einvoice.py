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

import io
import logging
import re
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal, InvalidOperation
from typing import Any

from agent import documents, fields
from jobs.errors import DocumentUnpacksTooLarge

log = logging.getLogger("agent.einvoice")

XML = documents.XML
MAX_XML_BYTES = documents.MAX_DOCUMENT_BYTES
# A long e-invoice (hundreds of lines) has a few tens of thousands of elements.
MAX_XML_ELEMENTS = 200_000
# Attachments looked at in a PDF: an invoice PDF has one to a handful.
MAX_ATTACHMENTS = 20
# Attachment names the standards give the invoice XML, in the order they are preferred
# (a PDF carrying both a ZUGFeRD 1.0 and a Factur-X XML is read from the newer one).
INVOICE_ATTACHMENTS = ("factur-x.xml", "xrechnung.xml", "zugferd-invoice.xml")

CII = "urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100"
ZUGFERD_1 = "urn:ferd:CrossIndustryDocument:invoice:1p0"
UBL_INVOICE = "urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"
UBL_CREDIT_NOTE = "urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2"
ROOTS = {
    (CII, "CrossIndustryInvoice"): "cii",
    (ZUGFERD_1, "CrossIndustryDocument"): "zugferd1",
    (UBL_INVOICE, "Invoice"): "ubl",
    (UBL_CREDIT_NOTE, "CreditNote"): "ubl",
}
# The prefixes the standards' own samples use, for the element named in the evidence.
PREFIXES = {
    CII: "rsm",
    ZUGFERD_1: "rsm",
    "urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:100": "ram",
    "urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:12": "ram",
    "urn:un:unece:uncefact:data:standard:UnqualifiedDataType:100": "udt",
    "urn:un:unece:uncefact:data:standard:UnqualifiedDataType:15": "udt",
    "urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2": "cac",
    "urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2": "cbc",
}
# What each field is called in a finding, and whether EN 16931 requires it.
NAMES = {
    "supplier_name": "seller name",
    "vat_id": "seller VAT id",
    "invoice_number": "invoice number",
    "invoice_date": "issue date",
    "currency": "invoice currency",
    "total_amount": "total amount with VAT",
    "iban": "payee IBAN",
}
REQUIRED_BY_EN16931 = ("supplier_name", "invoice_number", "invoice_date", "currency", "total_amount")
EVIDENCE_CHARS = 200
CENT = Decimal("0.01")


@dataclass
class EInvoice:
    """What the invoice XML says: its profile, the seven fields, and its defects in words.

    ``profile`` is "" when nothing could be read (not well-formed, not an invoice, refused).
    """

    profile: str
    fields: dict[str, dict[str, Any]]
    findings: list[str] = field(default_factory=list)

    @property
    def readable(self) -> bool:
        return bool(self.profile)

    def to_json(self) -> dict[str, Any]:
        return {"profile": self.profile, "fields": self.fields, "findings": list(self.findings)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> EInvoice:
        return cls(profile=data.get("profile") or "", fields=dict(data.get("fields") or {}),
                   findings=list(data.get("findings") or []))


# --- Finding the XML --------------------------------------------------------------------


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
    reader, _ = documents._pdf_reader(content)
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
        if xml is not None and (standard or _root_kind(xml) is not None):
            return name, xml
    return None


def _xml_attachments(reader) -> list[tuple[str, Any]]:
    """The PDF's embedded files named ``*.xml``, at most MAX_ATTACHMENTS looked at."""
    found: list[tuple[str, Any]] = []
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


def _attachment_content(name: str, entry) -> bytes | None:
    """The attachment's bytes, unpacked to at most MAX_XML_BYTES; None if unreadable."""
    from pypdf import apply_configuration
    from pypdf.errors import LimitReachedError

    limit = MAX_XML_BYTES + 1
    too_large = DocumentUnpacksTooLarge(
        f"the PDF's attached file {documents._part_name(name)} unpacks to more than "
        f"{documents._mb(MAX_XML_BYTES)}; an invoice XML is far smaller, and at most "
        f"{documents._mb(MAX_XML_BYTES)} is read", field="document")
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
        if documents._caused_by(exc, LimitReachedError):
            raise too_large from None
        if documents._caused_by(exc, MemoryError):
            raise MemoryError from None
        log.warning("pdf attachment unreadable: %s", type(exc).__name__)
        return None
    if not isinstance(data, bytes):
        return None
    if len(data) > MAX_XML_BYTES:
        raise too_large
    return data


# --- Parsing safely ---------------------------------------------------------------------


class _Refused(Exception):
    """The XML is not read; the message says why, in plain words."""


def _parse(xml: bytes, *, root_only: bool = False):
    """The XML's root element, parsed without DTD, entities or network, within the limits.

    Raises _Refused with a plain-words reason when it is not read. ``root_only`` stops at the
    root's start tag: enough to tell what the document is.
    """
    from lxml import etree

    if len(xml) > MAX_XML_BYTES:
        raise _Refused(f"the e-invoice XML is {documents._mb(len(xml))}, larger than any invoice; at most "
                       f"{documents._mb(MAX_XML_BYTES)} is read")
    if not xml.strip():
        raise _Refused("the e-invoice XML is empty")
    if documents.declares_dtd(xml):
        raise _Refused(DTD_REFUSED)
    # Start tags counted on the bytes first (C speed): a flood of elements is refused before
    # the parser hands each one to Python.
    starts = xml.count(b"<") - xml.count(b"</") - xml.count(b"<!") - xml.count(b"<?")
    if starts > MAX_XML_ELEMENTS:
        raise _Refused(_TOO_MANY_ELEMENTS)
    events = etree.iterparse(io.BytesIO(xml), events=("start",), resolve_entities=False, no_network=True,
                             load_dtd=False, huge_tree=False, dtd_validation=False, remove_comments=True,
                             remove_pis=True)
    count = 0
    try:
        for _, element in events:
            if count == 0:
                info = element.getroottree().docinfo
                if info.doctype or info.internalDTD is not None:  # declared in a way the scan did not see
                    raise _Refused(DTD_REFUSED)
                if root_only:
                    return element
            count += 1
            if count > MAX_XML_ELEMENTS:
                raise _Refused(_TOO_MANY_ELEMENTS)
    except etree.XMLSyntaxError as exc:
        raise _Refused(_syntax_finding(exc)) from None
    root = events.root
    if root is None:
        raise _Refused("the e-invoice XML has no root element")
    return root


_TOO_MANY_ELEMENTS = (f"the e-invoice XML has more than {MAX_XML_ELEMENTS:,} elements, far more than any invoice; "
                      "not read")
DTD_REFUSED = "the XML declares a DTD (a document type), which e-invoices never do; not read"


def _syntax_finding(exc) -> str:
    message = str(exc.msg if getattr(exc, "msg", None) else exc)
    if "depth" in message.lower():
        return "the e-invoice XML is nested far deeper than any invoice; not read"
    message = re.sub(r"\s*\(<string>, line \d+\)\s*$", "", message)
    message = re.sub(r",\s*line \d+, column \d+\s*$", "", message)[:120]
    line, column = getattr(exc, "position", None) or (getattr(exc, "lineno", 0), 0)
    where = f" at line {line}, column {column}" if line else ""
    return f"the e-invoice XML is not well-formed{where} ({message}), so none of its values could be read"


def _root_kind(xml: bytes) -> str | None:
    """The invoice syntax of the XML's root element, or None (unreadable or not an invoice)."""
    try:
        root = _parse(xml, root_only=True)
    except MemoryError:
        raise
    except Exception:  # noqa: BLE001  _Refused, or the parser on hostile bytes: not an invoice
        return None
    return ROOTS.get(_qname(root))


def _qname(element) -> tuple[str, str]:
    from lxml import etree

    if not isinstance(element.tag, str):
        return "", ""
    name = etree.QName(element)
    return name.namespace or "", name.localname


# --- Reading the fields -----------------------------------------------------------------


def read_einvoice(xml: bytes, *, today: date | None = None) -> EInvoice:
    """The seven fields of an e-invoice XML, its profile, and its defects in plain words.

    Never raises on bad input: an XML that cannot be read gives every field missing and a
    finding that says why.
    """
    try:
        root = _parse(xml)
    except _Refused as refused:
        return _unread(str(refused))
    except Exception as exc:
        if isinstance(exc, MemoryError):
            raise
        log.warning("e-invoice unreadable: %s", type(exc).__name__)
        return _unread("the e-invoice XML could not be read")
    namespace, name = _qname(root)
    syntax = ROOTS.get((namespace, name))
    if syntax is None:
        return _unread(f"the XML is not an invoice: its root element is {_short(name) or 'not an element'}, not a "
                       "UN/CEFACT CII or UBL 2.1 invoice")
    reader = _UBL(root) if syntax == "ubl" else _CII(root, zugferd1=syntax == "zugferd1")
    try:
        read = reader.read(today=today)
    except Exception as exc:
        if isinstance(exc, MemoryError):
            raise
        log.warning("e-invoice fields unreadable: %s", type(exc).__name__)
        return _unread("the e-invoice XML could not be read")
    return read


def _unread(finding: str) -> EInvoice:
    return EInvoice(profile="", fields={name: _missing(name) for name in fields.REQUIRED}, findings=[finding])


def _missing(name: str) -> dict[str, Any]:
    return {"status": "missing", "value": None, "detail": f"not in the e-invoice XML ({NAMES[name]})",
            "evidence": None}


def _short(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class _Reader:
    """Shared by both syntaxes: elements by local name, the fields checked like the text's."""

    def __init__(self, root) -> None:
        self.root = root
        self.findings: list[str] = []  # defects noticed while finding the elements

    # Elements are found by local name, so any prefix (and ZUGFeRD 1.0's older namespaces) reads alike.
    def children(self, element, name: str) -> list:
        if element is None:
            return []
        return [child for child in element if isinstance(child.tag, str) and _local(child) == name]

    def path(self, *names: str, start=None) -> list:
        current = [self.root if start is None else start]
        for name in names:
            current = [child for element in current for child in self.children(element, name)]
        return current

    def first(self, *names: str, start=None):
        found = self.path(*names, start=start)
        return found[0] if found else None

    def first_with_text(self, paths: list[tuple[str, ...]], starts: list):
        """The first element along any of the paths, from any of the starts, that has text."""
        for start in starts:
            for names in paths:
                for element in self.path(*names, start=start):
                    if self.text(element):
                        return element
        return None

    def text(self, element) -> str:
        """The element's own text, as sent (a name may run over lines; only its ends are trimmed)."""
        return (element.text or "").strip() if element is not None else ""

    def element_name(self, element, steps: int = 2) -> str:
        parts: list[str] = []
        current = element
        while current is not None and len(parts) < steps and current is not self.root:
            parts.append(_prefixed(current))
            current = current.getparent()
        return "/".join(reversed(parts))

    def evidence(self, element, raw: str) -> dict[str, Any]:
        name = self.element_name(element)
        tag = _prefixed(element)
        return {"source": "xml", "page": None, "text": f"<{tag}> {' '.join(raw.split())}"[:EVIDENCE_CHARS], "box": None,
                "element": name}

    def read(self, *, today: date | None) -> EInvoice:
        found = self.elements()
        result: dict[str, dict[str, Any]] = {}
        if found.get("iban") is None and found.get("debited") is not None:
            # A direct debit names no account to pay into, only the buyer's account it debits.
            found["iban"] = found["debited"]
        for name in fields.REQUIRED:
            element = found.get(name)
            raw = self.text(element) if element is not None else ""
            result[name] = _checked(name, raw, today=today) if raw else _missing(name)
            if raw:
                result[name]["evidence"] = self.evidence(element, raw)
        if found["iban"] is not None and found["iban"] is found.get("debited") and result["iban"]["value"]:
            reason = result["iban"]["detail"] if result["iban"]["status"] != "present" else ""
            result["iban"]["detail"] = ("paid by direct debit: this is the account the supplier will debit "
                                        "(the buyer's), not one to pay into" + (f"; {reason}" if reason else ""))
        findings = self.findings + [f"the e-invoice XML has no {NAMES[name]}, which EN 16931 requires"
                                    for name in REQUIRED_BY_EN16931 if result[name]["status"] == "missing"]
        total = _decimal(self.text(found.get("total_amount")))
        if self.text(self.type_code()) == "380" and total is not None and total < 0:
            findings.append(f"the document is typed as an invoice (type code 380) but its total is negative "
                            f"({_money(total)}): a credit note is sent as one (type code 381) with positive amounts")
        profile = self.profile()
        if not self.guideline():
            findings.append("the e-invoice XML names no specification (its guideline or customization id), "
                            "which EN 16931 requires")
        totals = self.totals_finding(found)
        if totals:
            findings.append(totals)
        return EInvoice(profile=profile, fields=result, findings=findings)

    def currency(self, found: dict[str, Any]) -> str:
        element = found.get("currency")
        return self.text(element).upper() if element is not None else ""

    def amount_in(self, candidates: list, currency: str, *, only: bool = False):
        """The amount element in the invoice currency (a total may repeat in the tax currency).

        Without one in that currency, the first (``only``: None, for sums that must not mix currencies).
        """
        for element in candidates:
            if not currency or (element.get("currencyID") or currency).upper() == currency:
                return element
        return candidates[0] if candidates and not only else None

    def totals_finding(self, found: dict[str, Any]) -> str:
        """EN 16931 BR-CO-15: total with VAT = total without VAT + VAT total, to the cent."""
        currency = self.currency(found)
        groups = self.total_parts()
        parts = [self.amount_in(candidates, currency, only=True) for candidates in groups]
        inclusive, exclusive, vat = (_decimal(self.text(element)) if element is not None else None
                                     for element in parts)
        if inclusive is None or exclusive is None or (groups[2] and vat is None):
            return ""  # a part missing, unreadable or only in another currency: nothing to add up
        vat = vat or Decimal(0)
        if (exclusive + vat).quantize(CENT) == inclusive.quantize(CENT):
            return ""
        return (f"the totals do not add up: the total with VAT is {_money(inclusive)}, but the total without "
                f"VAT ({_money(exclusive)}) plus the VAT ({_money(vat)}) is {_money(exclusive + vat)} "
                "(EN 16931 rule BR-CO-15)")

    def elements(self) -> dict[str, Any]:
        raise NotImplementedError

    def guideline(self) -> str:
        raise NotImplementedError

    def type_code(self):
        raise NotImplementedError

    def profile(self) -> str:
        raise NotImplementedError

    def total_parts(self) -> tuple[list, list, list]:
        """Candidates for the total with VAT, the total without VAT, and the VAT total."""
        raise NotImplementedError


class _CII(_Reader):
    """UN/CEFACT Cross Industry Invoice (Factur-X, ZUGFeRD 2.x, XRechnung CII) and ZUGFeRD 1.0."""

    def __init__(self, root, *, zugferd1: bool) -> None:
        super().__init__(root)
        self.zugferd1 = zugferd1
        if zugferd1:  # ZUGFeRD 1.0 names the same blocks differently
            self.context, self.header = "SpecifiedExchangedDocumentContext", "HeaderExchangedDocument"
            self.transaction = "SpecifiedSupplyChainTradeTransaction"
            self.agreement, self.settlement = ("ApplicableSupplyChainTradeAgreement",
                                               "ApplicableSupplyChainTradeSettlement")
            self.summation = "SpecifiedTradeSettlementMonetarySummation"
        else:
            self.context, self.header = "ExchangedDocumentContext", "ExchangedDocument"
            self.transaction = "SupplyChainTradeTransaction"
            self.agreement, self.settlement = "ApplicableHeaderTradeAgreement", "ApplicableHeaderTradeSettlement"
            self.summation = "SpecifiedTradeSettlementHeaderMonetarySummation"

    def seller(self):
        return self.first(self.transaction, self.agreement, "SellerTradeParty")

    def settlement_element(self):
        return self.first(self.transaction, self.settlement)

    def elements(self) -> dict[str, Any]:
        seller = self.seller()
        settlement = self.settlement_element()
        registrations = [element for element in self.path("SpecifiedTaxRegistration", "ID", start=seller)
                         if self.text(element)]
        vat = [element for element in registrations if (element.get("schemeID") or "").upper() == "VA"]
        if not vat:  # a VAT id under a wrong scheme code is still the seller's VAT id, with a finding
            vat = [element for element in registrations if (element.get("schemeID") or "").upper() != "FC"
                   and re.match(r"[A-Za-z]{2}", self.text(element))]
            if vat:
                scheme = _short(vat[0].get("schemeID") or "", 20)
                self.findings.append(f"the seller's VAT id is marked with the scheme code \"{scheme}\" instead of "
                                     "\"VA\" (VA is a VAT id, FC a local tax number)" if scheme else
                                     "the seller's VAT id has no scheme code (\"VA\" for a VAT id)")
        means = self.children(settlement, "SpecifiedTradeSettlementPaymentMeans")
        iban = self.first_with_text([("PayeePartyCreditorFinancialAccount", "IBANID")], means)
        debited = self.first_with_text([("PayerPartyDebtorFinancialAccount", "IBANID")], means)
        currency = self.first("InvoiceCurrencyCode", start=settlement)
        found = {
            "supplier_name": self.first("Name", start=seller),
            "vat_id": vat[0] if vat else None,
            "invoice_number": self.first(self.header, "ID"),
            "invoice_date": self.first(self.header, "IssueDateTime", "DateTimeString"),
            "currency": currency,
            "iban": iban,
            "debited": debited,
        }
        found["total_amount"] = self.amount_in(self.total_parts()[0], self.currency(found))
        return found

    def total_parts(self) -> tuple[list, list, list]:
        summation = self.first(self.summation, start=self.settlement_element())
        return (self.children(summation, "GrandTotalAmount"), self.children(summation, "TaxBasisTotalAmount"),
                self.children(summation, "TaxTotalAmount"))

    def guideline(self) -> str:
        return self.text(self.first(self.context, "GuidelineSpecifiedDocumentContextParameter", "ID"))

    def type_code(self):
        return self.first(self.header, "TypeCode")

    def profile(self) -> str:
        guideline = self.guideline().lower()
        if self.zugferd1:
            level = re.search(r"invoice:1p0:(\w+)", guideline)
            return f"ZUGFeRD 1.0 {level.group(1).upper() if level else ''}".strip()
        xrechnung = re.search(r"xrechnung_(\d+(?:\.\d+)*)", guideline)
        if xrechnung:
            return f"XRechnung {xrechnung.group(1)} (CII)"
        if "xrechnung" in guideline:
            return "XRechnung (CII)"
        zugferd = re.search(r"zugferd\.de:2p(\d):(\w+)", guideline)
        if zugferd:
            return f"ZUGFeRD 2.{zugferd.group(1)} {_level(zugferd.group(2))}"
        facturx = re.search(r"factur-x\.eu:1p0:(\w+)", guideline)
        if facturx:
            return f"Factur-X {_level(facturx.group(1))}"
        if guideline.startswith("urn:cen.eu:en16931:2017"):
            return "Factur-X EN 16931"
        return "UN/CEFACT CII invoice"


class _UBL(_Reader):
    """OASIS UBL 2.1 Invoice and CreditNote (XRechnung UBL, Peppol BIS Billing 3.0)."""

    def seller(self):
        return self.first("AccountingSupplierParty", "Party")

    def elements(self) -> dict[str, Any]:
        seller = self.seller()
        name = self.first("PartyLegalEntity", "RegistrationName", start=seller)
        if name is None or not self.text(name):
            name = self.first("PartyName", "Name", start=seller)
        vat = None
        for scheme in self.children(seller, "PartyTaxScheme"):
            if self.text(self.first("TaxScheme", "ID", start=scheme)).upper() == "VAT":
                vat = self.first("CompanyID", start=scheme)
                break
        means = self.children(self.root, "PaymentMeans")
        iban = self.first_with_text([("PayeeFinancialAccount", "ID")], means)
        debited = self.first_with_text([("PaymentMandate", "PayerFinancialAccount", "ID")], means)
        found = {
            "supplier_name": name,
            "vat_id": vat,
            "invoice_number": self.first("ID"),
            "invoice_date": self.first("IssueDate"),
            "currency": self.first("DocumentCurrencyCode"),
            "iban": iban,
            "debited": debited,
        }
        found["total_amount"] = self.amount_in(self.total_parts()[0], self.currency(found))
        return found

    def total_parts(self) -> tuple[list, list, list]:
        monetary = self.first("LegalMonetaryTotal")
        return (self.children(monetary, "TaxInclusiveAmount"), self.children(monetary, "TaxExclusiveAmount"),
                self.path("TaxTotal", "TaxAmount"))

    def guideline(self) -> str:
        return self.text(self.first("CustomizationID"))

    def type_code(self):
        return self.first("InvoiceTypeCode")

    def profile(self) -> str:
        guideline = self.guideline().lower()
        credit = _local(self.root) == "CreditNote"
        xrechnung = re.search(r"xrechnung_(\d+(?:\.\d+)*)", guideline)
        if xrechnung:
            profile = f"XRechnung {xrechnung.group(1)} (UBL)"
        elif "xrechnung" in guideline:
            profile = "XRechnung (UBL)"
        elif re.search(r"peppol\.eu:2017:poacc:billing:3\.0", guideline):
            profile = "Peppol BIS Billing 3.0"
        else:
            return "UBL 2.1 credit note" if credit else "UBL 2.1 invoice"
        return f"{profile} credit note" if credit else profile


def _local(element) -> str:
    tag = element.tag
    return tag.rpartition("}")[2] if isinstance(tag, str) else ""


def _prefixed(element) -> str:
    namespace, _, local = element.tag.rpartition("}")
    prefix = PREFIXES.get(namespace.lstrip("{"))
    return f"{prefix}:{local}" if prefix else local


def _level(code: str) -> str:
    return {"minimum": "MINIMUM", "basicwl": "BASIC WL", "basic": "BASIC", "en16931": "EN 16931",
            "comfort": "EN 16931", "extended": "EXTENDED", "xrechnung": "XRECHNUNG"}.get(code.lower(), code.upper())


def _decimal(text: str) -> Decimal | None:
    try:
        value = Decimal(text.strip())
    except (InvalidOperation, ValueError):
        return None
    return value if value.is_finite() else None


def _money(amount: Decimal) -> str:
    return str(amount.quantize(CENT))


def _checked(name: str, raw: str, *, today: date | None) -> dict[str, Any]:
    """A field read from the XML, its status decided by the same checks as a printed one.

    The value stays the XML's own, normalised, even when a check finds it malformed: it is
    what the supplier sent.
    """
    from stdnum import iban
    from stdnum.util import clean

    value: str | None = raw
    if name == "supplier_name":
        checked = fields.check_supplier_name(raw)
    elif name == "vat_id":
        checked = fields.check_vat_id(raw)
        value = checked.value if checked.status == "present" else clean(raw, " -./,:").upper()
    elif name == "invoice_number":
        checked = fields.check_invoice_number(raw)
    elif name == "invoice_date":
        iso = _iso_date(raw)
        if iso is None:
            return _field("malformed", raw[:fields.MAX_VALUE_CHARS], "not a date (CII format 102 is YYYYMMDD)")
        checked = fields.check_invoice_date(iso, today=today)
        value = iso
    elif name == "currency":
        value = raw.upper()
        checked = fields.check_currency(value)
    elif name == "total_amount":
        amount = _decimal(raw)
        if amount is None:
            return _field("malformed", raw[:fields.MAX_VALUE_CHARS], "not an amount")
        value = _money(amount)
        checked = fields.check_total_amount(value)
    else:
        checked = fields.check_iban(raw)
        value = checked.value if checked.status == "present" else iban.format(raw)
    return _field(checked.status, (value or raw)[:fields.MAX_VALUE_CHARS], checked.detail)


def _field(status: str, value: str | None, detail: str) -> dict[str, Any]:
    return {"status": status, "value": value, "detail": detail, "evidence": None}


def _iso_date(raw: str) -> str | None:
    """An ISO date from CII's format 102 (YYYYMMDD) or UBL's YYYY-MM-DD; None if neither."""
    match = re.fullmatch(r"(\d{4})-?(\d{2})-?(\d{2})", raw.strip())
    if not match:
        return None
    try:
        return date(*(int(part) for part in match.groups())).isoformat()
    except ValueError:
        return None


# --- The visible page against the XML ---------------------------------------------------


def compare(xml_fields: dict[str, Any], text_fields: dict[str, Any]) -> list[str]:
    """Where the visible page disagrees with the XML on the total, invoice number or IBAN.

    Only fields both have a value for are compared: spaces, dots, dashes and case do not
    count, amounts compare as numbers.
    """
    findings: list[str] = []
    for name in ("total_amount", "invoice_number", "iban"):
        in_xml = (xml_fields.get(name) or {}).get("value")
        on_page = (text_fields.get(name) or {}).get("value")
        if not in_xml or not on_page or _same(name, str(in_xml), str(on_page)):
            continue
        if name == "iban" and _debited(xml_fields["iban"]):
            continue  # the buyer's account a direct debit takes from: the page may print the supplier's own
        shown, read = _short(str(on_page), 50), _short(str(in_xml), 50)
        if name == "total_amount":
            findings.append(f"the visible page shows a total of {shown} but the e-invoice XML says {read}: "
                            "check which one the supplier means before paying")
        elif name == "invoice_number":
            findings.append(f"the visible page shows invoice number {shown} but the e-invoice XML says {read}")
        else:
            findings.append(f"the IBAN on the visible page ({shown}) differs from the one in the e-invoice XML "
                            f"({read}): a changed IBAN is a known fraud pattern; check with the supplier by phone, "
                            "on a number you already know, before paying")
    return findings


def _debited(field: dict[str, Any]) -> bool:
    """Whether the XML's account is the one a direct debit takes from (the payer's), not the payee's."""
    return "Payer" in str((field.get("evidence") or {}).get("element") or "")


def _same(name: str, first: str, second: str) -> bool:
    if name == "total_amount":
        a, b = _decimal(first.replace(",", "")), _decimal(second.replace(",", ""))
        if a is not None and b is not None:
            return a == b
    return _identifier(first) == _identifier(second)


def _identifier(value: str) -> str:
    return re.sub(r"[\s.\-]", "", value).upper()
