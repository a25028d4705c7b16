"""A photographed sheet seen at a slant, squared: its four corners pulled back to a rectangle.

A receipt or a page photographed from above but not straight down is a trapezium in the picture:
its lines converge, the one skew angle ``scans.skew`` finds cannot level them all, and Tesseract
reads the far end's print narrower than the near end's. Squared, every line is level again.

Only a sheet that is plainly one is squared: the brightest region around the picture's middle
(paper against a darker table, by Otsu's threshold on a small copy), lying wholly inside the
picture, filling the four-cornered shape of its extreme points, and that shape clearly not a
rectangle. A sheet cut by the picture's edge, a crumpled one, a scan (paper to its edges) and a
sheet already seen square are read as they are. Even a plain slanted sheet is only a candidate:
``agent.reading.ocr`` reads it both ways and keeps the squared one when OCR reads more of it
(squaring every such photo moved the crop's edge into the print and cost real receipts their
shop's name and total: docs/benchmarks.md, "Squaring a slanted photo").
"""

from __future__ import annotations

from typing import Any

# The sheet is found on a copy about this many pixels on its longer side (a flood fill in Python).
THUMBNAIL = 200
# A picture whose outermost pixels are more than this share paper shows no table round a sheet (a scan, a
# rendered page, a sheet cut by the edges): read as it is without looking further.
EDGE_PAPER = 0.5
# A sheet covers this share of the picture, at least and at most (the rest is the table).
LEAST_SHEET = 0.2
MOST_SHEET = 0.97
# Its region fills at least this share of the shape its four extreme corners make: a sheet, not a blob.
LEAST_FILL = 0.9
# Squared when its opposite sides differ by more than this: one shorter than KEYSTONE times the other.
KEYSTONE = 0.94
# The rectangle is cut this share wider than the corners found, all round: the sheet's edge is
# where the thumbnail's threshold put it, and print may run close to it.
MARGIN = 0.015

Point = tuple[float, float]


def squared(grey: Any) -> Any:
    """The 8-bit grey picture with its sheet squared, or the picture itself when it shows none at a slant."""
    corners = _slanted_sheet(grey)
    if corners is None:
        return grey
    from PIL import Image

    top_left, top_right, bottom_right, bottom_left = _widened(corners, MARGIN)
    width = round(max(_distance(top_left, top_right), _distance(bottom_left, bottom_right)))
    height = round(max(_distance(top_left, bottom_left), _distance(top_right, bottom_right)))
    if width < 1 or height < 1:
        return grey
    target = [(0.0, 0.0), (float(width), 0.0), (float(width), float(height)), (0.0, float(height))]
    coefficients = _perspective(target, [top_left, top_right, bottom_right, bottom_left])
    if coefficients is None:
        return grey
    return grey.transform((width, height), Image.Transform.PERSPECTIVE, coefficients,
                          Image.Resampling.BICUBIC, fillcolor=255)


