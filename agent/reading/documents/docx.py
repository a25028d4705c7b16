"""A DOCX checked from its zip's central directory, and its main part's text streamed within bounds."""

from __future__ import annotations

import io
import logging
import struct
import zipfile
import zlib
from xml.parsers import expat

from documents.errors import DamagedDocument, DocumentTooComplex, DocumentUnpacksTooLarge, UnsupportedDocument

from .rules import (
    DAMAGED_DOCX,
    DOCX_COMPRESSION,
    DOCX_MAIN_PART,
    DOCX_RATIO_FROM_BYTES,
    MAX_DOCX_ELEMENTS,
    MAX_DOCX_PART_BYTES,
    MAX_DOCX_PARTS,
    MAX_DOCX_RATIO,
    MAX_DOCX_UNPACKED_BYTES,
    MAX_TEXT_CHARS,
    megabytes,
    part_name,
    unrecognised,
)

log = logging.getLogger("agent.documents")

ZIP_MAGIC = b"PK\x03\x04"
_ZIP_END = b"PK\x05\x06"
_ZIP_ENTRY = b"PK\x01\x02"  # a central directory entry's signature


def check_docx(content: bytes) -> dict[str, zipfile.ZipInfo]:
    """The DOCX's parts by name, once its declared structure is within every limit.

    Reads the zip's end record (for the part count) and then its central directory (for
    each part's declared sizes); inflates nothing. Python's zipfile never inflates a part
    past its declared size (a part that lies fails its CRC check), so the declared sizes
    bound what extraction can be made to unpack.
    """
    infos = docx_parts(content)
    parts = {info.filename: info for info in infos}
    if DOCX_MAIN_PART not in parts:
        raise unrecognised()
    if len(parts) < len(infos):  # readers disagree on which copy of a part counts
        raise DamagedDocument("the DOCX is damaged (it names a part twice) and cannot be read; submit a new copy",
                              field="document")
    total = 0
    for info in infos:
        part = part_name(info.filename)
        if info.compress_type not in DOCX_COMPRESSION:
            raise UnsupportedDocument(f"the DOCX packs {part} with a compression method Word does not use; "
                                      "save it again from your word processor", field="document")
        if info.flag_bits & 0x1:
            raise UnsupportedDocument("the DOCX is encrypted; send it without a password", field="document")
        if info.file_size > MAX_DOCX_PART_BYTES:
            raise DocumentUnpacksTooLarge(f"{part} unpacks to {megabytes(info.file_size)}; at most "
                                          f"{megabytes(MAX_DOCX_PART_BYTES)} per part is accepted", field="document")
        ratio = info.file_size / max(info.compress_size, 1)
        if info.file_size > DOCX_RATIO_FROM_BYTES and ratio > MAX_DOCX_RATIO:
            raise DocumentUnpacksTooLarge(f"{part} unpacks to {ratio:,.0f} times its packed size; at most "
                                          f"{MAX_DOCX_RATIO} times is accepted for a part over "
                                          f"{megabytes(DOCX_RATIO_FROM_BYTES)}", field="document")
        total += info.file_size
    if total > MAX_DOCX_UNPACKED_BYTES:
        raise DocumentUnpacksTooLarge(f"the DOCX unpacks to {megabytes(total)}; at most "
                                      f"{megabytes(MAX_DOCX_UNPACKED_BYTES)} is accepted", field="document")
    return parts


def docx_parts(content: bytes) -> list[zipfile.ZipInfo]:
    """The zip's directory, read only once its end record declares a bounded part count."""
    declared = _zip_declared_parts(content)
    if declared is not None and declared > MAX_DOCX_PARTS:
        raise DocumentTooComplex(_too_many_parts(declared), field="document")
    # zipfile reads entries for as many bytes as the end record gives the directory, not
    # for as many entries as it declares: an end record may understate them. Every entry
    # starts with its signature, so counting those bounds what zipfile can be made to build.
    entries = content.count(_ZIP_ENTRY)
    if entries > MAX_DOCX_PARTS:
        raise DocumentTooComplex(_too_many_parts(entries), field="document")
    try:
        with zipfile.ZipFile(io.BytesIO(content)) as archive:
            infos = archive.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, EOFError, OSError):
        raise unrecognised() from None
    if len(infos) > MAX_DOCX_PARTS:
        raise DocumentTooComplex(_too_many_parts(len(infos)), field="document")
    return infos


def _zip_declared_parts(content: bytes) -> int | None:
    """The number of entries the zip's end record declares (ZIP64's marker counts as many).

    Read before ``zipfile`` builds an object per entry: 5 MB can describe ~100,000 of them.
    """
    at = content.rfind(_ZIP_END, max(0, len(content) - 22 - 0xFFFF))
    if at < 0 or at + 22 > len(content):
        return None
    entries: int = struct.unpack_from("<H", content, at + 10)[0]
    return entries


