"""Scans and photos checked from their headers: every frame's declared size, a TIFF's pages, and
the colour profiles and EXIF a decoder reads beside the pixels."""

from __future__ import annotations

import re
import struct

from documents.errors import DamagedDocument, DocumentTooComplex, DocumentUnpacksTooLarge
from jobs.errors import AcceptanceError, PayloadTooLarge

from .rules import (
    JPEG,
    MAX_EXIF_BYTES,
    MAX_ICC_BYTES,
    MAX_IMAGE_PIXELS,
    MAX_IMAGE_SEGMENTS,
    MAX_IMAGE_SIDE,
    MAX_PAGES,
    MAX_TIFF_TAGS,
    PNG,
    TIFF,
    check_pages,
    megabytes,
    unrecognised,
)

_PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
_JPEG_MAGIC = b"\xff\xd8\xff"
_TIFF_MAGIC = (b"II*\x00", b"MM\x00*")
# JPEG frame headers as Pillow reads them (SOF0-SOF15 but DHT, JPG and DAC; and DHP): a frame's
# declared height and width.
_JPEG_SOF = {0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF, 0xDE}
# Markers without a length: SOI, EOI, JPG, the reserved JPGn (RSTn and stuffed 0xFF00 are skipped by _JPEG_MARKER).
_JPEG_BARE = {0xD8, 0xD9, 0xC8, *range(0xF0, 0xFE)}
# The next marker, past fill bytes, stuffed bytes (0xFF00) and restart markers: what a decoder
# stops at in a header and in a scan's entropy-coded data alike.
_JPEG_MARKER = re.compile(rb"\xff([^\x00\xff\xd0-\xd7])")
_ICC_JPEG = b"ICC_PROFILE\x00"
_TIFF_WIDTH, _TIFF_LENGTH, _TIFF_EXIF_IFD, _TIFF_ICC = 256, 257, 34665, 34675
_TIFF_SHORT, _TIFF_LONG = 3, 4
DAMAGED_IMAGE = "the image is damaged and cannot be read; submit a new copy"
# The decoder's own refusal of a size the headers did not show (Pillow's DecompressionBombError).
TOO_MANY_PIXELS = (f"the image has too many pixels to read; at most {MAX_IMAGE_PIXELS // 1_000_000} million "
                   f"pixels and {MAX_IMAGE_SIDE:,} on a side are accepted")


def image_type(content: bytes) -> str | None:
    if content.startswith(_PNG_MAGIC):
        return PNG
    if content.startswith(_JPEG_MAGIC):
        return JPEG
    if content[:4] in _TIFF_MAGIC:
        return TIFF
    return None


def check_image(content: bytes) -> list[tuple[int, int]]:
    """Each page's declared width and height, once every frame is within the limits.

    Reads the headers only, by hand, every one a decoder reads (a JPEG's every frame header,
    also a second one before the scan, which Pillow takes over the first, and those of the
    pictures that follow the first in a multi-picture file; a PNG's IHDR and each animation
    frame; each TIFF directory, at most MAX_PAGES + 1 of them), and the sizes of the ICC
    profiles and EXIF: no pixel is decoded and no image library runs in the web process. A PNG
    or JPEG is one page (its other frames are checked, not read); a TIFF's pages are its
    directories.
    """
    media_type = image_type(content)
    if media_type == PNG:
        size = _png_size(content)
        sizes, frames = [size], _png_frames(content, size)
    elif media_type == JPEG:
        kept, frames = _jpeg_frames(content)
        sizes = [kept]
    elif media_type == TIFF:
        sizes = frames = _tiff_sizes(content)
    else:
        raise unrecognised()
    check_pages(len(sizes))
    for width, height in [*sizes, *frames]:
        refusal = image_refusal(width, height)
        if refusal is not None:
            raise refusal
    return sizes


def image_refusal(width: int, height: int) -> AcceptanceError | None:
    """The refusal for an image that declares a size over the limits, or None."""
    if width <= 0 or height <= 0:
        return DamagedDocument(DAMAGED_IMAGE, field="document")
    if width > MAX_IMAGE_SIDE or height > MAX_IMAGE_SIDE or width * height > MAX_IMAGE_PIXELS:
        return DocumentUnpacksTooLarge(
            f"the image declares {width:,} x {height:,} pixels ({width * height / 1e6:,.0f} million); at most "
            f"{MAX_IMAGE_PIXELS // 1_000_000} million pixels and {MAX_IMAGE_SIDE:,} on a side are accepted",
            field="document")
    return None


def _png_size(content: bytes) -> tuple[int, int]:
    if len(content) < 24 or content[12:16] != b"IHDR":
        raise DamagedDocument(DAMAGED_IMAGE, field="document")
    width, height = struct.unpack_from(">II", content, 16)
    return width, height


def _png_frames(content: bytes, canvas: tuple[int, int]) -> list[tuple[int, int]]:
    """An animated PNG's frames (fcTL), each inside the picture; the ICC profile and EXIF sizes.

    Walks the chunks to IEND, or to a chunk cut short (a decoder reads no header past it).
    """
    frames: list[tuple[int, int]] = []
    at, chunks = 8, 0
    while at + 8 <= len(content):
        length, kind = struct.unpack_from(">I4s", content, at)
        body = at + 8
        if kind == b"IEND" or body + length > len(content):
            break
        chunks += 1
        if chunks > MAX_IMAGE_SEGMENTS:
            raise _too_many_headers()
        if kind == b"fcTL":
            if length < 26:
                raise DamagedDocument(DAMAGED_IMAGE, field="document")
            width, height, x, y = struct.unpack_from(">IIII", content, body + 4)
            if width == 0 or height == 0 or x + width > canvas[0] or y + height > canvas[1]:
                raise DamagedDocument(DAMAGED_IMAGE, field="document")  # Pillow refuses it too, later
            frames.append((width, height))
        elif kind == b"iCCP":
            _check_icc(length)
        elif kind == b"eXIf":
            _check_exif(length)
        at = body + length + 4
    return frames


