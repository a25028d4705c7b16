"""Every refused proposal runs nothing, is recorded, and ends the job for good."""

from __future__ import annotations

from datetime import timedelta

import pytest

from agent.models import Checkpoint
from agent.review import tools
from agent.review.steps import FINISH, SEQUENCE, Proposal
from jobs.models import Job, JobEvent

from .conftest import ScriptedPlanner, drive


def next_tool(view):
    return Proposal(SEQUENCE[view.step_index], {"job_id": view.job_id})


@pytest.fixture
def ran(monkeypatch):
    """The tools that actually ran, in order."""
    calls: list[str] = []
    for name, tool in list(tools.TOOLS.items()):
        def spy(ctx, arguments, previous, _run=tool.run, _name=name):
            calls.append(_name)
            return _run(ctx, arguments, previous)
        monkeypatch.setitem(tools.TOOLS, name, tools.Tool(**{**tool.__dict__, "run": spy}))
    return calls


def assert_refused(job: Job, code: str, *, step: int) -> Checkpoint:
    job.refresh_from_db()
    assert job.state == "dead", job.last_error
    assert job.last_error.startswith(f"{code}: proposal rejected at step {step}: ")
    checkpoint = Checkpoint.objects.get(job_id=job.pk)
    assert checkpoint.rejected["code"] == code and checkpoint.rejected["step"] == step
    assert checkpoint.next_step == ""
    reasons = list(JobEvent.objects.filter(job=job).values_list("reason", flat=True))
    assert any(r.startswith(f"proposal rejected ({code})") for r in reasons), reasons
    assert reasons[-1] == "failed, not retryable"
    return checkpoint


def test_send_email_is_refused_and_nothing_runs(review_job, claim, pdf, ran):
    job = review_job(pdf)
    drive(claim(), ScriptedPlanner(next_tool, Proposal("send_email", {"to": "supplier@example.com"})))
    checkpoint = assert_refused(job, "tool_not_allowed", step=2)
    assert ran == ["extract"] and checkpoint.step_index == 1
    assert "Alice sends it herself" in checkpoint.rejected["message"]


def test_an_unknown_tool_is_refused(review_job, claim, pdf, ran):
    job = review_job(pdf)
    drive(claim(), ScriptedPlanner(Proposal("delete_everything", {"job_id": job.pk})))
    assert_refused(job, "tool_not_allowed", step=1)
    assert ran == []


@pytest.mark.parametrize("arguments", [
    {"job_id": "one"},
    {},
    {"job_id": 1, "path": "/etc/passwd"},
    None,
])
def test_bad_arguments_are_refused(review_job, claim, pdf, ran, arguments):
    job = review_job(pdf)
    drive(claim(), ScriptedPlanner(Proposal("extract", arguments)))
    assert_refused(job, "bad_arguments", step=1)
    assert ran == []


def test_a_bad_argument_value_for_a_later_tool_is_refused(review_job, claim, pdf, ran):
    job = review_job(pdf)
    drive(claim(), ScriptedPlanner(next_tool, Proposal("validate", {"job_id": job.pk, "country": "Germany"})))
    checkpoint = assert_refused(job, "bad_arguments", step=2)
    assert "arguments.country" in checkpoint.rejected["message"] and "Germany" not in checkpoint.rejected["message"]
    assert ran == ["extract"]


def test_another_tenants_document_is_out_of_scope(review_job, claim, pdf, bob, ran):
    theirs = review_job(pdf, user=bob)
    mine = review_job(pdf)
    Job.objects.filter(pk=theirs.pk).update(available_at=mine.available_at + timedelta(hours=1))  # claim mine first
    ctx = claim()
    assert ctx.job_id == mine.pk
    drive(ctx, ScriptedPlanner(Proposal("extract", {"job_id": theirs.pk})))
    assert_refused(mine, "out_of_scope", step=1)
    assert ran == []
    assert Job.objects.get(pk=theirs.pk).state == "queued"


def test_a_fourth_step_is_refused(review_job, claim, pdf, ran):
    job = review_job(pdf)
    drive(claim(), ScriptedPlanner(next_tool, next_tool, next_tool, Proposal("draft", {"job_id": job.pk})))
    checkpoint = assert_refused(job, "step_limit", step=4)
    assert ran == ["extract", "validate", "draft"] and checkpoint.step_index == 3


def test_no_time_left_is_refused_before_the_tool_runs(review_job, claim, clock, pdf, ran):
    job = review_job(pdf)
    ctx = claim()
    clock.advance(seconds=(ctx.deadline - clock.now()).total_seconds() - 3)  # 3 s left; extract needs 10
    drive(ctx, ScriptedPlanner(next_tool))
    checkpoint = assert_refused(job, "no_time_left", step=1)
    assert ran == [] and "3 s are left" in checkpoint.rejected["message"]


def test_a_repeated_step_is_refused_as_out_of_order(review_job, claim, pdf, ran):
    job = review_job(pdf)
    drive(claim(), ScriptedPlanner(next_tool, Proposal("extract", {"job_id": job.pk})))
    assert_refused(job, "out_of_order", step=2)
    assert ran == ["extract"]


def test_finishing_before_the_draft_is_refused(review_job, claim, pdf):
    job = review_job(pdf)
    drive(claim(), ScriptedPlanner(next_tool, Proposal(FINISH, {})))
    assert_refused(job, "finished_early", step=2)


def test_staff_requeue_of_a_refused_job_resumes_from_its_checkpoint(review_job, claim, clock, pdf, ran):
    from jobs import queue

    job = review_job(pdf)
    drive(claim(), ScriptedPlanner(next_tool, Proposal("send_email", {})))
    assert_refused(job, "tool_not_allowed", step=2)
    job.refresh_from_db()
    assert queue.requeue(job_id=job.pk, expected_state="dead", expected_epoch=job.epoch, actor="staff",
                         reason="retry", now=clock.now())
    drive(claim(), ScriptedPlanner(next_tool, next_tool, Proposal(FINISH, {})))
    job.refresh_from_db()
    assert job.state == "completed" and ran == ["extract", "validate", "draft"]
    assert Checkpoint.objects.get(job_id=job.pk).rejected is None
