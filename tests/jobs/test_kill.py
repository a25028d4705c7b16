"""The kill test: 100 jobs (``KILL_TEST_JOBS``), three real workers, one of them SIGKILLed every few hundred ms.

Nothing is lost and nothing runs twice where it must not: every job ends completed, dead
or unknown; no job completes twice; every completion carries the job's last epoch; a job
killed after its external-start marker is unknown and never re-run; a job killed before it
completes on a later epoch. Some workers are also paused (SIGSTOP) past their lease, so
stale writes really happen and must be rejected.

Each worker prefetches up to 32 jobs, with a window wide enough that it does hold 32, so a
kill strands many claims that were never started. Those cost no attempt: no job is dead
without its handler having started (a trace file written by the handler itself says which
claims ran), and the queue's record of which claims started never misses one that ran.

The workload also holds webhook deliveries (``webhook.deliver``, each POSTing to a receiver on
127.0.0.1 after its external-start marker): each one ends like any other job, and the receiver
got each at most once, a completed one exactly once (``KILL_TEST_WEBHOOKS=0`` leaves them out).

Reproduce with ``bin/test tests/jobs/test_kill.py -s`` (add ``DATABASE_URL=postgresql://...``
for PostgreSQL); ``-s`` shows the counts.
"""

from __future__ import annotations

import json
import os
import random
import signal
import time
from collections import Counter, defaultdict
from pathlib import Path

import pytest
from django.db import connection

from jobs.clock import system_clock
from jobs.models import Job, JobEvent
from jobs.queue import RETURNED_UNSTARTED
from tests.workers import Workers, children

pytestmark = pytest.mark.slow

JOBS = int(os.environ.get("KILL_TEST_JOBS", "100"))  # 300 for the figures in docs/benchmarks.md
LEASE = 1.0  # seconds: a killed worker's job comes back about a second later
SETTLE_TIMEOUT = 120.0  # a kill every 200-500 ms strands up to 32 held jobs each time: slower to settle
PREFETCH = 32
WEBHOOKS = os.environ.get("KILL_TEST_WEBHOOKS", "1") == "1"
WEBHOOK_JOBS = 20 if WEBHOOKS else 0  # deliveries, each of a review completed before the workers start


def signal_quietly(pid: int, signum: int) -> bool:
    try:
        os.kill(pid, signum)
        return True
    except ProcessLookupError:
        return False


@pytest.mark.skipif(not Path(f"/proc/{os.getpid()}/task/{os.getpid()}/children").exists(),
                    reason="needs Linux /proc to find the worker processes")
