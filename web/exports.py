"""The list's jobs as CSV: one row per document, safe to open in a spreadsheet."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime

from jobs import kinds
from jobs.models import Job

from . import status, wording, zones

# At most this many rows in one CSV export (the newest that match).
EXPORT_LIMIT = 5000


EXPORT_HEAD = ("Document", "Outcome")
EXPORT_TAIL = ("Work state", "Assignee", "Job", "Link", "State")
DUPLICATE_COLUMN = "Possible duplicate of"
# A cell a spreadsheet would run as a formula: prefixed with ' (numbers are left alone).
_FORMULA = re.compile(r"^[=+\-@\t\r]")
_NUMBER = re.compile(r"^-?\d+(?:\.\d+)?$")


@dataclass
class Export:
    header: list[str]
    rows: list[list[str]] = field(default_factory=list)


def export(jobs: Iterable[Job], *, zone: str = "UTC", link: Callable[[int], str] | None = None) -> Export:
    """One row per document: its name, its outcome, then the kind's columns (each field's value,
    its issues in words...), then its work state and assignee, the job, its page (``link``), its
    state, and when it was submitted and reviewed, in ``zone`` (named in the header). The header is
    the union of the kinds' columns, in the order they first appear."""
    named = zones.zone_name(zone)
    tz = zones.zone_of(named)
    columns: dict[str, None] = {}
    records: list[tuple[Job, dict[str, str]]] = []
    for job, result in status.with_shown_results(jobs):
        spec = kinds.get(job.kind)
        hook = spec.presentation.export_columns if spec else None
        values = hook(result) if hook and result is not None else {}
        columns.update(dict.fromkeys(values))
        records.append((job, values))
    # A kind that flags duplicates adds their column, just before the job's own.
    duplicates = status.duplicates_of(job for job, _ in records)
    if any((spec := kinds.get(job.kind)) and spec.presentation.duplicates for job, _ in records):
        columns[DUPLICATE_COLUMN] = None
    works: dict[int, kinds.Work] = {}
    for start in range(0, len(records), 500):
        works.update(status.work_of(job for job, _ in records[start:start + 500]))

    def moment(at: datetime | None) -> str:
        return at.astimezone(tz).strftime("%Y-%m-%d %H:%M") if at else ""

    # The header too: a column is named by the result (a field a triage outcome invented, say).
    out = Export([safe_cell(name) for name in (*EXPORT_HEAD, *columns, *EXPORT_TAIL,
                                               f"Submitted ({named})", f"Reviewed at ({named})")])
    for job, found in records:
        values = {**found, DUPLICATE_COLUMN: duplicate_words(duplicates[job.pk])} if job.pk in duplicates else found
        work = works.get(job.pk)
        said = wording.state_words(job.state, wording.words_of(job.kind))
        outcome = wording.outcome_words(job) or said.lower()
        row = [job.document_name or f"job {job.pk}", outcome,
               *(values.get(name, "") for name in columns),
               work.words if work else "", work.assignee if work else "",
               str(job.pk), link(job.pk) if link else "", said,
               moment(job.created_at), moment(job.finished_at)]
        out.rows.append([safe_cell(cell) for cell in row])
    return out


def export_filename(zone: str, today: datetime, what: str = "documents") -> str:
    """ "docket-documents-2026-12-04.csv": what the export holds ("documents", "batch-b1f3...",
    "selected"), dated with the day in the reader's zone, so the downloads of one folder say
    what each is and sort by day."""
    return f"docket-{what}-{today.astimezone(zones.zone_of(zone)):%Y-%m-%d}.csv"


def duplicate_words(duplicate: kinds.Duplicate) -> str:
    """ "#12 (same file; sent 2026-03-11 09:30 UTC by bob)": a CSV cell, in UTC like the rest of the export."""
    sent = duplicate.sent_at.astimezone(UTC).strftime("%Y-%m-%d %H:%M")
    return f"#{duplicate.job_id} ({duplicate.match}; sent {sent} UTC by {duplicate.by})"


def safe_cell(value: str) -> str:
    """Text from documents must not become a formula in Alice's spreadsheet."""
    return "'" + value if _FORMULA.match(value) and not _NUMBER.match(value) else value


def export_jobs(f: status.JobFilter) -> Iterator[Job]:
    return status.filtered_jobs(f).only(*status.LIST_FIELDS, "result")[:EXPORT_LIMIT].iterator(chunk_size=500)
