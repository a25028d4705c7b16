"""The three tools the workflow may run: extract, validate, draft.

Each declares the JSON Schema of its arguments (checked by ``policy`` before it runs), the
time it needs, and the tool whose output it reads. Each returns a bounded output: the next
step reads only that, from the checkpoint, so a restarted worker needs nothing else.
Every tool takes this job's id as an argument, and reads only this job's input through
its ``JobContext``: there is no argument that names a file or another job's document.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Callable

from jobs.context import JobContext
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
    if job["document"]:
        read = documents.read_text(ctx.document(), job["document_type"] or documents.sniff(ctx.document()) or "")
        source = "document"
        if ctx.payload.get("text"):
            warnings.append("inline text ignored: the uploaded document was reviewed")
    elif ctx.payload.get("text"):
        read = documents.inline_text(ctx.payload["text"])
        source = "inline"
    else:
        raise JobFailed("nothing to review: the job has neither a document nor inline text",
                        retryable=False, code="nothing_to_review")
    return {
        "text": read.text,
        "pages": read.pages,
        "source": source,
        "document_name": (job["document_name"] or "")[:120],
        "warnings": _bounded(warnings + read.warnings),
    }


def validate(ctx: JobContext, arguments: dict[str, Any], previous: dict[str, Any]) -> dict[str, Any]:
    """The required supplier fields, each present, missing or malformed. Drops the text."""
    return {
        "fields": fields.check_all(previous["text"], country=arguments.get("country")),
        "pages": previous["pages"],
        "source": previous["source"],
        "document_name": previous["document_name"],
        "warnings": _bounded(previous["warnings"]),
    }


def draft(ctx: JobContext, arguments: dict[str, Any], previous: dict[str, Any]) -> dict[str, Any]:
    """A plain-text review note Alice can paste into her own email to the supplier."""
    return {**previous, "draft": review_note(previous, tone=arguments.get("tone", "neutral"))}


def review_note(checked: dict[str, Any], *, tone: str = "neutral") -> str:
    what = checked["document_name"] or ("the pasted text" if checked["source"] == "inline" else "the document")
    found, missing, wrong = [], [], []
    for name in fields.REQUIRED:
        field = checked["fields"][name]
        label = fields.LABELS[name]
        if field["status"] == "present":
            found.append(f"- {label}: {field['value']}" + (f" ({field['detail']})" if field["detail"] else ""))
        elif field["status"] == "missing":
            missing.append((name, f"- {label}"))
        else:
            wrong.append((name, f"- {label}: {field['value']} ({field['detail']})"))
    pages = checked["pages"]
    lines = [f"Review of {what} ({pages} page{'s' if pages != 1 else ''})", ""]
    lines += ["Found:", *(found or ["- none of the required fields"]), ""]
    if missing:
        lines += ["Missing:", *(line for _, line in missing), ""]
    if wrong:
        lines += ["Needs correcting:", *(line for _, line in wrong), ""]
    if checked["warnings"]:
        lines += ["Notes:", *(f"- {w}" for w in checked["warnings"]), ""]
    if missing or wrong:
        opening = {
            "friendly": "Hi, thanks for the invoice! Could you help us with a few details:",
            "formal": "Dear supplier, before we can process this invoice we need the following from you:",
        }.get(tone, "Questions for the supplier (to paste into your email): to process this invoice, please send us")
        lines.append(opening)
        lines += [f"- {fields.ASK[name]}: it is not on the invoice" for name, _ in missing]
        lines += [f"- {fields.ASK[name]}: the one on the invoice does not pass our check" for name, _ in wrong]
    else:
        lines.append("All required fields are present and pass their checks; nothing to ask the supplier.")
    note = "\n".join(lines)
    return note if len(note) <= MAX_DRAFT_CHARS else note[: MAX_DRAFT_CHARS - 1] + "…"


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