def test_killing_workers_at_random_loses_no_job_and_never_reruns_an_external_call(tmp_path, transactional_db,
                                                                                  accept):
    rng = random.Random(20261108)
    receiver = webhook_workload(accept) if WEBHOOKS else None
    for n in range(JOBS):
        accept("diagnostic.sleep", {"seconds": round(rng.uniform(0.03, 0.2), 3), "external": n % 4 == 0},
               now=system_clock.now())

    # Prefetch and batched completion on, and wide enough for these 30-200 ms jobs: a worker
    # claims up to 32 at a time (a 10 s window: 32 of even the slowest) and holds completions
    # back up to 100 ms, so kills land between a claim and its start, with many claims held,
    # and between a handler's end and its batch's commit.
    trace = tmp_path / "started.txt"  # "job epoch", written by each handler as it starts
    workers = Workers(tmp_path / "kill.log", "--processes", "3", "--lease", str(LEASE),
                      "--poll-interval", "0.1", "--grace", "2", "--prefetch", str(PREFETCH),
                      "--completion-batch", "8", JOBS_PREFETCH_WINDOW="10", JOBS_COMPLETION_FLUSH_MS="100",
                      JOBS_DIAGNOSTIC_TRACE=str(trace), WEBHOOKS_ALLOW_PRIVATE="1")
    started = time.monotonic()
    try:
        kills, pauses = kill_and_pause_until_settled(workers, rng)
    finally:
        workers.kill_all()
        if receiver is not None:
            receiver.close()
    elapsed = time.monotonic() - started

    jobs = {j["id"]: j for j in Job.objects.values("id", "kind", "state", "epoch", "result", "payload", "attempts",
                                                   "max_attempts")}
    by_job = events_by_job()
    states = Counter(j["state"] for j in jobs.values())
    rejections = [e for evs in by_job.values() for e in evs if e["to_state"] == ""]
    # Claims made together share their time; so do completions committed together.
    claim_batches = Counter((e["actor"], e["at"]) for evs in by_job.values() for e in evs if e["to_state"] == "leased")
    completion_batches = Counter(e["at"] for evs in by_job.values() for e in evs if e["to_state"] == "completed")
    recoveries = [e for evs in by_job.values() for e in evs if e["actor"] == "recovery"]
    ran = handlers_started(trace)

    # Every job ends completed, dead or unknown.
    assert set(states) <= {"completed", "dead", "unknown"}
    assert sum(states.values()) == JOBS + 2 * WEBHOOK_JOBS
    tally: Counter[str] = Counter()
    for job_id, job in jobs.items():
        tally.update(check_job(job_id, job, by_job[job_id], ran[job_id]))
    unknown_after_marker = tally["unknown_after_marker"]
    redelivered_then_completed = tally["redelivered_then_completed"]
    returned_unstarted, dead_without_start = tally["returned_unstarted"], tally["dead_without_start"]
    dead_fully_traced = tally["dead_fully_traced"]
    # Rejected writes are the paused workers' stale renewals and completions: none moved a job.
    assert all(e["from_state"] == "leased" for e in rejections)

    print(
        f"\nkill test on {connection.vendor}: {JOBS} jobs, {kills} SIGKILLs, {pauses} SIGSTOP pauses, "
        f"{elapsed:.1f} s: completed={states['completed']} unknown={states['unknown']} dead={states['dead']} "
        f"stale_rejections={len(rejections)} recoveries={len(recoveries)} "
        f"(unknown after marker={unknown_after_marker}, redelivered then completed={redelivered_then_completed}) "
        f"claims in batches of 2+={sum(n for n in claim_batches.values() if n > 1)} "
        f"completions in batches of 2+={sum(n for n in completion_batches.values() if n > 1)} "
        f"largest claim batch={max(claim_batches.values())} returned unstarted={returned_unstarted} "
        f"dead without a started handler={dead_without_start} "
        f"dead with all 3 starts traced={dead_fully_traced}/{states['dead']}"
    )
    assert dead_without_start == 0
    assert max(claim_batches.values()) > 4 and max(completion_batches.values()) > 1  # both really on
    assert returned_unstarted > 0  # kills did strand held claims, and they cost nothing
    assert kills >= 10 and unknown_after_marker >= 1 and redelivered_then_completed >= 1
    # A paused worker need not write anything stale once it resumes: it may have held no job, or
    # its own clock tells it its lease ran out and it stops before writing (self-fencing). The
    # pauses are there for what they must not cause: a job moved by a stale write (above).
    if receiver is not None:
        check_deliveries(receiver, jobs)


DOCUMENT_JOBS = int(os.environ.get("KILL_TEST_DOCUMENT_JOBS", "40"))


@pytest.mark.skipif(not Path(f"/proc/{os.getpid()}/task/{os.getpid()}/children").exists(),
                    reason="needs Linux /proc to find the worker processes")
