"""The three tools the workflow may run: extract, validate, draft.

Each declares the JSON Schema of its arguments (checked by ``policy`` before it runs), the
time it needs, and the tool whose output it reads. Each returns a bounded output: the next
step reads only that, from the checkpoint, so a restarted worker needs nothing else.
Every tool takes this job's id as an argument, and reads only this job's input through
its ``JobContext``: there is no argument that names a file or another job's document.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal
from typing import Any, Callable

from jobs.context import JobContext
from jobs.errors import AcceptanceError
from jobs.kinds import JobFailed

from . import documents, fields

MAX_WARNINGS = 10
MAX_WARNING_CHARS = 200
MAX_DRAFT_CHARS = 4_000
TONES = ("neutral", "friendly", "formal")


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    parameters: dict[str, Any]
    budget: timedelta  # the time it needs: the policy refuses it with less left
    reads: str | None  # the tool whose output it takes as input
    run: Callable[[JobContext, dict[str, Any], dict[str, Any]], dict[str, Any]]


def _schema(**properties: Any) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"job_id": {"type": "integer", "minimum": 1}, **properties},
        "required": ["job_id"],
        "additionalProperties": False,
    }


def extract(ctx: JobContext, arguments: dict[str, Any], previous: dict[str, Any]) -> dict[str, Any]:
    """This job's document (or inline text) as text, its page count and any warnings."""
    job = ctx.job()
    warnings: list[str] = []
    try:
        if job["document"]:
            content = ctx.document()
            read = documents.read_text(content, job["document_type"] or documents.sniff(content) or "")
            source = "document"
            if ctx.payload.get("text"):
                warnings.append("inline text ignored: the uploaded document was reviewed")
        elif ctx.payload.get("text"):
            read = documents.inline_text(ctx.payload["text"])
            source = "inline"
        else:
            raise JobFailed("nothing to review: the job has neither a document nor inline text",
                            retryable=False, code="nothing_to_review")
    except AcceptanceError as exc:
        # Damaged, over a limit, unsupported: the document's own bytes, which do not change,
        # so another attempt would fail the same way.
        raise JobFailed(exc.message, retryable=False, code=exc.code) from None
    return {
        "text": read.text,
        "pages": read.pages,
        "has_text": bool(read.text.strip()),
        "source": source,
        "document_name": (job["document_name"] or "")[:120],
        "warnings": _bounded(warnings + read.warnings),
    }


def validate(ctx: JobContext, arguments: dict[str, Any], previous: dict[str, Any]) -> dict[str, Any]:
    """The required supplier fields, each present, missing or malformed. Drops the text."""
    return {
        # The job's own clock, not the machine's: a logical clock makes the check repeatable.
        "fields": fields.check_all(previous["text"], country=arguments.get("country"), today=ctx.now().date()),
        "pages": previous["pages"],
        "has_text": bool(previous["text"].strip()),
        "source": previous["source"],
        "document_name": previous["document_name"],
        "warnings": _bounded(previous["warnings"]),
    }


def draft(ctx: JobContext, arguments: dict[str, Any], previous: dict[str, Any]) -> dict[str, Any]:
    """A plain-text review note Alice can paste into her own email to the supplier."""
    return {**previous, "draft": review_note(previous, tone=arguments.get("tone", "neutral"))}


