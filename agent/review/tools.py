"""The three tools the workflow may run: extract, validate, draft.

Each is declared in ``steps``: the JSON Schema of its arguments (checked by ``policy`` before
it runs), the time it needs, and the tool whose output it reads. Each returns a bounded output: the next
step reads only that, from the checkpoint, so a restarted worker needs nothing else.
Every tool takes this job's id as an argument, and reads only this job's input through
its ``JobContext``: there is no argument that names a file or another job's document.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from typing import Any, NamedTuple

from agent.reading import documents, fields, reading
from agent.reading import findings as findings_
from agent.reading.pages import keep as keep_page_images
from documents import handling
from jobs.context import JobContext
from jobs.errors import AcceptanceError
from jobs.kinds import JobFailed
from jobs.logs import event

from . import model_reader, register
from .steps import STEPS, Step

MAX_WARNINGS = 10
MAX_WARNING_CHARS = 200
MAX_FINDINGS = 20  # every field the page and the XML disagree on, the e-invoice's defects, the others
MAX_DRAFT_CHARS = 4_000
# Wall-clock time for OCR of one page (render, Tesseract): about a second of CPU at 300 dpi, a
# few for a dense page, on a core other jobs share. Each page has its own section, after the
# extract step's budget for reading the text layer.
OCR_PAGE_SECONDS = 20

# Where a document's reading spends its time (``event=review_read``, INFO): fetching it from the
# store, reading its text layer, OCR (the pages' sections), keeping its page images. Durations
# only, never text: ``manage.py loadbench`` sums them per kind of document.
log = logging.getLogger("agent.tools")


@dataclass(frozen=True)
class Tool(Step):
    """A declared step (``steps.STEPS``) with the function that runs it."""

    run: Callable[[JobContext, dict[str, Any], dict[str, Any]], dict[str, Any]]


def extract(ctx: JobContext, arguments: dict[str, Any], previous: dict[str, Any]) -> dict[str, Any]:
    """This job's document (or inline text): its text and layout, its e-invoice, page count and warnings."""
    document = handling.of_job(ctx)
    warnings: list[str] = []
    try:
        if document is not None:
            started = time.perf_counter()
            content = handling.read(ctx)
            media_type = document.content_type or reading.media_type(content)
            ocr_seconds = [0.0]

            @contextmanager
            def page_limit(page: int) -> Iterator[None]:
                began = time.perf_counter()
                try:
                    with ctx.time_limit(OCR_PAGE_SECONDS, f"page {page} of the scan could not be read within "
                                                          f"{OCR_PAGE_SECONDS} s"):
                        yield
                finally:
                    ocr_seconds[0] += time.perf_counter() - began

            fetched = time.perf_counter()
            read = reading.extract(content, media_type, today=ctx.now().date(), ocr_page_limit=page_limit)
            extracted = time.perf_counter()
            # the page images Alice reads the review beside, each as OCR read it
            keep_page_images(ctx, content, media_type, ocr=read.get("ocr"))
            event(log, logging.INFO, "review_read", job=ctx.job_id, media_type=media_type, pages=read["pages"],
                  ocr_pages=len((read.get("ocr") or {}).get("pages") or []),
                  fetch_ms=_ms(fetched - started), read_ms=_ms(extracted - fetched - ocr_seconds[0]),
                  ocr_ms=_ms(ocr_seconds[0]), images_ms=_ms(time.perf_counter() - extracted))
            source = "document"
            if ctx.payload.get("text"):
                warnings.append("inline text ignored: the uploaded document was reviewed")
        elif ctx.payload.get("text"):
            read = reading.extract(None, documents.TEXT, ctx.payload["text"], today=ctx.now().date())
            source = "inline"
        else:
            raise JobFailed("nothing to review: the job has neither a document nor inline text",
                            retryable=False, code="nothing_to_review")
    except AcceptanceError as exc:
        # Damaged, over a limit, unsupported: the document's own bytes, which do not change,
        # so another attempt would fail the same way.
        raise JobFailed(exc.message, retryable=False, code=exc.code) from None
    return {
        **read,
        "source": source,
        "document_name": (document.original_name if document is not None else "")[:120],
        "warnings": _bounded(warnings + read["warnings"]),
    }


