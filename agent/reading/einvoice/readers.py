"""Reading the fields of each syntax: UN/CEFACT CII (and ZUGFeRD 1.0) and OASIS UBL 2.1."""

from __future__ import annotations

import re
from datetime import date
from decimal import Decimal
from typing import Any

from agent.reading import fields, lookalikes

from .invoice import (
    CENT,
    EVIDENCE_CHARS,
    NAMES,
    REQUIRED_BY_EN16931,
    EInvoice,
    also_checked,
    checked_field,
    decimal,
    missing,
    money,
    short,
)
from .parsing import CII, UBL_CREDIT_NOTE, UBL_INVOICE, ZUGFERD_1, Element

RAM = "urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:100"
UDT = "urn:un:unece:uncefact:data:standard:UnqualifiedDataType:100"
QDT = "urn:un:unece:uncefact:data:standard:QualifiedDataType:100"
RAM_1 = "urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:12"
UDT_1 = "urn:un:unece:uncefact:data:standard:UnqualifiedDataType:15"
QDT_1 = "urn:un:unece:uncefact:data:standard:QualifiedDataType:12"
CAC = "urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2"
CBC = "urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2"
EXT = "urn:oasis:names:specification:ubl:schema:xsd:CommonExtensionComponents-2"
# Each syntax's own namespaces: only their elements are read. An element of any other namespace
# is ignored (and reported), as a validating system ignores it: a foreign "IBANID" placed before
# the real one must not be the account Docket shows.
OWN_NAMESPACES = {
    "cii": frozenset({CII, RAM, UDT, QDT, "urn:un:unece:uncefact:data:standard:QualifiedDataType:10"}),
    "zugferd1": frozenset({ZUGFERD_1, RAM_1, UDT_1, QDT_1}),
    "ubl": frozenset({UBL_INVOICE, UBL_CREDIT_NOTE, CAC, CBC, EXT}),
}
MAX_FOREIGN_NAMED = 3  # foreign elements a finding names

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


