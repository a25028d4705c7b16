"""``manage.py reviewbench FOLDER [--ignore-xml] [--json] [--details]``: how well the review reads.

Runs the review's reading (``reading.extract`` and ``reading.validate``, in this process, not
through the queue) over every document that FOLDER's ``truth.json`` names, and compares each
field with the expected value: right, wrong (another value was read) or missed (none was).
A field whose truth is null is not expected; a value read for it counts as "extra".
The fields also read (``fields.ALSO_READ``: due date, net, VAT, buyer) are scored apart, where
the truth has them; "overall" stays the seven required fields. The same seven are also broken
down by language (the folder a document is in: ``de/…``) and by what they were read from
(text, scan, e-invoice).
Comparison: amounts as decimals, dates as ISO dates, identifiers without spaces, dots,
dashes and case, names right when one contains the other (case-insensitive).
Speed: documents per second of the whole run, and the CPU seconds per document (median, p95).
"flagged": how many documents read carry a finding that blocks paying them (on a fraud bench,
every one must); "ok": how many read *OK* (on a fraud bench, none may).

A folder may seed a supplier register: ``register.csv`` (the import's format, ``suppliers.imports``)
and ``tenant.json`` (``{"own_tax_ids": [...]}``). Then each document is also checked against it as
a review checks a tenant's invoice (``suppliers.review``), and against the documents before it (in
the order of their names) for duplicates (``agent.review.duplicates``): the bench is one tenant.

``--ignore-xml`` reads only the visible text: an embedded XML is never looked at, and a
document without visible text (a standalone XML) is skipped. ``--details`` lists each wrong
and missed value with what was read: for test corpora, not for customers' documents.
``--all`` also reviews the folder's other documents (PDF, XML, DOCX, text) that truth.json does
not name, unscored: each one's source, field statuses and findings, or why it was refused
(for a folder of damaged or invalid documents: none may crash the reading).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import statistics
import time
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from agent.models import DocumentFingerprint
from agent.reading import documents, fields, findings, reading
from agent.review import duplicates, workflow
from jobs.errors import AcceptanceError
from suppliers import imports
from suppliers import review as register_review

OUTCOMES = ("right", "wrong", "missed", "extra")
DOCUMENT_SUFFIXES = (".pdf", ".xml", ".docx", ".txt", ".png", ".jpg", ".jpeg", ".tif", ".tiff")


def same(name: str, expected: str, got: str) -> bool:
    """Whether a value read is the expected one, by the field's comparison rule."""
    if name in fields.AMOUNT_FIELDS:
        try:
            return Decimal(str(expected)) == Decimal(str(got))
        except (InvalidOperation, ValueError):
            return False
    if name in fields.DATE_FIELDS:
        try:
            return date.fromisoformat(str(expected)[:10]) == date.fromisoformat(str(got)[:10])
        except ValueError:
            return False
    if name in fields.NAME_FIELDS:
        a, b = (" ".join(str(v).split()).casefold() for v in (expected, got))
        return bool(a and b) and (a in b or b in a)
    return _identifier(expected) == _identifier(got)


def _identifier(value: Any) -> str:
    return re.sub(r"[\s.\-]", "", str(value)).upper()


def outcome(name: str, expected: Any, field_: dict[str, Any] | None) -> str | None:
    """right / wrong / missed for an expected value, extra for a value nobody expected, None otherwise."""
    got = (field_ or {}).get("value")
    got = None if got in (None, "") else got
    if expected in (None, ""):
        return "extra" if got is not None else None
    if got is None:
        return "missed"
    return "right" if same(name, expected, got) else "wrong"


