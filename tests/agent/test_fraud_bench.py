"""The fraud bench (tests/corpus/fraud): adversarial e-invoices, PDFs and a photo, each flagged, none OK.

The documents are made up by ``tests/corpus/fraud/generate.py``; ``truth.json`` gives what each
really says (the values Docket must show: the account the XML's standard elements pay) and
``flagged``, the findings it must carry. The folder seeds the tenant's supplier register
(``register.csv``, ``tenant.json``): a changed bank account, a tax id of another supplier, an
unusual total, an invoice addressed to another company are caught against it, and duplicates in
other forms against the documents before them.
"""

from __future__ import annotations

import json
from datetime import date
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from agent.management.commands.reviewbench import review, run
from agent.review import workflow

FRAUD = Path(__file__).resolve().parent.parent / "corpus" / "fraud"
TRUTH = json.loads((FRAUD / "truth.json").read_text(encoding="utf-8"))
TODAY = date(2026, 12, 3)
CASES = 19
# Each reads clean alone: only the register (or an earlier document) catches it.
ONLY_THE_TENANT_CATCHES = ("changed-iban.pdf", "changed-iban.xml", "changed-iban-page-only.pdf",
                           "addressed-elsewhere.pdf", "unusual-total.pdf", "repeat-same-bytes.pdf")


@pytest.fixture(scope="module")
def bench():
    return run(FRAUD, today=TODAY)


def test_every_document_of_the_folder_is_a_case_of_the_truth():
    documents = {p.name for p in FRAUD.iterdir() if p.suffix in (".pdf", ".xml", ".png")}
    assert documents == set(TRUTH) and len(documents) == CASES


@pytest.mark.parametrize("name", sorted(TRUTH))
def test_every_case_is_flagged_and_none_reads_ok(bench, name):
    words = [finding["words"] for finding in bench.findings[name]]
    for flagged in TRUTH[name]["flagged"]:
        assert any(flagged in finding for finding in words), (flagged, words)
    assert any(finding.get("blocks", True) for finding in bench.findings[name]), words
    assert bench.outcomes[name] != "ok"


@pytest.mark.parametrize("name", ONLY_THE_TENANT_CATCHES)
def test_without_the_register_and_the_earlier_documents_these_read_ok(name):
    checked = review(FRAUD / name, ignore_xml=False, today=TODAY)
    assert checked is not None and workflow.summarize(checked).outcome == "ok", checked["findings"]


def test_the_bench_reads_every_case_as_the_standard_does():
    out = StringIO()
    call_command("reviewbench", str(FRAUD), "--all", "--json", "--details", stdout=out)
    report = json.loads(out.getvalue())
    assert report["documents"] | {"read": CASES, "flagged": CASES, "ok": 0, "failed": 0, "skipped": 0} == \
        report["documents"]
    # The planted account is never shown as the one paid, the injected total never read as the total.
    assert report["overall"]["wrong"] == 0 and report["overall"]["extra"] == 0, report.get("details")
    assert report["overall"]["right"] == report["overall"]["expected"] - report["overall"]["missed"]
    assert "unscored" not in report
