"""Claims and completions in batches: each row still fenced on its own, fairness and counts kept.

On a logical clock, in-process; real worker processes with prefetch and batching on are in
test_runworkers.py, test_concurrency.py and test_kill.py.
"""

from __future__ import annotations

import itertools
import time
from datetime import timedelta

import pytest
from django.db import OperationalError, connection

from accounts.models import Tenant
from jobs import queue
from jobs.models import Job, JobEvent
from jobs.worker import Worker
from jobs.worker.completer import Completer, Finished
from jobs.worker.run import Run

LEASE = timedelta(seconds=30)


@pytest.fixture
def member(make_member):
    def make(slug: str, **limits):
        m = make_member(slug)
        if limits:
            Tenant.objects.filter(pk=m.tenant_id).update(**limits)
        return m

    return make


def noops(accept, who, n: int) -> list[Job]:
    return [accept("diagnostic.noop", user=who) for _ in range(n)]


def test_a_batch_of_claims_takes_the_same_jobs_in_the_same_order_as_single_claims(clock, accept, member):
    acme, globex = member("acme"), member("globex")
    a, g = noops(accept, acme, 4), noops(accept, globex, 1)

    batch = queue.claim_many(now=clock.now(), worker="w", lease=LEASE, limit=4)

    # Globex, with nothing waiting before, is served within the first two claims.
    assert [c.job_id for c in batch] == [a[0].pk, g[0].pk, a[1].pk, a[2].pk]
    assert [c.epoch for c in batch] == [1, 1, 1, 1] and len({c.job_id for c in batch}) == 4
    assert JobEvent.objects.filter(to_state="leased", reason="claimed").count() == 4


def test_a_batch_of_claims_passes_over_a_tenant_at_its_running_limit(clock, accept, member):
    limited, other = member("limited", max_running=1), member("other")
    theirs, others = noops(accept, limited, 3), noops(accept, other, 3)

    batch = queue.claim_many(now=clock.now(), worker="w", lease=LEASE, limit=4)

    assert sum(c.job_id in {j.pk for j in theirs} for c in batch) == 1
    assert sum(c.job_id in {j.pk for j in others} for c in batch) == 3
    assert Tenant.objects.get(pk=limited.tenant_id).running == 1


def test_a_stale_row_in_a_completion_batch_is_rejected_alone(clock, accept, member):
    limited = member("limited", max_running=5)
    jobs = noops(accept, limited, 3)
    c1, c2, c3 = queue.claim_many(now=clock.now(), worker="w", lease=LEASE, limit=3)
    Job.objects.filter(pk=c2.job_id).update(epoch=c2.epoch + 1)  # another worker owns it now

    outcomes = queue.complete_many(completions=[queue.Completion(c.job_id, c.epoch, {"n": c.job_id})
                                                for c in (c1, c2, c3)], now=clock.now())

    assert [bool(o) for o in outcomes] == [True, False, True]
    assert outcomes[1].reason == f"epoch {c2.epoch} superseded by {c2.epoch + 1}"
    states = dict(Job.objects.filter(pk__in=[j.pk for j in jobs]).values_list("id", "state"))
    assert states == {c1.job_id: "completed", c2.job_id: "leased", c3.job_id: "completed"}
    assert Job.objects.get(pk=c3.job_id).result == {"n": c3.job_id}
    assert JobEvent.objects.filter(to_state="completed").count() == 2
    assert JobEvent.objects.get(job_id=c2.job_id, to_state="").reason.startswith("stale completion rejected")
    assert Tenant.objects.get(pk=limited.tenant_id).running == 1  # the two completed ones left


def test_a_batch_tried_again_after_its_commits_answer_was_lost_is_the_workers_own_completion(clock, accept, member):
    """The database went away with a committed batch's answer: the worker tries the batch again, and the
    fence, which refuses it now, is refusing that very commit (its epoch, its result), not a stale claim."""
    noops(accept, member("acme"), 2)
    c1, c2 = queue.claim_many(now=clock.now(), worker="w", lease=LEASE, limit=2)
    batch = [queue.Completion(c.job_id, c.epoch, {"n": c.job_id, "pages": (1, 2)}) for c in (c1, c2)]
    assert all(queue.complete_many(completions=batch, now=clock.now()))  # committed; say its answer never came

    again = queue.complete_many(completions=batch, now=clock.now())

    assert [(bool(o), o.state) for o in again] == [(True, "completed"), (True, "completed")]
    assert not JobEvent.objects.filter(reason__contains="rejected").exists()
    assert JobEvent.objects.filter(to_state="completed").count() == 2  # completed once each
    # Another result at that epoch is no completion of this claim's: refused as ever.
    other = queue.complete_many(completions=[queue.Completion(c1.job_id, c1.epoch, {"n": 0})], now=clock.now())
    assert not other[0] and other[0].reason == "job is completed"