@dataclass
class Bench:
    counts: dict[str, dict[str, int]] = field(
        default_factory=lambda: {name: dict.fromkeys(OUTCOMES, 0) for name in (*fields.REQUIRED, *fields.ALSO_READ)})
    # The seven required fields' outcomes per language and per reading ("text", "scan", "e-invoice").
    groups: dict[str, dict[str, dict[str, int]]] = field(default_factory=lambda: {"language": {}, "reading": {}})
    cpu: list[float] = field(default_factory=list)
    read: int = 0
    skipped: int = 0
    flagged: int = 0  # documents read with a finding that blocks paying (a fraud bench wants every one)
    ok: int = 0  # documents read OK (a fraud bench wants none)
    findings: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # each document's, as dicts
    outcomes: dict[str, str] = field(default_factory=dict)  # each document's outcome (ok, to_correct...)
    failed: list[dict[str, str]] = field(default_factory=list)
    readings: dict[str, int] = field(default_factory=dict)
    details: list[dict[str, Any]] = field(default_factory=list)
    unscored: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0

    def count(self, name: str, result: str, *, language: str, reading_: str) -> None:
        self.counts[name][result] += 1
        if name not in fields.REQUIRED:
            return
        for group, key in (("language", language), ("reading", reading_)):
            counts = self.groups[group].setdefault(key, dict.fromkeys(OUTCOMES, 0))
            counts[result] += 1

    def report(self) -> dict[str, Any]:
        # A field also read counts where the truth names it: a folder without such truths has no line for it.
        per_field = {name: _scored(c) for name, c in self.counts.items()
                     if name in fields.REQUIRED or c["right"] + c["wrong"] + c["missed"]}
        overall = {key: sum(self.counts[name][key] for name in fields.REQUIRED) for key in OUTCOMES}
        also = {key: sum(self.counts[name][key] for name in fields.ALSO_READ) for key in OUTCOMES}
        cpu = sorted(self.cpu)
        return {
            "fields": per_field,
            "overall": _scored(overall),
            "also_read": _scored(also),
            "by_language": {key: _scored(c) for key, c in sorted(self.groups["language"].items())},
            "by_reading": {key: _scored(c) for key, c in sorted(self.groups["reading"].items())},
            "documents": {"read": self.read, "skipped": self.skipped, "failed": len(self.failed),
                          "flagged": self.flagged, "ok": self.ok,
                          "seconds": round(self.seconds, 3),
                          "per_second": round(self.read / self.seconds, 2) if self.seconds else None},
            "cpu_seconds": {"median": round(statistics.median(cpu), 4) if cpu else None,
                            "p95": round(_percentile(cpu, 0.95), 4) if cpu else None,
                            "max": round(cpu[-1], 4) if cpu else None},
            "readings": self.readings,
            "failures": self.failed,
            **({"details": self.details} if self.details else {}),
            **({"unscored": self.unscored} if self.unscored else {}),
        }


def _scored(counts: dict[str, int]) -> dict[str, Any]:
    expected = counts["right"] + counts["wrong"] + counts["missed"]
    return {**counts, "expected": expected, "right_pct": _pct(counts["right"], expected)}


def _pct(part: int, whole: int) -> float | None:
    return round(100 * part / whole, 1) if whole else None


def _percentile(ordered: list[float], q: float) -> float:
    """The nearest-rank percentile of a sorted list."""
    return ordered[max(0, min(len(ordered) - 1, math.ceil(q * len(ordered)) - 1))]


@dataclass
class Tenant:
    """What a bench folder seeds: the tenant's supplier register, and the documents read before."""

    register: register_review.Register | None = None
    earlier: list[DocumentFingerprint] = field(default_factory=list)

    @classmethod
    def of(cls, folder: Path) -> Tenant:
        """The folder's ``register.csv`` and ``tenant.json``; no register without the CSV."""
        csv_path, tenant_path = folder / "register.csv", folder / "tenant.json"
        if not csv_path.exists():
            return cls()
        try:
            rows = imports.parse(csv_path.read_bytes())
            own = json.loads(tenant_path.read_text(encoding="utf-8")).get("own_tax_ids", []) \
                if tenant_path.exists() else []
            own_ids = frozenset(imports.tax_id_of(str(value)) for value in own)
        except imports.ImportRefused as exc:
            raise CommandError(f"{csv_path}: " + "; ".join(exc.errors)) from None
        except (OSError, ValueError, AttributeError) as exc:
            raise CommandError(f"cannot read {tenant_path}: {exc}") from None
        suppliers = [register_review.Known(id=n, name=row.name, name_key=row.name_key, tax_ids=frozenset(row.tax_ids),
                                           ibans=frozenset(row.ibans), usual_min=row.usual_min,
                                           usual_max=row.usual_max, range_known=row.usual_min is not None)
                     for n, row in enumerate(rows, start=1)]
        return cls(register=register_review.Register(suppliers=suppliers, own_tax_ids=own_ids))

    def check(self, content: bytes, extracted: dict[str, Any], checked: dict[str, Any]) -> list[dict[str, Any]]:
        """The register's findings and a duplicate finding for one document, as a review adds them."""
        if self.register is None:
            return []
        found = register_review.findings(self.register, checked["fields"], extracted.get("text") or "")
        read = register_review.read_of(checked["fields"])
        known = register_review.match(self.register, read) if read.tax_id or read.name_key else None
        fingerprint = duplicates.fingerprint_of(
            job_id=len(self.earlier) + 1, tenant_id=0, sha256=hashlib.sha256(content).hexdigest(),
            fields=checked["fields"], now=timezone.now(), register_supplier_id=known.id if known else None)
        fingerprint.duplicate_of_id, fingerprint.match = duplicates.match_among(fingerprint, self.earlier) or (None, "")
        self.earlier.append(fingerprint)
        duplicate = duplicates.finding(fingerprint)
        return [*found, *([duplicate] if duplicate else [])]