def _jpeg_frames(content: bytes) -> tuple[tuple[int, int], list[tuple[int, int]]]:
    """The size the decoder keeps (the last frame header before the first scan, as Pillow reads
    it), and every frame header's: those before the scan, any after it, and those of the pictures
    that follow the first one's end (a multi-picture JPEG). Segments' contents are skipped whole
    (an EXIF thumbnail is no frame of the picture); junk between segments is skipped as Pillow does.
    """
    kept: tuple[int, int] | None = None
    frames: list[tuple[int, int]] = []
    at, scanned, segments, icc = 2, False, 0, 0
    while (found := _JPEG_MARKER.search(content, at)) is not None:
        at, marker = found.start(), found.group(1)[0]
        segments += 1
        if segments > MAX_IMAGE_SEGMENTS:
            raise _too_many_headers()
        if marker in _JPEG_BARE:
            at += 2
            if marker == 0xD9 and scanned and not content.startswith(b"\xff\xd8", at):
                break  # the picture's end, and no other picture after it
            continue
        if marker < 0xC0:  # no marker a decoder knows: Pillow stops here ("no marker found")
            if not scanned:
                break
            at += 2
            continue
        if at + 4 > len(content):
            break
        (length,) = struct.unpack_from(">H", content, at + 2)
        if length < 2:
            break
        if marker in _JPEG_SOF:
            if at + 9 > len(content):
                break
            height, width = struct.unpack_from(">HH", content, at + 5)
            frames.append((width, height))
            if not scanned:
                kept = (width, height)
        elif marker == 0xE2 and content.startswith(_ICC_JPEG, at + 4):
            icc += max(0, length - 2 - len(_ICC_JPEG) - 2)  # a chunk of the profile: all of them make one
            _check_icc(icc)
        elif marker == 0xDA:
            scanned = True
        at += 2 + length
    if kept is None:  # no frame header before the scan (or the end)
        raise DamagedDocument(DAMAGED_IMAGE, field="document")
    return kept, frames


def _check_icc(size: int) -> None:
    if size > MAX_ICC_BYTES:
        raise PayloadTooLarge(f"the image's colour profile (ICC) is over {megabytes(MAX_ICC_BYTES)}; a scan's or a "
                              f"photo's is a few KB", field="document")


def _check_exif(size: int) -> None:
    if size > MAX_EXIF_BYTES:
        raise PayloadTooLarge(f"the image's EXIF data is over {MAX_EXIF_BYTES // 1024} KB, the most a photo "
                              "carries", field="document")


def _too_many_headers() -> DocumentTooComplex:
    return DocumentTooComplex(f"the image has more than {MAX_IMAGE_SEGMENTS:,} headers; a scan or a photo has "
                              "a few dozen", field="document")


def _tiff_sizes(content: bytes) -> list[tuple[int, int]]:
    """Each image directory's width and height, following the chain at most MAX_PAGES + 1 steps."""
    order = "<" if content.startswith(b"II") else ">"
    try:
        (offset,) = struct.unpack_from(order + "I", content, 4)
        sizes: list[tuple[int, int]] = []
        seen: set[int] = set()
        while offset:
            if offset in seen:
                raise DamagedDocument(DAMAGED_IMAGE, field="document")  # a loop in the chain
            seen.add(offset)
            if len(seen) > MAX_PAGES:
                raise PayloadTooLarge(f"the TIFF has more than {MAX_PAGES} pages; at most {MAX_PAGES} are accepted",
                                      field="document")
            (entries,) = struct.unpack_from(order + "H", content, offset)
            if entries > MAX_TIFF_TAGS:
                raise DamagedDocument(DAMAGED_IMAGE, field="document")
            width = height = 0
            for index in range(entries):
                entry = offset + 2 + 12 * index
                tag, kind, count = struct.unpack_from(order + "HHI", content, entry)
                if tag in (_TIFF_WIDTH, _TIFF_LENGTH):  # one SHORT or LONG, or what a decoder reads is a guess
                    if kind not in (_TIFF_SHORT, _TIFF_LONG) or count != 1:
                        raise DamagedDocument(DAMAGED_IMAGE, field="document")
                    (value,) = struct.unpack_from(order + ("H" if kind == _TIFF_SHORT else "I"), content, entry + 8)
                    width, height = (value, height) if tag == _TIFF_WIDTH else (width, value)
                elif tag == _TIFF_ICC:
                    _check_icc(count)
                elif tag == _TIFF_EXIF_IFD:
                    _check_tiff_exif(content, order, entry)
            sizes.append((width, height))
            (offset,) = struct.unpack_from(order + "I", content, offset + 2 + 12 * entries)
    except struct.error:
        raise DamagedDocument(DAMAGED_IMAGE, field="document") from None
    return sizes


def _check_tiff_exif(content: bytes, order: str, entry: int) -> None:
    """A TIFF's EXIF directory, where it points inside the file: no more entries than a page's."""
    (at,) = struct.unpack_from(order + "I", content, entry + 8)
    if at + 2 > len(content):
        return  # a pointer out of the file: a decoder finds no EXIF there
    (entries,) = struct.unpack_from(order + "H", content, at)
    if entries > MAX_TIFF_TAGS:
        raise DamagedDocument(DAMAGED_IMAGE, field="document")