def test_a_finished_batch_commits_in_the_next_claims_transaction_each_row_fenced(clock, accept, member):
    """One commit for a worker's finished batch and its next claim: the claim sees them done
    (their tenant's places free again), a stale row is refused alone, every event written."""
    limited = member("limited", max_running=2)
    jobs = noops(accept, limited, 4)
    c1, c2 = queue.claim_many(now=clock.now(), worker="w", lease=LEASE, limit=4)  # the tenant's two places
    Job.objects.filter(pk=c2.job_id).update(epoch=c2.epoch + 1)  # another worker owns it now

    outcomes, claims = queue.complete_and_claim(
        completions=[queue.Completion(c.job_id, c.epoch, {"n": c.job_id}) for c in (c1, c2)],
        completed_at=clock.now(), now=clock.now(), worker="w", lease=LEASE, limit=4)

    assert [bool(o) for o in outcomes] == [True, False]
    assert outcomes[1].reason == f"epoch {c2.epoch} superseded by {c2.epoch + 1}"
    assert [c.job_id for c in claims] == [jobs[2].pk]  # c1's place, freed in the same transaction
    assert Job.objects.get(pk=c1.job_id).result == {"n": c1.job_id}
    assert JobEvent.objects.filter(job_id=c1.job_id, to_state="completed").count() == 1
    assert JobEvent.objects.filter(job_id=jobs[2].pk, to_state="leased").count() == 1
    assert JobEvent.objects.get(job_id=c2.job_id, to_state="").reason.startswith("stale completion rejected")
    assert Tenant.objects.get(pk=limited.tenant_id).running == 2  # c2 (still leased) and the new claim


def test_a_draining_worker_commits_its_completions_with_its_claims(clock, accept, monkeypatch):
    """A drain's full batches wait for the claim that comes next rather than committing alone."""
    alone: list[int] = []
    complete_many = queue.complete_many
    monkeypatch.setattr(queue, "complete_many",
                        lambda **kw: alone.append(len(kw["completions"])) or complete_many(**kw))
    jobs = noops(accept, None, 9)
    w = batching_worker(clock)
    while w._step():  # as ``run`` drains (its loop closes the connection between claims)
        pass
    assert Job.objects.filter(pk__in=[j.pk for j in jobs], state="completed").count() == 9
    assert JobEvent.objects.filter(to_state="completed").count() == 9 and w.stats.completed == 9
    assert alone == []  # 1, then 4 and 4, each committed with the next claim (the last with the empty one)
    w.close()


def test_a_completion_batch_past_a_lease_changes_nothing(clock, accept):
    noops(accept, None, 2)
    claims = queue.claim_many(now=clock.now(), worker="w", lease=LEASE, limit=2)
    clock.advance(LEASE.total_seconds() + 1)

    outcomes = queue.complete_many(completions=[queue.Completion(c.job_id, c.epoch, {}) for c in claims],
                                   now=clock.now())

    assert [o.reason for o in outcomes] == ["lease expired", "lease expired"]
    assert not Job.objects.filter(state="completed").exists()


def test_held_claims_are_renewed_together_and_a_stale_one_is_refused(clock, accept):
    noops(accept, None, 3)
    c1, c2, c3 = queue.claim_many(now=clock.now(), worker="w", lease=LEASE, limit=3)
    Job.objects.filter(pk=c3.job_id).update(epoch=c3.epoch + 1)
    clock.advance(10)

    outcomes = queue.renew_many(leases=[(c.job_id, c.epoch, LEASE) for c in (c1, c2, c3)], now=clock.now())

    assert [bool(o) for o in outcomes] == [True, True, False]
    expiries = dict(Job.objects.filter(pk__in=[c1.job_id, c2.job_id]).values_list("id", "lease_expires_at"))
    assert expiries == {c1.job_id: clock.now() + LEASE, c2.job_id: clock.now() + LEASE}
    assert JobEvent.objects.filter(job_id=c3.job_id, reason__startswith="renewal rejected").exists()


