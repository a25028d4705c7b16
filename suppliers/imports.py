"""The supplier register as the accounting system exports it: a CSV file, read and checked line by line.

Columns (a header line names them, in any order; comma or semicolon separated): ``name``
(required), ``tax_ids``, ``ibans`` (several separated by ``|``), ``currency``, ``usual_min``,
``usual_max``. ``parse`` checks every line and returns the rows or every line's error; nothing is
written here (``services.import_rows`` writes all rows or none).
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from stdnum import iban as iban_numbers

from . import keys

COLUMNS = ("name", "tax_ids", "ibans", "currency", "usual_min", "usual_max")
ALIASES = {"tax_id": "tax_ids", "vat_id": "tax_ids", "vat_ids": "tax_ids", "iban": "ibans", "supplier": "name"}
MAX_BYTES = 2_000_000
MAX_ROWS = 5_000
MAX_ERRORS = 50
MAX_VALUES = 10  # tax ids or IBANs in one cell
MAX_NAME = 200
CURRENCY = re.compile(r"[A-Z]{3}")
_TAX_ID = re.compile(r"(?=[A-Z]*\d)[A-Z0-9]{4,20}")


class ImportRefused(Exception):
    """The file refused, each line's error in ``errors`` ("line 3: ..."); nothing was changed."""

    def __init__(self, errors: list[str]) -> None:
        super().__init__("; ".join(errors))
        self.errors = errors


@dataclass(frozen=True)
class Row:
    line: int
    name: str
    tax_ids: tuple[str, ...] = ()
    ibans: tuple[str, ...] = ()
    currency: str = ""
    usual_min: Decimal | None = None
    usual_max: Decimal | None = None

    @property
    def name_key(self) -> str:
        return keys.name(self.name)


def parse(content: bytes | str) -> list[Row]:
    """Every row of the file, checked; raises ``ImportRefused`` with each bad line's error."""
    if isinstance(content, bytes):
        if len(content) > MAX_BYTES:
            raise ImportRefused([f"the file is larger than {MAX_BYTES // 1_000_000} MB"])
        try:
            content = content.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise ImportRefused(["the file is not UTF-8 text: export it as CSV in UTF-8"]) from None
    if not content.strip():
        raise ImportRefused(["the file is empty: it needs a header line (name, tax_ids, ibans, ...) and a line "
                             "per supplier"])
    first = content.splitlines()[0]
    reader = csv.reader(io.StringIO(content), delimiter=";" if first.count(";") > first.count(",") else ",")
    try:
        header = [ALIASES.get(h.strip().lower(), h.strip().lower()) for h in next(reader)]
    except csv.Error as exc:
        raise ImportRefused([f"line 1: {exc}"]) from None
    unknown = [h for h in header if h not in COLUMNS]
    if "name" not in header or unknown:
        raise ImportRefused([f"line 1: the header must name the column name and only these: {', '.join(COLUMNS)}"
                             + (f" (unknown: {', '.join(unknown)})" if unknown else "")])
    rows, errors = _rows(reader, header)
    if errors:
        raise ImportRefused(errors[:MAX_ERRORS])
    if not rows:
        raise ImportRefused(["the file has a header but no supplier"])
    return rows


def _rows(reader: Any, header: list[str]) -> tuple[list[Row], list[str]]:
    """Each line's row, or its error; a name or tax id on two lines is an error of the second."""
    rows: list[Row] = []
    errors: list[str] = []
    seen_names: dict[str, int] = {}
    seen_tax: dict[str, int] = {}
    try:
        for cells in reader:
            line = reader.line_num
            if not any(c.strip() for c in cells):
                continue
            if len(rows) + len(errors) >= MAX_ROWS:
                errors.append(f"more than {MAX_ROWS} suppliers: split the file")
                break
            try:
                row = _row(line, dict(zip(header, cells, strict=False)), complete=len(cells) == len(header))
            except ValueError as exc:
                errors.append(f"line {line}: {exc}")
                continue
            if row.name_key in seen_names:
                errors.append(f"line {line}: the supplier {row.name} is already on line {seen_names[row.name_key]}")
            errors += [f"line {line}: the tax id {tax} is already on line {seen_tax[tax]}"
                       for tax in row.tax_ids if tax in seen_tax]
            seen_names.setdefault(row.name_key, line)
            seen_tax.update((tax, line) for tax in row.tax_ids if tax not in seen_tax)
            rows.append(row)
    except csv.Error as exc:
        errors.append(f"line {reader.line_num}: {exc}")
    return rows, errors


def _row(line: int, cells: dict[str, str], *, complete: bool) -> Row:
    if not complete:
        raise ValueError(f"the line has a different number of columns than the header ({len(cells)})")
    name = " ".join(cells.get("name", "").split())
    if not name or not keys.name(name):
        raise ValueError("the supplier's name is empty")
    if len(name) > MAX_NAME:
        raise ValueError(f"the supplier's name is longer than {MAX_NAME} characters")
    tax_ids = tuple(dict.fromkeys(tax_id_of(v) for v in _several(cells.get("tax_ids", ""))))
    ibans = tuple(dict.fromkeys(iban_of(v) for v in _several(cells.get("ibans", ""))))
    currency = cells.get("currency", "").strip().upper()
    if currency and not CURRENCY.fullmatch(currency):
        raise ValueError(f"the currency {currency!r} is not a three-letter ISO code (EUR, GBP...)")
    low, high = amount_of(cells.get("usual_min", ""), "usual_min"), amount_of(cells.get("usual_max", ""), "usual_max")
    if (low is None) != (high is None):
        raise ValueError("give both usual_min and usual_max, or neither")
    if low is not None and high is not None and low > high:
        raise ValueError(f"usual_min ({low}) is more than usual_max ({high})")
    return Row(line=line, name=name, tax_ids=tax_ids, ibans=ibans, currency=currency, usual_min=low, usual_max=high)


def _several(cell: str) -> list[str]:
    values = [v.strip() for v in cell.split("|") if v.strip()]
    if len(values) > MAX_VALUES:
        raise ValueError(f"at most {MAX_VALUES} values in one cell")
    return values


def tax_id_of(value: str) -> str:
    """A tax id as compared; ValueError in words when it cannot be one."""
    compact = keys.identifier(value)
    if not _TAX_ID.fullmatch(compact) or not compact.isascii():
        raise ValueError(f"the tax id {value!r} is not one: 4 to 20 letters and digits, with digits")
    return compact


def iban_of(value: str) -> str:
    """An IBAN as compared; ValueError in words when its format or check digits are wrong."""
    compact = keys.identifier(value)
    if not compact.isascii() or not iban_numbers.is_valid(compact):
        raise ValueError(f"the IBAN {value!r} is not valid (its format or check digits)")
    return compact


def amount_of(value: str, column: str) -> Decimal | None:
    value = value.strip().replace(" ", "")
    if not value:
        return None
    if "," in value and "." not in value:
        value = value.replace(",", ".")
    try:
        amount = Decimal(value.replace(",", ""))
    except InvalidOperation:
        raise ValueError(f"{column} {value!r} is not an amount (like 1250.00)") from None
    if not amount.is_finite() or amount < 0 or amount >= Decimal("1e13"):
        raise ValueError(f"{column} {value!r} is not an amount (like 1250.00)")
    return amount.quantize(Decimal("0.01"))