def test_killing_workers_reading_documents_from_the_object_store_loses_none_and_reads_each_once_completed(
        tmp_path, transactional_db, accept, object_store, media_root):
    """The same kills and pauses with each job reading its own document from SeaweedFS: none
    lost, none completed twice, none dead without a started handler, every completed job's
    answer the SHA-256 of its own bytes, and nothing on the workers' disk."""
    from documents.store import Upload

    rng = random.Random(20261206)
    for n in range(DOCUMENT_JOBS):
        accept("diagnostic.read", {"seconds": round(rng.uniform(0.03, 0.15), 3), "external": n % 4 == 0},
               now=system_clock.now(), document=Upload(f"invoice {n}\n".encode() * (n + 1), f"{n}.txt", "text/plain"))
    trace = tmp_path / "started.txt"
    workers = Workers(tmp_path / "kill.log", "--processes", "3", "--lease", str(LEASE),
                      "--poll-interval", "0.1", "--grace", "2", "--prefetch", str(PREFETCH),
                      "--completion-batch", "8", JOBS_PREFETCH_WINDOW="10", JOBS_COMPLETION_FLUSH_MS="100",
                      JOBS_DIAGNOSTIC_TRACE=str(trace), **object_store.env(object_store.prefix))
    started = time.monotonic()
    try:
        kills, pauses = kill_and_pause_until_settled(workers, rng)
    finally:
        workers.kill_all()
    elapsed = time.monotonic() - started

    jobs = {j["id"]: j for j in Job.objects.values("id", "kind", "state", "epoch", "result", "payload", "attempts",
                                                   "max_attempts", "document__sha256")}
    by_job = events_by_job()
    ran = handlers_started(trace)
    states = Counter(j["state"] for j in jobs.values())
    assert set(states) <= {"completed", "dead", "unknown"} and sum(states.values()) == DOCUMENT_JOBS
    tally: Counter[str] = Counter()
    for job_id, job in jobs.items():
        tally.update(check_job(job_id, job, by_job[job_id], ran[job_id]))
        if job["state"] == "completed":
            assert job["result"]["sha256"] == job["document__sha256"], job_id
    deferred = sum(1 for evs in by_job.values() for e in evs if e["reason"].startswith("deferred: the document"))
    print(f"\nkill test with documents in the object store on {connection.vendor}: {DOCUMENT_JOBS} jobs, "
          f"{kills} SIGKILLs, {pauses} pauses, {elapsed:.1f} s: completed={states['completed']} "
          f"unknown={states['unknown']} dead={states['dead']} dead without a started handler="
          f"{tally['dead_without_start']} deferred for the store={deferred}")
    assert tally["dead_without_start"] == 0 and deferred == 0
    assert kills >= 5 and tally["returned_unstarted"] > 0
    assert not Path(media_root).exists()  # the workers kept nothing on their own disk


def kill_and_pause_until_settled(workers: Workers, rng: random.Random) -> tuple[int, int]:
    """Every 200-500 ms, SIGKILL a random worker process or (15% of the time) SIGSTOP it for
    2.5 leases, until no job is queued or leased; then stop the workers. The kills and pauses sent."""
    kills = pauses = 0
    paused: dict[int, float] = {}
    started = time.monotonic()
    try:
        next_action = time.monotonic() + 0.5
        while Job.objects.filter(state__in=["queued", "leased"]).exists() or paused:
            assert time.monotonic() - started < SETTLE_TIMEOUT, "the queue did not settle"
            now = time.monotonic()
            for pid, resume_at in list(paused.items()):
                if now >= resume_at:
                    signal_quietly(pid, signal.SIGCONT)
                    del paused[pid]
            if now >= next_action:
                next_action = now + rng.uniform(0.2, 0.5)
                candidates = [p for p in children(workers.proc.pid) if p not in paused]
                if candidates:
                    victim = rng.choice(candidates)
                    if rng.random() < 0.15:  # a long pause: its lease expires under it
                        pauses += signal_quietly(victim, signal.SIGSTOP)
                        paused[victim] = now + 2.5 * LEASE
                    else:
                        kills += signal_quietly(victim, signal.SIGKILL)
            time.sleep(0.02)
        workers.signal(signal.SIGTERM)
        assert workers.wait(timeout=30) == 0
    finally:
        for pid in paused:
            signal_quietly(pid, signal.SIGCONT)
    return kills, pauses


def events_by_job() -> dict[int, list[dict]]:
    """Every job's events, oldest first."""
    by_job: dict[int, list[dict]] = defaultdict(list)
    for e in JobEvent.objects.order_by("id").values("job_id", "from_state", "to_state", "epoch", "actor", "reason",
                                                    "at"):
        by_job[e["job_id"]].append(e)
    return by_job


def handlers_started(trace: Path) -> dict[int, set[int]]:
    """The epochs whose handler really started, per job (the trace's "job epoch" lines)."""
    ran: dict[int, set[int]] = defaultdict(set)
    for line in trace.read_text().splitlines() if trace.exists() else []:
        job_id, epoch = map(int, line.split())
        ran[job_id].add(epoch)
    return ran