def test_a_handed_back_job_is_queued_with_its_attempt_back_and_its_epoch_kept(clock, accept, member):
    limited = member("limited", max_running=5)
    jobs = noops(accept, limited, 2)
    claims = queue.claim_many(now=clock.now(), worker="w", lease=LEASE, limit=2)

    outcomes = queue.give_back_unstarted(claims=claims, now=clock.now(), reason="handed back unstarted")

    assert all(outcomes)
    rows = list(Job.objects.filter(pk__in=[j.pk for j in jobs]).values_list("state", "attempts", "epoch"))
    assert rows == [("queued", 0, 1), ("queued", 0, 1)]
    assert Tenant.objects.get(pk=limited.tenant_id).running == 0
    assert JobEvent.objects.filter(from_state="leased", to_state="queued", reason="handed back unstarted").count() == 2
    again = queue.claim(now=clock.now(), worker="w2", lease=LEASE)
    assert (again.job_id, again.epoch, again.attempt) == (jobs[0].pk, 2, 1)  # first in line again, epoch up


def test_a_stale_claim_is_not_handed_back(clock, accept):
    noops(accept, None, 1)
    [c] = queue.claim_many(now=clock.now(), worker="w", lease=LEASE, limit=1)
    Job.objects.filter(pk=c.job_id).update(epoch=c.epoch + 1)

    [outcome] = queue.give_back_unstarted(claims=[c], now=clock.now())

    assert not outcome and Job.objects.get(pk=c.job_id).state == "leased"


# --- the worker ---------------------------------------------------------------------------------


def batching_worker(clock, **kwargs) -> Worker:
    w = Worker(name="w1", lease=LEASE, clock=clock, listen=False, prefetch=4, completion_batch=4, **kwargs)
    w.prefetch_window = 3600.0  # every job counts as fast here: prefetch whatever the handler time
    w.completer.interval = 3600.0  # only a full batch, a claim or close() commits (no timing in tests)
    return w


def test_a_worker_shows_no_completion_before_its_batch_commits(clock, accept):
    jobs = noops(accept, None, 6)
    w = batching_worker(clock)

    assert w._step()  # one claim (nothing is known yet about how long jobs take), its completion pending
    assert w._step()  # that completion commits before the next claim: a batch of four, one run, three held
    assert w._step() and w._step()

    states = list(Job.objects.filter(pk__in=[j.pk for j in jobs]).order_by("id").values_list("state", flat=True))
    assert states == ["completed", "leased", "leased", "leased", "leased", "queued"]
    assert w.completer.pending == 3
    assert w.stats.completed == 1 and JobEvent.objects.filter(to_state="completed").count() == 1
    w.completer.flush()
    assert w.stats.completed == 4 and Job.objects.filter(state="completed").count() == 4
    assert JobEvent.objects.filter(to_state="completed").count() == 4
    w.close()


def test_a_job_that_marked_an_external_start_completes_at_once(clock, accept):
    job = accept("diagnostic.sleep", {"seconds": 0, "external": True})
    w = batching_worker(clock)

    assert w._step()

    assert w.completer.pending == 0
    assert Job.objects.get(pk=job.pk).state == "completed"
    assert w.stats.completed == 1


def test_a_stopping_worker_hands_its_unstarted_prefetched_jobs_back(clock, accept, member, monkeypatch):
    limited = member("limited", max_running=10)
    jobs = noops(accept, limited, 6)
    w = batching_worker(clock)
    w._step()  # one claim, completed into the batch
    w._step()  # a batch of four: one run, three held

    w._stop.set()  # as stop() does, without the thread that hands them back early
    monkeypatch.setattr(connection, "close", lambda: None)  # the test's database outlives the worker
    w.close()

    states = dict(Job.objects.filter(pk__in=[j.pk for j in jobs]).values_list("id", "state"))
    assert list(states.values()).count("completed") == 2
    assert list(states.values()).count("queued") == 4  # one never claimed, three handed back
    handed = Job.objects.filter(pk__in=[j.pk for j in jobs], epoch=1, state="queued")
    assert handed.count() == 3 and set(handed.values_list("attempts", flat=True)) == {0}
    assert w.stats.given_back == 3 and w.stats.completed == 2
    assert Tenant.objects.get(pk=limited.tenant_id).running == 0