def _too_many_parts(count: int) -> str:
    return f"the DOCX has {count:,} parts; at most {MAX_DOCX_PARTS:,} are accepted"


def docx_text(content: bytes) -> str:
    """The main part's text, streamed: no tree, at most MAX_TEXT_CHARS and MAX_DOCX_ELEMENTS."""
    parts = check_docx(content)
    reader = DocxText()
    parser = reader.parser()
    try:
        with zipfile.ZipFile(io.BytesIO(content)) as archive, archive.open(parts[DOCX_MAIN_PART]) as part:
            while chunk := part.read(64 * 1024):
                parser.Parse(chunk, False)
            parser.Parse(b"", True)
    except _Enough:
        pass
    except (expat.ExpatError, zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError, RuntimeError,
            NotImplementedError) as exc:
        log.warning("docx unreadable: %s", type(exc).__name__)
        raise DamagedDocument(DAMAGED_DOCX, field="document") from None
    return "".join(reader.parts)


class _Enough(Exception):
    """The text limit is reached: stop reading, keep what was read."""


class DocxText:
    """The text of WordprocessingML, from parser events (python-docx's reading, without a tree).

    Paragraphs end with a newline (at most one blank line in a row); a table row is its
    cells joined by two spaces (the field patterns read "IBAN  NL91 ..." as a label and
    its value); tabs and breaks inside runs become tab and newline. ``mc:Fallback``
    repeats its ``mc:Choice`` for old readers and is skipped.
    """

    W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
    MC = "http://schemas.openxmlformats.org/markup-compatibility/2006"

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.size = 0
        self.newlines = 0  # newlines just emitted, in a row
        self.elements = 0
        self.in_text = False
        self.runs = 0  # open w:r elements
        self.skipping = 0  # depth inside mc:Fallback
        self.rows: list[int] = []  # per open w:tr: cells started
        self.cells: list[bool] = []  # per open w:tc: a paragraph has ended in it

    def parser(self) -> expat.XMLParserType:
        parser = expat.ParserCreate(namespace_separator=" ")
        parser.buffer_text = True
        parser.StartElementHandler = self.start
        parser.EndElementHandler = self.end
        parser.CharacterDataHandler = self.characters
        # Word never writes a DTD: refusing one refuses every entity trick with it.
        parser.StartDoctypeDeclHandler = self.doctype
        parser.EntityDeclHandler = self.doctype
        return parser

    def emit(self, text: str) -> None:
        if text == "\n":
            if self.newlines >= 2:  # one blank line is layout; a thousand are padding
                return
            self.newlines += 1
        else:
            self.newlines = 0
        self.parts.append(text)
        self.size += len(text)
        if self.size > MAX_TEXT_CHARS:
            raise _Enough

    def start(self, name: str, attributes: dict[str, str]) -> None:
        self.elements += 1
        if self.elements > MAX_DOCX_ELEMENTS:
            raise DocumentTooComplex(f"the DOCX has more than {MAX_DOCX_ELEMENTS:,} XML elements in its text; "
                                     f"at most {MAX_DOCX_ELEMENTS:,} are read", field="document")
        if self.skipping or name == f"{self.MC} Fallback":
            self.skipping += 1
            return
        ns, _, tag = name.rpartition(" ")
        if ns != self.W:
            return
        if tag == "r":
            self.runs += 1
        elif tag == "t":
            self.in_text = True
        elif tag == "p":
            if self.cells and self.cells[-1]:
                self.emit("\n")  # a second paragraph in the same table cell
        elif tag == "tr":
            self.rows.append(0)
        elif tag == "tc":
            if self.rows:
                if self.rows[-1]:
                    self.emit("  ")
                self.rows[-1] += 1
            self.cells.append(False)
        elif self.runs and tag in ("tab", "ptab"):
            self.emit("\t")
        elif self.runs and tag in ("br", "cr"):
            self.emit("\n")
        elif self.runs and tag == "noBreakHyphen":
            self.emit("-")

    def end(self, name: str) -> None:
        if self.skipping:
            self.skipping -= 1
            return
        ns, _, tag = name.rpartition(" ")
        if ns != self.W:
            return
        if tag == "r":
            self.runs -= 1
        elif tag == "t":
            self.in_text = False
        elif tag == "p":
            if self.cells:
                self.cells[-1] = True
            else:
                self.emit("\n")
        elif tag == "tc" and self.cells:
            self.cells.pop()
        elif tag == "tr" and self.rows:
            self.rows.pop()
            self.emit("\n")

    def characters(self, data: str) -> None:
        if self.in_text and not self.skipping:
            self.emit(data)

    def doctype(self, *args: object) -> None:
        raise expat.ExpatError("a document type declaration in a DOCX part")
