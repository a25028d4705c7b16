"""How a document review reads on Alice's pages: labels, formatted values, the message for
the supplier, the CSV row, progress in words.

Registered with the web app as the kind's pages (``agent.review_pages.ReviewPages``), so the
web's pages show a review without knowing its shape. Every function here takes what the
kind stored (a result, a job id) and tolerates a result of another shape: staff may complete
an unknown job with a note of their own.
"""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal, InvalidOperation
from typing import Any

from django.db.models import Case, Exists, F, FloatField, OuterRef, Subquery, TextField, When
from django.db.models.fields.json import KT
from django.db.models.functions import Cast, Lower

from web import wording
from web.kind_pages import PageBox, Words

from .models import Checkpoint, FieldCorrection
from .reading import fields, reading
from .reading import findings as findings_
from .reading.layout import BOX_COORDINATES
from .review.steps import FAILURES, SEQUENCE
from .review.tools import PHONE_CHECK, needs_phone_check, scan_words, totals_mismatch

# Summary outcome codes (workflow.summarize) as the list's outcome filter names them.
OUTCOMES = {"ok": "OK", "to_correct": "To correct", "unreadable": "Unreadable"}
# A field's status in Alice's words: what the review knows ("not found"), not a claim about the invoice.
STATUS_WORDS = {"present": "OK", "missing": "Not found", "malformed": "To correct", "to_check": "To check"}
# A field of a document with no readable text: nothing was looked for, so nothing was "not found".
NOT_READ = "Not read"
# Where a running review is, by the step it is about to take.
STEP_WORDS = {"extract": "reading the document", "validate": "validating", "draft": "drafting the note"}
# Room left around a value's words by the box drawn over them, in percent of the page.
BOX_PADDING = 0.4
# The line of the draft note (tools.review_note) after which comes the message for the supplier.
SUPPLIER_MESSAGE_AFTER = "To ask the supplier (ready to paste into your email):"