def test_a_held_job_cancelled_or_superseded_while_it_waits_is_never_started(clock, accept, register_kind):
    from jobs.kinds import Kind
    from jobs.worker.heartbeat import renew_together

    ran = []
    register_kind(Kind(name="test.recorded", handler=lambda ctx: ran.append(ctx.job_id) or {}, diagnostic=True))
    first, cancelled, superseded = (accept("test.recorded") for _ in range(3))
    w = batching_worker(clock)
    w._job_seconds = 0.001  # recent jobs were fast: claim a batch at once
    assert w._step()  # runs the first; the other two are held
    queue.cancel(job_id=cancelled.pk, actor="user:test", reason="", now=clock.now())
    Job.objects.filter(pk=superseded.pk).update(epoch=5)  # recovered and claimed elsewhere meanwhile
    renew_together(w._heartbeat.held(), clock.now())  # as the heartbeat does with the running claim

    assert w._step() and w._step()

    assert ran == [first.pk]
    assert Job.objects.get(pk=cancelled.pk).state == "cancelled"
    assert w.stats.cancelled == 1 and w.stats.rejected == 1


def test_a_completer_whose_commit_fails_backs_off_instead_of_retrying_every_few_milliseconds(clock, accept,
                                                                                              monkeypatch):
    """During a database outage: 25 ms, doubling, at most 2 s between tries; at once again after."""
    tries: list[float] = []
    down = True

    def complete_many(*, completions, now, actor="worker"):
        tries.append(time.monotonic())
        if down:
            raise OperationalError("connection refused")
        return [queue.Outcome(True, "completed", "completed") for _ in completions]

    monkeypatch.setattr(queue, "complete_many", complete_many)
    monkeypatch.setattr(connection, "close", lambda: None)  # the test's database outlives the thread
    done: list[int] = []
    completer = Completer(batch=32, interval=0.005, clock=clock, done=lambda f, o: done.append(f.claim.job_id))
    accept("diagnostic.noop")
    claim = queue.claim(now=clock.now(), worker="w", lease=LEASE)
    assert claim is not None
    completer.submit(Finished(Run(claim), {}, None, time.monotonic()))
    try:
        time.sleep(1.6)
        gaps = [b - a for a, b in itertools.pairwise(tries)]
        assert 3 <= len(tries) <= 8, tries  # 25, 50, 100, 200, 400, 800 ms: not 60 tries at ~25 ms
        # Never sooner than the backoff says (a busy machine only wakes the thread later).
        backoff = [min(Completer.RETRY_START * 2**n, Completer.RETRY_CAP) for n in range(len(gaps))]
        assert all(gap >= 0.95 * wait for gap, wait in zip(gaps, backoff, strict=True)), gaps
        assert gaps[-1] >= 0.2, gaps
        assert done == [] and completer.pending == 1
        down = False
        deadline = time.monotonic() + Completer.RETRY_CAP * 2 + 1
        while not done and time.monotonic() < deadline:
            time.sleep(0.02)
        assert done == [claim.job_id] and completer.pending == 0
        assert completer._retry_at == 0.0  # the first commit that worked reset the backoff
    finally:
        completer.close()


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's prepared batch claim")
def test_a_batch_claim_prepares_its_statement_again_when_the_connection_is_not_as_it_thought(clock, accept):
    from jobs.conf import queue_settings
    from jobs.sql import postgresql

    for _ in range(6):
        accept("diagnostic.noop")
    name, _, _ = postgresql.prepare_claim(queue_settings().fair_claims)
    assert len(queue.claim_many(now=clock.now(), worker="w", lease=LEASE, limit=2)) == 2  # prepared in passing
    with connection.cursor() as cursor:
        cursor.execute(f"DEALLOCATE {name}")  # gone, though it was prepared
    assert len(queue.claim_many(now=clock.now(), worker="w", lease=LEASE, limit=2)) == 2
    postgresql._prepared_claims[connection.connection].discard(name)  # there, though not known to be
    assert len(queue.claim_many(now=clock.now(), worker="w", lease=LEASE, limit=2)) == 2
    assert Job.objects.filter(state="leased").count() == 6
