"""Hostile images end in one clean outcome: every frame and metadata header a decoder reads is
checked at acceptance (every JPEG frame header, APNG frames, every TIFF page, ICC and EXIF
sizes), and a decoder's own refusal in the worker is the document's failure in words, never
the platform's (``handler_error``, retried, then dead with "our review service had a problem").
"""

from __future__ import annotations

import io
import re
import struct
import zlib

import pytest

from agent.reading import documents, ocr, reading
from documents.errors import DamagedDocument, DocumentUnpacksTooLarge, UnsupportedDocument
from jobs.errors import PayloadTooLarge

# --- builders ------------------------------------------------------------------------------


def picture(fmt: str, size: tuple[int, int] = (100, 60), **save: object) -> bytes:
    from PIL import Image

    out = io.BytesIO()
    Image.new("L", size, 255).save(out, fmt, **save)
    return out.getvalue()


def sof(width: int, height: int, marker: int = 0xC0) -> bytes:
    body = struct.pack(">BHHB", 8, height, width, 1) + b"\x01\x11\x00"
    return bytes([0xFF, marker]) + struct.pack(">H", len(body) + 2) + body


def segment(marker: int, body: bytes) -> bytes:
    return bytes([0xFF, marker]) + struct.pack(">H", len(body) + 2) + body


def jpeg_with_a_second_frame_header(width: int = 40_000, height: int = 40_000) -> bytes:
    """A real 100 x 60 JPEG with a second frame header before its scan: the decoder takes the last."""
    data = picture("JPEG")
    at = data.index(b"\xff\xda")
    return data[:at] + sof(width, height) + data[at:]


def png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png_with(*chunks: bytes) -> bytes:
    """A real 100 x 60 PNG with ``chunks`` inserted after its IHDR."""
    data = picture("PNG")
    end_of_ihdr = 8 + 8 + 13 + 4
    return data[:end_of_ihdr] + b"".join(chunks) + data[end_of_ihdr:]


def fctl(sequence: int, width: int, height: int, x: int = 0, y: int = 0) -> bytes:
    return png_chunk(b"fcTL", struct.pack(">IIIIIHHBB", sequence, width, height, x, y, 1, 10, 0, 0))


def tiff(pages: list[list[tuple[int, int, int, bytes]]], order: str = "<") -> bytes:
    """A TIFF of directories of (tag, type, count, 4-byte value field), chained in order."""
    out = bytearray((b"II*\x00" if order == "<" else b"MM\x00*") + struct.pack(order + "I", 8))
    for index, entries in enumerate(pages):
        here = len(out)
        out += struct.pack(order + "H", len(entries))
        for tag, kind, count, value in entries:
            out += struct.pack(order + "HHI", tag, kind, count) + value
        last = index == len(pages) - 1
        out += struct.pack(order + "I", 0 if last else here + 2 + 12 * len(entries) + 4)
    return bytes(out)


def short(value: int) -> bytes:
    return struct.pack("<HH", value, 0)


def long(value: int) -> bytes:
    return struct.pack("<I", value)


def page(width: int, height: int, *extra: tuple[int, int, int, bytes]) -> list[tuple[int, int, int, bytes]]:
    return [(256, 3, 1, short(width)), (257, 3, 1, short(height)), (258, 3, 1, short(8)), (262, 3, 1, short(1)),
            *extra]


def check(content: bytes) -> str:
    return documents.check_document(content=content, name="scan", content_type="")


# --- acceptance: every frame header -----------------------------------------------------------


def test_a_jpeg_with_a_second_frame_header_over_the_limits_is_refused_at_acceptance():
    with pytest.raises(DocumentUnpacksTooLarge, match=re.escape("declares 40,000 x 40,000 pixels")):
        check(jpeg_with_a_second_frame_header())


