"""Hypothesis strategies for bad documents: valid seeds, structured generators, mutations.

Each format has seeds (the samples in agent/samples/, the smallest invoices of
tests/corpus/einvoices/), generators that build the format's structure with random parts
(PDF objects, cross-reference tables and streams, trailers, page trees, content streams,
attachments; zip directories and end records; XML trees, namespaces, entities, DOCTYPEs,
encodings), and mutations over any of them (bit flips, bytes set to interesting values,
truncation, deletion, tokens of the format inserted, slices repeated, two inputs spliced).
Inputs stay under ``MAX_INPUT`` bytes so a CI run stays fast; the size limit itself
(5 MB) is the upload's, checked before acceptance reads anything.
"""

from __future__ import annotations

import functools
import io
import os
import re
import struct
import warnings
import zipfile
import zlib
from pathlib import Path

from hypothesis import strategies as st

from tests import hostile

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "agent" / "samples"
CORPUS = ROOT / "tests" / "corpus" / "einvoices"
LONG_RUN = os.environ.get("HYPOTHESIS_PROFILE") == "fuzz-long"
# Half a megabyte in CI (a PDF case costs in proportion), a megabyte in a long run.
MAX_INPUT = 1024 * 1024 if LONG_RUN else 512 * 1024


def _smallest(folder: Path, pattern: str, count: int) -> list[bytes]:
    files = sorted(folder.glob(pattern), key=lambda p: (p.stat().st_size, p.name))[:count]
    return [p.read_bytes() for p in files]


@functools.cache
def pdf_seeds() -> list[bytes]:
    return [p.read_bytes() for p in sorted(SAMPLES.glob("*.pdf"))] + _smallest(CORPUS / "pdf", "*.pdf", 3)


@functools.cache
def docx_seeds() -> list[bytes]:
    return [(SAMPLES / "invoice.docx").read_bytes(),
            hostile.docx(hostile.paragraphs("Nordlicht GmbH", "Invoice no: INV-1", "Total: 12.50 EUR"))]


@functools.cache
def text_seeds() -> list[bytes]:
    return [(SAMPLES / "invoice.txt").read_bytes()]


@functools.cache
def xml_seeds() -> list[bytes]:
    return _smallest(CORPUS / "xml", "*.cii.xml", 3) + _smallest(CORPUS / "xml", "*.ubl.xml", 3)


# --- mutations ---------------------------------------------------------------------------

INTERESTING_BYTES = [0x00, 0x01, 0x7F, 0x80, 0xFF, 0x0A, 0x0D, 0x20, 0x25, 0x28, 0x29, 0x3C, 0x3E, 0x5B, 0x5D]
COMMON_TOKENS = [b"\x00", b"\xff\xfe", b"\xef\xbb\xbf", b"\xc3\x28", b"\xed\xa0\x80", b"\xf4\x90\x80\x80",
                 b"99999999999999999999", b"-1", b"4294967295", b"1e308", b"NaN", b"\r\n", b"\t" * 8]
PDF_TOKENS = [b" obj", b"endobj", b"stream\n", b"endstream", b"xref\n0 1\n", b"trailer", b"startxref\n",
              b"%%EOF", b"<<", b">>", b"[", b"]", b"(", b")", b"/Prev 0", b"/Size 999999999", b"/Count -1",
              b"/Kids [1 0 R]", b"/Filter /FlateDecode", b"/Filter /LZWDecode", b"/Length 999999",
              b"/Type /ObjStm /N 99999 /First 0", b"/Encrypt << >>", b"R", b"0 0 R", b"BT", b"ET", b"Tj",
              b"TJ", b"q", b"Q", b"cm", b"Do", b"BI /W 1 /H 1 ID", b"EI", b"/ToUnicode 3 0 R",
              b"beginbfchar", b"beginbfrange", b"endcmap", b"\\", b"#00", b"/EmbeddedFiles"]
ZIP_TOKENS = [b"PK\x03\x04", b"PK\x01\x02", b"PK\x05\x06", b"PK\x06\x06", b"PK\x06\x07", b"\xff\xff\xff\xff",
              b"\xff\xff", b"word/document.xml", b"<w:t>", b"</w:t>", b"<!DOCTYPE w [<!ENTITY e 'x'>]>"]
XML_TOKENS = [b"<", b">", b"</", b"/>", b"<!DOCTYPE x>", b"<!ENTITY e SYSTEM 'file:///etc/passwd'>", b"&e;",
              b"&amp;", b"&#0;", b"&#x110000;", b"&#xD800;", b"<![CDATA[", b"]]>", b"<!--", b"-->", b"<?pi x?>",
              b"xmlns=''", b"xmlns:ram='urn:x'", b" a='1' a='2'", b"<?xml version='1.0' encoding='UTF-16'?>",
              b"encoding='ebcdic'", b"\x80\x81", b"<ram:ChargeAmount>", b"</ram:ChargeAmount>",
              b"<cbc:PayableAmount currencyID='EUR'>", b"-0", b"1,000.00", b"20241301", b"XXX"]
TEXT_TOKENS = [b"Total", b"Total:", b" " * 64, b"IBAN", b"DE89 3704 0044 0532 0130 00", b"VAT", b"DE136695976",
               b"Invoice no", b"Date", b"31/12/9999", b"\xe2\x82\xac", b"$", b"(1,234.50)", b"\n" * 20, b"<"]


@st.composite
def _op(draw, tokens: list[bytes]):
    kind = draw(st.sampled_from(["flip", "set", "truncate", "delete", "insert", "repeat", "splice_point"]))
    return kind, draw(st.integers(0, 2**31)), draw(st.integers(0, 2**31)), draw(st.sampled_from(tokens)), \
        draw(st.integers(1, 64))


