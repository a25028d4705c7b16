"""The review's reading: a document's visible text and layout, its e-invoice, and the seven fields.

``extract`` reads what the document holds (bounded, raising the refusals of ``jobs.errors``
for a document that cannot be read); ``validate`` decides the fields from that, with no
access to the document: the workflow keeps ``extract``'s output in its checkpoint, and
``reviewbench`` runs both in-process. An e-invoice's XML is exact, so its fields win; the
visible text is still read, and where the page disagrees with the XML that is a finding.

The page is read with word positions (``agent.reading.layout``) and its fields by ``fields.read_fields``,
each with its evidence; the XML by ``agent.reading.einvoice``.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from datetime import date
from types import ModuleType
from typing import Any

from jobs.errors import AcceptanceError

from . import appended, documents, einvoice, fields, instructions, layout, lookalikes
from . import findings as findings_

XML = documents.XML
NO_TEXT = "no text layer: the document looks scanned; ask for a text PDF or check it by eye"
# A field whose evidence OCR read with low confidence: Alice reads it on the page.
LOW_CONFIDENCE = "read from a scan with low confidence; check it on the document"
# Identifiers with check digits: one OCR read that fails its check is Alice's to check on the page.
MISREAD_BY_OCR = ("iban", "vat_id")
MISREAD = "read from a scan, where a character may have been misread: check it on the document"


def _einvoice() -> ModuleType:
    """The e-invoice reader (behind a function: tests stand another in)."""
    return einvoice


def media_type(content: bytes) -> str:
    """The media type the bytes really are (``documents.sniff``: PDF, DOCX, XML, text), or ""."""
    return documents.sniff(content) or ""


def extract(content: bytes | None, media_type: str, inline_text: str | None = None, *,
            today: date | None = None, read_xml: bool = True,
            ocr_page_limit: Callable[[int], AbstractContextManager[Any]] | None = None) -> dict[str, Any]:
    """The document's visible text, its layout (JSON), its e-invoice (JSON) or None, pages, warnings,
    and which pages OCR read with what confidence (``ocr``, None when none was).

    ``content`` None reads ``inline_text``. ``read_xml`` False never looks at an embedded or
    standalone XML (``reviewbench --ignore-xml``). ``today`` checks the e-invoice's date.
    A scan or photo (an image, or a PDF page without a text layer) is read by ``agent.reading.ocr``;
    without Tesseract installed it has no text, and a warning says why. ``ocr_page_limit(page)``
    is entered around each page's OCR (the review's time limit per page).
    """
    from . import ocr

    limit = {"page_limit": ocr_page_limit} if ocr_page_limit is not None else {}
    warnings: list[str] = []
    standalone_xml = content is not None and media_type == XML
    scanned = ocr.Reading()
    if content is None:
        read = layout.Layout.from_text(inline_text or "")  # at most MAX_TEXT_CHARS: the payload's own limit
    elif standalone_xml:
        read = layout.Layout.from_text("")  # an XML has no visible page
    elif media_type in documents.IMAGES:
        try:
            read, scanned = ocr.read_image(content, judge=lambda read: _fields_read(read, today=today), **limit)
        except ocr.Unavailable as exc:
            read = layout.Layout(pages=len(documents.check_image(content)), lines=[])
            warnings.append(str(exc))
    else:
        read = layout.read_layout(content, media_type)
        if media_type == documents.PDF:
            try:
                read, scanned = ocr.complete_pdf(content, read, **limit)
                if not (read_xml and _has_einvoice(content, media_type)):  # the XML gives the fields
                    read = _printed_elsewhere(content, read, scanned, today=today, **limit)
            except ocr.Unavailable as exc:
                warnings.append(str(exc))
    read, others = appended.split(read)  # pages of another document: named (validate), kept out of the fields
    text, pages, layout_json = read.text, read.pages, read.to_json()
    if len(text) > documents.MAX_TEXT_CHARS:
        text = text[: documents.MAX_TEXT_CHARS]
        warnings.append(f"text cut to the first {documents.MAX_TEXT_CHARS} characters")
    has_text = bool(text.strip())
    if not has_text and not standalone_xml:
        warnings.append(NO_TEXT)
    invoice = _read_einvoice(content, media_type, today=today, warnings=warnings) if read_xml else None
    if invoice is not None and not has_text:
        # An e-invoice is read whole from its XML: the page being an image is no reason to ask for a copy.
        warnings = [w for w in warnings if w != NO_TEXT]
    return {"text": text, "layout": layout_json, "einvoice": invoice, "pages": pages, "has_text": has_text,
            "warnings": warnings, "ocr": scanned.to_json(), "other_documents": others}


# What a letterhead, a footer or a stamp prints: before the review calls one of them missing on a
# text PDF, its first and last pages are read whole by OCR (``ocr.read_whole_pages``).
PRINTED_ELSEWHERE = ("supplier_name", "vat_id", "iban")


def _fields_read(read: layout.Layout, *, today: date | None) -> tuple[int, ...]:
    """How many fields a layout gives, valid: what decides between two OCR readings of one photo."""
    return (sum(field["status"] == "present" for field in fields.read_fields(read, today=today).values()),)


def _has_einvoice(content: bytes, media_type: str) -> bool:
    try:
        return _einvoice().find_xml(content, media_type) is not None
    except AcceptanceError:
        return False


def _printed_elsewhere(content: bytes, read: layout.Layout, scanned: Any, *, today: date | None,
                       page_limit: Callable[[int], AbstractContextManager[Any]] | None = None) -> layout.Layout:
    """The layout, with the first and last pages read whole by OCR when a field of
    ``PRINTED_ELSEWHERE`` is missing from it; pages already read as scans are not read again."""
    from . import ocr

    with_text = {line.page for line in read.lines if line.text.strip()} - set(scanned.pages)
    if not with_text:
        return read
    found = fields.read_fields(read, today=today)
    if all(found[name]["status"] != "missing" for name in PRINTED_ELSEWHERE):
        return read
    pages = sorted({p for p in (1, read.pages) if p in with_text})
    limit = {"page_limit": page_limit} if page_limit is not None else {}
    return ocr.read_whole_pages(content, read, pages, scanned, **limit)


def _read_einvoice(content: bytes | None, media_type: str, *, today: date | None,
                   warnings: list[str]) -> dict[str, Any] | None:
    """The e-invoice embedded in (or being) the document, as JSON; None when there is none."""
    if content is None:
        return None
    einvoices = _einvoice()
    try:
        found = einvoices.find_xml(content, media_type)
    except AcceptanceError as exc:
        warnings.append(f"the attached e-invoice was not read: {exc.message}")
        return None
    if found is None:
        return None
    _, xml = found
    return dict(einvoices.read_einvoice(xml, today=today).to_json())


def validate(extracted: dict[str, Any], *, today: date | None = None, country: str | None = None) -> dict[str, Any]:
    """The seven fields, those of ``fields.ALSO_READ`` the document gives ("also_read"), where they
    were read ("reading") and the findings, from ``extract``'s output.

    With an e-invoice, each field is the XML's; a field the XML does not give (a damaged or
    incomplete e-invoice) is taken from the visible text, whose evidence says so. Findings:
    the e-invoice's own defects (the EN 16931 totals rule among them) and every place where
    the visible page disagrees with the XML.
    """
    text = extracted.get("text") or ""
    has_text = bool(text.strip())
    page = layout.Layout.from_json(extracted["layout"]) if extracted.get("layout") else layout.Layout.from_text(text)
    page, instructed = instructions.blank_layout(page)  # a sentence addressed to the reader gives no value
    text_fields = fields.read_fields(page, country=country, today=today)
    ocr_read = extracted.get("ocr") or None  # pages read from a scan, or only the images on text pages
    if ocr_read:
        _check_confidence(text_fields, page)
    scanned = bool(ocr_read and ocr_read.get("pages"))
    also_read = _also_read(text_fields)
    text_fields = {name: text_fields[name] for name in fields.REQUIRED}
    invoice = extracted.get("einvoice")
    appended_pages = [findings_.make("other_document", f"page {o['page']} appears to be another document "
                                     f"({o['why']}); it was left out of the invoice's fields")
                      for o in extracted.get("other_documents") or []]
    # A Cyrillic E in an IBAN, on any page
    disguised = [findings_.make("lookalike", w) for w in (lookalikes.page_findings(text) if has_text else [])]
    disguised += [findings_.make("instructions", instructions.FINDING)] if instructed else []
    if ocr_read and not scanned:  # a text page with images OCR read: the two may print other accounts
        disguised += _text_and_images_disagree(page, text_fields["iban"])
    if not invoice:
        return {"fields": text_fields, "also_read": also_read, "reading": "scan" if scanned else "text",
                "findings": appended_pages + disguised, "readable": has_text}
    einvoices = _einvoice()
    read = einvoices.EInvoice.from_json(invoice)
    found: dict[str, dict[str, Any]] = {}
    for name in fields.REQUIRED:
        xml_field = read.fields.get(name) or {"status": "missing", "value": None, "detail": "", "evidence": None}
        found[name] = xml_field if xml_field.get("status") != "missing" or not has_text else text_fields[name]
    findings = [findings_.make("einvoice", w) for w in read.findings] + appended_pages
    if has_text:
        findings += einvoices.compare(read.fields, text_fields, text=text) + disguised
    profile = str(read.profile or "").strip()
    from_xml = any(read.fields.get(name, {}).get("status") != "missing" for name in fields.REQUIRED)
    if from_xml:
        source = f"e-invoice: {profile}" if profile else "e-invoice"
    else:  # nothing could be read from the XML: the fields are the page's, the findings say why
        source = ("scan" if scanned else "text") if has_text else "e-invoice"
    if from_xml:  # the XML's own where it gives them, the page's for the others
        also_read = {**also_read, **read.also_read}
    return {
        "fields": found,
        "also_read": {name: also_read[name] for name in (*fields.ALSO_READ, *fields.XML_ALSO_READ)
                      if name in also_read},
        "reading": source,
        "findings": findings_.of({"findings": findings}),  # once each, in order
        "readable": has_text or from_xml,
    }


def _also_read(found: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The fields of ``fields.ALSO_READ`` the page printed: only those read, none asked for."""
    return {name: found[name] for name in fields.ALSO_READ
            if isinstance(found.get(name), dict) and found[name].get("value") not in (None, "")}