def review(path: Path, *, ignore_xml: bool, today: date, tenant: Tenant | None = None) -> dict[str, Any] | None:
    """One document read as the review reads it: ``reading.validate``'s output plus "cpu" seconds,
    or None when ``ignore_xml`` skips it (no visible text); with a ``tenant``, its register's and
    duplicate findings added. Raises the refusals of ``jobs.errors``."""
    content = path.read_bytes()
    media_type = reading.media_type(content)
    if ignore_xml and media_type == reading.XML:
        return None  # a standalone XML has no visible text
    # What acceptance checks before the queue takes a document (the page limit, say).
    media_type = documents.check_document(content=content, name=path.name, content_type="")
    cpu = time.process_time()  # the reading alone: acceptance runs in the web process
    extracted = reading.extract(content, media_type, today=today, read_xml=not ignore_xml)
    if ignore_xml and not extracted["has_text"]:
        return None
    checked = reading.validate(extracted, today=today)
    if tenant is not None:
        checked = {**checked, "findings": [*checked["findings"], *tenant.check(content, extracted, checked)]}
    return {**checked, "cpu": time.process_time() - cpu}


def run(folder: Path, *, ignore_xml: bool = False, details: bool = False, everything: bool = False,
        today: date | None = None) -> Bench:
    """Read every document ``folder/truth.json`` names, and count what the review got right
    (``everything``: and review the folder's other documents, unscored)."""
    truth_path = folder / "truth.json"
    try:
        truth = json.loads(truth_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise CommandError(f"cannot read {truth_path}: {exc}") from None
    if not isinstance(truth, dict):
        raise CommandError(f"{truth_path} is not an object of file names")
    today = today or date.today()
    bench = Bench()
    tenant = Tenant.of(folder)
    started = time.perf_counter()
    for relative, listed in sorted(truth.items()):
        expected = listed if isinstance(listed, dict) else {}
        try:
            checked = review(folder / relative, ignore_xml=ignore_xml, today=today, tenant=tenant)
        except (OSError, AcceptanceError) as exc:
            message = getattr(exc, "message", None) or str(exc)
            bench.failed.append({"document": relative, "error": message[:200]})
            for name in (*fields.REQUIRED, *fields.ALSO_READ):  # what it should have read, it missed
                if expected.get(name) not in (None, ""):
                    bench.count(name, "missed", language=_language(relative), reading_="refused")
            continue
        if checked is None:
            bench.skipped += 1
            continue
        bench.cpu.append(checked["cpu"])
        bench.read += 1
        bench.flagged += bool(findings.standing(checked["findings"]))  # a finding that blocks paying
        bench.outcomes[relative] = workflow.summarize(checked).outcome
        bench.ok += bench.outcomes[relative] == "ok"
        bench.findings[relative] = [f if isinstance(f, dict) else {"words": str(f)} for f in checked["findings"]]
        bench.readings[checked["reading"]] = bench.readings.get(checked["reading"], 0) + 1
        read = {**(checked.get("also_read") or {}), **checked["fields"]}
        source = "e-invoice" if checked["reading"].startswith("e-invoice") else checked["reading"]
        for name in (*fields.REQUIRED, *fields.ALSO_READ):
            field_ = read.get(name)
            result = outcome(name, expected.get(name), field_)
            if result is None:
                continue
            bench.count(name, result, language=_language(relative), reading_=source)
            if details and result != "right":
                bench.details.append({"document": relative, "field": name, "outcome": result,
                                      "expected": expected.get(name), "got": (field_ or {}).get("value"),
                                      "status": (field_ or {}).get("status")})
    bench.seconds = time.perf_counter() - started
    if everything:
        named = {str(Path(relative)) for relative in truth}
        others = sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix.lower() in DOCUMENT_SUFFIXES
                        and str(p.relative_to(folder)) not in named)
        for path in others:
            bench.unscored.append(_unscored(path, folder, ignore_xml=ignore_xml, today=today))
    return bench


def _language(relative: str) -> str:
    """The language a document is filed under: the first folder of its path ("de/x.pdf"), or "—"."""
    parts = Path(relative).parts
    return parts[0] if len(parts) > 1 else "—"


