"""``manage.py ocrbench [FOLDER ...] [--dpi 150 300] [--limit N] [--json] [--details]``: how well scans read.

Takes the text PDFs a FOLDER's ``truth.json`` names (by default the multilingual corpus and the
e-invoices' PDFs in ``tests/corpus``), renders each page to an 8-bit grey image at each
resolution with Poppler's ``pdftoppm`` (a one-page document as a PNG, a longer one as a
multi-page TIFF), reviews the images as an upload is reviewed (``reading.extract``: OCR, then
the same field reading), and compares the fields right against the truth with those read from
the same documents' text layer. Embedded e-invoices are ignored both ways: the visible page is
what is measured. Per language (the corpus folder: ``de/``, ``fr/``; the e-invoices as one
group): fields right from the text layer, right as images at each resolution, and their ratio
(target: at least ``TARGET`` per language). Speed: pages OCRed per CPU second, the pages
per second of one core (target at 300 dpi: at least 1), and how much of that CPU went to loading
the language sets a change of language needed (the engine keeps ``MAX_READERS``; the corpus is
read a language at a time, so each group's first document loads its set).
"""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import tempfile
import time
from datetime import date
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from agent.management.commands.reviewbench import outcome
from agent.reading import documents, fields, ocr, reading
from jobs.errors import AcceptanceError

DEFAULT_FOLDERS = ("tests/corpus/multilingual", "tests/corpus/einvoices")
TARGET = 0.85
SPEED_TARGET = 1.0


def rendered(path: Path, dpi: int, work: Path) -> bytes:
    """The PDF's pages as one image file at ``dpi``: a PNG, or a TIFF of every page."""
    from PIL import Image

    stem = work / f"{path.stem}-{dpi}"
    pdftoppm = shutil.which("pdftoppm") or "pdftoppm"
    subprocess.run([pdftoppm, "-r", str(dpi), "-gray", "-png", str(path), str(stem)],  # noqa: S603  Poppler on PATH, our argv
                   check=True, capture_output=True, timeout=300)
    pages = sorted(work.glob(f"{stem.name}-*.png"))
    if len(pages) == 1:
        content = pages[0].read_bytes()
    else:
        images = [Image.open(page) for page in pages]
        out = io.BytesIO()
        images[0].save(out, format="TIFF", save_all=True, append_images=images[1:], compression="tiff_lzw",
                       dpi=(dpi, dpi))
        content = out.getvalue()
        for image in images:
            image.close()
    for page in pages:
        page.unlink()
    return content


def _right(checked: dict[str, Any], expected: dict[str, Any], *, document: str, mode: str,
           details: list[dict[str, Any]] | None) -> int:
    right = 0
    for name in fields.REQUIRED:
        field_ = checked["fields"].get(name)
        result = outcome(name, expected.get(name), field_)
        right += result == "right"
        if details is not None and result in ("wrong", "missed"):
            details.append({"document": document, "mode": mode, "field": name, "outcome": result,
                            "expected": expected.get(name), "got": (field_ or {}).get("value")})
    return right


def _read_image(image: bytes, *, today: date, speed: dict[str, Any], used: dict[str, int]) -> dict[str, Any]:
    """Review one rendered page image as an upload would be; its OCR's CPU time, pages and
    languages are added to ``speed`` and ``used``."""
    cpu, loading = time.process_time(), ocr.engine().loading_seconds
    extracted = reading.extract(image, documents.check_document(content=image, name="", content_type=""),
                                today=today)
    speed["cpu"] += time.process_time() - cpu
    speed["loading"] += ocr.engine().loading_seconds - loading
    speed["pages"] += len((extracted.get("ocr") or {}).get("pages") or [])
    chosen = (extracted.get("ocr") or {}).get("languages") or "none"
    used[chosen] = used.get(chosen, 0) + 1
    return reading.validate(extracted, today=today)


