"""The page cut into columns, the blocks (seller, buyer) they stand in, and a label's value beside or under it."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..layout import Layout, Line, Word
from .patterns import BUYER_HEADING, NUMERIC_DATE, POSTCODE, SELLER_HEADING, SENDER_SCAN, SENDER_SEPARATOR
from .values import date_in_text, is_heading, name_like

# The page is cut into columns: a line's words with no wide gap between them. A label is
# searched inside one column; its value is the rest of that column, else the next column to
# its right on the same line, else the column just under it (a label/value block, or a
# table's header over its row). Identifiers with check digits (VAT ids, IBANs) are also
# found anywhere on the page, and whose they are is told by the block they stand in.

# Pseudo positions for lines without boxes (plain text, DOCX): a character is this wide
# and a line this tall, so the same column rules apply to text laid out with spaces.
_CHAR_WIDTH = 5.0
_LINE_HEIGHT = 12.0
# How far under a label its value may stand, in line heights, and lines looked at.
_BELOW_LINES = 3
_BELOW_HEIGHTS = 3.2
# A block (seller, buyer) runs this many line heights under its heading.
BLOCK_HEIGHTS = 14
# A block (an address) is at most this wide, in points, from its heading's left edge.
BLOCK_WIDTH = 220
# Block headings kept (an invoice has a few: seller, buyer, delivery address).
_MAX_HEADINGS = 100
# Labels stand at most this far into a column.
_LABEL_WINDOW = 160
# Words a label may carry before its value in the next column ("Gesamtsumme brutto", "Total (EUR)").
_MAX_QUALIFIER = 25
_NARROW_SPACES = str.maketrans({"\u00a0": " ", "\u202f": " ", "\u2009": " ", "\u2007": " "})
_SPLIT = re.compile(r"\S+(?: \S+)*")  # a column of text: words joined by single spaces
_SEPARATORS = re.compile(r"(?:[\s:#=.–|]|-(?!\d))*+")
# A label's own words in parentheses after it ("Total de plata (col 5 + col 6)", "Total (2 items)",
# "Amount (EUR)"): the numbers inside are no value. Parentheses around digits alone are one: "(12.50)".
_QUALIFIER = re.compile(r"\s*\((?=[^()]*[^\W\d_])[^()]{1,40}\)")


@dataclass
class Column:
    """Words of one line with no wide gap between them, and where they stand."""

    page: int
    line: int  # index in the layout's lines
    text: str
    x0: float
    top: float
    x1: float
    bottom: float
    words: list[Word] | None  # None for text without positions
    starts: list[int]  # each word's offset in ``text``
    head: str = field(init=False, default="")

    def box(self, start: int = 0, end: int | None = None) -> list[float] | None:
        """The box of the words holding ``text[start:end]``, or None without positions."""
        if not self.words:
            return None
        end = len(self.text) if end is None else end
        chosen = [w for w, at in zip(self.words, self.starts, strict=False) if at < end and at + len(w.text) > start]
        chosen = chosen or self.words
        return [round(min(w.x0 for w in chosen), 1), round(min(w.top for w in chosen), 1),
                round(max(w.x1 for w in chosen), 1), round(max(w.bottom for w in chosen), 1)]

    def __post_init__(self) -> None:
        # Where a label is looked for: the start of the column (a long column is prose, not a form).
        self.head = self.text[:_LABEL_WINDOW]

    @property
    def height(self) -> float:
        return max(self.bottom - self.top, 1.0)


@dataclass
class Found:
    """A value read off the page, with where it was read and how sure the reading is."""

    value: str
    column: Column
    start: int
    end: int
    rank: int = 0  # lower is stronger
    role: str = ""  # seller | buyer | "" for identifiers
    printed: str = ""  # the rest of the column from the value on, as printed ("EUR 12.00")

    def evidence(self, layout: Layout) -> dict[str, Any]:
        return {"source": "text", "page": self.column.page, "text": _printed(layout.lines[self.column.line].text),
                "box": self.column.box(self.start, self.end), "element": None}


def _printed(text: str) -> str:
    return re.sub(r" {3,}", "   ", text.strip())[:200]


class Page:
    """The layout cut into columns, with the blocks (seller, buyer) they stand in."""

    def __init__(self, layout: Layout) -> None:
        self.layout = layout
        self.memo: dict[str, Any] = {}  # what a reader found once and another weighs again (the buyer's name)
        self.columns: list[Column] = []
        self.by_line: list[list[Column]] = []
        self.heights: dict[int, float] = {}
        rows: dict[int, int] = {}
        for index, line in enumerate(layout.lines):
            if line.words:
                columns = self._word_columns(index, line)
            else:
                row = rows.get(line.page, 0)
                rows[line.page] = row + 1
                columns = self._text_columns(index, line, row)
            self.by_line.append(columns)
            self.columns.extend(columns)
        for column in self.columns:  # text without sizes: a page is as tall as its lines
            self.heights[column.page] = max(self.heights.get(column.page, 1.0), column.bottom)
        for number, (_width, height) in enumerate(layout.sizes, 1):
            self.heights[number] = height
        self.month_first = _month_first(self.columns)
        self.headings = [(c, "seller") for c in self.columns if SELLER_HEADING.match(c.head) and is_heading(c.head)]
        self.headings += [(c, "buyer") for c in self.columns if BUYER_HEADING.match(c.head) and is_heading(c.head)]
        self.senders = [c for c in self.columns[:SENDER_SCAN] if self._sender_line(c)]
        self.headings += [(c, "buyer") for c in self.senders]
        self.headings = self.headings[:_MAX_HEADINGS]

    @staticmethod
    def _word_columns(index: int, line: Line) -> list[Column]:
        columns: list[Column] = []
        group: list[Word] = []
        heights = sorted(w.bottom - w.top for w in line.words)
        size = max(heights[len(heights) // 2], 1.0)
        for word in line.words:
            if group and word.x0 - group[-1].x1 >= 0.8 * size:
                columns.append(Page._column(index, line.page, group))
                group = []
            group.append(word)
        if group:
            columns.append(Page._column(index, line.page, group))
        return columns

    @staticmethod
    def _column(index: int, page: int, words: list[Word]) -> Column:
        starts, at = [], 0
        for word in words:
            starts.append(at)
            at += len(word.text) + 1
        return Column(page=page, line=index, text=" ".join(w.text for w in words), x0=min(w.x0 for w in words),
                       top=min(w.top for w in words), x1=max(w.x1 for w in words),
                       bottom=max(w.bottom for w in words), words=words, starts=starts)

    @staticmethod
    def _text_columns(index: int, line: Line, row: int) -> list[Column]:
        text = line.text.expandtabs(8) if "\t" in line.text else line.text
        text = text.translate(_NARROW_SPACES)  # a thousands separator, not a column gap
        return [Column(page=line.page, line=index, text=m.group(), x0=m.start() * _CHAR_WIDTH,
                        top=row * _LINE_HEIGHT, x1=m.end() * _CHAR_WIDTH,
                        bottom=row * _LINE_HEIGHT + _LINE_HEIGHT * 0.8,
                        words=None, starts=[]) for m in _SPLIT.finditer(text)]

    def _sender_line(self, column: Column) -> bool:
        """A return-address line over an envelope window ("Acme GmbH · Main St 1 · 12345 Town"): the lines
        right under it are the buyer's address (a name, a street, a postcode and town)."""
        if column.page != 1 or len(column.text) > 120 or not POSTCODE.search(column.text):
            return False
        if len(SENDER_SEPARATOR.findall(column.text)) < 2:
            return False
        under = [c for index in range(column.line + 1, min(column.line + 6, len(self.by_line)))
                 for c in self.by_line[index] if abs(c.x0 - column.x0) < 3 * column.height]
        return bool(under) and name_like(under[0].text) and any(POSTCODE.match(c.text) for c in under[1:])

    def date_in(self, text: str) -> tuple[str, int, int] | None:
        return date_in_text(text[:200], month_first=self.month_first)

    def parse_date(self, text: str) -> tuple[str, int, int] | None:
        """A date at the start of ``text`` (after a word such as "le", "vom" at most)."""
        found = self.date_in(text[:60])
        return found if found is not None and found[1] <= 4 else None

    def right_of(self, column: Column) -> list[Column]:
        return [c for c in self.by_line[column.line] if c.x0 >= column.x1 - 0.5]

    def below(self, column: Column) -> list[Column]:
        """Columns under ``column`` on the next few lines, overlapping it horizontally, nearest first."""
        found: list[Column] = []
        limit = column.bottom + _BELOW_HEIGHTS * column.height
        for index in range(column.line + 1, min(column.line + 1 + _BELOW_LINES, len(self.by_line))):
            for other in self.by_line[index]:
                if other.page != column.page or other.top > limit or other.top < column.top:
                    continue
                if other.x0 < column.x1 + 2 and other.x1 > column.x0 - 2:
                    found.append(other)
        return found

    def role(self, column: Column) -> str:
        """seller, buyer or "" by the nearest block heading above the column in its column band."""
        best: tuple[float, float, str] | None = None
        for heading, role in self.headings:
            if heading.page != column.page or heading.x0 > column.x0 + 20:
                continue
            if column.x0 > max(heading.x1, heading.x0 + BLOCK_WIDTH):
                continue  # a block beside this one (an information block right of the address window)
            rise = column.top - heading.top
            if rise < -2 or rise > BLOCK_HEIGHTS * heading.height:
                continue
            key = (heading.top, heading.x0, role)
            if best is None or key[:2] > best[:2]:
                best = key
        return best[2] if best else ""

    def region(self, column: Column) -> str:
        """header, footer or body: a letterhead and a footer's legal line are the issuer's."""
        height = self.heights.get(column.page, 1.0)
        if column.top < 0.2 * height:
            return "header"
        if column.top > 0.8 * height:
            return "footer"
        return "body"