def _check_confidence(found: dict[str, dict[str, Any]], page: layout.Layout) -> None:
    """A present field whose evidence words OCR read with low confidence becomes "to check"; so
    does an IBAN or VAT id OCR read that fails its check (``MISREAD_BY_OCR``): a character
    misread is likelier than a supplier printing a wrong account, and Alice sees it beside the
    page, where the supplier would only be asked for what it printed already."""
    from . import ocr

    for name, field_ in found.items():
        evidence = field_.get("evidence")
        if field_.get("status") not in ("present", "malformed") or not isinstance(evidence, dict):
            continue
        box, number = evidence.get("box"), evidence.get("page")
        if not isinstance(box, list) or len(box) != layout.BOX_COORDINATES or not isinstance(number, int):
            continue
        if field_["status"] == "malformed":
            if (name in MISREAD_BY_OCR and str(field_.get("detail") or "").startswith("not a valid ")
                    and ocr.scanned_words(page, number, box)):
                field_["status"] = "to_check"
                field_["detail"] = f"{field_['detail']}; {MISREAD}"
            continue
        doubtful = ocr.low_confidence_words(page, number, box)
        if doubtful:
            field_["status"] = "to_check"
            field_["detail"] = LOW_CONFIDENCE
            field_["confidence"] = round(min(w.conf or 0.0 for w in doubtful))