class _Reader:
    """Shared by both syntaxes: elements by name in the syntax's own namespaces, the fields checked like the text's."""

    syntax = ""

    def __init__(self, root: Element) -> None:
        self.root = root
        self.namespaces = OWN_NAMESPACES[self.syntax]
        self.findings: list[str] = []  # defects noticed while finding the elements

    # Elements are found by namespace and local name along the path: any prefix reads alike, an
    # element of a foreign namespace never (see ``foreign_finding``).
    def children(self, element: Element | None, name: str) -> list[Element]:
        if element is None:
            return []
        return [child for child in element if isinstance(child.tag, str) and _local(child) == name
                and _namespace(child) in self.namespaces]

    def foreign_finding(self) -> str:
        """Elements of namespaces that are not the syntax's own (outside UBL's extension block): ignored, named."""
        foreign: list[str] = []
        count = 0
        for element in self.root.iter():
            if not isinstance(element.tag, str) or _namespace(element) in self.namespaces:
                continue
            if any(_namespace(up) == EXT for up in element.iterancestors()):
                continue  # UBL's extension content is free by design, and never read
            count += 1
            if len(foreign) < MAX_FOREIGN_NAMED:
                parent = element.getparent()
                where = f"{_prefixed(parent)}/" if parent is not None else ""
                namespace = short(_namespace(element) or "no namespace", 50)
                foreign.append(f"{where}{short(_local(element), 40)} ({namespace})")
        if not count:
            return ""
        more = f" and {count - len(foreign)} more" if count > len(foreign) else ""
        return (f"the e-invoice XML has {count} element(s) outside its syntax's own namespaces, which were ignored: "
                f"{'; '.join(foreign)}{more}. A system that reads the standard ignores them too, so a value only "
                "they carry (an IBAN, a total) is not what will be paid: check the document with the supplier")

    def path(self, *names: str, start: Element | None = None) -> list[Element]:
        current = [self.root if start is None else start]
        for name in names:
            current = [child for element in current for child in self.children(element, name)]
        return current

    def first(self, *names: str, start: Element | None = None) -> Element | None:
        found = self.path(*names, start=start)
        return found[0] if found else None

    def first_with_text(self, paths: list[tuple[str, ...]], starts: list[Element]) -> Element | None:
        """The first element along any of the paths, from any of the starts, that has text."""
        for start in starts:
            for names in paths:
                for element in self.path(*names, start=start):
                    if self.text(element):
                        return element
        return None

    def text(self, element: Element | None) -> str:
        """The element's own text, as sent (a name may run over lines; only its ends are trimmed)."""
        return (element.text or "").strip() if element is not None else ""

    def element_name(self, element: Element, steps: int = 2) -> str:
        parts: list[str] = []
        current = element
        while current is not None and len(parts) < steps and current is not self.root:
            parts.append(_prefixed(current))
            current = current.getparent()
        return "/".join(reversed(parts))

    def evidence(self, element: Element, raw: str) -> dict[str, Any]:
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
            result[name] = checked_field(name, raw, today=today) if raw else missing(name)
            if raw:
                result[name]["evidence"] = self.evidence(element, raw)
        if found["iban"] is not None and found["iban"] is found.get("debited") and result["iban"]["value"]:
            reason = result["iban"]["detail"] if result["iban"]["status"] != "present" else ""
            result["iban"]["detail"] = ("paid by direct debit: this is the account the supplier will debit "
                                        "(the buyer's), not one to pay into" + (f"; {reason}" if reason else ""))
        findings = self.findings + [f"the e-invoice XML has no {NAMES[name]}, which EN 16931 requires"
                                    for name in REQUIRED_BY_EN16931 if result[name]["status"] == "missing"]
        total = decimal(self.text(found.get("total_amount")))
        if self.text(self.type_code()) == "380" and total is not None and total < 0:
            findings.append(f"the document is typed as an invoice (type code 380) but its total is negative "
                            f"({money(total)}): a credit note is sent as one (type code 381) with positive amounts")
        profile = self.profile()
        if not self.guideline():
            findings.append("the e-invoice XML names no specification (its guideline or customization id), "
                            "which EN 16931 requires")
        totals = self.totals_finding(found)
        if totals:
            findings.append(totals)
        foreign = self.foreign_finding()
        if foreign:
            findings.append(foreign)
        for name, what in lookalikes.IDENTIFIER_NAMES.items():  # a Cyrillic letter in the IBAN the XML pays
            element = found.get(name)
            if element is not None and found.get(name) is not found.get("debited"):
                findings.append(lookalikes.script_finding(what, self.text(element), "in the e-invoice XML"))
        findings = [finding for finding in findings if finding]
        return EInvoice(profile=profile, fields=result, findings=findings, also_read=self.also_read(found))

    def also_read(self, found: dict[str, Any]) -> dict[str, dict[str, Any]]:
        """The fields of ``fields.ALSO_READ`` and ``fields.XML_ALSO_READ`` the XML gives (the amounts in
        the invoice currency), with evidence."""
        currency = self.currency(found)
        _, net, vat = self.total_parts()
        elements = {"due_date": self.due_date(), "net_amount": self.amount_in(net, currency, only=True),
                    "vat_amount": self.amount_in(vat, currency, only=True), "buyer_name": self.buyer_name(),
                    "payment_reference": self.payment_reference()}
        read: dict[str, dict[str, Any]] = {}
        for name in (*fields.ALSO_READ, *fields.XML_ALSO_READ):
            element = elements.get(name)
            raw = self.text(element) if element is not None else ""
            if raw:
                read[name] = {**also_checked(name, raw), "evidence": self.evidence(element, raw)}
        return read

    def due_date(self) -> Element | None:
        raise NotImplementedError

    def buyer_name(self) -> Element | None:
        raise NotImplementedError

    def payment_reference(self) -> Element | None:
        raise NotImplementedError

    def currency(self, found: dict[str, Any]) -> str:
        element = found.get("currency")
        return self.text(element).upper() if element is not None else ""

    def amount_in(self, candidates: list[Element], currency: str, *, only: bool = False) -> Element | None:
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
        inclusive, exclusive, vat = (decimal(self.text(element)) if element is not None else None
                                     for element in parts)
        if inclusive is None or exclusive is None or (groups[2] and vat is None):
            return ""  # a part missing, unreadable or only in another currency: nothing to add up
        vat = vat or Decimal(0)
        if (exclusive + vat).quantize(CENT) == inclusive.quantize(CENT):
            return ""
        return (f"the totals do not add up: the total with VAT is {money(inclusive)}, but the total without "
                f"VAT ({money(exclusive)}) plus the VAT ({money(vat)}) is {money(exclusive + vat)} "
                "(EN 16931 rule BR-CO-15)")

    def elements(self) -> dict[str, Any]:
        raise NotImplementedError

    def guideline(self) -> str:
        raise NotImplementedError

    def type_code(self) -> Element | None:
        raise NotImplementedError

    def profile(self) -> str:
        raise NotImplementedError

    def total_parts(self) -> tuple[list[Element], list[Element], list[Element]]:
        """Candidates for the total with VAT, the total without VAT, and the VAT total."""
        raise NotImplementedError