def run(folders: list[Path], *, dpis: list[int], limit: int | None = None, details: bool = False,
        today: date | None = None) -> dict[str, Any]:
    today = today or date.today()
    why_not = ocr.available()
    if why_not:
        raise CommandError(why_not)
    if shutil.which("pdftoppm") is None:
        raise CommandError("pdftoppm is not installed (Debian's poppler-utils)")
    groups: dict[str, dict[str, Any]] = {}
    speed = {dpi: {"pages": 0, "cpu": 0.0, "loading": 0.0} for dpi in dpis}
    listed: list[dict[str, Any]] | None = [] if details else None
    used: dict[str, int] = {}  # the languages each image was read in, and how often
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="ocrbench-") as tmp:
        work = Path(tmp)
        for folder in folders:
            truth = json.loads((folder / "truth.json").read_text(encoding="utf-8"))
            taken: dict[str, int] = {}
            for relative, expected in sorted(truth.items()):
                path = folder / relative
                if path.suffix.lower() != ".pdf" or not isinstance(expected, dict):
                    continue
                group = relative.split("/")[0] if folder.name == "multilingual" else folder.name
                if limit is not None and taken.get(group, 0) >= limit:
                    continue
                taken[group] = taken.get(group, 0) + 1
                counts = groups.setdefault(group, {"documents": 0, "expected": 0, "text": 0,
                                                   **{f"image_{dpi}": 0 for dpi in dpis}})
                content = path.read_bytes()
                try:
                    text = reading.validate(reading.extract(content, documents.PDF, today=today, read_xml=False),
                                            today=today)
                except AcceptanceError:
                    continue
                counts["documents"] += 1
                counts["expected"] += sum(1 for name in fields.REQUIRED if expected.get(name) not in (None, ""))
                counts["text"] += _right(text, expected, document=relative, mode="text", details=listed)
                for dpi in dpis:
                    checked = _read_image(rendered(path, dpi, work), today=today, speed=speed[dpi], used=used)
                    counts[f"image_{dpi}"] += _right(checked, expected, document=relative, mode=f"{dpi} dpi",
                                                     details=listed)
    for counts in groups.values():
        for dpi in dpis:
            counts[f"ratio_{dpi}"] = round(counts[f"image_{dpi}"] / counts["text"], 3) if counts["text"] else None
    rates = {dpi: {"pages": s["pages"], "cpu_seconds": round(s["cpu"], 2), "loading_seconds": round(s["loading"], 2),
                   "pages_per_second_per_core": round(s["pages"] / s["cpu"], 2) if s["cpu"] else None}
             for dpi, s in speed.items()}
    return {"groups": groups, "speed": rates, "languages": ", ".join(f"{k} {v}" for k, v in sorted(used.items())),
            "target_ratio": TARGET,
            "seconds": round(time.perf_counter() - started, 1), **({"details": listed} if listed else {})}


def table(report: dict[str, Any], dpis: list[int]) -> str:
    head = f"{'language':<12}{'docs':>5}{'expected':>9}{'text':>6}"
    for dpi in dpis:
        head += f"{f'{dpi} dpi':>9}{'ratio':>7}"
    lines = [head]
    for group, c in report["groups"].items():
        row = f"{group:<12}{c['documents']:>5}{c['expected']:>9}{c['text']:>6}"
        for dpi in dpis:
            ratio = c[f"ratio_{dpi}"]
            shown = "—" if ratio is None else f"{100 * ratio:.0f}%"
            mark = "" if ratio is None or ratio >= TARGET else "*"
            row += f"{c[f'image_{dpi}']:>9}{shown + mark:>7}"
        lines.append(row)
    lines.append(f"(* under the {100 * TARGET:.0f}% target; fields right from images / right from the text layer)")
    for dpi, s in report["speed"].items():
        lines.append(f"OCR at {dpi} dpi: {s['pages']} pages in {s['cpu_seconds']} CPU s: "
                     f"{s['pages_per_second_per_core']} pages/s per core (of those CPU s, "
                     f"{s['loading_seconds']} loading the language sets a change of language needed)")
    lines.append(f"languages: told per document ({report['languages']}); {report['seconds']} s in all")
    for d in report.get("details", []):
        lines.append(f"{d['outcome']}: {d['document']} ({d['mode']}) {d['field']}: expected {d['expected']!r}, "
                     f"read {d['got']!r}")
    return "\n".join(lines)


class Command(BaseCommand):
    help = ("Render the corpora's text PDFs to images with pdftoppm, review them by OCR, and print the fields right "
            "as images against the text layer per language, and OCR pages per second per core.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("folders", nargs="*", type=Path)
        parser.add_argument("--dpi", nargs="+", type=int, default=[150, 300])
        parser.add_argument("--limit", type=int, default=None, help="at most N documents per language")
        parser.add_argument("--json", action="store_true", dest="as_json")
        parser.add_argument("--details", action="store_true", help="list each value missed or wrong")

    def handle(self, *args: Any, folders: list[Path], dpi: list[int], limit: int | None, as_json: bool,
               details: bool, **options: Any) -> None:
        folders = folders or [Path(f) for f in DEFAULT_FOLDERS]
        for folder in folders:
            if not (folder / "truth.json").is_file():
                raise CommandError(f"{folder} has no truth.json")
        ocr.engine()  # the models load once, outside the timings
        report = run(folders, dpis=dpi, limit=limit, details=details)
        self.stdout.write(json.dumps(report, indent=2, ensure_ascii=False) if as_json else table(report, dpi))
