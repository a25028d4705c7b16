"""An attempt is spent only when a handler starts: a claim only held costs nothing.

On a logical clock, in-process. A worker records the start (``queue.start``) before it
hands a job to its handler; recovery of an expired claim that was never started returns
the job to ``queued`` with its attempt given back and says so on the timeline, while the
epoch keeps the dead worker's late writes out. The kill test (test_kill.py) shows the same
with real processes.
"""

from __future__ import annotations

from datetime import timedelta

from accounts.models import Tenant
from jobs import queue
from jobs.models import Job, JobEvent
from jobs.worker import Worker

LEASE = timedelta(seconds=10)


def row(job_id: int) -> Job:
    return Job.objects.get(pk=job_id)


def recovery_reasons(job_id: int) -> list[str]:
    return list(JobEvent.objects.filter(job_id=job_id, actor="recovery").order_by("id")
                .values_list("reason", flat=True))


def test_an_unstarted_expired_claim_is_returned_without_spending_an_attempt(clock, accept):
    job = accept()
    c = queue.claim(now=clock.now(), worker="w", lease=LEASE)
    assert (c.epoch, c.attempt) == (1, 1)
    clock.advance(LEASE.total_seconds() + 1)  # its worker died holding it

    recovery = queue.recover(now=clock.now())

    assert recovery.requeued == [job.pk]
    j = row(job.pk)
    assert (j.state, j.attempts, j.epoch, j.started_at, j.last_error) == ("queued", 0, 1, None, "")
    assert recovery_reasons(job.pk) == [queue.RETURNED_UNSTARTED]
    again = queue.claim(now=clock.now(), worker="w2", lease=LEASE)
    assert (again.job_id, again.epoch, again.attempt) == (job.pk, 2, 1)  # the epoch still grows


def test_a_started_expired_claim_spends_its_attempt(clock, accept):
    job = accept()
    c = queue.claim(now=clock.now(), worker="w", lease=LEASE)
    assert queue.start(job_id=c.job_id, epoch=c.epoch, now=clock.now())
    assert row(job.pk).started_at == clock.now()
    clock.advance(LEASE.total_seconds() + 1)  # its worker died running it

    assert queue.recover(now=clock.now()).requeued == [job.pk]

    j = row(job.pk)
    assert (j.state, j.attempts, j.epoch, j.last_error) == ("queued", 1, 1, "lease expired")
    assert recovery_reasons(job.pk) == ["lease expired"]
    assert queue.claim(now=clock.now(), worker="w2", lease=LEASE).attempt == 2


def test_the_timeline_tells_a_claim_that_ran_from_one_only_held(clock, accept):
    ran, held = accept(), accept()
    c1, _c2 = queue.claim_many(now=clock.now(), worker="w", lease=LEASE, limit=2)
    assert queue.start(job_id=c1.job_id, epoch=c1.epoch, now=clock.now())
    clock.advance(LEASE.total_seconds() + 1)

    queue.recover(now=clock.now())

    assert recovery_reasons(ran.pk) == ["lease expired"]
    assert recovery_reasons(held.pk) == [queue.RETURNED_UNSTARTED]
    assert (row(ran.pk).attempts, row(held.pk).attempts) == (1, 0)


def test_the_submitters_timeline_leaves_out_a_claim_that_never_started(clock, accept):
    from web import wording

    job = accept()
    queue.claim(now=clock.now(), worker="w", lease=LEASE)  # held by a worker that died
    clock.advance(LEASE.total_seconds() + 1)
    queue.recover(now=clock.now())
    c = queue.claim(now=clock.now(), worker="w", lease=LEASE)  # run, and its worker died
    assert queue.start(job_id=c.job_id, epoch=c.epoch, now=clock.now())
    clock.advance(LEASE.total_seconds() + 1)
    queue.recover(now=clock.now())
    c = queue.claim(now=clock.now(), worker="w", lease=LEASE)
    assert queue.start(job_id=c.job_id, epoch=c.epoch, now=clock.now())
    assert queue.complete(job_id=c.job_id, epoch=c.epoch, result={}, now=clock.now())

    words = [m.words for m in wording.timeline(JobEvent.objects.filter(job_id=job.pk).order_by("id"))]

    assert words == ["Received", "Run started", "Interrupted: it will be tried again shortly",
                     "Run started again (try 2)", "Done"]


