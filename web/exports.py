"""The list's jobs for finance: one row per document, as CSV in the reader's locale or as an
``.xlsx`` workbook with typed dates and amounts, safe to open in a spreadsheet."""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from documents.models import original_name
from jobs.models import Job

from . import kind_pages, status, wording, zones
from .kind_pages import Duplicate, Work

# At most this many rows in one export (the newest that match).
EXPORT_LIMIT = 5000


EXPORT_HEAD = ("Document", "Outcome")
EXPORT_TAIL = ("Work state", "Assignee", "Job", "Link", "State")
DUPLICATE_COLUMN = "Possible duplicate of"
# A cell a spreadsheet would run as a formula: prefixed with ' (numbers are left alone).
_FORMULA = re.compile(r"^[=+\-@\t\r]")
_NUMBER = re.compile(r"^-?\d+(?:\.\d+)?$")
# Line breaks and tabs inside a value (a supplier's name printed on two lines): one space in a cell.
_BREAKS = re.compile(r"\s*[\r\n\t\v\f\u2028\u2029]+\s*")
# Characters no XML (so no .xlsx) may hold.
_NOT_XML = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")

# What one cell holds: text, a typed amount or date, a moment (in the export's zone), a number.
Cell = str | Decimal | date | datetime | int | None


@dataclass
class Export:
    header: list[str]
    rows: list[list[Cell]] = field(default_factory=list)
    zone: str = "UTC"  # the zone every moment of the export is in, named in the header


@dataclass(frozen=True)
class CsvFormat:
    """How a CSV separates its cells and writes a decimal: what the reader's spreadsheet expects."""

    delimiter: str
    decimal: str
    name: str

    @property
    def words(self) -> str:
        """ "semicolons": what separates the cells, as a link offering the format says it."""
        return f"{self.name}s"

    @property
    def other(self) -> CsvFormat:
        """The format a reader whose spreadsheet expects the other separator chooses instead."""
        return SEMICOLON if self == COMMA else COMMA


COMMA = CsvFormat(",", ".", "comma")
SEMICOLON = CsvFormat(";", ",", "semicolon")
FORMATS = {f.name: f for f in (COMMA, SEMICOLON)}
# Languages whose spreadsheets write one and a half as "1,5", and so expect ";" between cells
# (Excel takes the list separator from the system's locale): the CSV follows them.
DECIMAL_COMMA_LANGUAGES = frozenset({
    "bg", "ca", "cs", "da", "de", "el", "es", "et", "eu", "fi", "fr", "gl", "hr", "hu", "id", "is", "it",
    "lt", "lv", "nb", "nl", "nn", "no", "pl", "pt", "ro", "ru", "sk", "sl", "sr", "sv", "tr", "uk", "vi",
})


def csv_format(chosen: str, accept_language: str) -> CsvFormat:
    """The CSV's format: the one the reader chose (``sep=semicolon`` or ``sep=comma``), else the one
    of the first language her browser asks for (``Accept-Language``), else commas."""
    if chosen in FORMATS:
        return FORMATS[chosen]
    first = accept_language.split(",", 1)[0].split(";", 1)[0].strip().lower()
    language = first.replace("_", "-").split("-", 1)[0]
    return SEMICOLON if language in DECIMAL_COMMA_LANGUAGES else COMMA


def export(jobs: Iterable[Job], *, zone: str = "UTC", link: Callable[[int], str] | None = None) -> Export:
    """One row per document: its name, its outcome, then the kind's columns (each field's value as
    corrected, its issues in words...), then its work state and assignee, the job, its page
    (``link``), its state, and when it was submitted and reviewed. Every moment is in ``zone``,
    named in the header. The header is the union of the kinds' columns, in the order they first
    appear. Cells keep their types (dates, amounts, moments); ``csv_rows`` and ``xlsx_bytes``
    write them down."""
    named = zones.zone_name(zone)
    tz = zones.zone_of(named)
    columns: dict[str, None] = {}
    records: list[tuple[Job, dict[str, Any]]] = []
    for job, result in status.with_shown_results(jobs):
        values = kind_pages.of(job.kind).export_columns(result) if result is not None else {}
        columns.update(dict.fromkeys(values))
        records.append((job, values))
    # A kind that flags duplicates adds their column, just before the job's own.
    duplicates = status.duplicates_of(job for job, _ in records)
    if any(kind_pages.of(job.kind).supports_duplicates for job, _ in records):
        columns[DUPLICATE_COLUMN] = None
    works: dict[int, Work] = {}
    for start in range(0, len(records), 500):
        works.update(status.work_of(job for job, _ in records[start:start + 500]))

    def moment(at: datetime | None) -> datetime | None:
        return at.astimezone(tz) if at else None

    out = Export([*EXPORT_HEAD, *columns, *EXPORT_TAIL, f"Submitted ({named})", f"Reviewed at ({named})"],
                 zone=named)
    for job, found in records:
        values = ({**found, DUPLICATE_COLUMN: duplicate_words(duplicates[job.pk], named)}
                  if job.pk in duplicates else found)
        work = works.get(job.pk)
        said = wording.state_words(job.state, wording.words_of(job.kind))
        outcome = wording.outcome_words(job) or said.lower()
        out.rows.append([original_name(job) or f"job {job.pk}", outcome,
                         *(values.get(name, "") for name in columns),
                         work.words if work else "", work.assignee if work else "",
                         job.pk, link(job.pk) if link else "", said,
                         moment(job.created_at), moment(job.finished_at)])
    return out