def _slanted_sheet(grey: Any) -> list[Point] | None:
    """The sheet's corners in ``grey``'s pixels (top left, top right, bottom right, bottom left) when
    it is one at a slant (see the module's docstring), else None."""
    from PIL import ImageDraw

    small = grey.reduce(max(1, -(-max(grey.size) // THUMBNAIL)))
    width, height = small.size
    if width < 16 or height < 16:
        return None
    threshold = _otsu(small.histogram())
    mask = small.point(lambda v: 255 if v > threshold else 0)
    frame = [mask.crop(box) for box in ((0, 0, width, 1), (0, height - 1, width, height),
                                         (0, 1, 1, height - 1), (width - 1, 1, width, height - 1))]
    if sum(edge.histogram()[255] for edge in frame) > EDGE_PAPER * 2 * (width + height - 2):
        return None
    middle = [(width // 2, height // 2), (width // 2, height // 3), (width // 2, 2 * height // 3)]
    seed = next((point for point in middle if mask.getpixel(point) == 255), None)
    if seed is None:
        return None
    ImageDraw.floodfill(mask, seed, 128)  # the bright region around the middle
    region = mask.point(lambda v: 255 if v == 128 else 0)
    area = region.histogram()[255]
    box = region.getbbox()
    if box is None or not LEAST_SHEET <= area / (width * height) <= MOST_SHEET:
        return None
    if box[0] <= 1 or box[1] <= 1 or box[2] >= width - 1 or box[3] >= height - 1:
        return None  # cut by the picture's edge: its corners there are the picture's, not the sheet's
    ends = []
    for y in range(box[1], box[3]):
        row = region.crop((0, y, width, y + 1)).getbbox()
        if row is not None:
            ends += [(float(row[0]), float(y)), (float(row[2] - 1), float(y))]
    corners = [min(ends, key=lambda p: p[0] + p[1]), max(ends, key=lambda p: p[0] - p[1]),
               max(ends, key=lambda p: p[0] + p[1]), min(ends, key=lambda p: p[0] - p[1])]
    shape = _area(corners)
    if not shape or area / shape < LEAST_FILL:
        return None
    top, bottom = _distance(corners[0], corners[1]), _distance(corners[3], corners[2])
    left, right = _distance(corners[0], corners[3]), _distance(corners[1], corners[2])
    if min(top, bottom) >= KEYSTONE * max(top, bottom) and min(left, right) >= KEYSTONE * max(left, right):
        return None  # square enough: the skew estimate levels it
    scale = grey.width / width
    return [(x * scale, y * scale) for x, y in corners]


def _otsu(histogram: list[int]) -> int:
    """The grey level that best parts the histogram in two (Otsu's method)."""
    total = sum(histogram)
    weighted = sum(level * count for level, count in enumerate(histogram))
    below = below_weighted = 0
    best, chosen = -1.0, 127
    for level, count in enumerate(histogram):
        below += count
        below_weighted += level * count
        if not below or below == total:
            continue
        dark = below_weighted / below
        light = (weighted - below_weighted) / (total - below)
        spread = below * (total - below) * (dark - light) ** 2
        if spread > best:
            best, chosen = spread, level
    return chosen


def _widened(corners: list[Point], share: float) -> list[Point]:
    """The corners moved away from their centre by ``share`` of their distance to it."""
    cx = sum(x for x, _ in corners) / 4
    cy = sum(y for _, y in corners) / 4
    return [(x + (x - cx) * share * 2, y + (y - cy) * share * 2) for x, y in corners]


def _distance(a: Point, b: Point) -> float:
    return float(((a[0] - b[0]) ** 2 + (a[1] - b[1]) ** 2) ** 0.5)


def _area(points: list[Point]) -> float:
    return abs(sum(points[i][0] * points[i - 3][1] - points[i - 3][0] * points[i][1] for i in range(4))) / 2


def _perspective(target: list[Point], source: list[Point]) -> tuple[float, ...] | None:
    """Pillow's eight PERSPECTIVE coefficients taking each ``target`` point to its ``source`` point."""
    rows: list[list[float]] = []
    for (x, y), (u, v) in zip(target, source, strict=True):
        rows.append([x, y, 1, 0, 0, 0, -u * x, -u * y, u])
        rows.append([0, 0, 0, x, y, 1, -v * x, -v * y, v])
    for column in range(8):  # Gaussian elimination with partial pivoting
        pivot = max(range(column, 8), key=lambda r: abs(rows[r][column]))
        if abs(rows[pivot][column]) < 1e-12:
            return None
        rows[column], rows[pivot] = rows[pivot], rows[column]
        for r in range(8):
            if r != column:
                factor = rows[r][column] / rows[column][column]
                rows[r] = [a - factor * b for a, b in zip(rows[r], rows[column], strict=True)]
    return tuple(rows[r][8] / rows[r][r] for r in range(8))