def test_a_jpeg_whose_second_frame_header_is_within_the_limits_is_accepted_with_every_frame_read():
    content = jpeg_with_a_second_frame_header(200, 120)
    assert check(content) == documents.JPEG
    assert documents.check_image(content) == [(200, 120)]  # one page: the frame the decoder keeps


def test_a_second_picture_after_the_first_ones_end_is_checked_too():
    # A multi-picture JPEG (MPO: a phone's depth map, a camera's preview) is pictures one after the other.
    second = b"\xff\xd8" + sof(40_000, 40_000) + b"\xff\xda\x00\x08\x01\x01\x00\x00\x3f\x00" + b"\xff\xd9"
    with pytest.raises(DocumentUnpacksTooLarge, match=re.escape("declares 40,000 x 40,000 pixels")):
        check(picture("JPEG") + second)


def test_a_frame_header_inside_a_metadata_segment_is_not_a_frame():
    # An EXIF thumbnail is a JPEG inside the APP1 segment: the decoder skips the segment whole.
    thumbnail = b"Exif\x00\x00" + b"\xff\xd8" + sof(40_000, 40_000) + b"\xff\xd9"
    data = picture("JPEG")
    assert check(data[:2] + segment(0xE1, thumbnail) + data[2:]) == documents.JPEG


@pytest.mark.parametrize("frame, error", [
    (fctl(0, 101, 60), DamagedDocument),  # wider than the picture it belongs to
    (fctl(0, 100, 60, x=1), DamagedDocument),  # placed past its edge
    (fctl(0, 0, 60), DamagedDocument),
], ids=["wider", "offset", "empty"])
def test_an_animated_pngs_frames_are_checked_against_its_picture(frame, error):
    actl = png_chunk(b"acTL", struct.pack(">II", 2, 0))
    assert check(png_with(actl, fctl(0, 100, 60))) == documents.PNG
    with pytest.raises(error, match="the image is damaged"):
        check(png_with(actl, frame))


def test_a_later_tiff_page_over_the_limits_is_refused():
    with pytest.raises(DocumentUnpacksTooLarge, match=re.escape("declares 60,000 x 60,000")):
        check(tiff([page(10, 10), page(10, 10), [(256, 4, 1, long(60_000)), (257, 4, 1, long(60_000))]]))


@pytest.mark.parametrize("entry", [(256, 5, 1, long(8)), (256, 4, 2, long(8)), (256, 1, 1, long(10))],
                         ids=["rational", "two values", "byte"])
def test_a_tiff_page_whose_width_is_not_one_short_or_long_is_damaged(entry):
    # What the decoder would read as the width is not what a scanner writes: not guessed at.
    entries = [entry if tag == 256 else (tag, kind, count, value) for tag, kind, count, value in page(10, 10)]
    with pytest.raises(DamagedDocument):
        check(tiff([entries]))


def test_a_gif_is_not_accepted_at_all():
    # Animated GIF frames are never decoded: a GIF is not a format the review reads.
    with pytest.raises(UnsupportedDocument, match="unsupported document type"):
        check(picture("GIF"))


# --- acceptance: ICC profiles and EXIF -------------------------------------------------------


def jpeg_with_icc(total: int) -> bytes:
    """A JPEG carrying an ICC profile of ``total`` bytes in as many APP2 chunks as it takes."""
    profile = struct.pack(">I", total) + b"\x00" * (total - 4)
    pieces = [profile[at:at + 65_000] for at in range(0, total, 65_000)]
    chunks = b"".join(segment(0xE2, b"ICC_PROFILE\x00" + bytes([n, len(pieces)]) + piece)
                      for n, piece in enumerate(pieces, 1))
    data = picture("JPEG")
    return data[:2] + chunks + data[2:]


