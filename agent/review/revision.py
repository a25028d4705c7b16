"""A reviewed result as it reads now: what the members did with it, and what came after it.

A review's own result is never rewritten. ``revise`` reads results as they stand today, for
every place that shows one (the page, the note, the message to the supplier, the ``.json`` and
the CSV, a summary restated): each field a member corrected or confirmed (``FieldCorrection``,
written by ``agent.inbox.corrections``) with its new value and check, and under ``correction``
who did it, when, and what the review had read; each finding a member accepted
(``FindingAcceptance``, written by ``agent.inbox.acceptances``) marked so (``marks``); the
duplicate finding the job's fingerprint gives now (``findings_now``, the fingerprints written
by ``agent.review.duplicates``); each result then decided by its findings (``findings.settle``),
and its note written again with the corrected values, in the review's tone. Only reads: the
review's fingerprinting and the inbox's writers both stand on it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from agent.models import Checkpoint, DocumentFingerprint, FieldCorrection, FindingAcceptance
from agent.reading import findings
from jobs.models import Job

from .tools import review_note, tone_of

# At most this many corrections of one job are read back (each field a few times over).
MAX_CORRECTIONS = 200
DUPLICATE = "duplicate"  # the code of the finding (agent.reading.findings) a possible duplicate carries


def revise(results: dict[int, dict[str, Any]]) -> dict[int, dict[str, Any]]:
    """``results`` (by job id) as their corrections and their findings' acceptances make them,
    each decided by its findings (``findings.settle``: what stands reads to check, what was
    accepted says by whom and why), with the duplicate finding their fingerprints give now. Four
    queries for a whole page of an export; one more for the notes to write again."""
    ids = [job_id for job_id, result in results.items() if is_review(result)]
    if not ids:
        return dict(results)
    corrections: dict[int, list[FieldCorrection]] = defaultdict(list)
    for record in FieldCorrection.objects.filter(job_id__in=ids).order_by("id"):
        corrections[record.job_id].append(record)
    accepted = marks(ids)
    duplicated = findings_now(ids)
    touched = sorted(set(corrections) | set(accepted))
    notes = _note_inputs(touched) if touched else {}
    revised = dict(results)
    for job_id in ids:
        result = results[job_id]
        if job_id in duplicated:
            result = with_finding_now(result, duplicated[job_id])
        records = corrections.get(job_id)
        corrected = {**result, "fields": with_corrections(result, records)} if records else result
        corrected = findings.settle(corrected, accepted.get(job_id, {}))
        draft = result.get("draft")
        if job_id in notes and isinstance(draft, str):
            corrected["draft"] = _note(corrected, notes.get(job_id, {}), tone=tone_of(draft))
            corrected["review_draft"] = draft
        revised[job_id] = corrected
    return revised


def is_review(result: Any) -> bool:
    return isinstance(result, dict) and isinstance(result.get("fields"), dict)


def review_field(result: dict[str, Any], name: str) -> dict[str, Any]:
    found = result["fields"].get(name)
    return found if isinstance(found, dict) else {"status": "missing", "value": None, "detail": ""}


def with_corrections(result: dict[str, Any], records: Iterable[FieldCorrection]) -> dict[str, Any]:
    """The result's fields with the latest correction of each applied; the review's reading of a
    corrected field is kept under ``correction.review``."""
    latest = {record.field: record for record in records}
    merged = dict(result["fields"])
    for name, record in latest.items():
        review = review_field(result, name)
        merged[name] = {
            "status": record.status,
            "value": record.checked_value or None,
            "detail": record.detail,
            # Where the review read it: still where this value is printed once confirmed, not once changed.
            "evidence": review.get("evidence") if record.confirmed else None,
            "correction": {
                "confirmed": record.confirmed,
                "typed": record.value,
                "previous_value": record.previous_value or None,
                "by": record.by_name,
                "at": record.at.isoformat(),
                "review": {key: review[key] for key in ("status", "value", "detail", "evidence", "candidates")
                           if key in review},
            },
        }
    return merged


def marks(job_ids: list[int]) -> dict[int, dict[str, dict[str, Any]]]:
    """Each job's accepted findings: finding key -> who, when and why (one query)."""
    found: dict[int, dict[str, dict[str, Any]]] = defaultdict(dict)
    for record in FindingAcceptance.objects.filter(job_id__in=job_ids).order_by("id"):
        found[record.job_id].setdefault(record.key, findings.acceptance(
            by=record.by_name, at=record.at.isoformat(), reason=record.reason))
    return dict(found)


def findings_now(job_ids: list[int]) -> dict[int, dict[str, Any] | None]:
    """Each fingerprinted job's duplicate finding as its fingerprint says now (None: it repeats no
    earlier job); a job without a fingerprint is left out. One query. What a result stored at its
    review said may be out of date: a correction or confirmation of it, or of an earlier job,
    matches it again."""
    rows = DocumentFingerprint.objects.filter(job_id__in=job_ids).values_list("job_id", "duplicate_of_id", "match")
    return {job_id: duplicate_finding(original, match) for job_id, original, match in rows}


def with_finding_now(result: dict[str, Any], found: dict[str, Any] | None) -> dict[str, Any]:
    """``result`` with its duplicate finding replaced by ``found`` (None: with none)."""
    stored = result.get("findings")
    stored = stored if isinstance(stored, list) else []
    kept = [f for f in stored if not (isinstance(f, dict) and f.get("code") == DUPLICATE)]
    now = [*kept, found] if found else kept
    return result if now == stored else {**result, "findings": now}


def duplicate_finding(original: int | None, match: str) -> dict[str, Any] | None:
    """The duplicate finding of a job that repeats ``original`` (by ``match``); None when it repeats none."""
    if original is None:
        return None
    return {"code": DUPLICATE, "field": None, "blocks": True,
            "words": f"possible duplicate of document #{original} ({match}): check that it has not been paid already"}


def _note_inputs(job_ids: list[int]) -> dict[int, dict[str, Any]]:
    """What the note says besides the result: the document's name, whether it was a document or
    pasted text, and whether an e-invoice had visible text to compare (from the checkpoint's last
    output, never its text)."""
    inputs: dict[int, dict[str, Any]] = {
        pk: {"document_name": (name or "")[:120], "source": "document" if stored else "inline"}
        for pk, name, stored in Job.objects.filter(pk__in=job_ids).values_list(
            "pk", "document__original_name", "document__name")}
    for job_id, has_text in Checkpoint.objects.filter(job_id__in=job_ids).values_list(
            "job_id", "latest_output__has_text"):
        inputs.setdefault(job_id, {})["has_text"] = bool(has_text)
    return inputs


def _note(result: dict[str, Any], inputs: dict[str, Any], *, tone: str) -> str:
    pages = result.get("pages")
    checked = {
        **result,
        "document_name": inputs.get("document_name", ""),
        "source": inputs.get("source", "document"),
        "has_text": inputs.get("has_text", bool(result.get("readable", True))),
        "pages": pages if isinstance(pages, int) else 1,
        "warnings": [str(w) for w in result.get("warnings") or []],
    }
    return review_note(checked, tone=tone)