def _ms(seconds: float) -> int:
    return round(seconds * 1000)


def validate(ctx: JobContext, arguments: dict[str, Any], previous: dict[str, Any]) -> dict[str, Any]:
    """The required supplier fields, each with its status and evidence, where they were read, and
    the findings. Drops the text and the layout: the draft needs neither."""
    # The job's own clock, not the machine's: a logical clock makes the check repeatable.
    checked = reading.validate(previous, today=ctx.now().date(), country=arguments.get("country"))
    # The model fills what our reading missed, only with a provider configured and the tenant's
    # opt-in (it sets its own time limit for the call).
    checked = model_reader.fill(ctx, previous, checked)
    tenant_id = ctx.job()["scope_id"]
    # A currency the tenant does not pay in is its own rule: its list, when it keeps one, decides.
    if "currency" in checked["fields"]:
        currency = fields.judge_currency(checked["fields"]["currency"], register.currencies(tenant_id))
        checked["fields"] = {**checked["fields"], "currency": currency}
    known = register.findings(tenant_id=tenant_id, fields=checked["fields"], text=previous["text"])
    return {
        "fields": checked["fields"],
        "also_read": checked.get("also_read", {}),
        "reading": checked["reading"],
        # The register's findings after the reading's: a changed bank account is never cut off.
        "findings": [*findings_.of(checked), *findings_.of({"findings": known})][:MAX_FINDINGS],
        "readable": checked["readable"],
        "pages": previous["pages"],
        # What the evidence boxes are measured against: each page's size, in the boxes' units.
        "page_sizes": (previous.get("layout") or {}).get("sizes", [])[:documents.MAX_PAGES],
        "has_text": bool(previous["text"].strip()),
        "ocr": previous.get("ocr"),
        "source": previous["source"],
        "document_name": previous["document_name"],
        "warnings": _bounded(previous["warnings"]),
    }


def draft(ctx: JobContext, arguments: dict[str, Any], previous: dict[str, Any]) -> dict[str, Any]:
    """A plain-text review note Alice can paste into her own email to the supplier; the fields as
    their findings decide them (``findings.settle``: a disagreement makes its field to check)."""
    settled = findings_.settle(previous)
    return {**settled, "draft": review_note(settled, tone=arguments.get("tone", "neutral"))}


def review_note(checked: dict[str, Any], *, tone: str = "neutral") -> str:
    """Alice's note: what was found, what to check or correct, and a part to paste to the supplier.

    Alice's part says what the review knows: a value it did not find is "not found by the
    review", never "not on the invoice" (it may be printed where the reader did not look).
    Values to check (two readings that disagree) and findings (the visible page against the
    e-invoice) are for Alice alone; a changed IBAN is flagged for a phone call. The supplier's
    part asks, as requests, only for what was not found or failed its check, naming the
    invoice by what was found of its number and date. A document without readable text (a
    scan) asks only for a readable copy and says nothing about single fields.
    """
    checked = findings_.settle(checked)
    found_fields = checked["fields"]
    readable = checked.get("readable", checked.get("has_text", True))
    reading_ = checked.get("reading") or "text"
    found_findings = findings_.of(checked)
    findings = [findings_.line(f) for f in found_findings]
    sorted_ = _sorted_fields(found_fields)
    lines = _note_head(checked, sorted_, findings, readable=readable, reading_=reading_)
    if readable:
        lines += _field_lines(found_fields, sorted_, reading_)
        lines += also_read_lines(checked.get("also_read") or {}, found_fields)
    if findings:
        lines += ["Findings:", *(f"- {_capital(f)}" for f in findings)]
        if needs_phone_check(found_findings):
            lines.append(f"- {PHONE_CHECK}")
        lines.append("")
    if checked["warnings"]:
        lines += ["Notes:", *(f"- {w}" for w in checked["warnings"]), ""]
    asks = _asks(found_fields, sorted_) if readable else [_READABLE_COPY[reading_.startswith("e-invoice")]]
    if asks:
        invoice = _invoice_reference(found_fields) if readable else "your invoice"
        opening, closing = OPENINGS.get(tone, OPENINGS["neutral"])
        lines += [SUPPLIER_PART, opening.format(invoice=invoice), *asks, closing]
    elif sorted_.to_check or findings:
        lines.append("Nothing to ask the supplier: check the points above yourself first.")
    else:
        lines.append("All required fields are present and pass their checks; nothing to ask the supplier.")
    note = "\n".join(lines)
    return note if len(note) <= MAX_DRAFT_CHARS else note[: MAX_DRAFT_CHARS - 1] + "…"