def check_job(job_id: int, job: dict, evs: list[dict], ran: set[int]) -> Counter[str]:
    """Assert what must hold of one job's events; count what the run should show at least once."""
    counts: Counter[str] = Counter()
    claims = [e["epoch"] for e in evs if e["to_state"] == "leased" and e["from_state"] == "queued"]
    completions = [e["epoch"] for e in evs if e["to_state"] == "completed"]
    # No job has two completion events, and no stale completion was applied: the one
    # completion is the last claim's epoch, and the saved result was made on it.
    assert len(completions) <= 1, f"job {job_id} completed twice"
    if job["state"] == "completed":
        assert completions == [job["epoch"]] == [claims[-1]] == [job["result"]["epoch"]], job_id
    else:
        assert completions == []
    # A job whose external call started on an epoch that never completed is unknown,
    # and no worker claimed it again.
    for marker in {e["epoch"] for e in evs if e["reason"].startswith("external start:")}:
        if marker not in completions:
            assert job["state"] == "unknown" and claims[-1] == marker, f"job {job_id} re-run after its marker"
            counts["unknown_after_marker"] += 1
    # A job whose lease expired before any marker was delivered again on a later epoch,
    # and finished there: completed, or unknown if that later run was killed after its
    # own marker (checked above), or dead after three kills, as designed.
    for e in evs:
        if e["actor"] == "recovery" and e["to_state"] == "queued":
            assert claims[-1] > e["epoch"], f"job {job_id} was not delivered again"
            if job["state"] == "completed":
                counts["redelivered_then_completed"] += 1
            elif job["state"] == "dead":
                assert job["epoch"] >= 3, f"job {job_id} dead with attempts left"
    # A claim is started (its attempt spent) unless the queue gave it back unstarted: by
    # recovery after its worker died holding it, or by the worker itself when stopping.
    # The queue never calls a claim unstarted whose handler ran...
    unstarted = {e["epoch"] for e in evs
                 if e["reason"] in (RETURNED_UNSTARTED, "handed back unstarted: worker stopping")}
    counts["returned_unstarted"] += sum(1 for e in evs if e["reason"] == RETURNED_UNSTARTED)
    assert not unstarted & ran, f"job {job_id} ran on epochs {unstarted & ran} called unstarted"
    # ...and a dead job's handler was started max_attempts (3) times, every one recorded.
    if job["state"] == "dead":
        started = set(claims) - unstarted
        assert job["attempts"] == job["max_attempts"] == len(started) == 3, (job_id, job, evs)
        assert ran <= started
        counts["dead_without_start"] += not ran and job["kind"] != "webhook.deliver"  # only sleeps trace
        # (A kill between the start's commit and the handler's first line leaves an
        # attempt recorded but not traced: counted, never the other way round.)
        counts["dead_fully_traced"] += len(ran) == 3
    return counts


def check_deliveries(receiver, jobs: dict[int, dict]) -> None:
    # The queue never sent a delivery twice: at most once each, a completed one exactly once.
    received = Counter(json.loads(r["body"])["id"] for r in receiver.requests)
    deliveries = {j["id"]: j["state"] for j in jobs.values() if j["kind"] == "webhook.deliver"}
    assert len(deliveries) == WEBHOOK_JOBS
    assert all(received[f"evt_{job_id}"] <= 1 for job_id in deliveries), received.most_common(3)
    assert all(received[f"evt_{job_id}"] == 1 for job_id, state in deliveries.items() if state == "completed")
    assert set(received) <= {f"evt_{job_id}" for job_id in deliveries}
    print(f"webhook deliveries: {Counter(deliveries.values())}, received={len(received)}")


def webhook_workload(accept):
    """Reviews of alice's, completed before the workers start, each with its delivery queued to
    a receiver on 127.0.0.1; the receiver, to close and read."""
    from agent.inbox import webhooks
    from agent.models import WebhookEndpoint
    from jobs import kinds, queue
    from tests.webhook_receiver import Receiver

    receiver = Receiver(delay=0.2)  # long enough for some kills to land mid-request
    reviews = [accept("diagnostic.noop", {}, now=system_clock.now()) for _ in range(WEBHOOK_JOBS)]
    WebhookEndpoint.objects.create(tenant_id=reviews[0].scope_id, url=receiver.url, secret="kill-test")
    for review in reviews:
        got = queue.claim(now=system_clock.now(), worker="setup")
        assert got is not None and got.job_id == review.pk
        assert queue.complete(job_id=got.job_id, epoch=got.epoch, result={"epoch": got.epoch},
                              now=system_clock.now(), summary=kinds.Summary("ok", "OK", False))
    for review in reviews:  # once none is left to claim: the claims above take reviews only
        assert len(webhooks.enqueue(review.pk)) == 1
    return receiver