def test_a_dead_workers_late_writes_are_refused_after_an_unstarted_return(clock, accept):
    job = accept()
    c = queue.claim(now=clock.now(), worker="dead", lease=LEASE)
    clock.advance(LEASE.total_seconds() + 1)
    queue.recover(now=clock.now())

    # Still queued: the old epoch is current again, but not leased, so nothing of it applies.
    assert not queue.start(job_id=c.job_id, epoch=c.epoch, now=clock.now())
    assert not queue.complete(job_id=c.job_id, epoch=c.epoch, result={"late": True}, now=clock.now())
    assert not queue.renew(job_id=c.job_id, epoch=c.epoch, now=clock.now(), lease=LEASE)
    # Claimed again: a newer epoch owns it.
    again = queue.claim(now=clock.now(), worker="live", lease=LEASE)
    assert not queue.start(job_id=c.job_id, epoch=c.epoch, now=clock.now())
    outcome = queue.complete(job_id=c.job_id, epoch=c.epoch, result={"late": True}, now=clock.now())
    assert not outcome and outcome.reason == f"epoch {c.epoch} superseded by {again.epoch}"
    assert queue.start(job_id=again.job_id, epoch=again.epoch, now=clock.now())
    assert queue.complete(job_id=again.job_id, epoch=again.epoch, result={"ok": True}, now=clock.now())
    j = row(job.pk)
    assert (j.state, j.epoch, j.attempts, j.result) == ("completed", 2, 1, {"ok": True})
    assert JobEvent.objects.filter(job_id=job.pk, reason__startswith="start rejected").count() == 2


def test_max_attempts_is_reached_only_by_started_attempts(clock, accept):
    job = accept()
    for _ in range(5):  # held by five workers that all died before starting it: never dead
        queue.claim(now=clock.now(), worker="w", lease=LEASE)
        clock.advance(LEASE.total_seconds() + 1)
        queue.recover(now=clock.now())
    assert (row(job.pk).state, row(job.pk).attempts, row(job.pk).epoch) == ("queued", 0, 5)

    for n in range(1, 4):  # started three times (max_attempts), each run dying with its worker
        c = queue.claim(now=clock.now(), worker="w", lease=LEASE)
        assert c.attempt == n
        assert queue.start(job_id=c.job_id, epoch=c.epoch, now=clock.now())
        clock.advance(LEASE.total_seconds() + 1)
        queue.recover(now=clock.now())
        # held once more in between, and again given back
        if n < 3:
            queue.claim(now=clock.now(), worker="w", lease=LEASE)
            clock.advance(LEASE.total_seconds() + 1)
            queue.recover(now=clock.now())

    j = row(job.pk)
    assert (j.state, j.attempts, j.last_error) == ("dead", 3, "lease expired; attempts spent")
    reasons = recovery_reasons(job.pk)
    assert reasons.count(queue.RETURNED_UNSTARTED) == 7 and reasons[-1] == "lease expired; attempts spent"


def test_a_held_claim_past_its_deadline_is_dead_with_its_attempt_given_back(clock, accept):
    job = accept(deadline=timedelta(seconds=60))
    queue.claim(now=clock.now(), worker="w", lease=timedelta(days=1))
    clock.advance(61)

    assert queue.recover(now=clock.now()).dead == [job.pk]

    assert (row(job.pk).state, row(job.pk).attempts) == ("dead", 0)


def test_an_unstarted_return_gives_back_the_tenants_running_place(clock, accept, make_member):
    member = make_member("limited")
    Tenant.objects.filter(pk=member.tenant_id).update(max_running=2)
    jobs = [accept("diagnostic.noop", user=member) for _ in range(2)]
    queue.claim_many(now=clock.now(), worker="w", lease=LEASE, limit=2)
    assert Tenant.objects.get(pk=member.tenant_id).running == 2
    clock.advance(LEASE.total_seconds() + 1)

    assert sorted(queue.recover(now=clock.now()).requeued) == sorted(j.pk for j in jobs)

    assert Tenant.objects.get(pk=member.tenant_id).running == 0


