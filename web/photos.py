"""Several photos of one paper document (the pages of an invoice taken with a phone's camera) as
one PDF, a page per photo, in the order they were taken.

The photos' compressed data goes into the PDF as it came: a JPEG as a DCT stream, a PNG's IDAT
data as a Flate stream with the PNG predictors. Only headers are read here (the size, the colour
channels, a JPEG's EXIF orientation): no pixel is decoded and no image library runs in the web
process. What a reader cannot draw from such data (a PNG with transparency, a palette or
16-bit channels, a CMYK JPEG) is refused with a sentence that says what to send instead.
"""

from __future__ import annotations

import re
import struct
import zlib
from dataclasses import dataclass

# At most this many photos make one document (a reader takes at most 20 pages).
MAX_PHOTOS = 20
# One photo's declared size: a phone's camera takes 12 to 50 million pixels.
MAX_PHOTO_PIXELS = 50_000_000
MAX_PHOTO_SIDE = 30_000
# The longer side of each page, in PDF points: an A4 sheet's height, whatever the photo's resolution.
PAGE_LONG_SIDE = 842.0

_PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
_JPEG_MAGIC = b"\xff\xd8\xff"
# A JPEG's frame headers (SOF0-SOF15 but DHT, JPG and DAC): height, width and channels.
_JPEG_SOF = {0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF}
_JPEG_BARE = {0x01, 0xD8, *range(0xD0, 0xD8)}
_JPEG_MARKER = re.compile(rb"\xff([^\x00\xff])")
# EXIF orientations a page rotation shows upright (the mirrored ones no camera writes).
_ROTATION = {1: 0, 3: 180, 6: 90, 8: 270}
_COLOURS = {1: b"/DeviceGray", 3: b"/DeviceRGB"}
_APP1, _ORIENTATION = 0xE1, 0x0112  # the EXIF segment, its Orientation tag
_DEPTH = 8  # bits per channel: the only depth a page takes as it is
_PNG_COLOURS = {0: 1, 2: 3}  # greyscale, RGB: the colour types a PDF draws without an alpha mask


class PhotoRefused(ValueError):
    """A photo that cannot be made a page, or too many of them: the message names the photo."""


@dataclass(frozen=True)
class _Page:
    width: int
    height: int
    channels: int
    data: bytes
    png: bool  # Flate with PNG predictors (else a JPEG's DCT stream)
    rotate: int


def photos_pdf(photos: list[tuple[str, bytes]]) -> bytes:
    """One PDF of ``photos`` (name, bytes), a page each; ``PhotoRefused`` names what cannot be."""
    if not photos:
        raise PhotoRefused("No photo was taken.")
    if len(photos) > MAX_PHOTOS:
        raise PhotoRefused(f"You took {len(photos)} photos; at most {MAX_PHOTOS} pages make one document. "
                           "Send the rest as another document.")
    return _pdf([_page(name, content) for name, content in photos])


def _page(name: str, content: bytes) -> _Page:
    try:
        if content.startswith(_JPEG_MAGIC):
            page = _jpeg(name, content)
        elif content.startswith(_PNG_MAGIC):
            page = _png(name, content)
        else:
            raise PhotoRefused(f"{name} is not a JPEG or PNG photo; take the photo again, or send the file "
                               "with “Choose files”.")
    except (struct.error, IndexError):
        raise PhotoRefused(f"{name} is damaged and cannot be read; take the photo again.") from None
    return page


def _check_size(name: str, width: int, height: int) -> None:
    """A size a page can take, declared in the photo's header (before its data is looked at)."""
    if width <= 0 or height <= 0:
        raise PhotoRefused(f"{name} is damaged and cannot be read; take the photo again.")
    if width > MAX_PHOTO_SIDE or height > MAX_PHOTO_SIDE or width * height > MAX_PHOTO_PIXELS:
        raise PhotoRefused(f"{name} declares {width:,} x {height:,} pixels; a photo of at most "
                           f"{MAX_PHOTO_PIXELS // 1_000_000} million pixels can be a page.")


def _jpeg(name: str, content: bytes) -> _Page:
    """The first frame header's size and channels, and the orientation its EXIF gives."""
    at, rotate = 2, 0
    while (found := _JPEG_MARKER.search(content, at)) is not None:
        at, marker = found.start(), found.group(1)[0]
        if marker in _JPEG_BARE:
            at += 2
            continue
        if marker in (0xD9, 0xDA):  # the end, or the scan: no frame header came before it
            break
        (length,) = struct.unpack_from(">H", content, at + 2)
        if marker == _APP1 and content.startswith(b"Exif\x00\x00", at + 4):
            rotate = _exif_rotation(content[at + 10: at + 2 + length])
        elif marker in _JPEG_SOF:
            precision, height, width, channels = struct.unpack_from(">BHHB", content, at + 4)
            _check_size(name, width, height)
            if precision != _DEPTH or channels not in _COLOURS:
                raise PhotoRefused(f"{name} is a JPEG a page cannot show ({channels} colour channels, "
                                   f"{precision}-bit); send it on its own with “Choose files”.")
            return _Page(width, height, channels, content, png=False, rotate=rotate)
        at += 2 + length
    raise PhotoRefused(f"{name} is damaged and cannot be read; take the photo again.")