class CIIReader(_Reader):
    """UN/CEFACT Cross Industry Invoice (Factur-X, ZUGFeRD 2.x, XRechnung CII) and ZUGFeRD 1.0."""

    def __init__(self, root: Element, *, zugferd1: bool) -> None:
        self.syntax = "zugferd1" if zugferd1 else "cii"
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

    def seller(self) -> Element | None:
        return self.first(self.transaction, self.agreement, "SellerTradeParty")

    def settlement_element(self) -> Element | None:
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
                scheme = short(vat[0].get("schemeID") or "", 20)
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

    def total_parts(self) -> tuple[list[Element], list[Element], list[Element]]:
        summation = self.first(self.summation, start=self.settlement_element())
        return (self.children(summation, "GrandTotalAmount"), self.children(summation, "TaxBasisTotalAmount"),
                self.children(summation, "TaxTotalAmount"))

    def due_date(self) -> Element | None:
        terms = self.children(self.settlement_element(), "SpecifiedTradePaymentTerms")
        return self.first_with_text([("DueDateDateTime", "DateTimeString")], terms)

    def buyer_name(self) -> Element | None:
        return self.first(self.transaction, self.agreement, "BuyerTradeParty", "Name")

    def payment_reference(self) -> Element | None:
        return self.first("PaymentReference", start=self.settlement_element())

    def guideline(self) -> str:
        return self.text(self.first(self.context, "GuidelineSpecifiedDocumentContextParameter", "ID"))

    def type_code(self) -> Element | None:
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


class UBLReader(_Reader):
    """OASIS UBL 2.1 Invoice and CreditNote (XRechnung UBL, Peppol BIS Billing 3.0)."""

    syntax = "ubl"

    def seller(self) -> Element | None:
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

    def total_parts(self) -> tuple[list[Element], list[Element], list[Element]]:
        monetary = self.first("LegalMonetaryTotal")
        return (self.children(monetary, "TaxInclusiveAmount"), self.children(monetary, "TaxExclusiveAmount"),
                self.path("TaxTotal", "TaxAmount"))

    def due_date(self) -> Element | None:
        return self.first_with_text([("DueDate",), ("PaymentMeans", "PaymentDueDate")], [self.root])

    def buyer_name(self) -> Element | None:
        buyer = self.first("AccountingCustomerParty", "Party")
        return self.first_with_text([("PartyLegalEntity", "RegistrationName"), ("PartyName", "Name")],
                                    [buyer] if buyer is not None else [])

    def payment_reference(self) -> Element | None:
        return self.first_with_text([("PaymentMeans", "PaymentID")], [self.root])

    def guideline(self) -> str:
        return self.text(self.first("CustomizationID"))

    def type_code(self) -> Element | None:
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


def _local(element: Element) -> str:
    tag = element.tag
    return tag.rpartition("}")[2] if isinstance(tag, str) else ""


def _namespace(element: Element) -> str:
    tag = element.tag
    return tag[1:].partition("}")[0] if isinstance(tag, str) and tag.startswith("{") else ""


def _prefixed(element: Element) -> str:
    namespace, _, local = element.tag.rpartition("}")
    prefix = PREFIXES.get(namespace.lstrip("{"))
    return f"{prefix}:{local}" if prefix else local


def _level(code: str) -> str:
    return {"minimum": "MINIMUM", "basicwl": "BASIC WL", "basic": "BASIC", "en16931": "EN 16931",
            "comfort": "EN 16931", "extended": "EXTENDED", "xrechnung": "XRECHNUNG"}.get(code.lower(), code.upper())
