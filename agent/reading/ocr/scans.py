"""A scan or photo as OCR reads it: decoded, upright, grey, scaled to about DPI, straightened."""

from __future__ import annotations

import io
import itertools
import logging
import struct
from collections.abc import Collection, Generator
from typing import Any

from documents.errors import DamagedDocument, DocumentUnpacksTooLarge

from .. import documents
from . import sheet

log = logging.getLogger("agent.ocr")

DPI = 300  # what Tesseract reads invoices best at: 10 pt text is ~40 px tall
# A page rendered or scaled to more pixels than this is read at a lower resolution instead
# (an A4 page at 300 dpi is 8.7 million pixels, a Letter page 8.4; A3 is read at 225 dpi). A
# long receipt's photo taken for an A4 page's width would be scaled to 22 million and take
# Tesseract 9 s of CPU; Tesseract's time grows with the pixels, and a page must stay within
# its time limit on a shared core.
MAX_PAGE_PIXELS = 10_000_000

# A photo without a resolution of its own is scaled as an A4 page's width seen at DPI.
PHOTO_WIDTH_INCHES = 8.27
MAX_UPSCALE = 4.0  # a 75 dpi scan is read at 300; a smaller picture is read at four times its size
# Skew estimated from a thumbnail this wide, over +-MAX_SKEW degrees.
SKEW_THUMBNAIL = 800
MAX_SKEW = 8.0
# A page's paper estimated on a copy this many times smaller, over windows of this many of its
# pixels; paper whose brightness varies by more than UNEVEN_PAPER (a shadow), or print less
# than FAINT_PRINT darker than the paper (a faded receipt), is flattened first.
FLATTEN_REDUCE = 8
FLATTEN_WINDOW = 5
UNEVEN_PAPER = 40
FAINT_PRINT = 100
PAPER_GRAIN = 12


def dpi_for(width_in: float, height_in: float) -> float:
    """DPI, or less for a page that would be more than MAX_PAGE_PIXELS at DPI."""
    area = max(width_in * height_in, 1e-6)
    return min(float(DPI), float((MAX_PAGE_PIXELS / area) ** 0.5))


def pages_of(content: bytes, square: Collection[int] = ()) -> Generator[tuple[Any, float], None, None]:
    """Each frame of the image as OCR reads it (8-bit grey, upright, straightened, about DPI) and
    its resolution: also what a preview shows, so the evidence boxes (points at 72/dpi) fit it.
    The photos among the pages numbered in ``square`` have their slanted sheet squared (``sheet``)."""
    frames = _frames(content, square)
    try:
        for image, dpi, _squared in frames:
            yield image, dpi
    finally:
        frames.close()  # the image file is closed with its generator


def slanted_pages(content: bytes) -> Generator[tuple[int, Any, float], None, None]:
    """The photos among the frames that show a sheet at a slant: each one's number, squared, and its resolution."""
    frames = _frames(content, range(1, len(documents.check_image(content)) + 1), squared_only=True)
    try:
        for number, (image, dpi, squared) in enumerate(frames, start=1):
            if squared:
                yield number, image, dpi
    finally:
        frames.close()


def _frames(content: bytes, square: Collection[int], *,
            squared_only: bool = False) -> Generator[tuple[Any, float, bool], None, None]:
    """Each frame prepared (``_prepared``); with ``squared_only``, a frame with no sheet to square is
    yielded unprepared (None): it is not scaled, flattened and straightened for nothing."""
    from PIL import Image, ImageOps, UnidentifiedImageError

    declared = documents.check_image(content)  # the declared sizes again, before any pixel is decoded
    try:
        with Image.open(io.BytesIO(content)) as image:
            if image.format not in ("PNG", "JPEG", "TIFF", "MPO"):
                raise DamagedDocument(documents.DAMAGED_IMAGE, field="document")
            for index in range(len(declared) if image.format == "TIFF" else 1):
                image.seek(index)
                refusal = documents.image_refusal(*image.size)  # Pillow's own reading of the size
                if refusal is not None:
                    raise refusal
                dpi = _declared_dpi(image.info.get("dpi"))
                original = image.size
                if image.format in ("JPEG", "MPO"):  # decoded in grey, already reduced for a large photo
                    wanted = DPI / (dpi or image.width / PHOTO_WIDTH_INCHES)
                    image.draft("L", (max(1, round(image.width * wanted)), max(1, round(image.height * wanted))))
                frame = ImageOps.exif_transpose(image) if index == 0 else image.copy()
                yield _prepared(frame, dpi, original if image.format in ("JPEG", "MPO") else None,
                                square=index + 1 in square, squared_only=squared_only)
    except Image.DecompressionBombError:  # a size the headers' check did not see: the document's, in words
        raise DocumentUnpacksTooLarge(documents.TOO_MANY_PIXELS, field="document") from None
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError, EOFError, struct.error) as exc:
        log.warning("image unreadable: %s", type(exc).__name__)
        raise DamagedDocument("the image is damaged and cannot be read; submit a new copy", field="document") \
            from None


