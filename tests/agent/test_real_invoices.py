"""The review on real invoices of other public projects (tests/corpus/real, each file's source and
licence in its SOURCES.md): 34 documents in nine languages, 20 of them scans or photos.

A development set: its scores are pinned so that no change loses what the reader reads there;
the measure that counts is a blind exam of invoices the reader has never seen
(docs/benchmarks.md).
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from agent.management.commands.reviewbench import run
from agent.reading import fields

from .conftest import require_ocr

REAL = Path(__file__).resolve().parent.parent / "corpus" / "real"
TODAY = date(2026, 12, 6)


@pytest.fixture(scope="module")
def report() -> dict:
    require_ocr()
    return run(REAL, today=TODAY).report()


def test_every_real_invoice_is_read_without_a_failure(report):
    assert report["documents"] == report["documents"] | {"read": 34, "failed": 0, "skipped": 0}
    assert report["readings"] == {"scan": 20, "text": 14}


def test_the_seven_fields_and_the_suppliers_are_read_at_least_as_well_as_pinned(report):
    assert report["overall"]["expected"] == 174
    assert report["overall"]["right_pct"] >= OVERALL, report["fields"]
    assert report["fields"]["supplier_name"]["right_pct"] >= SUPPLIERS, report["fields"]


def test_the_fields_also_read_and_the_breakdowns_are_reported(report):
    assert {name: report["fields"][name]["expected"] for name in fields.ALSO_READ} == {
        "due_date": 11, "net_amount": 24, "vat_amount": 23, "buyer_name": 16}
    assert set(report["by_language"]) == {"de", "en", "es", "fr", "nl", "pl", "other"}
    assert sum(c["expected"] for c in report["by_reading"].values()) == 174


def test_net_and_vat_amounts_are_read_at_least_as_well_as_pinned(report):
    right = {name: report["fields"][name]["right"] for name in NET_AND_VAT}
    assert all(right[name] >= floor for name, floor in NET_AND_VAT.items()), right


# What the reader reaches on this set (right %: 91.4 and 90.9 when measured, from 90.8 before a till slip's
# number after a bare sign in its header, and 90.8 and 90.9 from 87.9 and 84.8
# before a page not in Latin script was read in its script's pack, Chinese labels and side-labelled
# party blocks, and a PDF page's colours read toward their darkest channel; 82.8 and 75.8 before web
# addresses without www, centred receipt headers, signature lines, items tables' Total columns,
# OCR-misread years, Canadian and North American signs, Estonian and Brazilian labels; 58.6 and 36.4
# before the round before), as a floor no change may go under by more than two values.
OVERALL = 90.2
SUPPLIERS = 84.8
# Net and VAT amounts right of 24 and 23 (18 and 19 when measured, from 13 and 17 before the net was read as
# the total less a printed VAT and the VAT as the total less a net on a tax line), two values under.
NET_AND_VAT = {"net_amount": 16, "vat_amount": 17}
