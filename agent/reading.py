"""The review's reading: a document's visible text and layout, its e-invoice, and the seven fields.

``extract`` reads what the document holds (bounded, raising the refusals of ``jobs.errors``
for a document that cannot be read); ``validate`` decides the fields from that, with no
access to the document: the workflow keeps ``extract``'s output in its checkpoint, and
``reviewbench`` runs both in-process. An e-invoice's XML is exact, so its fields win; the
visible text is still read, and where the page disagrees with the XML that is a finding.

The layout reader (``agent.layout``, ``fields.read_fields``) is imported when present: until
it is, the text is read line by line (``fields.check_all``) and each value's evidence is the
labelled line it was read from.
"""

from __future__ import annotations

import importlib
import re
from datetime import date
from types import ModuleType
from typing import Any

from . import documents, einvoice, fields

XML = documents.XML
NO_TEXT = "no text layer: the document looks scanned; ask for a text PDF or check it by eye"


def _optional(name: str) -> ModuleType | None:
    """A reader module of this app, or None while it is not installed yet."""
    try:
        return importlib.import_module(f"agent.{name}")
    except ModuleNotFoundError as exc:
        if exc.name != f"agent.{name}":
            raise  # the module is there, and broken: say so
        return None


def _layout() -> ModuleType | None:
    return _optional("layout")


def _einvoice() -> ModuleType | None:
    """The e-invoice reader (behind a function: tests stand another in)."""
    return einvoice


def model_reader() -> ModuleType | None:
    """The model path (``agent.model_reader.fill``), when installed: it decides itself whether to ask."""
    return _optional("model_reader")


def media_type(content: bytes) -> str:
    """The media type the bytes really are (``documents.sniff``: PDF, DOCX, XML, text), or ""."""
    return documents.sniff(content) or ""


def extract(content: bytes | None, media_type: str, inline_text: str | None = None, *,
            today: date | None = None, read_xml: bool = True) -> dict[str, Any]:
    """The document's visible text, its layout (JSON), its e-invoice (JSON) or None, pages and warnings.

    ``content`` None reads ``inline_text``. ``read_xml`` False never looks at an embedded or
    standalone XML (``reviewbench --ignore-xml``). ``today`` checks the e-invoice's date.
    """
    layouts = _layout()
    warnings: list[str] = []
    standalone_xml = content is not None and media_type == XML
    layout_json: dict[str, Any] | None = None
    if content is None:
        source_text = inline_text or ""
        if layouts is not None:
            read = layouts.Layout.from_text(source_text[: documents.MAX_TEXT_CHARS])
            text, pages, layout_json = read.text, read.pages, read.to_json()
        else:
            plain = documents.inline_text(source_text)
            text, pages, warnings = plain.text, plain.pages, list(plain.warnings)
        if len(source_text) > documents.MAX_TEXT_CHARS and not warnings:
            warnings.append(f"text cut to the first {documents.MAX_TEXT_CHARS} characters")
    elif standalone_xml:
        text, pages = "", 1  # an XML has no visible page
        layout_json = layouts.Layout.from_text("").to_json() if layouts is not None else None
    elif layouts is not None:
        read = layouts.read_layout(content, media_type)
        text, pages, layout_json = read.text, read.pages, read.to_json()
        if len(text) > documents.MAX_TEXT_CHARS:
            text = text[: documents.MAX_TEXT_CHARS]
            warnings.append(f"text cut to the first {documents.MAX_TEXT_CHARS} characters")
    else:
        plain = documents.read_text(content, media_type)
        text, pages, warnings = plain.text, plain.pages, list(plain.warnings)
    has_text = bool(text.strip())
    if not has_text and not standalone_xml and NO_TEXT not in warnings:
        warnings.append(NO_TEXT)
    invoice = _read_einvoice(content, media_type, today=today, warnings=warnings) if read_xml else None
    if invoice is not None and not has_text:
        # An e-invoice is read whole from its XML: the page being an image is no reason to ask for a copy.
        warnings = [w for w in warnings if w != NO_TEXT]
    return {"text": text, "layout": layout_json, "einvoice": invoice, "pages": pages, "has_text": has_text,
            "warnings": warnings}