def _prepared(image: Any, dpi: float | None, drafted: tuple[int, int] | None, *,
              square: bool = False, squared_only: bool = False) -> tuple[Any, float, bool]:
    """Grey, scaled to about DPI (a photo without a resolution: as wide as an A4 page), straightened;
    with ``square``, a photo's slanted sheet squared at the photo's scale. True when it was (with
    ``squared_only``, a frame that was not is returned grey and nothing more, its image None)."""
    from PIL import Image

    grey = _grey(image)
    squared = False
    if dpi is None:  # a photo: its width as an A4 page's
        dpi = grey.width / PHOTO_WIDTH_INCHES
        if square:
            unsquared, grey = grey, sheet.squared(grey)
            squared = grey is not unsquared
    if squared_only and not squared:
        return None, dpi, False
    elif drafted is not None:  # a JPEG decoded at a fraction of its declared size: its resolution fell with it
        dpi = dpi * max(grey.width, grey.height) / max(*drafted, 1)
    # Never blown up more than MAX_UPSCALE: a sliver of a picture (1 x 44 pixels, say) taken
    # for an A4 page's width would otherwise become tens of millions of pixels to read.
    factor = min(DPI / dpi, MAX_UPSCALE)
    if grey.width * grey.height * factor * factor > MAX_PAGE_PIXELS:
        factor = (MAX_PAGE_PIXELS / (grey.width * grey.height)) ** 0.5
    if abs(factor - 1) > 0.1:
        grey = grey.resize((max(1, round(grey.width * factor)), max(1, round(grey.height * factor))),
                           Image.Resampling.LANCZOS)
        dpi *= factor
    grey = flattened(grey)
    angle = skew(grey)
    if abs(angle) >= 0.3:
        grey = grey.rotate(angle, resample=Image.Resampling.BICUBIC, expand=True, fillcolor=255)
    return grey, dpi, squared


def flattened(grey: Any) -> Any:
    """The page on even paper: a photo's shadow or a faded receipt's grey paper, whose print
    Tesseract's one threshold for the whole page loses, brought to white paper and dark print.

    The paper's brightness is estimated on a small copy (the print taken out by the lightest
    pixel around each one, then smoothed), and each pixel kept as how much darker it is than
    the paper under it. A page whose paper is already even and whose print is dark is left as
    it is (a scan, a rendered PDF page): only the uneven or faint ones are changed."""
    from PIL import Image, ImageChops, ImageFilter, ImageOps

    small = grey.reduce(FLATTEN_REDUCE) if min(grey.size) >= FLATTEN_REDUCE * 8 else grey
    paper = small.filter(ImageFilter.MaxFilter(FLATTEN_WINDOW)).filter(ImageFilter.GaussianBlur(FLATTEN_WINDOW))
    low, high = _spread(paper, 0.02)
    ink, _ = _spread(grey, 0.002)  # the darkest print: a page is mostly paper
    if high - low < UNEVEN_PAPER and high - ink >= FAINT_PRINT:
        return grey
    paper = paper.resize(grey.size, Image.Resampling.BILINEAR)
    # 0 on the paper, the print's depth elsewhere; a crease's or the grain's few levels stay paper.
    darker = ImageChops.subtract(paper, grey, offset=-PAPER_GRAIN)
    # Faint print stretched to black: the grain is already paper, so only print is darkened.
    return ImageOps.autocontrast(ImageOps.invert(darker), cutoff=(0.2, 0))


def _spread(image: Any, share: float) -> tuple[int, int]:
    """The brightness under which ``share`` of an 8-bit image's pixels are, and over which as many are."""
    histogram = image.histogram()
    total = sum(histogram)
    seen, low, high = 0, 0, 255
    for value, count in enumerate(histogram):
        if seen < share * total <= seen + count:
            low = value
        if seen < (1 - share) * total <= seen + count:
            high = value
        seen += count
    return low, high


def _grey(image: Any) -> Any:
    """8-bit grey: transparency over white (a screenshot's clear background is no black page),
    16-bit and float scans brought down to 8 bits rather than clipped to white."""
    from PIL import Image

    if image.mode in ("I;16", "I;16B", "I;16L", "I", "F"):
        high = 65535 if image.mode.startswith("I;16") else max(image.getextrema()[1] or 1, 1)
        return image.convert("F").point(lambda v: v * 255.0 / high).convert("L")
    if image.mode in ("RGBA", "LA", "PA") or (image.mode == "P" and "transparency" in image.info):
        # In 8-bit planes, never a second full-colour copy: a 50-million-pixel RGBA is 200 MB already.
        if image.mode in ("P", "PA"):
            image = image.convert("RGBA")
        alpha = image.getchannel("A")
        grey = image.convert("L")
        return Image.composite(grey, Image.new("L", grey.size, 255), alpha)
    return image.convert("L")


def _declared_dpi(value: Any) -> float | None:
    """A scan's own resolution (PNG pHYs, JPEG JFIF, TIFF tags), when it says one that is plausible."""
    try:
        dpi = float(value[0]) if isinstance(value, tuple) else float(value)
    except (TypeError, ValueError, IndexError):
        return None
    return dpi if 100 <= dpi <= 1200 else None


def skew(grey: Any) -> float:
    """The angle (degrees, counter-clockwise) that levels the text lines: the one whose row
    profile is sharpest (lines of text and the gaps between them), tried on a small copy."""
    from PIL import Image, ImageOps

    small = grey.copy()
    small.thumbnail((SKEW_THUMBNAIL, SKEW_THUMBNAIL))
    ink = ImageOps.invert(small.point(lambda v: 0 if v < 160 else 255))

    def sharpness(angle: float) -> float:
        turned = ink.rotate(angle, resample=Image.Resampling.NEAREST, expand=False)
        rows = turned.resize((1, turned.height), Image.Resampling.BOX).tobytes()
        return float(sum((a - b) ** 2 for a, b in itertools.pairwise(rows)))

    # The smallest turn first: where angles score alike (a blank page, no line to level) the
    # page stays as it is, not turned by the first angle tried and a third larger to read.
    coarse = sorted((step / 2 for step in range(int(-MAX_SKEW * 2), int(MAX_SKEW * 2) + 1)), key=abs)
    best = max(coarse, key=sharpness)
    return max((best + step / 10 for step in sorted(range(-4, 5), key=abs)), key=sharpness)
