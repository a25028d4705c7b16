"""Scans and photos checked from their headers: each page's declared size, and a TIFF's pages."""

from __future__ import annotations

import struct

from jobs.errors import AcceptanceError, DamagedDocument, DocumentUnpacksTooLarge, PayloadTooLarge

from .rules import (
    JPEG,
    MAX_IMAGE_PIXELS,
    MAX_IMAGE_SIDE,
    MAX_PAGES,
    MAX_TIFF_TAGS,
    PNG,
    TIFF,
    _check_pages,
    unrecognised,
)

_PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
_JPEG_MAGIC = b"\xff\xd8\xff"
_TIFF_MAGIC = (b"II*\x00", b"MM\x00*")
# JPEG frame headers (SOF0-SOF15 but DHT, JPG and DAC): the image's declared height and width.
_JPEG_SOF = {0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF}
DAMAGED_IMAGE = "the image is damaged and cannot be read; submit a new copy"


def _image_type(content: bytes) -> str | None:
    if content.startswith(_PNG_MAGIC):
        return PNG
    if content.startswith(_JPEG_MAGIC):
        return JPEG
    if content[:4] in _TIFF_MAGIC:
        return TIFF
    return None


def check_image(content: bytes) -> list[tuple[int, int]]:
    """Each page's declared width and height, once every one is within the limits.

    Reads the headers only, by hand (PNG's IHDR, JPEG's frame header, TIFF's chain of image
    directories, at most MAX_PAGES + 1 of them): no pixel is decoded and no image library runs
    in the web process. A PNG or JPEG is one page (an animation's or a multi-picture JPEG's
    other frames are not read); a TIFF's pages are its directories.
    """
    media_type = _image_type(content)
    if media_type == PNG:
        sizes = [_png_size(content)]
    elif media_type == JPEG:
        sizes = [_jpeg_size(content)]
    elif media_type == TIFF:
        sizes = _tiff_sizes(content)
    else:
        raise unrecognised()
    _check_pages(len(sizes))
    for width, height in sizes:
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


def _jpeg_size(content: bytes) -> tuple[int, int]:
    """The first frame header's size, walking the marker segments up to the scan."""
    at = 2
    while at + 4 <= len(content):
        if content[at] != 0xFF:
            break
        marker = content[at + 1]
        if marker == 0xFF:  # fill byte
            at += 1
            continue
        if marker in (0x01, 0xD0, 0xD1, 0xD2, 0xD3, 0xD4, 0xD5, 0xD6, 0xD7):  # no length
            at += 2
            continue
        (length,) = struct.unpack_from(">H", content, at + 2)
        if marker in _JPEG_SOF:
            if at + 9 > len(content):
                break
            height, width = struct.unpack_from(">HH", content, at + 5)
            return width, height
        if marker in (0xDA, 0xD9) or length < 2:  # the scan or the end before any frame header
            break
        at += 2 + length
    raise DamagedDocument(DAMAGED_IMAGE, field="document")


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
                tag, kind = struct.unpack_from(order + "HH", content, offset + 2 + 12 * index)
                if tag in (256, 257):  # ImageWidth, ImageLength: SHORT or LONG
                    fmt = order + ("H" if kind == 3 else "I")
                    (value,) = struct.unpack_from(fmt, content, offset + 2 + 12 * index + 8)
                    width, height = (value, height) if tag == 256 else (width, value)
            sizes.append((width, height))
            (offset,) = struct.unpack_from(order + "I", content, offset + 2 + 12 * entries)
    except struct.error:
        raise DamagedDocument(DAMAGED_IMAGE, field="document") from None
    return sizes
