"""Images of a document's pages, for reading it on screen beside its review.

Made in the worker's isolated child during the review's extract step (after the document
was read, so it passed every structural check), kept beside the stored document once
(``documents.handling.keep_pages``) and served to the tenant's own members. A PDF's
pages are drawn by pdfium at a resolution for reading on a screen; a scan or a photo
(PNG, JPEG, TIFF) is its own page image as OCR read it (``agent.reading.ocr.pages_of``: upright,
straightened: the evidence boxes were measured on it), scaled down. Both are bounded: at
most ``MAX_PAGES`` pages, ``MAX_SIDE`` pixels a side and ``MAX_PIXELS`` a page, and
``MAX_SECONDS`` in all (pages past it are not drawn). DOCX, plain text and e-invoice XML have no pages to draw.

PNG with a palette of ``COLORS`` colours: an invoice's page is mostly flat colour and text,
which such a palette keeps sharp at 30 to 60 KB a page.

Making the images never fails the review: a page pdfium cannot draw, or a limit reached,
leaves the document without a preview (logged without its content) and the review goes on.
"""

from __future__ import annotations

import io
import logging
import math
import time
from collections.abc import Collection
from typing import Any

from documents import handling
from jobs.context import JobContext

from . import documents
from .ocr import pages_of

log = logging.getLogger("agent.pages")

DPI = 120  # a screen's reading size: an A4 page is 993 x 1404 pixels
MAX_PAGES = documents.MAX_PAGES
MAX_SIDE = 2_000  # pixels, either side
MAX_PIXELS = 2_500_000  # a page's pixels (an A4 page at 120 dpi has 1.4 million)
MAX_SECONDS = 4.0  # all pages, so the extract step stays within its budget
COLORS = 64
IMAGE_TYPES = ("image/png", "image/jpeg", "image/tiff")

Drawn = tuple[bytes, int, int]  # PNG bytes, width, height


def keep(ctx: JobContext, content: bytes, media_type: str, ocr: dict[str, Any] | None = None) -> None:
    """Draw this job's document's pages and keep them beside it, unless they are kept already;
    ``ocr``: the reading's OCR section (``agent.reading.ocr.Reading``), whose turned and squared
    pages are drawn as they were read."""
    if not drawable(media_type) or handling.pages_kept(ctx):
        return
    try:
        images = render(content, media_type, ocr=ocr)
    except MemoryError:
        images = []
        log.warning("job %s: page images skipped: over the memory limit", ctx.job_id)
    except Exception as exc:  # noqa: BLE001  a page pdfium or Pillow cannot draw: no preview, the review goes on
        images = []
        log.warning("job %s: page images skipped: %s", ctx.job_id, type(exc).__name__)
    if images:
        handling.keep_pages(ctx, images)


def drawable(media_type: str) -> bool:
    return media_type == documents.PDF or media_type in IMAGE_TYPES


def render(content: bytes, media_type: str, *, started: float | None = None,
           ocr: dict[str, Any] | None = None) -> list[Drawn]:
    """The document's page images, each page OCR read on its side turned and each photo it read
    squared drawn so (the evidence boxes were measured on the page as read); [] for a type without
    pages. ``ocr``: the reading's OCR section."""
    started = time.monotonic() if started is None else started
    if media_type == documents.PDF:
        return _pdf_pages(content, started, turns_of(ocr))
    if media_type in IMAGE_TYPES:
        return _image_pages(content, started, turns_of(ocr), (ocr or {}).get("squared") or ())
    return []


def turns_of(ocr: dict[str, Any] | None) -> dict[int, int]:
    """The quarter turns of a reading's ``ocr`` section (``agent.ocr.Reading``): page: degrees."""
    ocr = ocr or {}
    return dict(zip(ocr.get("turned") or [], ocr.get("turned_degrees") or [], strict=False))


def _turned(image: Any, degrees: int) -> Any:
    return image.rotate(degrees, expand=True, fillcolor="white") if degrees else image


def _pdf_pages(content: bytes, started: float, turns: dict[int, int]) -> list[Drawn]:
    import pypdfium2 as pdfium

    images: list[Drawn] = []
    document = pdfium.PdfDocument(content)
    try:
        for index in range(min(len(document), MAX_PAGES)):
            if time.monotonic() - started > MAX_SECONDS:
                break
            page = document[index]
            try:
                width, height = page.get_size()
                bitmap = page.render(scale=_scale(width, height, DPI / 72), may_draw_forms=True)
                images.append(_png(_turned(bitmap.to_pil(), turns.get(index + 1, 0))))
            finally:
                page.close()
    finally:
        document.close()
    return images


def _image_pages(content: bytes, started: float, turns: dict[int, int], squared: Collection[int]) -> list[Drawn]:
    """A scan or photo's pages as OCR read them (upright, straightened, squared and turned: the
    evidence boxes were measured on those)."""
    frames = pages_of(content, square=squared)
    images: list[Drawn] = []
    try:
        for frame, _dpi in frames:
            if len(images) >= MAX_PAGES or time.monotonic() - started > MAX_SECONDS:
                break
            images.append(_png(_within_bounds(_turned(frame, turns.get(len(images) + 1, 0)))))
    finally:
        frames.close()
    return images


def _within_bounds(page: Any) -> Any:
    page.thumbnail((MAX_SIDE, MAX_SIDE))
    w, h = page.size
    if w * h > MAX_PIXELS:
        ratio = math.sqrt(MAX_PIXELS / (w * h))
        page = page.resize((max(1, int(w * ratio)), max(1, int(h * ratio))))
    return page


def _scale(width: float, height: float, wanted: float) -> float:
    """``wanted``, or less when the page would be over ``MAX_SIDE`` or ``MAX_PIXELS``."""
    if width <= 0 or height <= 0:
        return wanted
    # A little under each bound: the drawing rounds each side up to a whole pixel.
    return min(wanted, (MAX_SIDE - 1) / max(width, height), math.sqrt(0.98 * MAX_PIXELS / (width * height)))


def _png(image: Any) -> Drawn:
    from PIL import Image

    out = io.BytesIO()
    image.convert("RGB").quantize(COLORS, method=Image.Quantize.FASTOCTREE, dither=Image.Dither.NONE).save(out, "PNG")
    return out.getvalue(), image.width, image.height
