"""Hostile documents, built at test time (nothing large is committed).

Each builder returns the bytes (or text) of one document that is small on the wire and
expensive for a naive reader; its docstring says what it does to one. They are
deterministic, so a test can rely on their shape, and cached, so several tests can share
the few seconds the DOCX bomb takes to compress.

    from tests import hostile
    hostile.docx_bomb()          # ~600 KB, word/document.xml unpacks to 200 MiB
    hostile.docx_empty_runs()    # ~27 KB, three million empty runs
    hostile.docx_understated()   # the bomb, declaring its main part as 64 KB
    hostile.docx_many_elements() # 1.5 MB, within every declared limit, 600,000 elements
    hostile.cpu_heavy_pdf()      # ~160 KB, 20 pages of empty text operations
    hostile.recursive_pdf()      # 10 KB, raises RecursionError in pypdf's extract_text
    hostile.pdf_xref_bomb()      # 6 KB, declares 1.9 million objects
    hostile.pdf_page_tree_bomb() # 3 KB, a page tree of a billion pages declaring one
    hostile.pdf_long_xref()      # 5 MB, a valid cross-reference table of 255,000 entries
    hostile.pdf_prev_chain()     # ~5 MB, 38,326 incremental updates chained by /Prev
    hostile.docx_hidden_entries()# ~4.7 MB, 50,126 parts behind an end record declaring 5
    hostile.pdf_xref_stream_chain() # ~4.9 MB, 39,000 cross-reference streams, their type escaped
    hostile.total_and_spaces()   # 3.6 KB of inline text: "Total" and spaces
    hostile.pdf_to_rebuild()     # 5 MB, no cross-reference table, 240,000 object markers
"""

from __future__ import annotations

import functools
import io
import struct
import zipfile
import zlib
from collections.abc import Iterable, Iterator

MiB = 1024 * 1024

W_NS = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
_CONTENT_TYPES = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
    '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
    '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
    '<Default Extension="xml" ContentType="application/xml"/>'
    '<Override PartName="/word/document.xml" '
    'ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>'
    "</Types>"
)
_RELS = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
    '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    '<Relationship Id="rId1" '
    'Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" '
    'Target="word/document.xml"/>'
    "</Relationships>"
)
_DOCUMENT_START = (
    f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document xmlns:w="{W_NS}"><w:body>'
).encode()
_DOCUMENT_END = b"</w:body></w:document>"


def docx(body: bytes | Iterable[bytes], *, extra: dict[str, bytes] | None = None) -> bytes:
    """A minimal DOCX (python-docx and Word open it) whose body is ``body``, streamed.

    ``body`` is the XML inside ``<w:body>``, as bytes or as chunks: the chunks are
    compressed as they come, so a body of hundreds of megabytes never sits in memory.
    ``extra`` adds parts (name -> bytes) as they are.
    """
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", _CONTENT_TYPES)
        archive.writestr("_rels/.rels", _RELS)
        with archive.open("word/document.xml", "w") as part:
            part.write(_DOCUMENT_START)
            for chunk in [body] if isinstance(body, bytes) else body:
                part.write(chunk)
            part.write(_DOCUMENT_END)
        for name, content in (extra or {}).items():
            archive.writestr(name, content)
    return out.getvalue()


def paragraphs(*lines: str) -> bytes:
    """Body XML for plain paragraphs, one per line (for ordinary DOCX test documents)."""
    from xml.sax.saxutils import escape

    return b"".join(f'<w:p><w:r><w:t xml:space="preserve">{escape(line)}</w:t></w:r></w:p>'.encode()
                    for line in lines)