def _apply(data: bytes, op, other: bytes) -> bytes:
    kind, a, b, token, count = op
    size = len(data)
    if kind == "flip" and size:
        at = a % size
        return data[:at] + bytes([data[at] ^ (1 << (b % 8))]) + data[at + 1:]
    if kind == "set" and size:
        at = a % size
        return data[:at] + bytes([INTERESTING_BYTES[b % len(INTERESTING_BYTES)]]) + data[at + 1:]
    if kind == "truncate":
        return data[:a % (size + 1)]
    if kind == "delete" and size:
        at = a % size
        return data[:at] + data[at + 1 + b % min(4096, size - at):]
    if kind == "insert":
        at = a % (size + 1)
        return data[:at] + token * (1 + count // 16) + data[at:]
    if kind == "repeat" and size:
        at = a % size
        piece = data[at:at + 1 + b % 4096]
        times = min(count * 16, max(1, (MAX_INPUT - size) // max(1, len(piece))))
        return data[:at] + piece * times + data[at:]
    if kind == "splice_point" and other:
        return data[:a % (size + 1)] + other[b % len(other):]
    return data


@st.composite
def mutated(draw, base: st.SearchStrategy[bytes], tokens: list[bytes], others: st.SearchStrategy[bytes]):
    """``base`` with one to six mutations, spliced with ``others`` where a mutation says so."""
    data = draw(base)
    other = draw(others)
    for op in draw(st.lists(_op(tokens + COMMON_TOKENS), min_size=1, max_size=6)):
        data = _apply(data, op, other)[:MAX_INPUT]
    return data


# --- PDF ---------------------------------------------------------------------------------


def write_pdf(objects: dict[int, bytes], *, xref: str = "table", trailer: bytes = b"", startxref: int | None = None,
              header: bytes = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n", offset_error: int = 0, size_error: int = 0,
              eof: bool = True) -> bytes:
    """A PDF of ``objects`` (number -> body) with a cross-reference table, stream or none.

    ``offset_error`` shifts every recorded offset, ``size_error`` the declared /Size;
    ``startxref`` replaces the real one. The trailer gets ``/Root 1 0 R`` and ``trailer``.
    """
    out = io.BytesIO()
    out.write(header)
    offsets: dict[int, int] = {}
    for number in sorted(objects):
        offsets[number] = out.tell()
        out.write(b"%d 0 obj\n%s\nendobj\n" % (number, objects[number]))
    size = max(objects, default=0) + 1
    at = out.tell()
    if xref == "table":
        out.write(b"xref\n0 %d\n0000000000 65535 f \n" % size)
        for number in range(1, size):
            if number in offsets:
                out.write(b"%010d 00000 n \n" % max(0, offsets[number] + offset_error))
            else:
                out.write(b"0000000000 65535 f \n")
        out.write(b"trailer\n<< /Size %d /Root 1 0 R %s >>\n" % (size + size_error, trailer))
    elif xref == "stream":
        rows = bytearray(b"\x00\x00\x00\xff")
        for number in range(1, size):
            rows += b"\x01" + struct.pack(">H", max(0, offsets.get(number, 0) + offset_error) % 65536) + b"\x00"
        rows += b"\x01" + struct.pack(">H", at % 65536) + b"\x00"
        data = zlib.compress(bytes(rows))
        out.write(b"%d 0 obj\n<< /Type /XRef /Size %d /W [1 2 1] /Root 1 0 R /Filter /FlateDecode /Length %d %s >>\n"
                  b"stream\n%s\nendstream\nendobj\n" % (size, size + 1 + size_error, len(data), trailer, data))
    out.write(b"startxref\n%d\n" % (at if startxref is None else startxref))
    if eof:
        out.write(b"%%EOF\n")
    return out.getvalue()


_NAMES = st.sampled_from([b"/F1", b"/F2", b"/Im1", b"/GS1", b"/P", b"/Span", b"/MCID", b"/Helvetica", b"/#00",
                          b"/" + b"A" * 300])
_NUMBERS = st.one_of(st.integers(-2**40, 2**40).map(lambda n: b"%d" % n),
                     st.sampled_from([b"0", b"-0", b".5", b"1e9", b"99999999999999999999", b"-.", b"+", b"3.4.5",
                                      b"NaN", b"1" * 400]))
_STRINGS = st.one_of(st.binary(max_size=40).map(lambda b: b"(" + b.replace(b"\\", b"").replace(b")", b"") + b")"),
                     st.binary(max_size=40).map(lambda b: b"<" + b.hex().encode() + b">"),
                     st.sampled_from([b"(\\", b"(((", b"<zz>", b"<0>", b"(\\777\\0\\n)", b"<feff00480069>"]))
_OPERAND = st.one_of(_NUMBERS, _NAMES, _STRINGS, st.sampled_from([b"true", b"null", b"[]", b"<< >>", b"1 0 R"]))
_OPERATORS = st.sampled_from([b"BT", b"ET", b"Tf", b"Tj", b"TJ", b"'", b'"', b"Td", b"TD", b"Tm", b"T*", b"Tc", b"Tw",
                              b"Tz", b"TL", b"Tr", b"Ts", b"q", b"Q", b"cm", b"Do", b"re", b"f", b"S", b"g", b"rg",
                              b"BDC", b"BMC", b"EMC", b"gs", b"d0", b"d1", b"sh", b"ri", b"i", b"W", b"n", b"Zz"])


@st.composite
def content_stream(draw) -> bytes:
    ops = []
    for _ in range(draw(st.integers(0, 40))):
        operands = draw(st.lists(_OPERAND, max_size=5))
        ops.append(b" ".join([*operands, draw(_OPERATORS)]))
    if draw(st.booleans()):
        depth = draw(st.integers(1, 600))
        ops.append(b"BT /F1 12 Tf " + b"[" * depth + b"(x)" + b"]" * draw(st.integers(0, depth)) + b" TJ ET")
    if draw(st.booleans()):
        ops.insert(0, b"BT /F1 12 Tf 72 720 Td (Invoice no: INV-1 Total: 12.50 EUR) Tj ET")
    return b"\n".join(ops)


@st.composite
def cmap(draw) -> bytes:
    entries = draw(st.lists(st.tuples(st.binary(min_size=1, max_size=4), st.binary(max_size=8)), max_size=8))
    body = b"".join(b"<%s> <%s>\n" % (a.hex().encode(), b.hex().encode()) for a, b in entries)
    ranges = draw(st.lists(st.tuples(st.integers(0, 0xFFFF), st.integers(0, 0xFFFF), st.integers(0, 0x10FFFF)),
                           max_size=4))
    rbody = b"".join(b"<%04X> <%04X> <%04X>\n" % r for r in ranges)
    return (b"/CIDInit /ProcSet findresource begin begincmap 1 begincodespacerange <00> <FFFF> endcodespacerange\n"
            b"%d beginbfchar\n%sendbfchar\n%d beginbfrange\n%sendbfrange endcmap end"
            % (len(entries), body, len(ranges), rbody))


def _stream(data: bytes, extra: bytes = b"", *, compress: bool = False) -> bytes:
    if compress:
        data = zlib.compress(data)
        extra += b" /Filter /FlateDecode"
    return b"<< /Length %d%s >>\nstream\n%s\nendstream" % (len(data), extra, data)


@st.composite
def xml_attachment(draw) -> tuple[bytes, bytes]:
    name = draw(st.sampled_from([b"factur-x.xml", b"ZUGFeRD-invoice.xml", b"xrechnung.xml", b"other.xml",
                                 b"a.txt", b"\xfe\xff\x00x\x00.\x00x\x00m\x00l"]))
    xml = draw(st.one_of(st.sampled_from(xml_seeds()), xml_tree(), st.binary(max_size=200)))
    return name, xml


def _mostly(sound, defects: list) -> st.SearchStrategy:
    """``sound`` three times in four, else one of ``defects``."""
    return st.one_of(st.just(sound), st.just(sound), st.just(sound), st.sampled_from(defects))


@st.composite
def pdf_documents(draw) -> bytes:
    """A PDF built from random parts: pages, fonts with ToUnicode maps, attachments, a page
    tree that may lie or loop, filters, object streams, and a cross-reference table, stream or
    none, with offsets, sizes, /Prev and startxref that may be wrong."""
    objects: dict[int, bytes] = {}
    pages = draw(_mostly(1, [0, 2, 3, 4]))
    kids = []
    font = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"
    if draw(st.booleans()):
        font = (b"<< /Type /Font /Subtype /Type0 /BaseFont /X /Encoding /Identity-H /ToUnicode 4 0 R "
                b"/DescendantFonts [<< /Type /Font /Subtype /CIDFontType2 /W [0 [500 %s]] >>] >>"
                % draw(_NUMBERS))
    objects[3] = font
    objects[4] = _stream(draw(cmap()), compress=draw(st.booleans()))
    number = 10
    for _ in range(pages):
        contents = number + 1
        kids.append(number)
        parent = draw(_mostly(b"2 0 R", [b"1 0 R", b"%d 0 R" % number, b"null"]))
        objects[number] = (b"<< /Type /Page /Parent %s /MediaBox [0 0 %s 842] /Resources << /Font << /F1 3 0 R >> >>"
                           b" /Contents %d 0 R >>" % (parent, draw(_NUMBERS), contents))
        filters = draw(st.sampled_from([b"", b" /Filter /ASCIIHexDecode", b" /Filter /ASCII85Decode",
                                        b" /Filter /RunLengthDecode", b" /Filter /LZWDecode",
                                        b" /Filter /FlateDecode /DecodeParms << /Predictor 12 /Columns 4 >>",
                                        b" /Filter [/FlateDecode /FlateDecode]", b" /Filter /DCTDecode"]))
        objects[contents] = _stream(draw(content_stream()), filters, compress=draw(st.booleans()) and not filters)
        number += 2
    kid_refs = b" ".join(b"%d 0 R" % k for k in kids)
    kid_refs += draw(_mostly(b"", [b" 2 0 R", b" 1 0 R", b" 99 0 R", b" (x)"]))
    count = draw(st.one_of(st.just(len(kids)), st.just(len(kids)), st.integers(-5, 10**12)))
    objects[2] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kid_refs, count)
    catalog = b"<< /Type /Catalog /Pages 2 0 R"
    if draw(st.booleans()):
        name, xml = draw(xml_attachment())
        compress = draw(st.booleans())
        declared = draw(st.one_of(st.just(len(xml)), st.integers(0, 10**10)))
        objects[6] = _stream(xml, b" /Type /EmbeddedFile /Params << /Size %d >>" % declared, compress=compress)
        spec = draw(st.sampled_from([b"/F", b"/UF"]))
        objects[5] = b"<< /Type /Filespec %s (%s) /EF << /F 6 0 R >> >>" % (spec, name)
        tree = draw(st.sampled_from([b"<< /Names [(%s) 5 0 R] >>" % name, b"<< /Kids [7 0 R] >>",
                                     b"<< /Names [(%s) 5 0 R (%s) 5 0 R] >>" % (name, name), b"<< /Names 5 0 R >>"]))
        objects[7] = b"<< /Names [(%s) 5 0 R] /Kids [7 0 R] >>" % name
        catalog += b" /Names << /EmbeddedFiles %s >>" % tree
    if draw(st.booleans()):
        objects[8] = _stream(b"1 0 2 5 (x) (y)", b" /Type /ObjStm /N %d /First %d" % (
            draw(st.integers(-1, 10**6)), draw(st.integers(-1, 100))))
    objects[1] = catalog + b" >>"
    # Each defect is drawn on its own and is rarer than its sound value, so that many built
    # PDFs open and their pages, fonts and attachments reach extraction.
    trailer = draw(_mostly(b"", [b"/Prev 0", b"/Prev 999999999", b"/Encrypt << /Filter /Standard /V 1 >>",
                                 b"/Info 99 0 R", b"/ID [<00> <01>]", b"/Root 99 0 R", b"/XRefStm 0"]))
    data = write_pdf(
        objects, xref=draw(_mostly("table", ["stream", "stream", "none"])), trailer=trailer,
        startxref=draw(st.one_of(st.none(), st.none(), st.none(), st.integers(-10, 10**12))),
        header=draw(_mostly(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n", [b"%PDF-1.4\n", b"%PDF-", b"%PDF-9.9\r"])),
        offset_error=draw(_mostly(0, [1, -1, 7, 10**6])), size_error=draw(_mostly(0, [-3, -1, 1, 3])),
        eof=draw(_mostly(True, [False])),
    )
    if draw(st.integers(0, 3)) == 0:  # an incremental update whose /Prev points back (or at itself)
        at = len(data)
        data += (b"xref\n0 1\n0000000000 65535 f \ntrailer\n<< /Size 1 /Root 1 0 R /Prev %d >>\n"
                 b"startxref\n%d\n%%%%EOF\n" % (draw(st.sampled_from([at, 0, data.rfind(b"xref")])), at))
    return data


def pdf_inputs() -> st.SearchStrategy[bytes]:
    seeds = st.sampled_from(pdf_seeds())
    built = pdf_documents()
    any_pdf = st.one_of(seeds, built)
    return st.one_of(seeds, built, built, mutated(any_pdf, PDF_TOKENS, any_pdf), mutated(seeds, PDF_TOKENS, built))


# --- DOCX --------------------------------------------------------------------------------

W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
MC = "http://schemas.openxmlformats.org/markup-compatibility/2006"


_WORD_TOKENS = [b"<w:p>", b"</w:p>", b"<w:r>", b"</w:r>", b"<w:t>", b"</w:t>", b"<w:tab/>", b"<w:br/>", b"<w:tbl>",
                b"</w:tbl>", b"<w:tr>", b"</w:tr>", b"<w:tc>", b"</w:tc>", b"<w:noBreakHyphen/>", b"<w:p/>", b"&e;",
                b"&#0;", b"&amp;", b"<x:y/>", b"<w:t xml:space='preserve'>", b'<mc:AlternateContent xmlns:mc="%s">'
                % MC.encode(), b"</mc:AlternateContent>", b"<mc:Choice>", b"</mc:Choice>", b"<mc:Fallback>",
                b"</mc:Fallback>", b"\xff", b"<w:cr/>", b"<w:ptab/>"]


def _paragraph(text: str) -> bytes:
    return b"<w:p><w:r><w:t>%s</w:t><w:tab/><w:br/></w:r></w:p>" % _escape(text)


_WORD_BLOCKS = st.one_of(
    st.text(max_size=30).map(_paragraph),
    st.tuples(st.text(max_size=20), st.text(max_size=20)).map(
        lambda cells: b"<w:tbl><w:tr><w:tc>%s</w:tc><w:tc>%s</w:tc></w:tr></w:tbl>" % tuple(map(_paragraph, cells))),
    st.tuples(st.text(max_size=20), st.text(max_size=20)).map(
        lambda texts: b'<mc:AlternateContent xmlns:mc="%s"><mc:Choice Requires="w14">%s</mc:Choice>'
                      b"<mc:Fallback>%s</mc:Fallback></mc:AlternateContent>" % (MC.encode(), *map(_paragraph, texts))),
)


@st.composite
def word_body(draw) -> bytes:
    """WordprocessingML inside <w:body>: paragraphs, tables and mc:Fallback, well-formed or a
    soup of Word's tags (unbalanced, entities, stray bytes), and deep nesting."""
    if draw(st.booleans()):
        body = b"".join(draw(st.lists(_WORD_BLOCKS, max_size=8)))
    else:
        body = b"".join(draw(st.lists(st.one_of(st.sampled_from(_WORD_TOKENS), st.text(max_size=20).map(_escape)),
                                      max_size=40)))
    if draw(st.integers(0, 3)) == 0:
        nest = draw(st.integers(1, 3000))
        body += b"<w:p>" * nest + b"</w:p>" * draw(st.integers(0, nest))
    return body


def _patch_zip(data: bytes, patches: list[tuple[str, int]]) -> bytes:
    """Patch fields of the zip's end record and central directory entries (wrong sizes, counts, methods...)."""
    out = bytearray(data)
    end = out.rfind(b"PK\x05\x06")
    if end < 0:
        return bytes(out)
    entries = []
    (cd_offset,) = struct.unpack_from("<I", out, end + 16)
    at = cd_offset
    while 0 <= at < len(out) - 46 and out[at:at + 4] == b"PK\x01\x02":
        entries.append(at)
        name, extra, comment = struct.unpack_from("<HHH", out, at + 28)
        at += 46 + name + extra + comment
    end_fields = {"disk_entries": (10, "<H"), "total_entries": (8, "<H"), "cd_size": (12, "<I"),
                  "cd_offset": (16, "<I"), "comment_length": (20, "<H")}
    entry_fields = {"flags": (8, "<H"), "method": (10, "<H"), "crc": (16, "<I"), "compressed": (20, "<I"),
                    "uncompressed": (24, "<I"), "name_length": (28, "<H"), "extra_length": (30, "<H"),
                    "local_offset": (42, "<I")}
    for target, value in patches:
        if target in end_fields:
            offset, fmt = end_fields[target]
            struct.pack_into(fmt, out, end + offset, value % (256 ** struct.calcsize(fmt)))
        elif entries:
            name, _, index = target.partition("@")
            offset, fmt = entry_fields[name]
            struct.pack_into(fmt, out, entries[int(index) % len(entries)] + offset,
                             value % (256 ** struct.calcsize(fmt)))
    return bytes(out)


_ZIP_TARGETS = ["disk_entries", "total_entries", "cd_size", "cd_offset", "comment_length",
                *[f"{name}@{n}" for name in ("flags", "method", "crc", "compressed", "uncompressed", "name_length",
                                             "extra_length", "local_offset") for n in range(3)]]
_ZIP_VALUES = st.one_of(st.sampled_from([0, 1, 2, 8, 9, 12, 14, 99, 0xFFFF, 0xFFFFFFFF, 2**31, 1001, 50_000]),
                        st.integers(0, 2**32 - 1))


@st.composite
def docx_documents(draw) -> bytes:
    """A DOCX from random WordprocessingML and extra parts, its zip fields patched at random."""
    body = draw(word_body())
    extra = {}
    for n in range(draw(st.integers(0, 4))):
        extra[draw(st.sampled_from([f"customXml/item{n}.xml", f"customXml/item{n}.xml", "word/document.xml",
                                    "../../evil.xml", "a" * 300,
                                    "word/media/image1.png", "\u00e9/\u2603.xml"]))] = draw(st.binary(max_size=200))
    declaration = draw(st.sampled_from([b"", b"<!DOCTYPE w:document [<!ENTITY e 'x'>]>",
                                        b"<!DOCTYPE d SYSTEM 'http://127.0.0.1:9/x.dtd'>"]))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", draw(st.sampled_from([zipfile.ZIP_DEFLATED, zipfile.ZIP_STORED]))) as archive:
        archive.writestr("[Content_Types].xml", hostile._CONTENT_TYPES)
        archive.writestr("_rels/.rels", hostile._RELS)
        start = hostile._DOCUMENT_START.replace(b"?>", b"?>" + declaration, 1) if declaration else \
            hostile._DOCUMENT_START
        archive.writestr("word/document.xml", start + body + hostile._DOCUMENT_END)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # a part named twice is on purpose
            for name, content in extra.items():
                archive.writestr(name, content)
    data = out.getvalue()
    patches = draw(st.lists(st.tuples(st.sampled_from(_ZIP_TARGETS), _ZIP_VALUES), max_size=3))
    return _patch_zip(data, patches)


def docx_inputs() -> st.SearchStrategy[bytes]:
    seeds = st.sampled_from(docx_seeds())
    built = docx_documents()
    any_docx = st.one_of(seeds, built)
    return st.one_of(seeds, built, built, mutated(any_docx, ZIP_TOKENS, any_docx))


# --- XML ---------------------------------------------------------------------------------

CII = b"urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100"
RAM = b"urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:100"
UBL = b"urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"
UBL_CN = b"urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2"
CBC = b"urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2"
CAC = b"urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2"
FERD = b"urn:ferd:CrossIndustryDocument:invoice:1p0"
_ROOTS = [(b"rsm:CrossIndustryInvoice", b"rsm", CII), (b"Invoice", b"", UBL), (b"CreditNote", b"", UBL_CN),
          (b"rsm:CrossIndustryDocument", b"rsm", FERD), (b"x:Other", b"x", b"urn:other"), (b"Invoice", b"", b"")]
_TAGS = [b"ram:SellerTradeParty", b"ram:Name", b"ram:ID", b"ram:SpecifiedTaxRegistration", b"ram:IBANID",
         b"ram:GrandTotalAmount", b"ram:InvoiceCurrencyCode", b"ram:TaxTotalAmount", b"rsm:ExchangedDocument",
         b"ram:IssueDateTime", b"udt:DateTimeString", b"ram:PayeePartyCreditorFinancialAccount",
         b"ram:ApplicableHeaderTradeSettlement", b"ram:SpecifiedTradeSettlementHeaderMonetarySummation",
         b"cbc:ID", b"cbc:IssueDate", b"cbc:DocumentCurrencyCode", b"cac:AccountingSupplierParty", b"cac:Party",
         b"cac:PartyLegalEntity", b"cbc:RegistrationName", b"cac:PartyTaxScheme", b"cbc:CompanyID",
         b"cac:LegalMonetaryTotal", b"cbc:TaxInclusiveAmount", b"cbc:PayableAmount", b"cac:PaymentMeans",
         b"cac:PayeeFinancialAccount", b"cbc:PaymentMeansCode", b"ram:TypeCode", b"undeclared:Tag", b"x"]
_VALUES = st.one_of(st.text(max_size=40), st.sampled_from([
    "1234.50", "-1", "1e999999", "NaN", "Infinity", "0.000000001", "1" * 200, "20240230", "99991231", "2024-02-30",
    "EUR", "XXX", "eur", "DE89370400440532013000", "DE00", "DE136695976", "380", "381", "58", "59", "&amp;", "",
    "\u202eRTL", "\u0000"]))


def _escape(text: str) -> bytes:
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .encode("utf-8", "surrogatepass"))


@st.composite
def _element(draw, depth: int) -> bytes:
    tag = draw(st.sampled_from(_TAGS))
    attributes = b""
    if draw(st.integers(0, 4)) == 0:
        attributes = draw(st.sampled_from([
            b' currencyID="EUR"', b' format="102"', b' schemeID="VA"', b' xmlns:ram="urn:wrong"', b' xmlns=""',
            b' a="%s"' % (b"x" * 70_000), b' a="&#0;"', b' xml:lang="de"', b" b='<'", b" c=\"&undefined;\""]))
    if depth >= 5 or draw(st.integers(0, 2)) == 0:
        inner = _escape(draw(_VALUES))
    else:
        inner = b"".join(draw(st.lists(_element(depth + 1), max_size=4)))
    return b"<%s%s>%s</%s>" % (tag, attributes, inner, tag)


@st.composite
def xml_tree(draw) -> bytes:
    """An XML with an invoice's (or another) root, CII/UBL elements with random values and
    attributes, namespaces declared, redeclared or missing, and optionally a DOCTYPE, entities,
    deep nesting, an encoding declaration that lies, a BOM or invalid UTF-8."""
    root, prefix, namespace = draw(st.sampled_from(_ROOTS))
    declarations = b' xmlns%s="%s"' % (b":" + prefix if prefix else b"", namespace)
    if draw(st.booleans()):
        declarations += b' xmlns:ram="%s" xmlns:udt="urn:udt" xmlns:cbc="%s" xmlns:cac="%s"' % (RAM, CBC, CAC)
    body = b"".join(draw(st.lists(_element(0), max_size=6)))
    if draw(st.integers(0, 5)) == 0:
        depth = draw(st.integers(1, 5000))
        body += b"<ram:Name>" * depth + b"</ram:Name>" * draw(st.integers(0, depth))
    prolog = draw(st.sampled_from([b"", b'<?xml version="1.0" encoding="UTF-8"?>\n', b"\xef\xbb\xbf",
                                   b'<?xml version="1.0" encoding="ISO-8859-1"?>', b'<?xml version="1.1"?>',
                                   b'<?xml version="1.0" encoding="UTF-16"?>', b'<?xml encoding="bogus"?>',
                                   b"<!-- c -->", b"  \n"]))
    doctype = draw(st.sampled_from([
        b"", b"", b"", b"<!DOCTYPE x>", b'<!DOCTYPE x [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;">]>',
        b'<!DOCTYPE x SYSTEM "file:///etc/passwd">', b"<!doctype x>", b"<!DOCTYPE"]))
    document = prolog + doctype + b"<%s%s>%s</%s>" % (root, declarations, body, root)
    encoding = draw(st.sampled_from(["utf-8", "utf-8", "utf-8", "utf-16", "utf-16-le", "latin-1", "broken"]))
    if encoding == "broken":
        at = draw(st.integers(0, len(document)))
        document = document[:at] + draw(st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x00"])) + document[at:]
    elif encoding != "utf-8":
        document = document.decode("utf-8", "replace").encode(encoding, "replace")
    return document


@st.composite
def xml_values_changed(draw) -> bytes:
    """A corpus invoice with some element values replaced by random ones (amounts, dates, codes)."""
    data = draw(st.sampled_from(xml_seeds()))
    nodes = [m.span() for m in re.finditer(rb">([^<>]{1,80})<", data)]
    for index in sorted(draw(st.lists(st.integers(0, len(nodes) - 1), max_size=6, unique=True)), reverse=True):
        start, end = nodes[index]  # from the last: earlier spans stay where they were
        data = data[:start + 1] + _escape(draw(_VALUES))[:200] + data[end - 1:]
    return data


def xml_inputs() -> st.SearchStrategy[bytes]:
    seeds = st.sampled_from(xml_seeds())
    built = st.one_of(xml_tree(), xml_values_changed())
    any_xml = st.one_of(seeds, built)
    return st.one_of(seeds, built, built, mutated(any_xml, XML_TOKENS, any_xml))


# --- text --------------------------------------------------------------------------------

_LINES = st.one_of(
    st.text(max_size=80),
    st.builds(lambda label, sep, value: f"{label}{sep}{value}",
              st.sampled_from(["Total", "Total amount", "Gesamtbetrag", "IBAN", "VAT", "USt-IdNr.", "Invoice no",
                               "Rechnungsnr.", "Date", "Datum", "Supplier", "Currency", "Montant TTC"]),
              st.sampled_from([":", " ", "  ", "\t", ": ", " " * 300, "#", "\u00a0"]),
              st.one_of(st.text(max_size=30), _VALUES)),
)


@st.composite
def text_documents(draw) -> bytes:
    lines = draw(st.lists(_LINES, max_size=30))
    text = "\n".join(lines)
    if draw(st.integers(0, 6)) == 0:
        text += "Total" + " " * draw(st.integers(0, 20_000))
    data = text.encode("utf-8", "surrogatepass")
    if draw(st.integers(0, 6)) == 0:
        data = b"x" * draw(st.integers(59_000, 70_000)) + data  # around the 20-page limit
    return draw(st.sampled_from([b"", b"\xef\xbb\xbf", b"<", b"< ", b"\xff\xfe"])) + data


def text_inputs() -> st.SearchStrategy[bytes]:
    seeds = st.sampled_from(text_seeds())
    built = text_documents()
    any_text = st.one_of(seeds, built)
    return st.one_of(seeds, built, built, mutated(any_text, TEXT_TOKENS, any_text))


# --- images (scans and photos) ---------------------------------------------------------------

def _picture(fmt: str, size: tuple[int, int] = (240, 90), **save: object) -> bytes:
    from PIL import Image, ImageDraw

    image = Image.new("L", size, 255)
    ImageDraw.Draw(image).text((8, 30), "Invoice INV-7  Total 12.50 EUR", fill=0)
    out = io.BytesIO()
    image.save(out, fmt, **save)
    return out.getvalue()


@functools.cache
def image_seeds() -> list[bytes]:
    """Small real pictures: a PNG, a JPEG, and a TIFF of each byte order and of two pages."""
    from PIL import Image

    two = io.BytesIO()
    first = Image.open(io.BytesIO(_picture("PNG")))
    first.save(two, "TIFF", save_all=True, append_images=[first.copy()])
    return [_picture("PNG"), _picture("JPEG", quality=60), _picture("TIFF"), two.getvalue(),
            _picture("TIFF", compression="tiff_lzw")]


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


@st.composite
def png_headers(draw) -> bytes:
    """A PNG whose IHDR declares any size, with a small or absent pixel stream."""
    width, height = draw(st.integers(0, 2**32 - 1)), draw(st.integers(0, 2**32 - 1))
    if draw(st.booleans()):
        width, height = draw(st.integers(1, 64)), draw(st.integers(1, 64))
    ihdr = struct.pack(">IIBBBBB", width, height, draw(st.sampled_from([1, 8, 16, 3])),
                       draw(st.sampled_from([0, 2, 3, 4, 6, 7])), 0, 0, draw(st.integers(0, 1)))
    rows = zlib.compress(b"\x00" * draw(st.integers(0, 4096)))
    chunks = [_png_chunk(b"IHDR", ihdr), _png_chunk(b"IDAT", rows), _png_chunk(b"IEND", b"")]
    return b"\x89PNG\r\n\x1a\n" + b"".join(draw(st.permutations(chunks)) if draw(st.integers(0, 4)) == 0 else chunks)


@st.composite
def jpeg_headers(draw) -> bytes:
    """A JPEG's marker segments with any frame size, lengths that lie and segments cut short."""
    segments = [b"\xff\xd8"]
    for _ in range(draw(st.integers(0, 6))):
        marker = draw(st.sampled_from([0xE0, 0xE1, 0xDB, 0xC4, 0xFE, 0xFF, 0x01, 0xD0]))
        body = draw(st.binary(max_size=40))
        length = draw(st.one_of(st.just(len(body) + 2), st.integers(0, 0xFFFF)))
        segments.append(bytes([0xFF, marker]) + struct.pack(">H", length) + body)
    height, width = draw(st.integers(0, 0xFFFF)), draw(st.integers(0, 0xFFFF))
    frame = struct.pack(">BHHB", 8, height, width, 1) + b"\x01\x11\x00"
    segments.append(bytes([0xFF, draw(st.sampled_from([0xC0, 0xC1, 0xC2, 0xCF]))])
                    + struct.pack(">H", len(frame) + 2) + frame)
    segments.append(b"\xff\xda" + draw(st.binary(max_size=64)) + b"\xff\xd9")
    return b"".join(segments)[:draw(st.integers(2, 4096))]


@st.composite
def tiff_chains(draw) -> bytes:
    """A TIFF's chain of image directories: any sizes, entry counts, offsets, loops and cuts."""
    order = draw(st.sampled_from(["<", ">"]))
    count = draw(st.integers(1, 30))
    data = bytearray((b"II*\x00" if order == "<" else b"MM\x00*") + struct.pack(order + "I", 8))
    for index in range(count):
        entries = [(256, 4, 1, draw(st.integers(0, 2**32 - 1))), (257, 3, 1, draw(st.integers(0, 0xFFFF))),
                   (259, 3, 1, 1), (262, 3, 1, 1)]
        here = len(data)
        data += struct.pack(order + "H", len(entries) if draw(st.integers(0, 9)) else draw(st.integers(0, 0xFFFF)))
        for tag, kind, n, value in entries:
            data += struct.pack(order + "HHI", tag, kind, n) + struct.pack(order + ("H2x" if kind == 3 else "I"), value)
        last = index == count - 1
        following = 0 if last else here + 2 + 12 * len(entries) + 4
        if draw(st.integers(0, 9)) == 0:
            following = draw(st.sampled_from([here, 8, 2**32 - 1, len(data) + 10_000]))  # a loop, or out of the file
        data += struct.pack(order + "I", following)
    return bytes(data)[:draw(st.integers(8, len(data)))]


IMAGE_TOKENS = [b"\x89PNG\r\n\x1a\n", b"IHDR", b"IEND", b"\xff\xd8", b"\xff\xc0", b"\xff\xda", b"\xff\xd9",
                b"II*\x00", b"MM\x00*", b"\xff\xff\xff\xff", b"\x00\x00\x00\x00"]


# --- hostile image headers: every frame, animation and metadata header a decoder reads ----------

_SIDES = st.one_of(st.integers(1, 64), st.integers(0, 0xFFFF), st.sampled_from([40_000, 30_001, 7_072, 1]))


def _jpeg_segment(marker: int, body: bytes, *, length: int | None = None) -> bytes:
    return bytes([0xFF, marker]) + struct.pack(">H", (len(body) + 2 if length is None else length) % 65536) + body


@st.composite
def frame_header(draw) -> bytes:
    marker = draw(st.sampled_from([0xC0, 0xC1, 0xC2, 0xC3, 0xC9, 0xCF, 0xDE]))
    bits, layers = draw(_mostly(8, [12, 16, 0])), draw(_mostly(1, [3, 4, 2, 0]))
    body = struct.pack(">BHHB", bits, draw(_SIDES), draw(_SIDES), layers) + b"\x01\x11\x00" * max(1, layers)
    return _jpeg_segment(marker, body)


@st.composite
def exif_block(draw) -> bytes:
    """A TIFF structure as EXIF holds it: an orientation (any value), entry counts and offsets that lie."""
    order = draw(st.sampled_from(["<", ">"]))
    entries = [(274, 3, 1, struct.pack(order + "HH", draw(st.integers(0, 12)), 0))]
    if draw(st.booleans()):
        entries.append((34665, 4, 1, struct.pack(order + "I", draw(st.integers(0, 2**32 - 1)))))
    if draw(st.booleans()):
        entries.append((draw(st.integers(0, 0xFFFF)), draw(st.integers(0, 20)), draw(st.integers(0, 2**32 - 1)),
                        struct.pack(order + "I", draw(st.integers(0, 2**32 - 1)))))
    count = draw(_mostly(len(entries), [0, 0xFFFF, 501]))
    body = b"".join(struct.pack(order + "HHI", tag, kind, n) + value for tag, kind, n, value in entries)
    return (b"II*\x00" if order == "<" else b"MM\x00*") + struct.pack(order + "IH", 8, count) + body + b"\x00" * 4


@st.composite
def icc_chunks(draw) -> bytes:
    """An ICC profile in APP2 chunks: sequence numbers and counts that lie, a size up to a few hundred KB."""
    size = draw(st.one_of(st.integers(0, 4_000), st.integers(0, 300_000)))
    profile = struct.pack(">I", draw(st.one_of(st.just(size), st.integers(0, 2**32 - 1)))) + b"\x00" * size
    pieces = [profile[at:at + 65_000] for at in range(0, len(profile), 65_000)]
    total = draw(_mostly(len(pieces), [0, 1, 255]))
    return b"".join(_jpeg_segment(0xE2, b"ICC_PROFILE\x00" + bytes([draw(_mostly(n % 256, [0, 1, 255])), total % 256])
                                  + piece) for n, piece in enumerate(pieces, 1))


@st.composite
def jpeg_frames(draw) -> bytes:
    """A real small JPEG with more frame headers: before its scan (the decoder takes the last), after
    it, in a second picture after its end, inside a thumbnail; and ICC and EXIF segments."""
    data = draw(st.sampled_from([image_seeds()[1], _picture("JPEG", (60, 40), progressive=True)]))
    scan = data.index(b"\xff\xda")
    head, rest = data[2:scan], data[scan:]
    extra = b"".join(draw(st.lists(st.one_of(
        frame_header(), icc_chunks(), exif_block().map(lambda exif: _jpeg_segment(0xE1, b"Exif\x00\x00" + exif)),
        st.tuples(exif_block(), frame_header()).map(  # a thumbnail's frame header inside the EXIF segment
            lambda pair: _jpeg_segment(0xE1, b"Exif\x00\x00" + pair[0] + b"\xff\xd8" + pair[1]))),
        max_size=4)))
    where = draw(st.sampled_from(["before", "before", "after-scan", "second-picture", "after-end"]))
    if where == "before":
        return data[:2] + head + extra + rest
    if where == "after-scan":
        end = data.rindex(b"\xff\xd9")
        return data[:end] + extra + data[end:]
    if where == "second-picture":
        return data + b"\xff\xd8" + extra + draw(frame_header()) + b"\xff\xda\x00\x08\x01\x01\x00\x00\x3f\x00\xff\xd9"
    return data + extra  # after the end: no decoder reads it


@st.composite
def apng_frames(draw) -> bytes:
    """A real small PNG made an animation (acTL, fcTL frames of any size and place), with iCCP and eXIf."""
    data = image_seeds()[0]
    end_of_ihdr = 8 + 8 + 13 + 4
    chunks = []
    frames = draw(st.integers(0, 4))
    if frames or draw(st.booleans()):
        declared = draw(st.one_of(st.just(frames), st.integers(0, 2**32 - 1)))
        chunks.append(_png_chunk(b"acTL", struct.pack(">II", declared, 0)))
    for n in range(frames):
        # Each defect on its own and rarer than the sound frame, so that many animations are read.
        width, height = (240, 90) if draw(st.integers(0, 5)) else draw(st.one_of(
            st.sampled_from([(120, 45), (241, 90), (0, 1)]), st.tuples(_SIDES, _SIDES)))
        x, y = (0, 0) if draw(st.integers(0, 5)) else draw(st.sampled_from([(1, 0), (0, 45), (2**31, 0)]))
        chunks.append(_png_chunk(b"fcTL", struct.pack(">IIIIIHHBB", n, width, height, x, y, 1, 10,
                                                       draw(st.integers(0, 3)), draw(st.integers(0, 2)))))
    if draw(st.booleans()):
        profile = draw(st.one_of(st.binary(max_size=64), st.integers(0, 3_000_000).map(lambda n: b"\x00" * n)))
        chunks.append(_png_chunk(b"iCCP", b"icc\x00\x00" + zlib.compress(profile, 9)))
    if draw(st.booleans()):
        chunks.append(_png_chunk(b"eXIf", draw(exif_block())))
    chunks = draw(st.permutations(chunks))
    return data[:end_of_ihdr] + b"".join(chunks) + data[end_of_ihdr:]


@st.composite
def tiff_pages(draw) -> bytes:
    """A real TIFF of one to four pages, each page's width and length patched (any type and count),
    with an ICC tag and an EXIF directory of any size."""
    from PIL import Image

    pages = draw(st.integers(1, 4))
    first = Image.open(io.BytesIO(_picture("PNG", (40, 30))))
    out = io.BytesIO()
    first.save(out, "TIFF", save_all=True, append_images=[first.copy() for _ in range(pages - 1)])
    data = bytearray(out.getvalue())
    (offset,) = struct.unpack_from("<I", data, 4)
    while offset and offset + 2 <= len(data):
        (entries,) = struct.unpack_from("<H", data, offset)
        for index in range(entries):
            at = offset + 2 + 12 * index
            tag = struct.unpack_from("<H", data, at)[0]
            if tag in (256, 257) and draw(st.integers(0, 2)) == 0:
                sound = draw(st.integers(0, 4)) > 0  # else a type or a count a scanner never writes
                kind, count = (4, 1) if sound else (draw(st.sampled_from([3, 1, 5, 16])),
                                                    draw(st.sampled_from([0, 1, 2])))
                struct.pack_into("<HHII", data, at, tag, kind, count, draw(_SIDES))
            elif tag == 262 and draw(st.integers(0, 3)) == 0:  # this entry becomes an ICC tag, or an EXIF pointer
                target = draw(st.sampled_from([34675, 34665]))
                struct.pack_into("<HHII", data, at, target, 4 if target == 34665 else 7,
                                 draw(st.integers(0, 2_000_000)) if target == 34675 else 1, len(data))
                data += draw(exif_block()) if target == 34665 else b""
        (offset,) = struct.unpack_from("<I", data, offset + 2 + 12 * entries)
    return bytes(data)


@st.composite
def gif_frames(draw) -> bytes:
    """A GIF of a few frames whose logical screen and image descriptors declare any size: not a format
    the review reads, so refused before any decoder sees it."""
    from PIL import Image

    frames = [Image.new("L", (20, 10), shade) for shade in range(0, 250, 250 // draw(st.integers(1, 4)))]
    out = io.BytesIO()
    frames[0].save(out, "GIF", save_all=True, append_images=frames[1:])
    data = bytearray(out.getvalue())
    struct.pack_into("<HH", data, 6, draw(_SIDES), draw(_SIDES))
    at = data.find(b"\x2c")
    while at > 0 and at + 9 <= len(data):
        struct.pack_into("<HH", data, at + 5, draw(_SIDES), draw(_SIDES))
        at = data.find(b"\x2c", at + 10)
    return bytes(data)


def image_header_inputs() -> st.SearchStrategy[bytes]:
    """Real small pictures whose frame, animation, page and metadata headers say what they like."""
    built = st.one_of(jpeg_frames(), jpeg_frames(), apng_frames(), apng_frames(), tiff_pages(), tiff_pages(),
                      gif_frames())
    tokens = [*IMAGE_TOKENS, b"\xff\xc2", b"fcTL", b"acTL", b"iCCP", b"eXIf", b"ICC_PROFILE\x00", b"Exif\x00\x00"]
    return st.one_of(built, built, built, mutated(built, tokens, built))


def image_inputs() -> st.SearchStrategy[bytes]:
    seeds = st.sampled_from(image_seeds())
    built = st.one_of(png_headers(), jpeg_headers(), tiff_chains())
    any_image = st.one_of(seeds, built)
    return st.one_of(seeds, built, built, mutated(any_image, IMAGE_TOKENS, any_image))
