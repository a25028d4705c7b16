"""The fraud bench (tests/corpus/fraud): adversarial e-invoices and PDFs, each flagged, none OK.

The documents are made up by ``tests/corpus/fraud/generate.py``; ``truth.json`` gives what each
really says (the values Docket must show: the account the XML's standard elements pay) and
``flagged``, the findings it must carry.
"""

from __future__ import annotations

import json
from datetime import date
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from agent import findings, workflow
from agent.management.commands.reviewbench import review

FRAUD = Path(__file__).resolve().parent.parent / "corpus" / "fraud"
TRUTH = json.loads((FRAUD / "truth.json").read_text(encoding="utf-8"))
TODAY = date(2026, 12, 3)


def test_every_document_of_the_folder_is_a_case_of_the_truth():
    documents = {p.name for p in FRAUD.iterdir() if p.suffix in (".pdf", ".xml")}
    assert documents == set(TRUTH) and len(documents) >= 7


@pytest.mark.parametrize("name", sorted(TRUTH))
def test_every_case_is_flagged_and_none_reads_ok(name):
    checked = review(FRAUD / name, ignore_xml=False, today=TODAY)
    assert checked is not None
    for flagged in TRUTH[name]["flagged"]:
        read = findings.words(checked["findings"])
        assert any(flagged in finding for finding in read), (flagged, read)
    summary = workflow.summarize(checked)
    assert summary.outcome != "ok" and summary.needs_action, summary


def test_the_bench_reads_every_case_as_the_standard_does():
    out = StringIO()
    call_command("reviewbench", str(FRAUD), "--all", "--json", "--details", stdout=out)
    report = json.loads(out.getvalue())
    assert report["documents"] | {"read": 7, "flagged": 7, "failed": 0, "skipped": 0} == report["documents"]
    # The planted account is never shown as the one paid, the injected total never read as the total.
    assert report["overall"]["wrong"] == 0 and report["overall"]["extra"] == 0, report.get("details")
    assert report["overall"]["right"] == report["overall"]["expected"] - report["overall"]["missed"]
    assert "unscored" not in report