def _repeat(unit: bytes, total: int) -> Iterator[bytes]:
    chunk = unit * max(1, MiB // len(unit))
    written = 0
    while written + len(chunk) <= total:
        yield chunk
        written += len(chunk)
    yield unit * ((total - written) // len(unit))


@functools.cache
def docx_bomb(unpacked: int = 200 * MiB) -> bytes:
    """A DOCX of about 600 KB whose word/document.xml unpacks to ``unpacked`` bytes (200 MiB).

    The body is one short paragraph ("Copy paper A4, box of 5 reams") repeated about
    3.4 million times: ordinary, well-formed WordprocessingML that deflate packs 340 to 1.
    A naive reader (python-docx, or any reader that inflates the part and builds a tree)
    holds the whole 200 MiB plus a node per element: gigabytes of memory and seconds of
    CPU for a file well inside a 5 MB upload limit. Its central directory declares the
    real sizes, so a reader that looks before it inflates can refuse it for free.
    """
    unit = b"<w:p><w:r><w:t>Copy paper A4, box of 5 reams</w:t></w:r></w:p>"
    return docx(_repeat(unit, unpacked - len(_DOCUMENT_START) - len(_DOCUMENT_END)))


@functools.cache
def docx_empty_runs(runs: int = 3_000_000) -> bytes:
    """A DOCX of about 27 KB holding ``runs`` empty runs (``<w:r/>``) in one paragraph.

    Unpacked, word/document.xml is 18 MB that compresses about 700 to 1. Nothing in it is
    large, but every run is an element: python-docx builds an lxml node and a Python proxy
    per run and walks them one by one for ``paragraph.text``, so reading this file held a
    web worker past a 30 s timeout while the text it yields is empty.
    """
    return docx([b"<w:p>", *_repeat(b"<w:r/>", runs * len(b"<w:r/>")), b"</w:p>"])


@functools.cache
def docx_understated(declared: int = 64 * 1024) -> bytes:
    """The DOCX bomb with its main part declared as ``declared`` bytes unpacked (64 KB).

    The zip's local header and central directory both state the small size, so a reader
    that trusts the declaration sees an ordinary part (it is even smaller than its packed
    data); the deflate stream still inflates to 200 MiB. A reader that inflates until the
    stream ends gets all of it; Python's zipfile stops at the declared size and reports a
    CRC mismatch.
    """
    data = bytearray(docx_bomb())
    info = zipfile.ZipFile(io.BytesIO(bytes(data))).getinfo("word/document.xml")
    struct.pack_into("<I", data, info.header_offset + 22, declared)  # local header: uncompressed size
    end = data.rfind(b"PK\x05\x06")
    (offset,) = struct.unpack_from("<I", data, end + 16)
    while data[offset:offset + 4] == b"PK\x01\x02":
        name_length, extra_length, comment_length = struct.unpack_from("<HHH", data, offset + 28)
        if data[offset + 46:offset + 46 + name_length] == b"word/document.xml":
            struct.pack_into("<I", data, offset + 24, declared)  # central directory: uncompressed size
        offset += 46 + name_length + extra_length + comment_length
    return bytes(data)


@functools.cache
def docx_many_elements(elements: int = 600_000) -> bytes:
    """A DOCX of about 1.5 MB whose main part is ``elements`` empty paragraphs (15 MB).

    Each paragraph carries a different revision id, so the part packs only 10 to 1 and
    its declared sizes are within every limit a central-directory check can apply. It
    holds no text, so no text limit stops a reader either: only a limit on the number of
    elements read does. python-docx builds a node and a proxy for each of them.
    """
    return docx(b'<w:p w:rsidR="%08X"/>' % n for n in range(elements))


def pdf(contents: list[bytes], *, compress: bool = True) -> bytes:
    """A PDF with one page per content stream (Helvetica as /F1), xref table and all.

    The streams are Flate-compressed unless ``compress`` is False.
    """
    objects: list[bytes] = [b"<< /Type /Catalog /Pages 2 0 R >>", b"",
                            b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    kids = []
    for content in contents:
        page, stream = len(objects) + 1, len(objects) + 2
        kids.append(f"{page} 0 R")
        objects.append(f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] "
                       f"/Resources << /Font << /F1 3 0 R >> >> /Contents {stream} 0 R >>".encode())
        data = zlib.compress(content, 9) if compress else content
        flate = b" /Filter /FlateDecode" if compress else b""
        objects.append(b"<< /Length %d%s >>\nstream\n%s\nendstream" % (len(data), flate, data))
    objects[1] = f"<< /Type /Pages /Kids [{' '.join(kids)}] /Count {len(kids)} >>".encode()
    return pdf_of_objects(objects)


def pdf_of_objects(objects: list[bytes]) -> bytes:
    """A PDF of these object bodies (numbered from 1, the first the catalog), with its xref table."""
    out = io.BytesIO()
    out.write(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n%s\nendobj\n" % (number, body))
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    out.write(b"".join(b"%010d 00000 n \n" % offset for offset in offsets))
    out.write(b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref))
    return out.getvalue()


@functools.cache
def cpu_heavy_pdf(pages: int = 20, operations: int = 900_000) -> bytes:
    """A PDF of about 160 KB: ``pages`` pages of ``operations`` empty text operations each.

    Each page's content stream is ``() Tj`` (show the empty string) repeated 900,000 times:
    5.4 MB that deflate packs into 7 KB. Nothing is drawn and no text comes out, but
    pypdf's ``extract_text`` parses and interprets every operation: several seconds of CPU
    per page, minutes for the file, all inside pypdf where no text limit can stop it. Its
    structure is ordinary (20 pages, 43 objects), so acceptance has no reason to refuse
    it; only a time limit on extraction bounds it. 900,000 operations stay under pypdf's
    own budget of 2,000,000 tokens per content stream, which would otherwise end it early.
    """
    return pdf([b"BT /F1 12 Tf\n" + b"() Tj\n" * operations + b"ET\n"] * pages)


@functools.cache
def recursive_pdf(depth: int = 5_000) -> bytes:
    """A one-page PDF of about 10 KB whose content stream nests ``depth`` arrays.

    ``[[[[ ... ]]]] TJ``: pypdf opens it, counts its page and reads its structure without
    complaint, then ``extract_text`` parses the nesting recursively and raises
    RecursionError, the same way on every attempt. A reader that retries errors it does not
    recognise runs it again and again for nothing.
    """
    return pdf([b"BT /F1 12 Tf " + b"[" * depth + b"]" * depth + b" TJ ET"], compress=False)


@functools.cache
def pdf_xref_bomb(objects: int = 1_900_000) -> bytes:
    """A one-page PDF of about 6 KB whose cross-reference stream lists ``objects`` objects.

    The stream is 3 bytes per entry, compressed 1000 to 1; every entry points at the same
    offset. Opening the file (before a page or any text is read) makes pypdf decode the
    stream and build a table entry per object: about 5 s and 200 MB for 1.9 million, just
    under pypdf's default ceiling of 2 million. Its page tree is ordinary.
    """
    out = io.BytesIO()
    out.write(b"%PDF-1.7\n")
    offsets = {}
    for number, body in ((1, b"<< /Type /Catalog /Pages 2 0 R >>"), (2, b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>"),
                         (3, b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] >>")):
        offsets[number] = out.tell()
        out.write(b"%d 0 obj\n%s\nendobj\n" % (number, body))
    xref = out.tell()
    entries = bytearray(b"\x00\x00\xff")  # object 0: free
    for number in (1, 2, 3):
        entries += b"\x01" + struct.pack(">H", offsets[number])
    entries += b"\x01\x00\x09" * (objects - 4)  # the rest: "in use at offset 9"
    data = zlib.compress(bytes(entries), 9)
    out.write(b"4 0 obj\n<< /Type /XRef /Size %d /W [1 2 0] /Root 1 0 R /Filter /FlateDecode /Length %d >>\n"
              b"stream\n%s\nendstream\nendobj\nstartxref\n%d\n%%%%EOF\n" % (objects, len(data), data, xref))
    return out.getvalue()


@functools.cache
def pdf_page_tree_bomb(depth: int = 30) -> bytes:
    """A PDF of about 3 KB whose page tree names the same subtree twice at each of ``depth`` levels.

    Every node declares ``/Count 1``, so the tree looks like one page; walking it visits
    2**30 pages from 33 objects. pypdf stops after its own limit of 100,000 entries (most
    of a second); a reader with no limit never finishes.
    """
    objects = {1: b"<< /Type /Catalog /Pages 2 0 R >>"}
    for number in range(2, depth + 2):
        objects[number] = b"<< /Type /Pages /Kids [%d 0 R %d 0 R] /Count 1 >>" % (number + 1, number + 1)
    objects[depth + 2] = b"<< /Type /Page /MediaBox [0 0 595 842] >>"
    out = io.BytesIO()
    out.write(b"%PDF-1.7\n")
    offsets = []
    for number in sorted(objects):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n%s\nendobj\n" % (number, objects[number]))
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    out.write(b"".join(b"%010d 00000 n \n" % offset for offset in offsets))
    out.write(b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref))
    return out.getvalue()


def total_and_spaces(size: int = 3_600) -> str:
    """``size`` characters of inline text: the label "Total" followed by spaces, no value.

    A field pattern like ``total[ \\t]*(?::|#|[ \\t]{2,})[ \\t]*(\\S.*)`` has three quantifiers
    over the same spaces; on a line with no value it tries every way of sharing the spaces
    between them before it gives up: cubic time, minutes of CPU for 3.6 KB (800 spaces take
    a second or more).
    """
    return "Total" + " " * (size - len("Total"))


_ONE_PAGE = (b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
             b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] >>")


def _one_page_objects(out: io.BytesIO) -> list[int]:
    out.write(b"%PDF-1.7\n")
    offsets = []
    for number, body in enumerate(_ONE_PAGE, 1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n%s\nendobj\n" % (number, body))
    return offsets


@functools.cache
def pdf_long_xref(entries: int = 255_000, *, declare: bool = True) -> bytes:
    """A one-page PDF of 5 MB whose valid cross-reference table has ``entries`` entries.

    Every entry is well formed (most point at the page object), so pypdf reads the table
    without complaint and builds an entry for each line: 1.9 s and 107 MB for 255,000,
    before a limit on the number of objects can be checked. With ``declare`` False the
    trailer's /Size says 4, so only the table's own lines tell.
    """
    out = io.BytesIO()
    offsets = _one_page_objects(out)
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % entries)
    out.write(b"".join(b"%010d 00000 n \n" % offset for offset in offsets))
    out.write(b"%010d 00000 n \n" % offsets[-1] * (entries - 1 - len(offsets)))
    out.write(b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (entries if declare else 4, xref))
    return out.getvalue()


@functools.cache
def pdf_prev_chain(sections: int = 38_326, *, padding: int = 60) -> bytes:
    """A one-page PDF of ``sections`` incremental updates, each an empty table chained by /Prev.

    Nothing in it is large or invalid: pypdf follows every /Prev and merges every trailer
    (2.7 s of CPU for 38,326 sections in 5 MB), and accepts it. ``padding`` bytes of a
    comment in each section make the file the size of the one reported.
    """
    out = io.BytesIO()
    offsets = _one_page_objects(out)
    previous = out.tell()
    out.write(b"xref\n0 4\n0000000000 65535 f \n")
    out.write(b"".join(b"%010d 00000 n \n" % offset for offset in offsets))
    out.write(b"trailer\n<< /Size 4 /Root 1 0 R >>\n")
    for _ in range(sections - 1):
        here = out.tell()
        out.write(b"xref\n0 0\ntrailer\n<< /Size 4 /Root 1 0 R /Prev %d >>\n%%%s\n" % (previous, b"x" * padding))
        previous = here
    out.write(b"startxref\n%d\n%%%%EOF\n" % previous)
    return out.getvalue()


@functools.cache
def docx_hidden_entries(entries: int = 50_126, declared: int = 5) -> bytes:
    """A DOCX of ``entries`` tiny parts whose zip end record declares only ``declared``.

    Python's zipfile reads the central directory for as many bytes as the end record
    gives it, building an entry object for each one it finds there: 0.46 s and 82 MB for
    50,126, behind a declared count that any limit on parts lets through.
    """
    data = bytearray(docx(paragraphs("Invoice no: 1"),
                          extra={f"p/{n}": b"" for n in range(entries - 3)}))
    end = data.rfind(b"PK\x05\x06")
    struct.pack_into("<HH", data, end + 8, declared, declared)  # entries on this disk, in all
    return bytes(data)


@functools.cache
def pdf_xref_stream_chain(sections: int = 39_000) -> bytes:
    """A one-page PDF of ``sections`` empty cross-reference streams chained by /Prev.

    Each names its type ``/XR#65f``, which a PDF reader decodes to ``/XRef`` but a count of
    the bytes does not see, and each is an object of its own, within the object limit:
    pypdf follows and parses every one and accepts the file, 2.5 s of CPU for 39,000
    (4.9 MB). Only a bound on the check itself stops it.
    """
    out = io.BytesIO()
    offsets = _one_page_objects(out)
    previous = None
    for k in range(sections):
        here = out.tell()
        data = b"".join(b"\x01" + offset.to_bytes(4, "big") for offset in offsets) if k == 0 else b""
        index = b"[1 3]" if k == 0 else b"[4 0]"
        prev = b"" if previous is None else b" /Prev %d" % previous
        out.write(b"%d 0 obj\n<< /Type /XR#65f /Size 4 /W [1 4 0] /Index %s /Root 1 0 R%s /Length %d >>\n"
                  b"stream\n%s\nendstream\nendobj\n" % (4 + k, index, prev, len(data), data))
        previous = here
    out.write(b"startxref\n%d\n%%%%EOF\n" % previous)
    return out.getvalue()


def pdf_to_rebuild(size: int | None = None) -> bytes:
    """A PDF of ``size`` bytes (the most accepted, by default) whose cross-reference table is
    missing: ~240,000 object markers.

    pypdf, finding no table at ``startxref``, rebuilds one from every ``N 0 obj`` marker in
    the file: seconds of CPU before any limit on the objects it found could be checked.
    """
    from agent.reading.documents import MAX_DOCUMENT_BYTES

    size = size or MAX_DOCUMENT_BYTES
    out = io.BytesIO()
    out.write(b"%PDF-1.7\n")
    number = 1
    while out.tell() < size - 64:
        out.write(b"%d 0 obj\n<<>>\nendobj\n" % number)
        number += 1
    out.write(b"startxref\n999999999\n%%EOF\n")
    return out.getvalue()
