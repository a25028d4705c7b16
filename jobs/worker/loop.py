"""One worker: recover, claim, run the handler under its budgets, finish with its own epoch.

The loop knows nothing of argparse or signals (``jobs.worker.supervisor`` and the
``runworkers`` command wire those to ``Worker.stop``), so tests drive it directly:
``run_one()`` does at most one job, ``run()`` loops until stopped.

The hot path is the claim and the completion plus what the handler itself does. A worker
may claim several jobs in one transaction (prefetch: ``Worker.prefetch``, as many as its
recent jobs suggest it finishes within ``PREFETCH_WINDOW_SECONDS``) and commits finished
jobs in batches (``jobs.worker.completer``), so fast jobs share their fsyncs. The recovery
sweep runs at a bounded rate, and the heartbeat (``jobs.worker.heartbeat``) is a pair of
long-lived threads that write only for jobs that outlive a third of their lease (renewing the
prefetched claims with them). Kinds that read what users send run their handler in a child
process under hard limits (``jobs.worker.sandbox``); cheap kinds run in the worker itself.
How each run ends is written by ``jobs.worker.endings``.
"""

from __future__ import annotations

import functools
import logging
import os
import socket
import threading
import time
from datetime import datetime, timedelta
from typing import Any

from django.db import DatabaseError, close_old_connections, connection

from .. import forks, kinds, queue
from ..clock import Clock, queue_clock, statement_time
from ..conf import queue_settings
from ..context import JobContext
from ..logs import Repeats, event
from ..verdicts import Completed, Deferred, Failed, Lost, Verdict, judge
from . import testing
from .backoff import IdleBackoff
from .endings import Endings, WorkerStats
from .heartbeat import Beat, Heartbeat, Held, renew_together
from .listener import CancelWatch, Listener
from .run import Run
from .sandbox import DEADLINE_MARGIN, Sandbox, deadline_failure
from .watchdog import OVERRAN_EXIT, Watchdog

log = logging.getLogger("jobs.worker")
INFO, WARNING = logging.INFO, logging.WARNING

__all__ = ["Worker", "WorkerStats", "default_name"]


def default_name() -> str:
    """``host:pid``: an operator (or the kill test) can find the process that holds a lease."""
    return f"{socket.gethostname()[:80]}:{os.getpid()}"