def review_note(checked: dict[str, Any], *, tone: str = "neutral") -> str:
    """Alice's note: what was found, what is missing or wrong, and a part to paste to the supplier.

    The supplier part names the invoice (its number and date when they were found), quotes
    each value that failed its check with the reason, and asks for what is missing. A
    document with no readable text (a scan) asks for a readable copy instead of claiming
    that every field is absent from it.
    """
    what = checked["document_name"] or ("the pasted text" if checked["source"] == "inline" else "the document")
    found_fields = checked["fields"]
    readable = checked.get("has_text", True)
    found, missing, wrong = [], [], []
    for name in fields.REQUIRED:
        field = found_fields[name]
        label = fields.LABELS[name]
        if field["status"] == "present":
            detail = f" ({field['detail']})" if field["detail"] else ""
            found.append(f"- {label}: {_shown(name, field, found_fields)}{detail}")
        elif field["status"] == "missing":
            missing.append(name)
        else:
            wrong.append(name)
    pages = checked["pages"]
    lines = [f"Review of {what} ({pages} page{'s' if pages != 1 else ''})"]
    if not readable:
        lines.append("No text could be read: the document looks scanned, so its fields could not be checked.")
    else:
        counts = [f"{len(found)} of {len(fields.REQUIRED)} required fields found and valid"]
        counts += [f"{len(missing)} missing"] if missing else []
        counts += [f"{len(wrong)} to correct"] if wrong else []
        lines.append(", ".join(counts) + ".")
    lines.append("")
    if readable:
        lines += ["Found:", *(found or ["- none of the required fields"]), ""]
    if missing:
        lines += ["Missing:" if readable else "Not readable:", *(f"- {fields.LABELS[n]}" for n in missing), ""]
    if wrong:
        lines += ["Needs correcting:",
                  *(f"- {fields.LABELS[n]}: {found_fields[n]['value']} ({found_fields[n]['detail']})" for n in wrong),
                  ""]
    if checked["warnings"]:
        lines += ["Notes:", *(f"- {w}" for w in checked["warnings"]), ""]
    if not readable:
        asks = ["- A copy of the invoice as a PDF with selectable text: the copy we received is a scanned "
                "image, and we cannot read its details."]
    else:
        asks = [f"- {_capital(fields.ASK[n])}: it is not on the invoice." for n in missing]
        asks += [f"- {_capital(fields.ASK[n])}: the invoice shows {found_fields[n]['value']} "
                 f"({found_fields[n]['detail']})." for n in wrong]
    if asks:
        invoice = _invoice_reference(found_fields)
        opening, closing = {
            "friendly": (f"Hi, thanks for {invoice}! Before we can process it, could you help us with the following?",
                         "Thanks a lot!"),
            "formal": (f"Dear Sir or Madam, regarding {invoice}: before we can process it, we need the following "
                       "from you.", "We look forward to your reply."),
        }.get(tone, (f"Regarding {invoice}: before we can process it, we need the following.",
                     "Could you send us a corrected invoice, or these details? Thank you."))
        lines += ["To ask the supplier (ready to paste into your email):", opening, *asks, closing]
    else:
        lines.append("All required fields are present and pass their checks; nothing to ask the supplier.")
    note = "\n".join(lines)
    return note if len(note) <= MAX_DRAFT_CHARS else note[: MAX_DRAFT_CHARS - 1] + "…"


def _shown(name: str, field: dict[str, Any], all_fields: dict[str, Any]) -> str:
    """A found value as Alice reads it: the total with its currency, the date spelled out."""
    value = field["value"]
    if name == "total_amount":
        currency = all_fields["currency"]
        amount = f"{Decimal(value):,.2f}"
        return f"{currency['value']} {amount}" if currency["status"] == "present" else amount
    if name == "invoice_date":
        return _long_date(value)
    return str(value)


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


def _bounded(warnings: list[str]) -> list[str]:
    return [w[:MAX_WARNING_CHARS] for w in warnings[:MAX_WARNINGS]]


TOOLS: dict[str, Tool] = {
    tool.name: tool
    for tool in (
        Tool(
            name="extract",
            description="Read the text and page count of this job's own document or inline text.",
            parameters=_schema(),
            budget=timedelta(seconds=10),
            reads=None,
            run=extract,
        ),
        Tool(
            name="validate",
            description="Check the required supplier fields in the extracted text.",
            parameters=_schema(country={"type": "string", "pattern": "^[A-Z]{2}$",
                                        "description": "Country for VAT ids printed without a prefix."}),
            budget=timedelta(seconds=5),
            reads="extract",
            run=validate,
        ),
        Tool(
            name="draft",
            description="Draft a plain-text review note for Alice to send herself.",
            parameters=_schema(tone={"type": "string", "enum": list(TONES)}),
            budget=timedelta(seconds=5),
            reads="validate",
            run=draft,
        ),
    )
}
SEQUENCE = tuple(TOOLS)  # extract, validate, draft: each reads the one before