def _month_first(columns: list[Column]) -> bool:
    """Whether the slashed dates of this document put the month first (a 11/17/2017 is printed)."""
    month_first = False
    for column in columns:
        if "/" not in column.text:
            continue
        for match in NUMERIC_DATE.finditer(column.text):
            if match.group("s") != "/":
                continue
            first, second = int(match.group("d2")), int(match.group("m2"))
            if first > 12:
                return False
            month_first = month_first or second > 12
    return month_first


def labelled_value(page: Page, column: Column, end: int, parse: Callable[[str], tuple[str, int, int] | None],
            *, below: bool = True) -> tuple[Found, str] | None:
    """The value for a label ending at ``end`` in ``column``: same column, right, then below."""
    qualifier = _QUALIFIER.match(column.text, end)
    if qualifier is not None:
        end = qualifier.end()
    found = parse_at(column, end, parse)
    if found is not None:
        return found, "same"
    rest = column.text[end:].strip()
    if re.search(r"\d", rest) or len(rest) > _MAX_QUALIFIER:
        return None  # the label is followed by something else: not its value
    for other in page.right_of(column)[:2]:
        found = parse_at(other, 0, parse)
        if found is not None:
            return found, "right"
    if below:
        for other in page.below(column)[:3]:
            found = parse_at(other, 0, parse)
            if found is not None:
                return found, "below"
    return None


def parse_at(column: Column, at: int, parse: Callable[[str], tuple[str, int, int] | None]) -> Found | None:
    """The value at ``at`` in the column, after any separator (": ", "#", "n°"...)."""
    separators = _SEPARATORS.match(column.text, at)  # matches, if only the empty string
    at = separators.end() if separators else at
    parsed = parse(column.text[at:])
    if parsed is None:
        return None
    return Found(parsed[0], column, at + parsed[1], at + parsed[2], printed=column.text[at:])


def find_labelled(page: Page, label: re.Pattern[str], parse: Callable[[str], tuple[str, int, int] | None],
                   *, below: bool = True) -> Found | None:
    for column in page.columns:
        match = label.search(column.head)
        if match is not None:
            found = labelled_value(page, column, match.end(), parse, below=below)
            if found is not None:
                return found[0]
    return None