def export_filename(zone: str, today: datetime, what: str = "documents", extension: str = "csv") -> str:
    """ "docket-documents-2026-12-04.csv": what the export holds ("documents", "batch-b1f3...",
    "selected"), dated with the day in the reader's zone, so the downloads of one folder say
    what each is and sort by day."""
    return f"docket-{what}-{today.astimezone(zones.zone_of(zone)):%Y-%m-%d}.{extension}"


def duplicate_words(duplicate: Duplicate, zone: str = "UTC") -> str:
    """ "#12 (same file; sent 2026-03-11 10:30 Europe/Berlin by bob)": in the zone of the rest of the export."""
    named = zones.zone_name(zone)
    sent = duplicate.sent_at.astimezone(zones.zone_of(named)).strftime("%Y-%m-%d %H:%M")
    return f"#{duplicate.job_id} ({duplicate.match}; sent {sent} {named} by {duplicate.by})"


def flat(value: str) -> str:
    """One line: a value printed on several lines (a supplier's name) with its breaks as spaces."""
    return _BREAKS.sub(" ", value).strip() if _BREAKS.search(value) else value


def safe_cell(value: str) -> str:
    """Text from documents must not become a formula in Alice's spreadsheet."""
    return "'" + value if _FORMULA.match(value) and not _NUMBER.match(value) else value


def csv_cell(value: Cell, fmt: CsvFormat = COMMA) -> str:
    """A cell as the CSV writes it: amounts with the format's decimal mark (no thousands
    separator), dates in ISO, moments to the minute; text on one line, never a formula."""
    if value is None:
        return ""
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%d %H:%M")
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return format(value, "f").replace(".", fmt.decimal)
    if isinstance(value, int):
        return str(value)
    return safe_cell(flat(value))


def csv_rows(export: Export, fmt: CsvFormat = COMMA) -> Iterator[list[str]]:
    yield [safe_cell(flat(name)) for name in export.header]  # a column named by a result is text too
    for row in export.rows:
        yield [csv_cell(cell, fmt) for cell in row]


def csv_text(export: Export, fmt: CsvFormat = COMMA) -> str:
    """The export as CSV in ``fmt``, with a byte order mark: spreadsheets then read the UTF-8 as UTF-8."""
    out = io.StringIO()
    out.write("\ufeff")
    csv.writer(out, delimiter=fmt.delimiter).writerows(csv_rows(export, fmt))
    return out.getvalue()


# Number formats of the workbook's typed cells.
XLSX_DATE = "yyyy-mm-dd"
XLSX_MOMENT = "yyyy-mm-dd hh:mm"
XLSX_AMOUNT = "#,##0.00"


def xlsx_bytes(export: Export) -> bytes:
    """The export as an ``.xlsx`` workbook (openpyxl): one sheet, the header frozen; dates,
    moments (in the export's zone, which the header names: a workbook's times carry none) and
    amounts as typed cells; text always as text, never as a formula."""
    from openpyxl import Workbook
    from openpyxl.cell import WriteOnlyCell
    from openpyxl.styles import Font

    book = Workbook(write_only=True)
    sheet = book.create_sheet("Documents")
    sheet.freeze_panes = "A2"
    bold = Font(bold=True)

    def cell(value: Cell, *, header: bool = False) -> WriteOnlyCell:
        if isinstance(value, datetime):
            made = WriteOnlyCell(sheet, value=value.replace(tzinfo=None))
            made.number_format = XLSX_MOMENT
        elif isinstance(value, date):
            made = WriteOnlyCell(sheet, value=value)
            made.number_format = XLSX_DATE
        elif isinstance(value, Decimal):
            made = WriteOnlyCell(sheet, value=value)
            made.number_format = XLSX_AMOUNT
        elif isinstance(value, int) or value is None:
            made = WriteOnlyCell(sheet, value=value)
        else:
            made = WriteOnlyCell(sheet, value=_NOT_XML.sub("", flat(value)))
            made.data_type = "s"  # "=..." from a document stays text
        if header:
            made.font = bold
        return made

    sheet.append([cell(name, header=True) for name in export.header])
    for row in export.rows:
        sheet.append([cell(value) for value in row])
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def export_jobs(f: status.JobFilter) -> Iterator[Job]:
    return (status.filtered_jobs(f).select_related("document").only(*status.LIST_FIELDS, "result")[:EXPORT_LIMIT]
            .iterator(chunk_size=500))
