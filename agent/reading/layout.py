"""Where each word stands on an invoice's pages: the reading the field rules work on.

An invoice is a form, not prose: a label and its value share a line with a wide gap
between them, or the value sits under the label, or a block of labels faces a block of
values. Reading it line by line from a text dump loses that, so a PDF is read with the
position of every character (pypdfium2: pdfium's text layer, in C), grouped into words
(a blank or a gap breaks a word) and words into lines (shared vertical band), in reading
order: top to bottom, then left to right. A wide horizontal gap stays visible in a line's
text as several spaces, so columns can be told apart in the text as well as by the boxes.

Plain text and DOCX have no positions: their lines come without boxes (``from_text``).
The whole reading is bounded by ``documents.MAX_TEXT_CHARS`` characters, and a PDF passes
the same structural checks as ``documents.read_text`` first, raising the same refusals.
"""

from __future__ import annotations

import ctypes
import itertools
import logging
import sys
from dataclasses import dataclass, field
from typing import Any

from documents.errors import DamagedDocument

from . import documents

log = logging.getLogger("agent.layout")

# A gap wider than this many line heights between two words is a column gap: the line's
# text shows it as two or more spaces (one space per half line height, at most MAX_GAP).
COLUMN_GAP = 0.8
MAX_GAP = 8
BOX_COORDINATES = 4  # a box on a page: x0, top, x1, bottom
_CONFIDENCE = 5  # where a stored word keeps its OCR confidence (a text layer's words have none)
_SURROGATES = range(0xD800, 0xE000)  # UTF-16 halves: pdfium hands an emoji or a symbol over as two
# Typographic ligatures and soft hyphens, read as the letters a label is spelt with ("Identiﬁkation").
_SPELLING = str.maketrans({"\ufb00": "ff", "\ufb01": "fi", "\ufb02": "fl", "\ufb03": "ffi", "\ufb04": "ffl",
                           "\ufb05": "st", "\ufb06": "st", "\u00ad": None})
# Characters turned at more than this angle (radians) are margin notes or stamps, not lines.
MAX_ANGLE = 0.1


@dataclass(frozen=True)
class Word:
    """A word and its box in PDF points, origin at the page's top-left corner; ``conf`` is OCR's
    confidence in it (0-100), None for a text layer's word."""

    text: str
    x0: float
    top: float
    x1: float
    bottom: float
    conf: float | None = None


@dataclass
class Line:
    """One printed line of a page: its words left to right, and its text with gaps kept."""

    page: int
    words: list[Word]
    text: str

    @property
    def box(self) -> list[float] | None:
        if not self.words:
            return None
        return [min(w.x0 for w in self.words), min(w.top for w in self.words),
                max(w.x1 for w in self.words), max(w.bottom for w in self.words)]