class Worker:
    """Claims and runs jobs until stopped (or, in burst mode, until nothing is eligible)."""

    def __init__(
        self,
        *,
        name: str | None = None,
        lease: timedelta | None = None,
        poll_interval: float = 1.0,
        recover_every: timedelta | None = None,
        grace: float = 20.0,
        burst: bool = False,
        clock: Clock = queue_clock,
        listen: bool | None = None,
        isolate: bool | None = None,
        prefetch: int = 1,
        completion_batch: int = 1,
        watchdog: bool = False,
        busy_until: Any | None = None,
    ) -> None:
        conf = queue_settings()
        self.name = name or default_name()
        self.lease = lease or conf.lease
        # Sweeping is a write transaction: at most every lease/3 per worker (a dead worker's
        # job waits at most lease + lease/3), and not more often than 4 times a second.
        self.recover_every = recover_every or max(self.lease / 3, timedelta(seconds=0.25))
        self.grace = grace
        self.burst = burst
        self.clock = clock
        self.listen = listen
        # Isolated kinds run in a child process unless this is off (tests that drive a
        # worker in-process on a logical clock turn it off).
        self.isolate = conf.isolate_handlers if isolate is None else isolate
        self.stats = WorkerStats()
        self.sandbox = Sandbox(on_start=self._sandbox_started)
        self.idle = IdleBackoff(cap=poll_interval)
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._next_sweep: datetime | None = None
        self._kind_slots_ready = False
        self._heartbeat = Heartbeat(clock, idle_wait=self.lease / 3)
        self._errors = Repeats(log)  # an outage's errors: one line per interval, with their count
        self._current: JobContext | None = None
        self._starting: Held | None = None  # the claim being started, no longer held, not yet watched
        self._giving_back = False
        self._grace_timer: threading.Timer | None = None
        # Prefetch: up to this many claims a transaction, as many as the recent handler
        # time (a moving average, seconds) says finish within the window.
        self.prefetch = max(1, prefetch)
        self.prefetch_window = conf.prefetch_window_seconds
        self._job_seconds: float | None = None
        self.endings = Endings(worker=self.name, clock=clock, stats=self.stats, batch=completion_batch,
                                 flush_seconds=conf.completion_flush_seconds)
        self.completer = self.endings.completer
        # Only a supervised worker process may end itself (``jobs.worker.watchdog``).
        self.watchdog = Watchdog(self._overran, busy_until) if watchdog else None

    # -- control ------------------------------------------------------------------------

    def stop(self, grace: float | None = None) -> None:
        """Stop claiming; the running job gets ``grace`` seconds, then is asked to stop.

        Safe to call from a signal handler: it only sets events and starts a timer.
        """
        if self._stop.is_set():
            return
        self._stop.set()
        self._wake.set()
        grace = self.grace if grace is None else grace
        self._grace_timer = threading.Timer(grace, self._give_back_current)
        self._grace_timer.daemon = True
        self._grace_timer.start()
        if self._heartbeat.held():  # unstarted prefetched jobs go back now, not after the running one
            threading.Thread(target=self._give_back_apart, name="give-back", daemon=True).start()

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    def _give_back_current(self) -> None:
        """The grace period is over: the running job is asked to stop and will be handed back.

        The flag goes up before ``_current`` is read, and ``_run_handler`` reads the flag after
        setting ``_current``, so a job starting at this moment is seen by one side or the other.
        """
        self._giving_back = True
        ctx = self._current
        if ctx is not None:
            ctx.stop.set()

    def _sandbox_started(self, pid: int) -> None:
        self.stats.sandboxes += 1
        event(log, INFO, "sandbox_started", worker=self.name, pid=pid, sandboxes=self.stats.sandboxes)

    # -- the loop -----------------------------------------------------------------------

    def run(self) -> WorkerStats:
        """Loop until stopped; in burst mode, until no job is eligible. Returns the counts."""
        listener = self._open_listener()
        watch = CancelWatch(self._holding, self._cancel_heard) if listener is None else None
        event(log, INFO, "worker_started", worker=self.name, lease_s=self.lease.total_seconds(),
              poll_s=self.idle.cap, burst=self.burst, listen=listener is not None, isolate=self.isolate)
        try:
            while not self._stop.is_set():
                if not self._heartbeat.holding:  # before a claim; between prefetched jobs it was just used
                    close_old_connections()
                try:
                    ran = self._step()
                    self._errors.settle()
                    if ran:
                        self.idle.reset()
                        continue
                    if self.burst and self._drained():
                        break
                except DatabaseError as exc:  # store (or its clock) unavailable: back off; leases cover our jobs
                    self.stats.errors += 1
                    self._errors.event(WARNING, "database_error", worker=self.name, error=type(exc).__name__,
                                       detail=str(exc)[:200])
                    connection.close()
                if not self.burst:
                    self._wake.wait(self.idle.next_delay())
                    self._wake.clear()
        finally:
            if listener is not None:
                listener.close()
            if watch is not None:
                watch.close()
            self.close()
            event(log, INFO, "worker_stopped", worker=self.name, **vars(self.stats))
        return self.stats

    def close(self) -> None:
        """Commit the pending completions, hand back unstarted prefetched jobs, end the
        heartbeat, completer and sandbox, close this thread's connection."""
        if self._grace_timer is not None:
            self._grace_timer.cancel()
        try:
            self.completer.flush()
            self._give_back_held()
        except DatabaseError as exc:  # their leases bring the jobs back
            self.stats.errors += 1
            self._errors.event(WARNING, "database_error", worker=self.name, error=type(exc).__name__,
                               detail=str(exc)[:200])
        self._errors.settle()
        self.completer.close()
        if self.watchdog is not None:
            self.watchdog.close()
        self._heartbeat.close()
        self.sandbox.close()
        connection.close()

    def run_one(self) -> bool:
        """Sweep if due, run one job to the end and commit its completion. False: nothing was
        claimed. (``run`` leaves completions to the completer's batches.)"""
        ran = self._step()
        self.completer.flush()
        return ran

    def _step(self) -> bool:
        """Sweep if due, then run the next prefetched job, or claim and run one."""
        if self._stop.is_set():
            return False
        self.completer.between_jobs = True  # the due batch is this thread's to flush until a handler runs
        if not self._kind_slots_ready:  # the running limits this worker knows, before its first claim
            queue.sync_kind_slots()
            self._kind_slots_ready = True
        now = self.clock.now()
        if self._next_sweep is None or now >= self._next_sweep:
            self.sweep(now)
        held = self._heartbeat.take()
        if held is None:
            wanted = self._prefetch_size()
            if self.completer.pending:  # committed first in the claim's own transaction: it sees them finished
                claims = self.completer.flush_with(functools.partial(self._claim_completing, wanted))
            else:
                testing.checkpoint("claim", wanted)
                # Dated by the database as it runs: a pause since ``now`` was read cannot date it earlier.
                claims = queue.claim_many(now=statement_time(self.clock, now), worker=self.name, lease=self.lease,
                                          limit=wanted)
            testing.checkpoint("claimed", len(claims))
            if not claims:
                self.stats.empty_polls += 1
                return False
            self.stats.claimed += len(claims)
            if log.isEnabledFor(INFO):  # once a batch, not a dict of fields a job for a line not written
                for c in claims:
                    event(log, INFO, "claimed", job=c.job_id, kind=c.kind, epoch=c.epoch, attempt=c.attempt,
                          worker=self.name)
            self._heartbeat.hold(claims[1:])
            held = Held(claims[0])
        else:
            self.completer.flush_if_due()
        self._execute(held)
        return True

    def _claim_completing(self, wanted: int, completions: list[queue.Completion],
                          completed_at: datetime) -> tuple[list[queue.Outcome], list[queue.Claim]]:
        """The pending completions and the next claim, one transaction (``Completer.flush_with``)."""
        testing.checkpoint("claim", wanted)
        return queue.complete_and_claim(completions=completions, completed_at=completed_at,
                                        now=statement_time(self.clock, self.clock.now()), worker=self.name,
                                        lease=self.lease, limit=wanted)

    def _prefetch_size(self) -> int:
        """As many claims as recent jobs say this worker finishes within the window (one at
        first): fast jobs share a transaction, and a slow one never waits behind others."""
        if self.prefetch == 1 or self._job_seconds is None:
            return 1
        return max(1, min(self.prefetch, int(self.prefetch_window / max(self._job_seconds, 1e-6))))

    def sweep(self, now: datetime | None = None) -> queue.Recovery:
        """Recover expired leases and passed deadlines, and log each job it moved."""
        now = now or self.clock.now()
        self._next_sweep = now + self.recover_every
        recovery = queue.recover(now=statement_time(self.clock, now))  # the database's time, never ahead of it
        for to, ids in (("queued", recovery.requeued), ("unknown", recovery.unknown), ("dead", recovery.dead)):
            for job_id in ids:
                event(log, INFO, "recovered", job=job_id, to=to, worker=self.name)
        self.stats.recovered += recovery.total
        return recovery

    def _drained(self) -> bool:
        """Burst mode: nothing was claimable; one more sweep may requeue expired work."""
        return self.sweep().total == 0 or self._stop.is_set()

    def _open_listener(self) -> Listener | None:
        if self.burst or self.listen is False or connection.vendor != "postgresql":
            return None
        try:
            return Listener(self._wake, worker=self.name, cancelled=self._cancel_heard)
        except Exception as exc:  # noqa: BLE001  polling alone is correct, only slower
            event(log, WARNING, "listen_failed", worker=self.name, error=type(exc).__name__, detail=str(exc)[:200])
            return None

    def _holding(self) -> list[tuple[int, int]]:
        """The (job, epoch) of the running claim and the prefetched ones."""
        held = [h.claim for h in (self._starting, *self._heartbeat.held()) if h is not None]
        beat = self._heartbeat.current
        return [(c.job_id, c.epoch) for c in ([beat.claim] if beat is not None else []) + held]

    def _cancel_heard(self, job_id: int, epoch: int) -> None:
        """Someone asked to cancel a job: if this worker runs it, its handler is told now; if it
        holds it unstarted, it is never started (``_ready``)."""
        beat = self._heartbeat.current
        if beat is not None and (beat.claim.job_id, beat.claim.epoch) == (job_id, epoch):
            if beat.cancel():
                event(log, INFO, "cancel_heard", job=job_id, epoch=epoch, worker=self.name)
            return
        for held in (self._starting, *self._heartbeat.held()):
            if held is not None and (held.claim.job_id, held.claim.epoch) == (job_id, epoch):
                held.cancel_requested = True

    # -- one job ------------------------------------------------------------------------

    def _execute(self, held: Held) -> None:
        self._starting = held  # between the prefetch and the heartbeat: where a cancel finds it
        try:
            run = Run(held.claim)
            kind = kinds.get(held.claim.kind)
            if kind is not None:
                kinds.warmed(kind)  # its modules loaded once, before the first of its jobs (and its children)
            now = self._ready(held, run, kind)
            if kind is not None and now is not None:
                verdict, beat = self._run_handler(held, kind, now)
                self._settle(run, verdict, beat)
        finally:
            self._starting = None
            if self.watchdog is not None:  # published before a start that was refused or failed
                self.watchdog.disarm()

    def _ready(self, held: Held, run: Run, kind: kinds.Kind | None) -> datetime | None:
        """Whether the held claim may start: the time it was found ready, or None when it
        must not start (what to write about it then is written here)."""
        if held.lost:  # a prefetched claim whose renewal was rejected: a newer epoch owns it
            self.endings.rejected(run, "renew", held.lost)
            return None
        if kind is None:  # a worker from an older deploy: hand it back for one that knows it
            until = self.clock.now() + timedelta(seconds=30)
            self.endings.finish(run, Deferred(until, "no handler for this kind in this worker"))
            return None
        if self._giving_back:  # the grace period ended between the claim and here: do not start it
            self.endings.give_back(run)
            return None
        if held.cancel_requested:  # asked while it waited in the prefetch: never started
            self.endings.acknowledge_cancel(run)
            return None
        now = self.clock.now()
        if held.needs_renewal(now):
            self._renew_held(held, now)
            if held.lost:
                self.endings.rejected(run, "renew", held.lost)
                return None
        # From here the attempt is spent: a claim only held costs nothing when its worker dies.
        if self._watched(kind):  # a worker stopped whole from the start's write on is still killed in time
            self.watchdog.publish(self._seconds_left(held))  # type: ignore[union-attr]
        testing.starting(held.claim.job_id, held.claim.epoch)
        if not held.started:
            self._record_start(held)
            if held.lost:  # recovered or superseded while it was held: never started
                self.endings.rejected(run, "start", held.lost)
                return None
        return now

    def _run_handler(self, held: Held, kind: kinds.Kind, now: datetime) -> tuple[Verdict, Beat]:
        """Run the started claim's handler under its heartbeat; its verdict, and how its lease ended."""
        ctx = JobContext(held.claim, clock=self.clock, stop=threading.Event())
        beat = Beat(held.claim, ctx, lease=kind.lease or self.lease, first_interval=self.lease / 3,
                    claimed_at=now, expires=held.expires)
        self._current = ctx
        if self._giving_back:  # the grace period ended as it started: stop at the first check
            ctx.stop.set()
        self._heartbeat.watch(beat)
        self._starting = None
        if held.cancel_requested:  # heard while it was being started
            beat.cancel()
        testing.checkpoint("handler", 1 + len(self._heartbeat.held()))
        ran = time.monotonic()
        self.completer.between_jobs = False  # a handler may run long: the completer's thread flushes meanwhile
        watched = self._watched(kind)
        if watched:
            self.watchdog.arm((ctx, Run(held.claim, ran)), self._seconds_left(held))  # type: ignore[union-attr]
        try:
            verdict = self._handle(kind, ctx)
        finally:
            if watched:
                self.watchdog.disarm()  # type: ignore[union-attr]
            self._heartbeat.release(beat)
            self._current = None
        took = time.monotonic() - ran
        self._job_seconds = took if self._job_seconds is None else 0.8 * self._job_seconds + 0.2 * took
        return verdict, beat

    def _watched(self, kind: kinds.Kind) -> bool:
        """Whether the watchdog ends this kind's overrun: in-process handlers (the sandbox ends a child)."""
        return self.watchdog is not None and not (kind.isolated and self.isolate)

    def _seconds_left(self, held: Held) -> float:
        return (held.claim.deadline - self.clock.now()).total_seconds() - DEADLINE_MARGIN

    def _settle(self, run: Run, verdict: Verdict, beat: Beat) -> None:
        """Write the run's end: its verdict, unless its lease, a cancel or the shutdown decides."""
        self.completer.claim_next = not self._heartbeat.holding  # then a full batch commits with that claim
        if beat.fenced:  # how much of its lease the handler left unused: below zero, work past it
            event(log, WARNING, "fenced_handler_ended", job=run.claim.job_id, epoch=run.claim.epoch,
                  lease_left_ms=round((beat.expires - self.clock.now()).total_seconds() * 1000))
            for other in self._heartbeat.drop_held():  # renewed with it, so just as unrenewed
                self.endings.rejected(Run(other.claim, run.started), "renew", "self-fenced with the running claim")
        if beat.lost:
            self.endings.rejected(run, "renew", beat.lost)
        elif beat.cancel_requested and not isinstance(verdict, (Completed, Lost)):
            self.endings.acknowledge_cancel(run)
        elif self._giving_back and isinstance(verdict, Failed):
            self.endings.give_back(run)
        else:
            self.endings.finish(run, verdict)

    def _handle(self, kind: kinds.Kind, ctx: JobContext) -> Verdict:
        """Run the handler: in the sandbox for isolated kinds, else right here."""
        if kind.isolated and self.isolate:
            return self.sandbox.run(ctx.claim, kind, stop=ctx.stop, clock=self.clock, lease=self._heartbeat.current)
        return judge(kind.handler, ctx)

    def _overran(self, token: tuple[JobContext, Run]) -> None:
        """The watchdog's thread: the in-process handler is still running at its job's deadline.
        End it as the sandbox ends a child: the deadline failure written for the job (fenced by
        its epoch), pending completions committed, held jobs handed back; then end this process
        (a thread cannot be killed), which the supervisor replaces."""
        ctx, run = token
        if self._current is not ctx:  # it returned meanwhile
            return
        verdict = deadline_failure()
        event(log, WARNING, "handler_killed", job=run.claim.job_id, epoch=run.claim.epoch, reason=verdict.code,
              by="watchdog", action="end worker process")
        try:
            self.completer.flush()
            self.endings.finish(run, verdict)
            self._give_back_held(own_connection=True)
        except DatabaseError as exc:  # the lease (never past the deadline) brings the job to recovery
            event(log, WARNING, "database_error", worker=self.name, error=type(exc).__name__, detail=str(exc)[:200])
        finally:
            os._exit(OVERRAN_EXIT)  # each log line is flushed as it is written

    def _record_start(self, held: Held) -> None:
        """Record the start of the job about to run, alone, right before its handler runs
        (``queue.start``): its attempt is spent from here, and no other job's is.

        One write a job, even for fast ones: a start written ahead for the next held jobs
        (one write for a run of them) charged the attempts of those a killed worker never
        reached, and the database cannot tell those from the one that was running.
        """
        [outcome] = queue.start_many(claims=[(held.claim.job_id, held.claim.epoch)], now=self.clock.now())
        if outcome:
            held.started = True
        elif not held.lost:
            held.lost = outcome.reason or "start refused"

    def _renew_held(self, held: Held, now: datetime) -> None:
        """Renew the claim about to start and the other held ones together, before it starts."""
        try:
            renew_together([held, *self._heartbeat.held()], now)
        except DatabaseError as exc:  # its beat tries again, and fences it in time if it must
            event(log, WARNING, "renewal_error", job=held.claim.job_id, epoch=held.claim.epoch,
                  error=type(exc).__name__, detail=str(exc)[:200])

    def _give_back_apart(self) -> None:
        """``_give_back_held`` from a thread of its own, on its own connection."""
        with forks.database_work():
            self._give_back_held(own_connection=True)

    def _give_back_held(self, own_connection: bool = False) -> None:
        """Hand every unstarted prefetched job back at once, attempts not spent (stopping)."""
        dropped = self._heartbeat.drop_held()
        if not dropped:
            return
        started = time.monotonic()
        try:
            outcomes = queue.give_back_unstarted(claims=[h.claim for h in dropped], now=self.clock.now(),
                                                 reason="handed back unstarted: worker stopping")
        except DatabaseError as exc:
            if not own_connection:
                raise
            self._errors.event(WARNING, "database_error", worker=self.name, error=type(exc).__name__,
                               detail=str(exc)[:200])
            return
        finally:
            if own_connection:
                connection.close()
        for h, outcome in zip(dropped, outcomes, strict=True):
            self.endings.given_back(Run(h.claim, started), outcome)
