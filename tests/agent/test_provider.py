"""The OpenAI-compatible planner adapter against a fake server on 127.0.0.1."""

from __future__ import annotations

from datetime import UTC, timedelta

import pytest

from agent.models import Checkpoint, ProviderCall
from agent.review import planner as planners
from agent.review import workflow
from agent.review.planner import ChatCompletionsPlanner, LocalPlanner
from agent.review.steps import Proposal
from jobs import queue
from jobs.kinds import JobFailed
from jobs.models import Job, JobEvent

from .conftest import drive
from .fake_provider import tool_call


def adapter(provider, **kwargs) -> ChatCompletionsPlanner:
    return ChatCompletionsPlanner(base_url=provider.url, model="test-model", api_key="sk-test", **kwargs)


def reasons(job) -> list[str]:
    return list(JobEvent.objects.filter(job_id=job.pk).values_list("reason", flat=True))


def test_the_local_planner_is_the_default_and_the_adapter_is_opt_in(provider):
    assert isinstance(planners.from_env({}), LocalPlanner)
    chosen = planners.from_env({"AGENT_PLANNER": "openai", "AGENT_PLANNER_URL": provider.url})
    assert isinstance(chosen, ChatCompletionsPlanner) and chosen.url == provider.url + "/chat/completions"
    with pytest.raises(JobFailed, match="AGENT_PLANNER_URL"):
        planners.from_env({"AGENT_PLANNER": "openai"})


@pytest.mark.parametrize("url", ["file:///etc/passwd", "ftp://127.0.0.1/v1", "127.0.0.1:8080/v1"])
def test_the_adapter_only_speaks_http(url):
    with pytest.raises(JobFailed, match="http:// or https://") as refused:
        planners.from_env({"AGENT_PLANNER": "openai", "AGENT_PLANNER_URL": url})
    assert refused.value.code == "planner_misconfigured" and not refused.value.retryable


def test_a_review_planned_by_the_provider_completes(review_job, claim, pdf, provider):
    job = review_job(pdf)
    assert drive(claim(), adapter(provider)).state == "completed"
    job.refresh_from_db()
    assert [s["tool"] for s in job.result["steps"]] == ["extract", "validate", "draft"]
    assert job.external_started_at is None
    assert len(provider.requests) == 4  # three tools, then finish
    assert sum(r.startswith("external start: planner call") for r in reasons(job)) == 4
    assert sum(r.startswith("external call settled") for r in reasons(job)) == 4


def test_each_call_carries_an_idempotency_key_of_job_epoch_and_step(review_job, claim, pdf, provider):
    job = review_job(pdf)
    ctx = claim()
    drive(ctx, adapter(provider))
    keys = [r["headers"]["Idempotency-Key"] for r in provider.requests]
    assert keys == [f"job-{job.pk}-epoch-{ctx.epoch}-step-{n}" for n in range(4)]
    assert provider.requests[0]["headers"]["Authorization"] == "Bearer sk-test"
    assert provider.requests[0]["path"] == "/v1/chat/completions"
    # Each call is on record with its key, its step and the provider's id of its answer (for staff).
    calls = ProviderCall.objects.filter(job_id=job.pk).order_by("id")
    assert [(c.idempotency_key, c.step, c.request_id, c.epoch) for c in calls] == [
        (keys[0], "1 of 3: extract", "req-1", ctx.epoch), (keys[1], "2 of 3: validate", "req-2", ctx.epoch),
        (keys[2], "3 of 3: draft", "req-3", ctx.epoch), (keys[3], "after step 3 of 3: whether to finish", "req-4",
                                                         ctx.epoch)]
    assert all(c.answered_at is not None and c.started_at is not None for c in calls)


def test_the_marker_is_committed_before_the_call(review_job, claim, pdf, provider):
    review_job(pdf)
    ctx = claim()
    seen = []

    def spy(*args, **kwargs):
        seen.append(Job.objects.get(pk=ctx.job_id).external_started_at)
        raise JobFailed("stop here", code="test")

    planner = adapter(provider)
    planner.post = spy
    drive(ctx, planner)
    assert seen and seen[0] is not None


def test_a_429_defers_the_job_without_spending_an_attempt(review_job, claim, clock, pdf, provider):
    job = review_job(pdf)
    provider.mode, provider.retry_after = "busy", "30"
    outcome = drive(claim(), adapter(provider))
    job.refresh_from_db()
    assert outcome.state == "queued" and job.attempts == 0
    assert job.available_at == clock.now() + timedelta(seconds=30)
    assert job.external_started_at is None
    assert any(r.startswith("deferred: planner busy (429)") for r in reasons(job))

    provider.mode = "follow"
    clock.advance(30)
    assert drive(claim(), adapter(provider)).state == "completed"
    job.refresh_from_db()
    assert job.attempts == 1 and job.epoch == 2


def test_a_429_whose_retry_after_passes_the_deadline_ends_the_job(review_job, claim, pdf, provider):
    job = review_job(pdf)
    provider.mode, provider.retry_after = "busy", "3600"
    assert drive(claim(), adapter(provider)).state == "dead"
    assert "no time left before the deadline" in Job.objects.get(pk=job.pk).last_error