@dataclass
class Layout:
    """A document's lines in reading order, page by page, with the page sizes in points."""

    pages: int
    lines: list[Line]
    sizes: list[list[float]] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "\n".join(line.text for line in self.lines)

    def to_json(self) -> dict[str, Any]:
        """A compact JSON-safe form: a line is [page, text, [[word, x0, top, x1, bottom], ...]], an OCR
        word with its confidence last."""
        lines: list[list[Any]] = []
        size = 0
        for line in self.lines:
            size += len(line.text) + 1
            if size > documents.MAX_TEXT_CHARS:
                break
            lines.append([line.page, line.text,
                          [[w.text, round(w.x0, 1), round(w.top, 1), round(w.x1, 1), round(w.bottom, 1)]
                           + ([round(w.conf)] if w.conf is not None else []) for w in line.words]])
        return {"pages": self.pages, "sizes": [[round(w, 1), round(h, 1)] for w, h in self.sizes], "lines": lines}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Layout:
        lines = [Line(page=int(page), text=str(text),
                      words=[Word(str(w[0]), float(w[1]), float(w[2]), float(w[3]), float(w[4]),
                                  float(w[_CONFIDENCE]) if len(w) > _CONFIDENCE else None) for w in words])
                 for page, text, words in data.get("lines", [])]
        return cls(pages=int(data.get("pages", 1)), lines=lines,
                   sizes=[[float(w), float(h)] for w, h in data.get("sizes", [])])

    @classmethod
    def from_text(cls, text: str) -> Layout:
        """Lines without boxes; a page is every ``documents.CHARS_PER_PAGE`` characters."""
        text = text[:documents.MAX_TEXT_CHARS]
        lines: list[Line] = []
        at = 0
        for raw in text.splitlines():
            page = at // documents.CHARS_PER_PAGE + 1
            at += len(raw) + 1
            lines.append(Line(page=page, words=[], text=raw))
        return cls(pages=max(1, -(-len(text) // documents.CHARS_PER_PAGE)), lines=lines, sizes=[])


def read_layout(content: bytes, media_type: str) -> Layout:
    """The document's lines, with word boxes for a PDF; raises the ``jobs.errors`` refusals."""
    if media_type != documents.PDF:
        return Layout.from_text(documents.read_text(content, media_type).text)
    _reader, pages = documents.pdf_reader(content)  # structure limits first, as read_text does
    documents.check_pages(pages)
    try:
        read = _pdf_layout(content)
    except MemoryError:
        raise
    except Exception as exc:  # noqa: BLE001  pdfium refuses what pypdf tolerated: read the text as pypdf does
        log.warning("pdf layout unreadable, reading text only: %s", type(exc).__name__)
        return Layout.from_text(documents.read_text(content, media_type).text)
    if read.text.strip():
        return read
    # No text at all: a scan, or a document pdfium shrugs off and pypdf finds damaged (a recursive
    # content stream). pypdf decides, so such a document is refused exactly as read_text refuses it.
    text = documents.read_text(content, media_type).text
    return read if not text.strip() else Layout(pages=read.pages, lines=Layout.from_text(text).lines, sizes=read.sizes)


def _pdf_layout(content: bytes) -> Layout:
    import pypdfium2 as pdfium
    from pypdfium2 import raw

    try:
        document = pdfium.PdfDocument(content)
    except pdfium.PdfiumError:
        raise DamagedDocument(documents.DAMAGED_PDF, field="document") from None
    lines: list[Line] = []
    sizes: list[list[float]] = []
    budget = documents.MAX_TEXT_CHARS
    try:
        for number in range(len(document)):
            page = document[number]
            width, height = page.get_size()
            sizes.append([width, height])
            if budget <= 0:
                page.close()
                continue
            textpage = page.get_textpage()
            try:
                words = _page_words(raw, textpage.raw, height, budget)
            finally:
                textpage.close()
                page.close()
            for line in lines_of_words(number + 1, words):
                budget -= len(line.text) + 1
                if budget < 0:
                    break
                lines.append(line)
        return Layout(pages=len(sizes), lines=lines, sizes=sizes)
    finally:
        document.close()


def _page_words(raw: Any, textpage: Any, height: float, budget: int) -> list[Word]:
    """The page's words from its characters: a blank, a turn, a new line or a gap ends a word."""
    count = min(raw.FPDFText_CountChars(textpage), budget)
    rect = raw.FS_RECTF()
    words: list[Word] = []
    chars: list[str] = []
    x0 = top = x1 = bottom = 0.0
    for index in range(max(count, 0)):
        code = raw.FPDFText_GetUnicode(textpage, index)
        if code in _SURROGATES:  # half of a UTF-16 pair: an emoji or a symbol, never a field's text
            continue
        char = chr(code) if 0 < code <= sys.maxunicode else ""
        if not char or char.isspace() or char in "\ufffe\uffff\x00" or not char.isprintable():
            if chars:
                words.append(_word(chars, x0, top, x1, bottom))
                chars = []
            continue
        if abs(raw.FPDFText_GetCharAngle(textpage, index)) > MAX_ANGLE and \
                abs(raw.FPDFText_GetCharAngle(textpage, index) - 6.283185) > MAX_ANGLE:
            continue
        if not raw.FPDFText_GetLooseCharBox(textpage, index, ctypes.byref(rect)):
            continue
        c_x0, c_x1 = rect.left, rect.right
        c_top, c_bottom = height - rect.top, height - rect.bottom
        if chars:
            size = max(bottom - top, c_bottom - c_top, 1.0)
            middle = (c_top + c_bottom) / 2
            same_line = top - 0.1 * size <= middle <= bottom + 0.1 * size
            if not same_line or c_x0 - x1 > 0.25 * size or c_x0 < x0 - 0.5 * size:
                words.append(_word(chars, x0, top, x1, bottom))
                chars = []
        if not chars:
            x0, top, x1, bottom = c_x0, c_top, c_x1, c_bottom
        else:
            x1, top, bottom = max(x1, c_x1), min(top, c_top), max(bottom, c_bottom)
        chars.append(char)
    if chars:
        words.append(_word(chars, x0, top, x1, bottom))
    return [word for word in words if word.text]


def _word(chars: list[str], x0: float, top: float, x1: float, bottom: float) -> Word:
    return Word("".join(chars).translate(_SPELLING), x0, top, x1, bottom)


def lines_of_words(page: int, words: list[Word]) -> list[Line]:
    """Words grouped into lines by their vertical band, top to bottom, each left to right."""
    bands: list[tuple[float, float, list[Word]]] = []  # top, bottom, words
    for word in sorted(words, key=lambda w: ((w.top + w.bottom) / 2, w.x0)):
        middle = (word.top + word.bottom) / 2
        if bands:
            top, bottom, members = bands[-1]
            if top <= middle <= bottom:  # the band of the line's first word: a tall word does not widen it
                members.append(word)
                continue
        bands.append((word.top, word.bottom, [word]))
    lines = []
    for _top, _bottom, members in bands:
        members.sort(key=lambda w: w.x0)
        lines.append(Line(page=page, words=members, text=_joined(members)))
    return lines


def _joined(words: list[Word]) -> str:
    """The words' text with one space between neighbours and several across a column gap."""
    heights = sorted(w.bottom - w.top for w in words)
    size = max(heights[len(heights) // 2], 1.0)
    parts = [words[0].text]
    for before, word in itertools.pairwise(words):
        gap = word.x0 - before.x1
        blanks = 1 if gap < COLUMN_GAP * size else min(MAX_GAP, max(2, round(gap / (0.5 * size))))
        parts.append(" " * blanks + word.text)
    return "".join(parts)
