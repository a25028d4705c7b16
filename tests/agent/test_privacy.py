"""No document text or prompt reaches the event timeline, the job's error, or the logs."""

from __future__ import annotations

import json
import logging

import pytest

from agent.review.planner import ChatCompletionsPlanner, LocalPlanner
from agent.review.steps import Proposal
from jobs.models import Job, JobEvent

from .conftest import ScriptedPlanner, drive

CANARY = "Zebracorn Canary Supplies 7731"
TEXT = f"""Supplier: {CANARY}
VAT ID: DE136695976
Invoice no.: INV-7731
Invoice date: 2 March 2026
Total due: EUR 99.00
IBAN: DE89 3704 0044 0532 0130 00
Notes: {CANARY} private remark
"""


def telemetry(job: Job) -> str:
    job.refresh_from_db()
    events = JobEvent.objects.filter(job_id=job.pk).values_list("reason", "actor")
    return json.dumps([list(e) for e in events]) + job.last_error


@pytest.fixture
def logs(caplog):
    caplog.set_level(logging.DEBUG)
    return caplog


def test_a_review_leaves_no_document_text_in_events_or_logs(review_job, claim, logs):
    job = review_job(text=TEXT)
    assert drive(claim(), LocalPlanner()).state == "completed"
    assert CANARY in json.dumps(Job.objects.get(pk=job.pk).result)  # the result is where it belongs
    assert CANARY not in telemetry(job)
    assert logs.records and CANARY not in logs.text and "7731" not in logs.text


def test_the_provider_sees_no_document_text_and_no_prompt_is_logged(review_job, claim, provider, logs):
    from agent.review.planner import SYSTEM_PROMPT

    job = review_job(text=TEXT)
    planner = ChatCompletionsPlanner(base_url=provider.url, model="m")
    assert drive(claim(), planner).state == "completed"
    sent = json.dumps([r["body"] for r in provider.requests])
    assert CANARY not in sent and "DE89" not in sent and "INV-7731" not in sent
    assert CANARY not in telemetry(job)
    assert SYSTEM_PROMPT[:40] not in logs.text and CANARY not in logs.text


def test_a_refused_proposal_echoing_document_text_keeps_it_out_of_events(review_job, claim, logs):
    job = review_job(text=TEXT)
    drive(claim(), ScriptedPlanner(
        lambda v: Proposal("extract", {"job_id": v.job_id}),
        lambda v: Proposal("validate", {"job_id": v.job_id, "country": CANARY}),
    ))
    assert Job.objects.get(pk=job.pk).state == "dead"
    assert CANARY not in telemetry(job) and CANARY not in logs.text


def test_a_tool_name_made_of_document_text_is_not_echoed(review_job, claim, logs):
    job = review_job(text=TEXT)
    drive(claim(), ScriptedPlanner(Proposal(TEXT, {"job_id": job.pk})))
    assert Job.objects.get(pk=job.pk).state == "dead"
    assert CANARY not in telemetry(job) and CANARY not in logs.text