def test_a_worker_records_the_start_before_its_handler_runs(clock, accept, register_kind):
    from jobs.kinds import Kind

    seen = []

    def handler(ctx):
        seen.append(Job.objects.get(pk=ctx.job_id).started_at)
        return {}

    register_kind(Kind(name="test.started", handler=handler, diagnostic=True))
    job = accept("test.started")
    w = Worker(name="w1", lease=LEASE, clock=clock, listen=False, isolate=False)

    assert w.run_one()

    assert seen == [clock.now()] and row(job.pk).state == "completed"
    w.close()


def test_a_worker_never_starts_a_held_claim_that_was_recovered(clock, accept, register_kind):
    from jobs.kinds import Kind

    ran = []
    register_kind(Kind(name="test.ran", handler=lambda ctx: ran.append(ctx.job_id) or {}, diagnostic=True))
    first, held = accept("test.ran"), accept("test.ran")
    w = Worker(name="w1", lease=LEASE, clock=clock, listen=False, isolate=False, prefetch=2, completion_batch=1)
    w.prefetch_window = 3600.0
    w._job_seconds = 0.001  # recent jobs were fast: claim both at once
    assert w._step()  # runs the first, holds the second
    # The worker stalls past the held claim's lease (its heartbeat had nothing running to
    # renew it with), another worker's sweep returns it unstarted.
    clock.advance(LEASE.total_seconds() + 1)
    assert queue.recover(now=clock.now()).requeued == [held.pk]

    assert w._step()

    assert ran == [first.pk]
    assert w.stats.rejected == 1
    j = row(held.pk)
    assert (j.state, j.attempts, j.started_at) == ("queued", 0, None)
    w.close()


def test_each_of_a_run_of_fast_jobs_is_recorded_started_alone_as_it_starts(clock, accept, register_kind,
                                                                            monkeypatch):
    from jobs.kinds import Kind

    register_kind(Kind(name="test.fast", handler=lambda ctx: {}, diagnostic=True))
    jobs = [accept("test.fast") for _ in range(6)]
    w = Worker(name="w1", lease=LEASE, clock=clock, listen=False, isolate=False, prefetch=6, completion_batch=6)
    w.prefetch_window = 3600.0
    w.completer.interval = 3600.0  # only a full batch, a claim or close() commits (no timing in tests)
    w._job_seconds = 0.001  # recent handlers took 1 ms
    writes = []
    real = queue.start_many
    monkeypatch.setattr(queue, "start_many", lambda **kw: writes.append(len(kw["claims"])) or real(**kw))

    assert w._step()  # claims all six, starts the first only

    assert writes == [1]
    assert [row(j.pk).started_at is not None for j in jobs] == [True] + [False] * 5
    # The worker dies here, holding five it never started: they cost nothing.
    clock.advance(LEASE.total_seconds() + 1)
    queue.recover(now=clock.now())
    assert [row(j.pk).attempts for j in jobs] == [1, 0, 0, 0, 0, 0]
    w.close()


def test_slow_jobs_are_each_recorded_as_they_start(clock, accept, register_kind, monkeypatch):
    from jobs.kinds import Kind

    register_kind(Kind(name="test.slow", handler=lambda ctx: {}, diagnostic=True))
    jobs = [accept("test.slow") for _ in range(3)]
    w = Worker(name="w1", lease=LEASE, clock=clock, listen=False, isolate=False, prefetch=3, completion_batch=3)
    w.prefetch_window = 3600.0
    w.completer.interval = 3600.0
    w._job_seconds = 0.1  # recent handlers took 100 ms: longer than the start window
    writes = []
    real = queue.start_many
    monkeypatch.setattr(queue, "start_many", lambda **kw: writes.append(len(kw["claims"])) or real(**kw))

    assert w._step()
    w._job_seconds = 0.1

    assert writes == [1]
    assert [row(j.pk).started_at is not None for j in jobs] == [True, False, False]
    # The worker dies here, holding two: they go back with their attempts, the first spends it.
    clock.advance(LEASE.total_seconds() + 1)
    queue.recover(now=clock.now())
    assert [row(j.pk).attempts for j in jobs] == [1, 0, 0]
    w.close()