class _Sorted(NamedTuple):
    """The required fields by status: lines for those found, lines for those to check, names of the others."""

    found: list[str]
    to_check: list[str]
    wrong: list[str]
    not_found: list[str]


def _sorted_fields(found_fields: dict[str, Any]) -> _Sorted:
    sorted_ = _Sorted([], [], [], [])
    for name in fields.REQUIRED:
        field = found_fields.get(name) or {"status": "missing", "value": None, "detail": ""}
        label = fields.LABELS[name]
        status = field.get("status")
        if status == "present":
            detail = f" ({field['detail']})" if field.get("detail") else ""
            sorted_.found.append(f"- {label}: {_shown(name, field, found_fields)}{detail}{_by_whom(field)}")
        elif status == "to_check":
            sorted_.to_check.append(f"- {label}: {_readings(name, field, found_fields)}")
        elif status == "malformed":
            sorted_.wrong.append(name)
        else:
            sorted_.not_found.append(name)
    return sorted_


def _note_head(checked: dict[str, Any], sorted_: _Sorted, findings: list[str], *, readable: bool,
               reading_: str) -> list[str]:
    """The note's first lines: which document, where it was read from, and the counts (or why none)."""
    what = checked["document_name"] or ("the pasted text" if checked["source"] == "inline" else "the document")
    pages = checked["pages"]
    lines = [f"Review of {what} ({pages} page{'s' if pages != 1 else ''})"]
    if reading_.startswith("e-invoice"):
        lines.append(reading.source_words(reading_) + (" The visible page was compared with it."
                                                         if checked.get("has_text") else ""))
    elif reading_ == "scan" and readable:
        lines.append(scan_words(checked.get("ocr")))
    if not readable:
        lines.append("No text could be read from the document, so none of its fields could be checked."
                     if not reading_.startswith("e-invoice") else
                     "The e-invoice could not be read, and the document has no visible text to read instead.")
    else:
        counts = [f"{len(sorted_.found)} of {len(fields.REQUIRED)} required fields found and valid"]
        counts += [f"{len(sorted_.to_check)} to check"] if sorted_.to_check else []
        counts += [f"{len(sorted_.wrong)} to correct"] if sorted_.wrong else []
        counts += [f"{len(sorted_.not_found)} not found by the review"] if sorted_.not_found else []
        counts += [f"{len(findings)} finding{'s' if len(findings) != 1 else ''}"] if findings else []
        lines.append(", ".join(counts) + ".")
    lines.append("")
    return lines


def _field_lines(found_fields: dict[str, Any], sorted_: _Sorted, reading_: str) -> list[str]:
    """Alice's part: the fields found, those to check, to correct, and not found."""
    lines = ["Found:", *(sorted_.found or ["- none of the required fields"]), ""]
    if sorted_.to_check:
        lines += ["To check (the review read two different values, or read a value from a scan with low "
                  "confidence; see what the invoice says):" if reading_ == "scan" else
                  "To check (the review read two different values; see which one the invoice means):",
                  *sorted_.to_check, ""]
    if sorted_.wrong:
        lines += ["Needs correcting:", *(f"- {fields.LABELS[n]}: {_failed(found_fields[n])}"
                                         f"{_by_whom(found_fields[n])}" for n in sorted_.wrong), ""]
    if sorted_.not_found:
        lines += ["Not found by the review (look on the document before asking the supplier):",
                  *(f"- {fields.LABELS[n]}" for n in sorted_.not_found), ""]
    return lines