def _unscored(path: Path, folder: Path, *, ignore_xml: bool, today: date) -> dict[str, Any]:
    relative = str(path.relative_to(folder))
    try:
        checked = review(path, ignore_xml=ignore_xml, today=today)
    except (OSError, AcceptanceError) as exc:
        return {"document": relative, "refused": (getattr(exc, "message", None) or str(exc))[:200]}
    if checked is None:
        return {"document": relative, "skipped": True}
    return {"document": relative, "reading": checked["reading"], "readable": checked["readable"],
            "statuses": {name: f.get("status") for name, f in checked["fields"].items()},
            "findings": findings.words(checked["findings"])}


def table(report: dict[str, Any]) -> str:
    """The report as people read it: one line per field, the overall line, the speed."""
    lines = [f"{'field':<16}{'expected':>9}{'right':>7}{'wrong':>7}{'missed':>8}{'extra':>7}{'right %':>9}"]
    required = [(name, c) for name, c in report["fields"].items() if name in fields.REQUIRED]
    also = [(name, c) for name, c in report["fields"].items() if name not in fields.REQUIRED]
    rows = [*required, ("overall", report["overall"])]
    if also:
        rows += [("", None), *also, ("also read", report["also_read"])]
    for title, key in (("by language", "by_language"), ("by reading", "by_reading")):
        if len(report.get(key) or {}) > 1:
            rows += [("", None), (f"{title}:", None), *report[key].items()]
    for name, c in rows:
        if c is None:
            lines.append(name)
            continue
        pct = "—" if c["right_pct"] is None else f"{c['right_pct']:.1f}"
        lines.append(f"{name:<16}{c['expected']:>9}{c['right']:>7}{c['wrong']:>7}{c['missed']:>8}{c['extra']:>7}"
                     f"{pct:>9}")
    docs, cpu = report["documents"], report["cpu_seconds"]
    lines.append("")
    lines.append(f"documents: {docs['read']} read, {docs['skipped']} skipped, {docs['failed']} failed, "
                 f"in {docs['seconds']:.2f} s: {docs['per_second'] or 0:.1f} documents/s; "
                 f"{docs.get('flagged', 0)} with a finding that blocks paying, {docs.get('ok', 0)} OK")
    if cpu["median"] is not None:
        lines.append(f"CPU per document: median {cpu['median']:.3f} s, p95 {cpu['p95']:.3f} s, max {cpu['max']:.3f} s")
    if report["readings"]:
        lines.append("read from: " + ", ".join(f"{k} ({v})" for k, v in sorted(report["readings"].items())))
    for failure in report["failures"]:
        lines.append(f"failed: {failure['document']}: {failure['error']}")
    for u in report.get("unscored", []):
        if "refused" in u:
            lines.append(f"unscored: {u['document']}: refused: {u['refused']}")
        elif u.get("skipped"):
            lines.append(f"unscored: {u['document']}: skipped (no visible text)")
        else:
            statuses = " ".join(f"{name}={status}" for name, status in u["statuses"].items() if status != "present")
            lines.append(f"unscored: {u['document']}: {u['reading']}; {statuses or 'all present'}; findings: "
                         + ("; ".join(u["findings"]) or "none"))
    for d in report.get("details", []):
        lines.append(f"{d['outcome']}: {d['document']} {d['field']}: expected {d['expected']!r}, "
                     f"read {d['got']!r} ({d['status']})")
    return "\n".join(lines)


class Command(BaseCommand):
    help = ("Read every document FOLDER/truth.json names with the review's reader (in-process) and print, per "
            "field and overall, the values right, wrong and missed, and the documents per second.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("folder", type=Path)
        parser.add_argument("--ignore-xml", action="store_true",
                            help="read only the visible text; skip documents without any (standalone XML)")
        parser.add_argument("--json", action="store_true", dest="as_json", help="print the report as JSON")
        parser.add_argument("--details", action="store_true", help="list each wrong and missed value")
        parser.add_argument("--all", action="store_true", dest="everything",
                            help="also review the folder's documents truth.json does not name, unscored")

    def handle(self, *args: Any, folder: Path, ignore_xml: bool, as_json: bool, details: bool, everything: bool,
               **options: Any) -> None:
        if not folder.is_dir():
            raise CommandError(f"{folder} is not a folder")
        report = run(folder, ignore_xml=ignore_xml, details=details, everything=everything).report()
        self.stdout.write(json.dumps(report, indent=2, ensure_ascii=False) if as_json else table(report))