def test_an_icc_profile_over_its_limit_is_refused_in_a_jpeg_png_and_tiff():
    assert check(jpeg_with_icc(3_000)) == documents.JPEG
    over = documents.MAX_ICC_BYTES + 1
    with pytest.raises(PayloadTooLarge, match="colour profile"):
        check(jpeg_with_icc(over))
    with pytest.raises(PayloadTooLarge, match="colour profile"):
        check(png_with(png_chunk(b"iCCP", b"icc\x00\x00" + b"\x00" * over)))
    tiff_icc = tiff([page(10, 10, (34675, 7, over, long(8)))])
    with pytest.raises(PayloadTooLarge, match="colour profile"):
        check(tiff_icc + b"\x00" * over)


def test_exif_over_its_limit_is_refused_in_a_png_and_a_tiff():
    over = documents.MAX_EXIF_BYTES + 1
    assert check(png_with(png_chunk(b"eXIf", b"MM\x00*" + b"\x00" * 100))) == documents.PNG
    with pytest.raises(PayloadTooLarge, match="EXIF"):
        check(png_with(png_chunk(b"eXIf", b"MM\x00*" + b"\x00" * over)))
    # A TIFF's EXIF directory: its entries, as for a page's.
    exif = struct.pack("<H", documents.MAX_TIFF_TAGS + 1) + b"\x00" * 12 * (documents.MAX_TIFF_TAGS + 1) + long(0)
    content = tiff([page(10, 10, (34665, 4, 1, long(0)))])
    at = len(content)
    content = content.replace(struct.pack("<HHI", 34665, 4, 1) + long(0), struct.pack("<HHI", 34665, 4, 1) + long(at))
    with pytest.raises(DamagedDocument):
        check(content + exif)


# --- the reader: a decoder's refusal is the document's -------------------------------------------


@pytest.fixture
def decoder_limit(monkeypatch):
    """Pillow's own bomb limit far below the project's: what a header acceptance did not see looks like to it."""
    from PIL import Image

    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 1_000)


def test_the_decoders_bomb_error_is_the_documents_refusal_in_words(decoder_limit):
    content = picture("JPEG")  # 6,000 pixels: over twice the decoder's limit
    with pytest.raises(DocumentUnpacksTooLarge, match="too many pixels"):
        next(ocr.pages_of(content))


@pytest.mark.django_db
def test_a_jpeg_the_decoder_refuses_ends_its_review_once_in_words(decoder_limit, review_job, claim, monkeypatch):
    from agent.review.planner import LocalPlanner
    from jobs.models import Job

    from .conftest import drive

    monkeypatch.setattr(ocr, "engine", object)  # the decoder's refusal comes before any OCR
    job = review_job(picture("JPEG"))
    drive(claim(), LocalPlanner())
    job = Job.objects.get(pk=job.pk)
    assert (job.state, job.attempts, job.failure_code) == ("dead", 1, "unpacks_too_large"), job.last_error
    assert "too many pixels" in job.last_error
    from web import wording

    told = wording.failure(job)  # what the submitter reads: the document's failure, not "our service had a problem"
    assert (told.why, told.resubmit) == (wording.TOO_BIG.said(wording.words_of(job.kind)).why, True)
    assert told.why.startswith("the document is longer or more complex") and "too many pixels" in told.detail


def test_reading_a_jpeg_the_decoder_refuses_raises_only_the_documented_refusal(decoder_limit):
    with pytest.raises(DocumentUnpacksTooLarge):
        reading.extract(picture("PNG"), documents.PNG)


def test_a_photo_one_pixel_tall_is_read_or_refused_in_words_not_a_crash():
    # Found by the fuzz of image headers: a JPEG whose frame declares 4,962 x 1 was drafted to a
    # size 0 pixels tall, and Pillow divided by it (ZeroDivisionError: a handler error).
    content = jpeg_with_a_second_frame_header(4_962, 1)
    assert check(content) == documents.JPEG
    try:
        pages = list(ocr.pages_of(content))
    except DamagedDocument:
        return
    assert pages and all(image.height >= 1 for image, _dpi in pages)