def _fields(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The result's fields in the order finance reads them (fields.REQUIRED): PostgreSQL's jsonb
    keeps an object's keys in an order of its own, so the stored order says nothing."""
    found = result.get("fields") if isinstance(result, dict) else None
    if not isinstance(found, dict):
        return {}
    order = {name: index for index, name in enumerate(fields.REQUIRED)}
    return dict(sorted(found.items(), key=lambda item: (order.get(item[0], len(order)), item[0])))


def also_read(result: Any) -> dict[str, dict[str, Any]]:
    """The fields of ``fields.ALSO_READ`` the review read (due date, net, VAT, buyer), in that order,
    then an e-invoice's payment reference (``fields.XML_ALSO_READ``)."""
    found = result.get("also_read") if isinstance(result, dict) else None
    if not isinstance(found, dict):
        return {}
    return {name: found[name] for name in (*fields.ALSO_READ, *fields.XML_ALSO_READ)
            if isinstance(found.get(name), dict) and found[name].get("value") not in (None, "")}


def label(name: str) -> str:
    return fields.LABELS.get(name, name.replace("_", " ").capitalize())


def shown_value(name: str, field: dict[str, Any], currency: str | None = None) -> str:
    """A value as people read it: "14 March 2026", "EUR 1,234.50"; others as found. A date or an
    amount to correct reads like the others when it parses (what is wrong is said beside it)."""
    value = field.get("value")
    if value in (None, ""):
        return ""
    text = str(value)
    if field.get("status") != "present" and name not in fields.DATE_FIELDS and name not in fields.AMOUNT_FIELDS:
        return text
    if name in fields.DATE_FIELDS:
        try:
            day = date.fromisoformat(text)
        except ValueError:
            return text
        return f"{day.day} {day:%B %Y}"
    if name in fields.AMOUNT_FIELDS:
        try:
            amount = Decimal(text)
        except InvalidOperation:
            return text
        return f"{currency} {amount:,.2f}" if currency else f"{amount:,.2f}"
    return text


def supplier_message(draft: str) -> str:
    """The part of the note written to the supplier; empty when there is nothing to ask."""
    _, found, message = draft.partition(SUPPLIER_MESSAGE_AFTER)
    return message.strip() if found else ""


def present(result: dict[str, Any]) -> dict[str, Any]:
    """The review's rows (label, status in words, formatted value, detail, where it was read and,
    for a value to check, each reading), the source, the findings and the supplier message."""
    result = findings_.settle(result)  # a result stored before findings decided its fields, too
    found = _fields(result)
    currency = found.get("currency", {})
    code = currency.get("value") if isinstance(currency, dict) else None  # flagged too: the row says why
    code = code.strip() if isinstance(code, str) and code.strip() else None
    readable = result.get("readable", True) if isinstance(result, dict) else True
    sizes = _page_sizes(result)
    rows = [_row(name, field, code, readable=readable, sizes=sizes)
            for name, field in found.items() if isinstance(field, dict)]
    draft = result.get("draft") if isinstance(result, dict) else None
    draft = draft if isinstance(draft, str) else ""
    findings = [_finding(f, code, sizes) for f in findings_.of(result)]
    # A document without readable text was read from nothing: no source to name.
    source = reading.source_words(result.get("reading")) if readable and isinstance(result, dict) else ""
    if source and result.get("reading") == "scan":  # which pages, and how sure OCR was of them
        source = scan_words(result.get("ocr"))
    also = also_read(result)
    also_rows = [_row(name, field, code, readable=True, sizes=sizes) for name, field in also.items()]
    return {"rows": rows, "also_rows": also_rows, "totals_mismatch": totals_mismatch(also, found) if also else "",
            "message": supplier_message(draft), "message_lines": message_lines(supplier_message(draft)),
            "note": draft, "readable": readable,
            "source": source, "findings": findings,
            "standing": [f for f in findings if f["blocks"] and not f["accepted"]],
            "phone_check": PHONE_CHECK if needs_phone_check(findings_.of(result)) else "",
            "to_check": any(row["status"] == "to_check" for row in rows),
            # Approve confirms every field: only when each one passes its check.
            "open_fields": [label(name) for name in findings_.open_fields(result)] if found else []}


def _finding(finding: dict[str, Any], currency: str | None, sizes: list[tuple[float, float]]) -> dict[str, Any]:
    """A finding as the page shows it: its words, the field it is about, whether it blocks, who
    accepted it and why, its key (what the Accept form posts) and each reading with its evidence."""
    name = finding["field"] or ""
    accepted = finding.get("accepted")
    accepted = accepted if isinstance(accepted, dict) else None
    at = None
    if accepted:
        try:
            at = datetime.fromisoformat(str(accepted.get("at")))
        except ValueError:
            at = None
    return {"key": findings_.key(finding), "code": finding["code"], "field": name,
            "label": label(name) if name else "", "words": finding["words"], "blocks": finding["blocks"],
            "accepted": {**accepted, "at": at} if accepted else None,
            "readings": [{"value": shown_value(name, {"value": r.get("value"), "status": "present"}, currency),
                          "source": str(r.get("source") or ""),
                          "evidence": _evidence(r.get("evidence"), _box(name, r.get("evidence"), sizes, index,
                                                                        tone="to_check"))}
                         for index, r in enumerate(finding.get("readings") or [], 1)
                         if isinstance(r, dict) and r.get("value") not in (None, "")]}


def message_lines(message: str) -> list[str]:
    """The message to the supplier, a line each: Alice unticks those she does not want to send."""
    return [line for line in message.splitlines() if line.strip()]


def _row(name: str, field: dict[str, Any], currency: str | None, *, readable: bool,
         sizes: list[tuple[float, float]] | None = None) -> dict[str, Any]:
    status = str(field.get("status", ""))
    correction = _correction(name, field, currency, sizes or [])
    not_read = status == "missing" and not readable and correction is None
    words = NOT_READ if not_read else STATUS_WORDS.get(status, status)
    sizes = sizes or []
    value = field.get("value")
    return {"name": name, "label": label(name), "status": status, "status_text": words,
            "value": shown_value(name, field, currency), "detail": "" if not_read else field.get("detail") or "",
            "evidence": (_evidence(field.get("evidence"), _box(name, field.get("evidence"), sizes, tone=status))
                         if value not in (None, "") else None),
            "candidates": [{"value": shown_value(name, {**c, "status": "present"}, currency), "raw": str(c["value"]),
                            "evidence": _evidence(c.get("evidence"),
                                                  _box(name, c.get("evidence"), sizes, index, tone=status))}
                           for index, c in _candidates(field)],
            # What a correction starts from, and whether the value there is one to confirm as seen.
            "raw": "" if value is None else str(value),
            # A value the team's own rule flags (an old date) is accepted with a reason, not confirmed.
            "confirmable": status in ("present", "to_check") and value not in (None, "")
                           and not (correction and correction["confirmed"]) and not _ruled(field),
            "correction": correction}


def _ruled(field: dict[str, Any]) -> bool:
    """Whether the field's own check failed on one of the team's rules (``findings.RULES``)."""
    before = field.get("settled_from")
    return isinstance(before, dict) and before.get("status") == "malformed"


def _correction(name: str, field: dict[str, Any], currency: str | None,
                sizes: list[tuple[float, float]]) -> dict[str, Any] | None:
    """A member's correction of the field (agent.inbox.corrections): who, when, confirmed or typed anew,
    and what the review had read, with where it read it."""
    correction = field.get("correction")
    if not isinstance(correction, dict):
        return None
    try:
        at: datetime | None = datetime.fromisoformat(str(correction.get("at")))
    except ValueError:
        at = None
    review = correction.get("review")
    review = review if isinstance(review, dict) else {}
    readings = [review] if review.get("value") not in (None, "") else [c for _, c in _candidates(review)]
    return {"confirmed": bool(correction.get("confirmed")), "by": str(correction.get("by") or ""), "at": at,
            "review": [{"value": shown_value(name, {**r, "status": "present"}, currency),
                        "evidence": _evidence(r.get("evidence"), _box(name, r.get("evidence"), sizes,
                                                                      index if len(readings) > 1 else 0,
                                                                      tone=str(review.get("status", ""))))}
                       for index, r in enumerate(readings, 1)]}


def _candidates(field: dict[str, Any]) -> list[tuple[int, dict[str, Any]]]:
    """A value to check's readings, numbered from 1 (what their boxes are named by)."""
    candidates = field.get("candidates") if field.get("status") == "to_check" else None
    return [(index, c) for index, c in enumerate(candidates or [], 1)
            if isinstance(c, dict) and c.get("value") not in (None, "")]


def _evidence(evidence: Any, box: PageBox | None = None) -> dict[str, Any] | None:
    """Where a value was read, in words ("read from page 1"), what it quotes (the line, the element)
    and its box on the page's image (when the page's size and the words' box are known)."""
    where = reading.where(evidence)
    return {"where": where, "quote": reading.quoted(evidence), "box": box} if where else None


def _page_sizes(result: Any) -> list[tuple[float, float]]:
    """Each page's width and height, in the units of the evidence boxes; [] when not known."""
    sizes = result.get("page_sizes") if isinstance(result, dict) else None
    if not isinstance(sizes, list):
        return []
    kept = []
    for size in sizes:
        try:
            width, height = float(size[0]), float(size[1])
        except (TypeError, ValueError, IndexError, KeyError):
            return []
        kept.append((width, height))
    return kept


def _box(name: str, evidence: Any, sizes: list[tuple[float, float]], candidate: int = 0, *,
         tone: str = "") -> PageBox | None:
    """The evidence's box in percent of its page, or None (no box, no page size, or nonsense)."""
    if not isinstance(evidence, dict) or evidence.get("source") == "xml":
        return None
    page, box = evidence.get("page"), evidence.get("box")
    if (not isinstance(page, int) or not 1 <= page <= len(sizes)
            or not isinstance(box, list) or len(box) != BOX_COORDINATES):
        return None
    width, height = sizes[page - 1]
    try:
        x0, top, x1, bottom = (float(v) for v in box)
    except (TypeError, ValueError):
        return None
    if width <= 0 or height <= 0 or x1 <= x0 or bottom <= top:
        return None

    def percent(value: float, whole: float) -> float:
        return round(min(max(value / whole * 100, 0.0), 100.0), 2)

    # A little around the words, so the outline does not cover them.
    pad_x, pad_y = BOX_PADDING * width / 100, BOX_PADDING * height / 100
    left, right = percent(x0 - pad_x, width), percent(x1 + pad_x, width)
    upper, lower = percent(top - pad_y, height), percent(bottom + pad_y, height)
    return PageBox(id=f"box-{name}" + (f"-{candidate}" if candidate else ""), page=page, left=left, top=upper,
                   width=round(right - left, 2), height=round(lower - upper, 2),
                   label=label(name) + (f", reading {candidate}" if candidate else ""),
                   tone=tone)


def boxes(result: dict[str, Any]) -> list[PageBox]:
    """Where each value was read, on the document's pages: the boxes the job's page draws."""
    if not isinstance(result, dict):
        return []
    found: list[PageBox] = []
    shown = present(result)
    for row in [*shown["rows"], *shown["also_rows"]]:
        # A value to check shows its readings, not the value: their boxes, not its own; a corrected
        # value shows where the review read what it replaced.
        readings = [c["evidence"] for c in row["candidates"]] or [row["evidence"]]
        if row["correction"] and not row["evidence"]:
            readings = [r["evidence"] for r in row["correction"]["review"]]
        for evidence in readings:
            if evidence and evidence["box"] is not None:
                found.append(evidence["box"])
    return found


def export_value(name: str, field: dict[str, Any]) -> str | Decimal | date:
    """A value as an export keeps it: a date or an amount that passed its check as a typed value (a
    spreadsheet sorts and sums it in any locale); any other value as found ("" when none)."""
    value = field.get("value")
    if value in (None, ""):
        return ""
    text = str(value)
    if field.get("status") == "present":
        if name in fields.DATE_FIELDS:
            try:
                return date.fromisoformat(text)
            except ValueError:
                return text
        if name in fields.AMOUNT_FIELDS:
            try:
                amount = Decimal(text)
            except InvalidOperation:
                return text
            return amount if amount.is_finite() else text
    return text


def export_columns(result: dict[str, Any]) -> dict[str, str | Decimal | date]:
    """Each field's value (typed where it passed its check: ``export_value``), then the fields
    that are not OK in words (*Issues*); then what the fields were read from and the findings,
    when the review says, and who corrected what. The fields also read (due date, net, VAT...,
    an e-invoice's payment reference) have a column each, empty where the invoice does not give them."""
    columns: dict[str, str | Decimal | date] = {}
    readable = result.get("readable", True) if isinstance(result, dict) else True
    issues: list[str] = []
    for name, field in _fields(result).items():
        if not isinstance(field, dict):
            continue
        columns[label(name)] = export_value(name, field)
        row = _row(name, field, None, readable=readable)
        if row["status"] != "present" and row["status_text"] != NOT_READ:
            detail = f" ({row['detail']})" if row["detail"] else ""
            issues.append(f"{label(name)}: {row['status_text'].lower()}{detail}")
    if columns:  # the fields also read: a column each, empty where the invoice does not print it
        also = result.get("also_read")
        also = also if isinstance(also, dict) else {}
        named = (*fields.ALSO_READ, *fields.XML_ALSO_READ)
        for name in [*named, *sorted(name for name in also if name not in named)]:
            value = also.get(name)
            columns[label(name)] = export_value(name, value) if isinstance(value, dict) else ""
    if columns:  # what is wrong, in words: "IBAN / bank account: to correct (not a valid IBAN: checksum)"
        columns["Issues"] = "; ".join(issues) if readable else "no readable text: nothing was read"
    if columns and isinstance(result.get("reading"), str):
        columns["Read from"] = reading.source_words(result["reading"]).removeprefix("Read from ").rstrip(".")
        columns["Findings"] = " | ".join(findings_.line(f) for f in findings_.of(result))
    corrected = [_corrected_words(name, field) for name, field in _fields(result).items()
                 if isinstance(field, dict) and isinstance(field.get("correction"), dict)]
    if corrected:  # the values above are the corrected ones; what the review read is kept here
        columns["Corrections"] = " | ".join(corrected)
    return columns


def tally(result: dict[str, Any]) -> str:
    """What a batch counts a review as, one bucket each, the most pressing first: unreadable, to
    correct (a value that fails its check), to check (readings that disagree, a finding that
    stands), not found (a value the document does not show, for finance to look up), else OK."""
    if isinstance(result, dict) and not result.get("readable", True):
        return "unreadable"
    found = _fields(result)
    statuses = {str(found[name].get("status")) for name in fields.REQUIRED if isinstance(found.get(name), dict)}
    if "malformed" in statuses:
        return "to correct"
    if "to_check" in statuses or findings_.standing(findings_.of(result)):
        return "to check"
    if "missing" in statuses:
        return "not found"
    return "OK"


def list_columns(result: dict[str, Any]) -> dict[str, str]:
    """The list's supplier, invoice number, invoice date ("14 March 2026") and total with its
    currency ("EUR 1,234.50"), as people read them; "" for a value not found. In the list a date
    reads the same whether or not it is to correct, and a total keeps the currency read beside it
    even when that currency is flagged (the job's page says what is wrong with either)."""
    found = _fields(result)
    currency = found.get("currency", {})
    code = currency.get("value") if isinstance(currency, dict) else None
    code = code.strip() if isinstance(code, str) and code.strip() else None

    def shown(name: str) -> str:
        field = found.get(name)
        if not isinstance(field, dict):
            return ""
        if name in fields.DATE_FIELDS or name in fields.AMOUNT_FIELDS:  # a value that does not parse stays as read
            field = {**field, "status": "present"}
        return shown_value(name, field, code)

    return {"supplier": shown("supplier_name"), "number": shown("invoice_number"),
            "invoice_date": shown("invoice_date"), "total": shown("total_amount")}


# The list's sort keys (web.status.SORT_KEYS) by the field they sort on.
SORT_FIELDS = {"invoice_date": "invoice_date", "total": "total_amount", "supplier": "supplier_name"}


def sort_key(key: str) -> Any:
    """An expression over Job rows: the field's value for ``key`` as corrected (the latest
    correction's, when a member corrected it), only where it passes its check (NULL otherwise),
    so a malformed amount is never compared or cast. Totals compare as numbers, suppliers
    without regard to case, dates as their ISO text."""
    name = SORT_FIELDS.get(key)
    if name is None:
        return None
    latest = FieldCorrection.objects.filter(job_id=OuterRef("pk"), field=name).order_by("-id")
    corrected = Subquery(latest.annotate(shown=Case(When(status="present", then=F("checked_value")),
                                                    default=None, output_field=TextField())).values("shown")[:1])
    review = Case(When(**{f"result__fields__{name}__status": "present"}, then=KT(f"result__fields__{name}__value")),
                  default=None, output_field=TextField())
    value: Any = Case(When(Exists(latest), then=corrected), default=review, output_field=TextField())
    if key == "total":
        return Cast(value, FloatField())
    if key == "supplier":
        return Lower(value)
    return value


def _corrected_words(name: str, field: dict[str, Any]) -> str:
    """"IBAN / bank account: corrected by alice on 2026-03-20 (the review read DE00 1234)"."""
    correction = field["correction"]
    review = correction.get("review")
    review = review if isinstance(review, dict) else {}
    day = str(correction.get("at") or "")[:10]
    if correction.get("confirmed"):
        return f"{label(name)}: confirmed by {correction.get('by')} on {day}"
    read = review.get("value")
    if read in (None, ""):
        read = " or ".join(str(c["value"]) for _, c in _candidates(review)) or "nothing"
    return f"{label(name)}: corrected by {correction.get('by')} on {day} (the review read {read})"


def note(result: dict[str, Any]) -> str:
    draft = result.get("draft") if isinstance(result, dict) else None
    return draft if isinstance(draft, str) else ""


def progress_text(job_id: int) -> str | None:
    """"validating, step 2 of 3", from the checkpoint (two columns of it, never the text)."""
    found = Checkpoint.objects.filter(job_id=job_id).values_list("step_index", "next_step").first()
    step_index, next_step = found if found else (0, SEQUENCE[0])
    if not next_step:
        return "finishing"
    words = STEP_WORDS.get(next_step, next_step)
    return f"{words}, step {min(step_index + 1, len(SEQUENCE))} of {len(SEQUENCE)}"


# What staff do with a review that stopped on one of its own codes (the queue's codes have the
# queue's lines): a provider call that timed out or lost its connection, a job with nothing to read.
STAFF_GUIDANCE = {
    "unknown": {
        **dict.fromkeys(("planner_timeout", "model_timeout"),
            "The provider did not answer in time. A timeout during a provider outage: the provider did nothing "
            "you can see, and reconciling as not done reruns it; if its records show the call below answered, "
            "reconcile as done with its outcome."),
        **dict.fromkeys(("planner_error", "model_error"),
            "The connection to the provider broke after the call below was sent: ask the provider about its "
            "idempotency key, then reconcile as done (with its outcome) if it answered, or as not done to run it "
            "again."),
    },
    "dead": {
        "nothing_to_review": "It had neither a document nor text to review: Retry would fail the same way; its "
                             "submitter has to send the document.",
    },
}

# What Alice calls the work of this kind, in the pages' sentences about a job ("Reviewing", "the
# review stops shortly", "our review service had a problem").
WORDS = Words(running="Reviewing", run="review", waiting="in line for review", again="to be reviewed again",
              service="review service", ran="was reviewed",
              unreadable="submit a readable copy (a PDF with selectable text, a Word document or a text file)")

# Staff's page of a dead review says what its submitter was told, from the same table of words.
STAFF_GUIDANCE["dead"] = {**wording.staff_lines(WORDS, FAILURES), **STAFF_GUIDANCE["dead"]}
