"""The step, time and attempt budgets: each one running out ends the job, clearly."""

from __future__ import annotations

import pytest

from agent.models import Checkpoint
from agent.review import workflow
from agent.review.planner import ChatCompletionsPlanner, LocalPlanner
from agent.review.steps import SEQUENCE, Proposal
from jobs import queue
from jobs.models import Job

from .conftest import ScriptedPlanner, drive


def next_tool(view):
    return Proposal(SEQUENCE[view.step_index], {"job_id": view.job_id})


def test_the_step_budget_stops_a_planner_that_keeps_going(review_job, claim, pdf):
    job = review_job(pdf)
    once_more = Proposal("validate", {"job_id": job.pk})
    drive(claim(), ScriptedPlanner(next_tool, next_tool, next_tool, once_more))
    job.refresh_from_db()
    assert job.state == "dead" and job.last_error.startswith("step_limit: proposal rejected at step 4")


def test_the_time_budget_runs_out_between_steps(review_job, claim, clock, pdf):
    job = review_job(pdf)
    ctx = claim()

    def late(view):
        clock.advance(seconds=(ctx.deadline - clock.now()).total_seconds() - 1)
        return next_tool(view)

    drive(ctx, ScriptedPlanner(next_tool, late))
    job.refresh_from_db()
    assert job.state == "dead" and job.last_error.startswith("no_time_left: proposal rejected at step 2")
    assert Checkpoint.objects.get(job_id=job.pk).step_index == 1


def test_the_attempt_budget_ends_a_job_whose_planner_keeps_failing(review_job, claim, clock, pdf, provider):
    job = review_job(pdf)
    provider.mode = "error"
    planner = ChatCompletionsPlanner(base_url=provider.url, model="m")
    states = []
    for _ in range(3):
        states.append(drive(claim(), planner).state)
        clock.advance(120)  # past any backoff
    job.refresh_from_db()
    assert states == ["queued", "queued", "dead"]
    assert job.attempts == 3 and len(provider.requests) == 3
    assert queue.claim(now=clock.now(), worker="w") is None


def test_the_deadline_passing_mid_review_stops_the_checkpoint_write(review_job, claim, clock, pdf, after_step):
    review_job(pdf)
    ctx = claim()
    after_step(lambda n: clock.advance(minutes=11))
    with pytest.raises(queue.StaleEpoch, match="deadline passed"):
        workflow.run(ctx, planner=LocalPlanner())
    assert Checkpoint.objects.get().step_index == 1
    queue.recover(now=clock.now())
    assert Job.objects.get().state == "dead"