def _text_and_images_disagree(page: layout.Layout, iban: dict[str, Any]) -> list[dict[str, Any]]:
    """A finding when the page's text layer and its images (read by OCR) both print IBANs and the
    one the review read is among one's only: the other source's account is the one a forger
    would have changed, so Alice sees both readings, each where it was read."""
    value = iban.get("value") if iban.get("status") in ("present", "to_check", "malformed") else None
    if not isinstance(value, str) or not value:
        return []
    read = lookalikes.compact(value)
    sources: dict[str, dict[str, tuple[str, layout.Line]]] = {"text": {}, "ocr": {}}
    for line in page.lines:
        if not line.words:
            continue
        confidences = {w.conf is None for w in line.words}
        if len(confidences) != 1:
            continue  # a line of both (OCR words put beside printed ones): neither source alone
        source = sources["text" if confidences == {True} else "ocr"]
        for printed, bank_reads in lookalikes.iban_shapes(line.text):
            source.setdefault(bank_reads, (printed, line))
    text, scanned = sources["text"], sources["ocr"]
    if not text or not scanned or (read in text) == (read in scanned):
        return []
    ours, theirs = (text, scanned) if read in text else (scanned, text)
    other = next(iter(theirs.values()))
    in_text, in_image = (ours[read], other) if ours is text else (other, ours[read])
    words = (f"the IBAN in the page's text ({_grouped(in_text[0])}) differs from the one in its image, read by "
             f"OCR ({_grouped(in_image[0])}): a changed IBAN is a known fraud pattern; check which is right with "
             "the supplier, on a number you already know")
    return [findings_.make("text_and_image_disagree", words, field="iban", readings=[
        findings_.reading(_grouped(in_text[0]), _line_evidence(in_text[1]), "text"),
        findings_.reading(_grouped(in_image[0]), _line_evidence(in_image[1]), "ocr")])]


def _grouped(printed: str) -> str:
    compact = lookalikes.compact(printed)
    return " ".join(compact[i:i + 4] for i in range(0, len(compact), 4))


def _line_evidence(line: layout.Line) -> dict[str, Any]:
    return {"source": "text", "page": line.page, "text": line.text[:200], "box": line.box, "element": None}


def where(evidence: Any) -> str:
    """Where a value was read, in Alice's words: "read from page 1", "read from the e-invoice"."""
    if not isinstance(evidence, dict):
        return ""
    page = evidence.get("page")
    on_page = f"page {page}" if isinstance(page, int) and page > 0 else "the document's text"
    source = evidence.get("source")
    if source == "xml":
        return "read from the e-invoice"
    if source == "model":
        return f"suggested by the model, found on {on_page}"
    return f"read from {on_page}"


def quoted(evidence: Any) -> str:
    """What the evidence quotes: the printed line, or the e-invoice's element."""
    if not isinstance(evidence, dict):
        return ""
    if evidence.get("source") == "xml":
        return str(evidence.get("element") or evidence.get("text") or "")[:200]
    return str(evidence.get("text") or "")[:200]


def source_words(reading: Any) -> str:
    """The result's source as a sentence: "Read from the e-invoice (Factur-X EN 16931)."."""
    if not isinstance(reading, str) or not reading:
        return ""
    if reading.startswith("e-invoice"):
        profile = reading.partition(":")[2].strip()
        return f"Read from the e-invoice ({profile})." if profile else "Read from the e-invoice."
    if reading == "scan":
        return SCAN_WORDS
    return "Read from the document's text."


SCAN_WORDS = "Read from a scan; please check the values."