def _exif_rotation(tiff: bytes) -> int:
    """The page rotation for EXIF's Orientation tag (0x0112) in IFD0; 0 when absent or unreadable."""
    if tiff[:4] not in (b"II*\x00", b"MM\x00*"):
        return 0
    order = "<" if tiff[:2] == b"II" else ">"
    try:
        (offset,) = struct.unpack_from(order + "I", tiff, 4)
        (count,) = struct.unpack_from(order + "H", tiff, offset)
        for index in range(min(count, 256)):
            tag, _kind, _count, value = struct.unpack_from(order + "HHIH", tiff, offset + 2 + 12 * index)
            if tag == _ORIENTATION:
                return _ROTATION.get(value, 0)
    except struct.error:
        return 0
    return 0


def _png(name: str, content: bytes) -> _Page:
    """IHDR's size, and the IDAT chunks' data joined: a PDF Flate stream with PNG predictors reads it."""
    width, height, depth, colour, _compression, _filter, interlace = struct.unpack_from(">IIBBBBB", content, 16)
    if content[12:16] != b"IHDR":
        raise PhotoRefused(f"{name} is damaged and cannot be read; take the photo again.")
    _check_size(name, width, height)
    if depth != _DEPTH or colour not in _PNG_COLOURS or interlace:
        raise PhotoRefused(f"{name} is a PNG with transparency, a palette or 16-bit colour, which a page cannot "
                           "show as it is; send it on its own with “Choose files”.")
    data, at = [], 8
    while at + 8 <= len(content):
        length, kind = struct.unpack_from(">I4s", content, at)
        if kind == b"IDAT":
            data.append(content[at + 8: at + 8 + length])
        elif kind == b"IEND":
            break
        at += 12 + length
    if not data:
        raise PhotoRefused(f"{name} is damaged and cannot be read; take the photo again.")
    return _Page(width, height, _PNG_COLOURS[colour], b"".join(data), png=True, rotate=0)


def _pdf(pages: list[_Page]) -> bytes:
    """A PDF 1.4 file: catalogue, page tree, then per page its page, image and content stream."""
    objects: list[bytes] = [b"", b""]  # 1: catalogue, 2: page tree (filled in below)
    kids = []
    for page in pages:
        scale = PAGE_LONG_SIDE / max(page.width, page.height)
        width, height = round(page.width * scale, 2), round(page.height * scale, 2)
        first = len(objects) + 1  # the page, then its image, then its content
        kids.append(f"{first} 0 R".encode())
        objects.append(b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %s %s] /Rotate %d "
                       b"/Resources << /XObject << /Im0 %d 0 R >> >> /Contents %d 0 R >>"
                       % (_number(width), _number(height), page.rotate, first + 1, first + 2))
        if page.png:
            decode = (b"/Filter /FlateDecode /DecodeParms << /Predictor 15 /Colors %d /BitsPerComponent 8 "
                      b"/Columns %d >>" % (page.channels, page.width))
        else:
            decode = b"/Filter /DCTDecode"
        objects.append(_stream(b"/Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace %s "
                               b"/BitsPerComponent 8 %s" % (page.width, page.height, _COLOURS[page.channels],
                                                            decode), page.data))
        drawing = b"q %s 0 0 %s 0 0 cm /Im0 Do Q" % (_number(width), _number(height))
        objects.append(_stream(b"/Filter /FlateDecode", zlib.compress(drawing)))
    objects[0] = b"<< /Type /Catalog /Pages 2 0 R >>"
    objects[1] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (b" ".join(kids), len(pages))
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def _stream(dictionary: bytes, data: bytes) -> bytes:
    return b"<< %s /Length %d >>\nstream\n" % (dictionary, len(data)) + data + b"\nendstream"


def _number(value: float) -> bytes:
    return (f"{value:.2f}".rstrip("0").rstrip(".")).encode()


def document_name(first: str, pages: int) -> str:
    """The combined document's name, from its first photo's: "IMG_2041 (3 pages).pdf"."""
    stem = first.rsplit(".", 1)[0].strip() or "Photo"
    return f"{stem[:200]} ({pages} pages).pdf"