def also_read_lines(also_read: dict[str, Any], found_fields: dict[str, Any]) -> list[str]:
    """Alice's lines for what the invoice also says (due date, net, VAT, buyer), and whether net
    and VAT add up to the total; nothing when it says none of them."""
    shown = [f"- {fields.LABELS[name]}: {_shown(name, also_read[name], found_fields)}"
             for name in fields.ALSO_READ if (also_read.get(name) or {}).get("value") not in (None, "")]
    if not shown:
        return []
    mismatch = totals_mismatch(also_read, found_fields)
    return ["Also on the invoice:", *shown, *([f"- {mismatch}"] if mismatch else []), ""]


def totals_mismatch(also_read: dict[str, Any], found_fields: dict[str, Any]) -> str:
    """ "Net plus VAT (110.00) is not the total (120.00)", or "" when they add up or a part is missing."""
    try:
        net, vat = (Decimal(str(also_read[name]["value"])) for name in ("net_amount", "vat_amount"))
        total = Decimal(str(found_fields["total_amount"]["value"]))
    except (KeyError, TypeError, ArithmeticError, ValueError):
        return ""
    if found_fields["total_amount"].get("status") != "present" or abs(net + vat - total) <= fields.ROUNDING:
        return ""
    return f"Net plus VAT ({net + vat:,.2f}) is not the total ({total:,.2f}): check which amount is due"


# What a note asks for when nothing could be read: by whether the document was an e-invoice.
_READABLE_COPY = {
    True: "- Please send us the e-invoice again, or the invoice as a PDF with selectable text: the file we "
          "received could not be read.",
    False: "- Please send us a readable copy of the invoice, preferably a PDF with selectable text: we could "
           "not read the details of the copy we received.",
}


def _asks(found_fields: dict[str, Any], sorted_: _Sorted) -> list[str]:
    """The supplier's part, as requests: each field not found, or found and failing its check."""
    asks = [f"- Could you confirm {fields.ASK[n]}?" for n in sorted_.not_found]
    asks += [f"- Could you check {fields.ASK[n]}? "
             + (f"We read {_failed(found_fields[n])}." if found_fields[n].get("value") not in (None, "")
                else f"{_capital(_failed(found_fields[n]))}.") for n in sorted_.wrong]
    return asks


def scan_words(scanned: Any) -> str:
    """"Read from a scan (pages 1-2, OCR confidence 91 %); please check the values."."""
    if not isinstance(scanned, dict) or not scanned.get("pages"):
        return reading.SCAN_WORDS
    pages = [str(p) for p in scanned["pages"]][:20]
    where = f"page{'s' if len(pages) != 1 else ''} {', '.join(pages)}"
    confidence = scanned.get("confidence")
    shown = f", OCR confidence {confidence:.0f} %" if isinstance(confidence, (int, float)) else ""
    return f"Read from a scan ({where}{shown}); please check the values."


SUPPLIER_PART = "To ask the supplier (ready to paste into your email):"
# How the message to the supplier opens and closes, in each tone the draft step may take.
OPENINGS = {
    "neutral": ("Regarding {invoice}: before we can process it, we need your help with the following.",
                "Thank you."),
    "friendly": ("Hi, thanks for {invoice}! Before we can process it, we'd need your help with the following.",
                 "Thanks a lot!"),
    "formal": ("Dear Sir or Madam, regarding {invoice}: before we can process it, we would be grateful for your "
               "help with the following.", "We look forward to your reply."),
}


def tone_of(note: str) -> str:
    """The tone a note's message to the supplier was written in (neutral when it has none):
    a note written again after a correction keeps the review's tone."""
    _, _, message = note.partition(SUPPLIER_PART)
    for tone, (opening, _closing) in OPENINGS.items():
        if message.lstrip().startswith(opening.partition("{invoice}")[0]):
            return tone
    return "neutral"