def _read_einvoice(content: bytes | None, media_type: str, *, today: date | None,
                   warnings: list[str]) -> dict[str, Any] | None:
    """The e-invoice embedded in (or being) the document, as JSON; None when there is none."""
    einvoices = _einvoice()
    if einvoices is None or content is None:
        return None
    from jobs.errors import AcceptanceError

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
    """The seven fields, where they were read ("reading") and the findings, from ``extract``'s output.

    With an e-invoice, each field is the XML's; a field the XML does not give (a damaged or
    incomplete e-invoice) is taken from the visible text, whose evidence says so. Findings:
    the e-invoice's own defects (the EN 16931 totals rule among them) and every place where
    the visible page disagrees with the XML.
    """
    text = extracted.get("text") or ""
    has_text = bool(text.strip())
    text_fields = _text_fields(text, extracted.get("layout"), pages=extracted.get("pages") or 1, today=today,
                               country=country)
    invoice = extracted.get("einvoice")
    einvoices = _einvoice() if invoice else None
    if not invoice or einvoices is None:
        return {"fields": text_fields, "reading": "text", "findings": [],
                "readable": has_text}
    read = einvoices.EInvoice.from_json(invoice)
    found: dict[str, dict[str, Any]] = {}
    for name in fields.REQUIRED:
        xml_field = read.fields.get(name) or {"status": "missing", "value": None, "detail": "", "evidence": None}
        found[name] = xml_field if xml_field.get("status") != "missing" or not has_text else text_fields[name]
    findings = list(read.findings)
    if has_text:
        findings += einvoices.compare(read.fields, text_fields)
    profile = str(read.profile or "").strip()
    from_xml = any(read.fields.get(name, {}).get("status") != "missing" for name in fields.REQUIRED)
    if from_xml:
        source = f"e-invoice: {profile}" if profile else "e-invoice"
    else:  # nothing could be read from the XML: the fields are the page's, the findings say why
        source = "text" if has_text else "e-invoice"
    return {
        "fields": found,
        "reading": source,
        "findings": list(dict.fromkeys(findings)),  # once each, in order
        "readable": has_text or from_xml,
    }


def _text_fields(text: str, layout_json: dict[str, Any] | None, *, pages: int, today: date | None,
                 country: str | None) -> dict[str, dict[str, Any]]:
    """The fields the visible text gives, each with its evidence."""
    layouts = _layout()
    reader = getattr(fields, "read_fields", None)
    if layouts is not None and reader is not None and layout_json is not None:
        return dict(reader(layouts.Layout.from_json(layout_json), country=country, today=today))
    found = fields.check_all(text, country=country, today=today)
    return {name: {**field, "evidence": field.get("evidence") or (
                _line_evidence(text, name, pages=pages) if field.get("value") is not None else None)}
            for name, field in found.items()}


def _line_evidence(text: str, name: str, *, pages: int) -> dict[str, Any] | None:
    """The labelled line a value was read from (the line-by-line reader's evidence); its page when
    the document has one (this reader does not know where a PDF's pages break)."""
    patterns: dict[str, re.Pattern[str]] = getattr(fields, "_LINE", {})
    labels = {"iban": ("iban", "account"), "currency": ("currency", "total_amount")}.get(name, (name,))
    for label in labels:
        pattern = patterns.get(label)
        line = next((line for line in text.splitlines() if pattern is not None and pattern.match(line)), None)
        if line is not None:
            return {"source": "text", "page": 1 if pages == 1 else None,
                    "text": re.sub(r"\s+", " ", line).strip()[:200], "box": None, "element": None}
    return None


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
    return "Read from the document's text."
