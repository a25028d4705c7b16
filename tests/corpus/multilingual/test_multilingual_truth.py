"""The multilingual set stays a fair exam: its truth is valid, complete and printed on the pages.

These tests check the corpus, not the reader: a wrong truth.json would make every score meaningless.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from datetime import date
from decimal import Decimal
from pathlib import Path

import pytest
from stdnum import iban
from stdnum.ch import vat as ch_vat
from stdnum.eu import vat as eu_vat
from stdnum.gb import vat as gb_vat

HERE = Path(__file__).resolve().parent
TRUTH = json.loads((HERE / "truth.json").read_text(encoding="utf-8"))
FIELDS = {"supplier_name", "vat_id", "invoice_number", "invoice_date", "currency", "total_amount", "iban"}
LANGUAGES = {"en", "de", "fr", "nl", "es", "it", "pl"}


def page_text(name: str) -> str:
    import pypdfium2 as pdfium

    doc = pdfium.PdfDocument(str(HERE / name))
    try:
        return " ".join(page.get_textpage().get_text_range() for page in doc)
    finally:
        doc.close()


def test_every_pdf_has_a_truth_and_every_truth_a_pdf() -> None:
    on_disk = {str(p.relative_to(HERE)) for p in HERE.glob("*/*.pdf")}
    assert on_disk == set(TRUTH)


def test_seven_languages_with_five_distinct_layouts_each() -> None:
    layouts: dict[str, set[str]] = defaultdict(set)
    for name in TRUTH:
        lang, file = name.split("/")
        layouts[lang].add(file.split("-", 1)[1])
    assert set(layouts) == LANGUAGES
    assert all(len(kinds) >= 5 for kinds in layouts.values()), layouts


def test_the_folder_stays_small() -> None:
    assert sum(p.stat().st_size for p in HERE.rglob("*") if p.is_file()) < 3_000_000


@pytest.mark.parametrize("name", sorted(TRUTH))
def test_truth_values_are_valid(name: str) -> None:
    truth = TRUTH[name]
    assert set(truth) == FIELDS
    assert truth["supplier_name"] and truth["invoice_number"] and truth["currency"]
    assert date(2024, 1, 1) <= date.fromisoformat(truth["invoice_date"]) <= date(2026, 10, 31)
    assert re.fullmatch(r"\d+\.\d{2}", truth["total_amount"]) and Decimal(truth["total_amount"]) > 0
    assert truth["currency"] in {"EUR", "GBP", "USD", "CHF", "PLN"}
    vat = truth["vat_id"]
    if vat is not None:
        assert eu_vat.is_valid(vat) or gb_vat.is_valid(vat) or ch_vat.is_valid(vat), vat
        assert vat == re.sub(r"[\s.\-]", "", vat).upper()
    if truth["iban"] is not None:
        assert iban.is_valid(truth["iban"]) and truth["iban"] == iban.compact(truth["iban"])


@pytest.mark.parametrize("name", sorted(TRUTH))
def test_identifiers_and_names_are_printed(name: str) -> None:
    truth = TRUTH[name]
    text = page_text(name)
    flat = re.sub(r"\s+", " ", text)
    compact = re.sub(r"[\s.\-]", "", text).upper()
    assert truth["supplier_name"] in flat
    assert truth["invoice_number"] in flat
    for key in ("vat_id", "iban"):
        if truth[key] is not None:
            assert truth[key] in compact, key
