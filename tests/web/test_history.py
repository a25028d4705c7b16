"""The submitter's history tells one try per attempt spent: built through the queue's own writes.

The external-call marker and its settling are notes on the running try, never a try of their
own; a deferral (the model provider's "not now") gives the attempt back and reads as a wait.
"""

from __future__ import annotations

from datetime import timedelta

from agent.presentation import WORDS
from jobs import queue
from jobs.models import Job, JobEvent
from web import wording

LEASE = timedelta(seconds=60)


def history(job) -> list[str]:
    events = JobEvent.objects.filter(job_id=job.pk).order_by("id")
    return [m.words for m in wording.timeline(events, words=WORDS)]  # told in the review's words


def run(clock, *, calls: int = 1):
    claim = queue.claim(now=clock.now(), worker="w", lease=LEASE)
    assert queue.start(job_id=claim.job_id, epoch=claim.epoch, now=clock.now())
    for n in range(calls):
        clock.advance(1)
        assert queue.mark_external_start(job_id=claim.job_id, epoch=claim.epoch, now=clock.now(), what=f"call {n}")
        clock.advance(1)
        assert queue.clear_external_start(job_id=claim.job_id, epoch=claim.epoch, now=clock.now(),
                                          what=f"call {n} answered")
    return claim


def test_one_claim_with_external_calls_is_one_try(clock, accept):
    job = accept()
    claim = run(clock, calls=3)
    assert queue.complete(job_id=claim.job_id, epoch=claim.epoch, result={}, now=clock.now())

    assert history(job) == ["Received", "Review started", "Done"]


def test_a_retry_after_external_calls_is_try_two(clock, accept):
    job = accept()
    claim = run(clock, calls=2)
    assert queue.fail(job_id=claim.job_id, epoch=claim.epoch, error="handler_error: boom", retryable=True,
                      code=queue.FailureCode.HANDLER_ERROR,
                      now=clock.now())
    waits = (Job.objects.get(pk=job.pk).available_at - clock.now()).total_seconds()
    clock.advance(waits + 1)  # its backoff
    claim = run(clock, calls=2)
    assert queue.complete(job_id=claim.job_id, epoch=claim.epoch, result={}, now=clock.now())

    assert history(job) == ["Received", "Review started", "Interrupted: it will be tried again shortly",
                            "Review started again (try 2)", "Done"]


def test_the_providers_not_now_is_a_wait_not_a_try(clock, accept):
    job = accept()
    for _ in range(3):  # the provider said 429 three times: each claim deferred, its attempt given back
        claim = run(clock, calls=1)
        assert queue.defer(job_id=claim.job_id, epoch=claim.epoch, until=clock.now() + timedelta(seconds=5),
                           now=clock.now(), reason="model provider busy (429), retry after 5 s")
        clock.advance(6)
    claim = run(clock, calls=1)
    assert queue.complete(job_id=claim.job_id, epoch=claim.epoch, result={}, now=clock.now())

    words = history(job)
    assert words == ["Received", "Review started", wording.wait_words("deferred: model provider busy (429)", WORDS),
                     "Review resumed", "Done"]
    assert "model provider" in words[2] and not any("try" in w for w in words)


def test_a_job_running_again_after_a_wait_says_so(clock, accept):
    job = accept()
    claim = run(clock)
    assert queue.defer(job_id=claim.job_id, epoch=claim.epoch, until=clock.now(), now=clock.now(),
                       reason="waiting for a provider slot")
    clock.advance(1)
    run(clock)

    assert history(job)[-2:] == [wording.wait_words("deferred: waiting for a provider slot", WORDS), "Review resumed"]


def test_a_shutdown_deferral_is_a_pause(clock, accept):
    job = accept()
    claim = queue.claim(now=clock.now(), worker="w", lease=LEASE)
    assert queue.start(job_id=claim.job_id, epoch=claim.epoch, now=clock.now())
    assert queue.defer(job_id=claim.job_id, epoch=claim.epoch, until=clock.now(), now=clock.now(),
                       reason="worker shutting down")
    claim = run(clock)
    assert queue.complete(job_id=claim.job_id, epoch=claim.epoch, result={}, now=clock.now())

    assert history(job) == ["Received", "Review started", "Paused: the review goes on shortly", "Review resumed",
                            "Done"]


def test_the_job_page_shows_no_try_for_external_calls(clock, accept, alice, browser_client):
    job = accept("webtest.echo", {"text": "x"})
    claim = run(clock, calls=2)
    assert claim.job_id == job.pk
    assert queue.complete(job_id=claim.job_id, epoch=claim.epoch, result={}, now=clock.now())

    page = browser_client(alice).get(f"/jobs/{job.pk}").content.decode()

    assert "Run started" in page and "try 2" not in page and "external" not in page  # a kind without words: generic