def _by_whom(field: dict[str, Any]) -> str:
    """" (corrected by alice; the review read DE00 1234)", " (confirmed by alice)", or nothing."""
    correction = field.get("correction")
    if not isinstance(correction, dict):
        return ""
    by = correction.get("by") or "a member"
    if correction.get("confirmed"):
        return f" (confirmed by {by})"
    review = correction.get("review")
    review = review if isinstance(review, dict) else {}
    read = review.get("value") or " or ".join(str(c["value"]) for c in review.get("candidates") or []
                                             if isinstance(c, dict) and c.get("value"))
    return f" (corrected by {by}; the review read {read})" if read not in (None, "") else f" (entered by {by})"
PHONE_CHECK = ("Before paying, confirm the bank account by phone with the supplier, on a number you already "
               "know (not one from this invoice or its email).")


def needs_phone_check(findings: list[Any]) -> bool:
    """A standing finding about the bank account that does not already say to phone the supplier."""
    standing = findings_.standing(findings)
    return findings_.about_bank(standing) and not any("by phone" in f["words"].lower() for f in standing)


def _failed(field: dict[str, Any]) -> str:
    """A value that failed its check, with the reason: "DE89 … 01 (not a valid IBAN: …)"."""
    value, detail = field.get("value"), field.get("detail") or "it did not pass its check"
    return f"{value} ({detail})" if value not in (None, "") else detail


def _readings(name: str, field: dict[str, Any], all_fields: dict[str, Any]) -> str:
    """A value to check: each candidate with where it was read, "1,234.50 (page 1: "Total 1.234,50") or …"."""
    candidates = [c for c in field.get("candidates") or [] if isinstance(c, dict) and c.get("value")]
    if not candidates and field.get("value"):
        candidates = [{"value": field["value"], "evidence": field.get("evidence")}]
    shown = []
    for candidate in candidates:
        value = _shown(name, {"value": candidate["value"]}, all_fields)
        evidence = candidate.get("evidence")
        place, quote = reading.where(evidence).removeprefix("read from "), reading.quoted(evidence)
        shown.append(f"{value} ({place}: \"{quote}\")" if quote else f"{value} ({place})" if place else value)
    detail = f" ({field['detail']})" if field.get("detail") else ""
    return " or ".join(shown) + detail


def _shown(name: str, field: dict[str, Any], all_fields: dict[str, Any]) -> str:
    """A found value as Alice reads it: the total with its currency, the date spelled out."""
    value = str(field["value"])
    try:
        if name in fields.AMOUNT_FIELDS:
            currency = all_fields.get("currency") or {}
            amount = f"{Decimal(value):,.2f}"
            return f"{currency['value']} {amount}" if currency.get("status") == "present" else amount
        if name in fields.DATE_FIELDS:
            return _long_date(value)
    except (ArithmeticError, ValueError):
        return value  # a candidate to check need not parse
    return value


def _long_date(iso: str) -> str:
    day = date.fromisoformat(iso)
    return f"{day.day} {day:%B %Y}"


def _invoice_reference(found_fields: dict[str, Any]) -> str:
    """'your invoice INV-1 of 14 March 2026', with what was found of number and date."""
    reference = "your invoice"
    if found_fields["invoice_number"]["status"] == "present":
        reference += f" {found_fields['invoice_number']['value']}"
    if found_fields["invoice_date"]["status"] == "present":
        reference += f" of {_long_date(found_fields['invoice_date']['value'])}"
    return reference


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def _bounded(warnings: list[str], *, chars: int = MAX_WARNING_CHARS) -> list[str]:
    return [w[:chars] for w in warnings[:MAX_WARNINGS]]


RUNS = {"extract": extract, "validate": validate, "draft": draft}
# Each declared step with the function that runs it, in their order.
TOOLS: dict[str, Tool] = {
    name: Tool(step.name, step.description, step.parameters, step.budget, step.reads, run=RUNS[name])
    for name, step in STEPS.items()
}