def test_a_server_error_is_a_safe_retry_not_unknown(review_job, claim, pdf, provider):
    job = review_job(pdf)
    provider.mode = "error"
    assert drive(claim(), adapter(provider)).state == "queued"
    assert "HTTP 500" in Job.objects.get(pk=job.pk).last_error


def test_a_provider_dripping_its_answer_is_cut_off_at_the_calls_whole_limit(review_job, claim, pdf):
    """Each byte well inside any per-read timeout, the answer as a whole never: the call ends at its
    limit (one wall-clock budget for the whole request), and the job is unknown (it was sent)."""
    import time

    from tests.webhook_receiver import Receiver

    dripping = Receiver("drip", drip_every=0.2)  # a 200's status line and headers, a byte every 0.2 s
    try:
        job = review_job(pdf)
        started = time.monotonic()
        assert drive(claim(), adapter(dripping, timeout=1)).state == "unknown"
        took = time.monotonic() - started
    finally:
        dripping.close()
    assert took < 3.0
    assert "no answer from the planner within 1 s" in Job.objects.get(pk=job.pk).last_error


def test_a_refused_connection_is_a_safe_retry_not_unknown(review_job, claim, pdf):
    import socket

    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))  # bound, never listening
    try:
        job = review_job(pdf)
        planner = ChatCompletionsPlanner(base_url=f"http://127.0.0.1:{closed.getsockname()[1]}/v1", model="m")
        assert drive(claim(), planner).state == "queued"
    finally:
        closed.close()
    job.refresh_from_db()
    assert job.external_started_at is None and "not sent" in job.last_error


def test_a_call_that_times_out_leaves_the_job_unknown(review_job, claim, pdf, provider):
    job = review_job(pdf)
    provider.mode = "hang"
    ctx = claim()
    assert drive(ctx, adapter(provider, timeout=1)).state == "unknown"
    job.refresh_from_db()
    assert "no answer from the planner" in job.last_error
    # What staff need to settle it: the call, committed with the marker (same time), never answered.
    call = ProviderCall.objects.get(job_id=job.pk)
    assert (call.idempotency_key, call.step, call.started_at, call.request_id, call.answered_at) == (
        f"job-{job.pk}-epoch-{ctx.epoch}-step-0", "1 of 3: extract", job.external_started_at, "", None)


def test_a_call_is_recorded_with_its_marker_or_not_at_all(review_job, claim, clock, pdf, provider):
    review_job(pdf)
    ctx = claim(lease=timedelta(seconds=30))
    clock.advance(25)  # less than a third of the lease left: the marker is refused, and so is the record
    with pytest.raises(queue.StaleEpoch, match="less than 10 s of lease left"):
        drive(ctx, adapter(provider))
    assert Job.objects.get(pk=ctx.job_id).external_started_at is None
    assert not ProviderCall.objects.exists() and not provider.requests
    assert any(r.startswith("external start rejected") for r in reasons(Job.objects.get(pk=ctx.job_id)))


def test_a_provider_proposing_send_email_is_refused(review_job, claim, pdf, provider):
    job = review_job(pdf)
    provider.mode = "script"
    provider.script = [tool_call("send_email", {"to": "supplier@example.com", "body": "hi"})]
    assert drive(claim(), adapter(provider)).state == "dead"
    assert Checkpoint.objects.get(job_id=job.pk).rejected["code"] == "tool_not_allowed"
    assert Job.objects.get(pk=job.pk).external_started_at is None


def test_a_garbled_answer_is_refused_not_run(review_job, claim, pdf, provider):
    job = review_job(pdf)
    provider.mode = "script"
    provider.script = [{"choices": []}]
    assert drive(claim(), adapter(provider)).state == "dead"
    assert Checkpoint.objects.get(job_id=job.pk).rejected["code"] == "tool_not_allowed"


class SaveThenCrash:
    """A provider planner whose worker dies after the answer was saved, before the tool ran."""

    def propose(self, ctx, view, save):
        save(Proposal("extract", {"job_id": view.job_id}))
        raise SystemExit("killed")


class MustNotBeAsked:
    def __init__(self):
        self.asked = []

    def propose(self, ctx, view, save):
        self.asked.append(view.step_index)
        return LocalPlanner().propose(ctx, view, save)


def test_a_saved_answer_is_used_on_resume_instead_of_asking_again(review_job, claim, clock, pdf):
    job = review_job(pdf)
    with pytest.raises(SystemExit):
        workflow.run(claim(lease=timedelta(seconds=10)), planner=SaveThenCrash())
    assert Checkpoint.objects.get(job_id=job.pk).proposal["tool"] == "extract"
    clock.advance(11)
    queue.recover(now=clock.now())
    again = MustNotBeAsked()
    assert drive(claim(), again).state == "completed"
    assert again.asked == [1, 2, 3]  # step 0's answer came from the checkpoint


def test_retry_after_reads_seconds_and_http_dates():
    from datetime import datetime

    now = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
    assert planners.retry_after("12") == timedelta(seconds=12)
    assert planners.retry_after("Thu, 01 Jan 2026 12:01:00 GMT", now=now) == timedelta(seconds=60)
    assert planners.retry_after(None) == planners.retry_after("soon") == timedelta(seconds=30)
