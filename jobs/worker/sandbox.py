"""Run a kind's handler in a child process under hard limits, so no input can hurt the worker.

The worker process claims, renews the lease and writes the job's outcome. An isolated kind's
handler runs in a child process forked from it, which serves many jobs one at a time (a fork
costs a few milliseconds once, not per job) and is replaced after ``MAX_JOBS`` of them, after
any limit ended one, or when it died. For each job the child gets:

- a memory limit: ``RLIMIT_DATA`` at the child's data segment now (its heap and private
  writable mappings, ``VmData``) plus the kind's ``memory_mb``. That counts what the child
  really commits (``brk``, ``mmap`` and reserved pages made writable alike); the address
  space (``RLIMIT_AS``, no longer set) also holds malloc arenas reserved but not committed,
  ~64 MB each, which the child could fill past an address-space limit. An allocation past the
  limit raises ``MemoryError``; that, and anything a failed allocation turns into (a
  ``SystemError`` or a library's error saying so, ``jobs.verdicts.out_of_memory``), and a child
  killed by the kernel (``SIGKILL`` not sent by the worker: the OOM killer), end the job as
  ``memory_limit``, not retryable, and the child is replaced;
- a CPU-time limit: the soft ``RLIMIT_CPU`` at the CPU time used so far plus the kind's
  ``cpu_seconds``; past it the kernel kills the child with ``SIGXCPU``;
- wall-clock limits, enforced here by the worker: the job's deadline (the child is killed
  just before it, so the failure can still be written), and inside it each
  ``JobContext.time_limit()`` section the handler declares. A section is not charged the time
  its process waited for a CPU the machine gave to others (the kernel's run-queue wait,
  ``/proc/<pid>/task/*/schedstat``), up to ``MAX_STRETCH`` times its length: a niced handler on a
  busy machine is slow, not its input too complex. Sleeping or waiting on the network is charged.

A child killed for a limit ends its job with a reason in plain words, not retryable: the
input caused it and would cause it again. The queue turns that failure into ``unknown`` when
the handler had committed the external-start marker. The handler's own writes (checkpoints,
the marker) are fenced by the epoch exactly as in-process, from the child's own database
connection. The heartbeat keeps renewing in the worker whatever the handler does, since the
handler no longer shares its interpreter.

Asking the handler to stop (shutdown, a lost lease) sends the child ``SIGUSR1``, which sets
its ``JobContext.stop``; a handler that has not answered ``STOP_GRACE`` seconds later is
killed and reported as stopped (retryable: it was not the input's fault).
"""

from __future__ import annotations

import contextlib
import logging
import math
import multiprocessing
import os
import resource
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from django.db import close_old_connections, connections

from .. import bounded, forks, kinds
from ..clock import Clock, queue_clock
from ..conf import queue_settings
from ..context import JobContext
from ..logs import event
from ..queue import Claim, FailureCode
from ..verdicts import Failed, Verdict, failed, judge

log = logging.getLogger("jobs.worker")

MAX_JOBS = 200  # jobs one child serves before it is replaced (bounds any slow growth)
POLL = 0.1  # seconds between looks at the stop flag while the handler runs
DEADLINE_MARGIN = 0.25  # kill this long before the deadline, so the failure can be written
STOP_GRACE = 2.0  # seconds a handler asked to stop may take before it is killed
NEAR_LIMIT = 4 * 1024 * 1024  # bytes under the memory limit within which a SystemError is memory
MAX_STRETCH = 3.0  # a time_limit section runs at most this many times its seconds, however long it waited for a CPU


@dataclass
class _Section:
    """A ``time_limit`` section the child is in: when it began (monotonic), its seconds, why it would end, and the
    run-queue wait its process had when it began."""

    began: float
    seconds: float
    reason: str
    waited: float

    def ends(self, waited_now: float) -> float:
        """When it ends: its seconds after it began, plus the time its process has since waited for a CPU."""
        stretch = min(max(waited_now - self.waited, 0.0), (MAX_STRETCH - 1) * self.seconds)
        return self.began + self.seconds + stretch


def _waited(pid: int | None) -> float:
    """Seconds the process's threads have waited on the run queue so far; 0 where the kernel does not say."""
    if pid is None:
        return 0.0
    total = 0
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError, ValueError, IndexError), open(f"/proc/{pid}/task/{task}/schedstat") as f:
                total += int(f.read().split()[1])
    except OSError:
        return 0.0
    return total / 1e9


class Lease(Protocol):
    """The worker's view of the claim's lease (``jobs.worker.heartbeat.Beat``)."""

    expires: datetime
    fenced: bool

    def fence_due(self, now: datetime) -> bool: ...

    def fence(self, why: str) -> bool: ...


@dataclass(frozen=True)
class Task:
    """What the worker sends the child for one job."""

    claim: Claim
    kind: str
    limits: kinds.Limits


class Sandbox:
    """The worker's side: one child process at a time, started when first needed."""

    def __init__(self, *, max_jobs: int = MAX_JOBS, on_start: Callable[[int], None] | None = None) -> None:
        self.max_jobs = max_jobs
        self._on_start = on_start  # told the pid of each child started (the worker counts them)
        self.pid: int | None = None
        self._process: Any = None
        self._conn: Any = None
        self._served = 0

    def run(self, claim: Claim, kind: kinds.Kind, *, stop: threading.Event, clock: Clock = queue_clock,
            lease: Lease | None = None) -> Verdict:
        """Run one job's handler in the child and return its verdict, or why it was killed.

        With ``lease``, the worker's view of the claim: when it is overdue for renewal the
        claim is given up (``Lease.fence``), and a handler still running when the lease
        ends is killed, so no work outlives the lease by more than a poll.
        """
        self._ensure_child()
        limits = kinds.limits_for(kind)
        self._conn.send(Task(claim, kind.name, limits))
        to_deadline = (claim.deadline - clock.now()).total_seconds() - DEADLINE_MARGIN
        deadline_at = time.monotonic() + to_deadline
        section: _Section | None = None  # the time_limit section the handler is in
        section_end = math.inf
        stop_at = math.inf
        while True:
            now = time.monotonic()
            if lease is not None and not stop.is_set() and lease.fence_due(clock.now()):
                lease.fence("lease not renewed in time")
            if stop.is_set() and stop_at == math.inf:
                stop_at = now + STOP_GRACE
                if lease is not None and lease.fenced:  # never past the lease
                    stop_at = min(stop_at, now + (lease.expires - clock.now()).total_seconds())
                self._signal(signal.SIGUSR1)
            if section is not None and now >= section_end:
                section_end = section.ends(_waited(self.pid))  # what it waited for a CPU is not its own time
            kill_at, why = _first_kill(deadline_at, (section_end, section.reason) if section else None, stop_at)
            if now >= kill_at:
                self._kill()
                event(log, logging.WARNING, "handler_killed", job=claim.job_id, epoch=claim.epoch, reason=why.code)
                return why
            if not self._conn.poll(min(kill_at - now, POLL)):
                continue
            try:
                message = self._conn.recv()
            except (EOFError, OSError):
                return self._died(claim, kind)
            if message[0] == "limit":
                _, seconds, reason = message
                section = _Section(time.monotonic(), seconds, reason, _waited(self.pid))
                section_end = section.began + seconds
            elif message[0] == "unlimit":
                section, section_end = None, math.inf
            else:  # ("verdict", verdict, retire)
                verdict: Verdict
                _, verdict, retire = message
                self._served += 1
                if retire or self._served >= self.max_jobs:
                    self.close()
                return verdict

    def close(self) -> None:
        """End the child: it exits when its pipe closes; a stuck one is killed."""
        process, conn = self._process, self._conn
        self._process = self._conn = self.pid = None
        if conn is not None:
            conn.close()
        if process is not None:
            process.join(timeout=2)
            if process.exitcode is None:
                process.kill()
                process.join()

    # -- the child's life -------------------------------------------------------------------

    def _ensure_child(self) -> None:
        if self._process is not None and self._process.exitcode is None:
            return
        self.close()
        parent_end, child_end = multiprocessing.Pipe(duplex=True)
        # Forked from the worker between jobs: the registry of kinds, the settings and the
        # code are the worker's own. The child opens its own database connections.
        process = multiprocessing.get_context("fork").Process(
            target=_child_main, args=(child_end, os.getpid()), name="handler-sandbox", daemon=True)
        # SIGUSR1 stays blocked across the fork until the child has its handler: an early stop
        # request must not kill it with the signal's default action.
        # No other thread of the worker inside the database as it forks (``jobs.forks``).
        mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
        try:
            with forks.quiet():
                process.start()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        child_end.close()
        self._process, self._conn, self.pid = process, parent_end, process.pid
        self._served = 0
        if self._on_start is not None and process.pid is not None:
            self._on_start(process.pid)

    def _signal(self, signum: int) -> None:
        if self.pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signum)

    def _kill(self) -> None:
        if self._process is not None:
            self._process.kill()
        self.close()

    def _died(self, claim: Claim, kind: kinds.Kind) -> Verdict:
        """The child ended mid-job: say why in words."""
        process = self._process
        if process is not None:
            process.join(timeout=2)
        code = process.exitcode if process is not None else None
        self.close()
        event(log, logging.WARNING, "handler_died", job=claim.job_id, epoch=claim.epoch, exitcode=code)
        if code == -signal.SIGKILL:  # not the worker's kill (that returns before reading the pipe)
            return failed(FailureCode.MEMORY_LIMIT, "the job needed more memory than it is allowed (its process was "
                                                    "killed by the system)", retryable=False)
        if code == -signal.SIGXCPU:
            seconds = kinds.limits_for(kind).cpu_seconds
            return failed(FailureCode.CPU_LIMIT, f"the job needed more than {seconds:g} s of processor time",
                          retryable=False)
        if code is not None and code < 0:
            return failed(FailureCode.HANDLER_CRASHED, f"the handler's process died ({signal.Signals(-code).name})",
                          retryable=True)
        return failed(FailureCode.HANDLER_CRASHED, f"the handler's process exited with status {code}",
                      retryable=True)


def deadline_failure() -> Failed:
    """How a job ends whose handler was still running at its deadline (here, and in the worker's
    watchdog for an in-process handler)."""
    return failed(FailureCode.DEADLINE, "the job ran out of time: its deadline passed before it finished",
                  retryable=False)


def _first_kill(deadline_at: float, section: tuple[float, str] | None, stop_at: float) -> tuple[float, Failed]:
    """When the handler is killed (monotonic) unless it returns first, and the failure that says why:
    the deadline, a ``time_limit`` section's end, or the grace after a stop request."""
    kill_at, why = deadline_at, deadline_failure()
    if section is not None and section[0] < kill_at:
        kill_at, why = section[0], failed(FailureCode.TIME_LIMIT, section[1], retryable=False)
    if stop_at < kill_at:
        kill_at, why = stop_at, failed(FailureCode.STOPPED, "the handler did not stop when asked", retryable=True)
    return kill_at, why


# --- In the child -------------------------------------------------------------------------------


class _Reporter:
    """``JobContext.time_limit`` in the child: tell the worker, which enforces it."""

    def __init__(self, conn: Any) -> None:
        self._conn = conn

    def enter(self, seconds: float, reason: str) -> None:
        self._conn.send(("limit", seconds, reason))

    def leave(self) -> None:
        self._conn.send(("unlimit",))


_inherited: list[Any] = []  # the worker's connection objects: kept, never used or closed here


def _child_main(conn: Any, worker_pid: int) -> None:
    _die_with(signal.SIGKILL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the supervisor's to interpret
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # a SIGXCPU kill writes no core file
    # Below the worker's (and the web's) CPU priority: a request takes the CPU from a handler at
    # once, and the handler has what is left (its CPU-time limit counts CPU, not waiting).
    _run_niced(queue_settings().handler_nice)
    _forget_inherited_connections()
    stop = threading.Event()
    signal.signal(signal.SIGUSR1, lambda signum, frame: stop.set())
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGUSR1})
    if os.getppid() != worker_pid:
        os._exit(0)
    while True:
        try:
            task: Task = conn.recv()
        except (EOFError, OSError):
            os._exit(0)
        stop.clear()
        close_old_connections()  # as the worker between jobs: one the database dropped (a restart) is replaced
        verdict, retire = _run(task, conn, stop)
        conn.send(("verdict", verdict, retire))
        if retire:
            os._exit(0)


def _run(task: Task, conn: Any, stop: threading.Event) -> tuple[Verdict, bool]:
    kind = kinds.get(task.kind)
    if kind is None:
        return failed(FailureCode.UNKNOWN_KIND, f"no handler for kind {task.kind!r}", retryable=True), False
    ctx = JobContext(task.claim, clock=queue_clock, stop=stop, limits=_Reporter(conn))
    limited = _limited(task.limits)
    with limited:
        verdict = judge(limited.guard(kind.handler), ctx)
    # After a memory failure the heap may be fragmented and large: start afresh.
    retire = isinstance(verdict, Failed) and verdict.code == FailureCode.MEMORY_LIMIT
    return verdict, retire


class _limited:
    """Set the memory and CPU limits for one job; lift them afterwards (soft limits only)."""

    def __init__(self, limits: kinds.Limits) -> None:
        self.limits = limits

    def __enter__(self) -> None:
        self.saved = {r: resource.getrlimit(r) for r in (resource.RLIMIT_DATA, resource.RLIMIT_CPU)}
        # No RLIMIT_AS beside it: with the address space near its limit, Linux lets mprotect
        # make reserved arena pages writable without checking RLIMIT_DATA at all (it refuses
        # only what the old protection would have been allowed), and the child grew 68 MB
        # past a 5 MB limit that way.
        self.data_limit = bounded.data_segment() + self.limits.memory_mb * 1024 * 1024
        _set_soft(resource.RLIMIT_DATA, self.data_limit)
        usage = resource.getrusage(resource.RUSAGE_SELF)
        _set_soft(resource.RLIMIT_CPU, math.ceil(usage.ru_utime + usage.ru_stime + self.limits.cpu_seconds))

    def __exit__(self, *exc: object) -> None:
        for limit, (soft, hard) in self.saved.items():
            resource.setrlimit(limit, (soft, hard))

    def guard(self, handler: Any) -> Any:
        """``handler``, with a ``SystemError`` raised at the memory limit counted as memory.

        CPython raises ``SystemError`` when C code fails an allocation without saying so:
        within a few megabytes of the limit (measured while the failing frames still hold
        their memory), that is what it was.
        """
        def guarded(ctx: JobContext) -> Any:
            try:
                return handler(ctx)
            except SystemError as exc:
                if self.data_limit - bounded.data_segment() < max(NEAR_LIMIT, self.limits.memory_mb * 1024 * 1024 // 4):
                    raise MemoryError("an allocation failed at the memory limit") from exc
                raise
        return guarded


def _set_soft(limit: int, value: int) -> None:
    _, hard = resource.getrlimit(limit)
    if hard != resource.RLIM_INFINITY:
        value = min(value, hard)
    resource.setrlimit(limit, (value, hard))


def _forget_inherited_connections() -> None:
    """Open this process's own database connections, never touching the worker's.

    A connection carried across fork must not be used, or closed (closing a PostgreSQL one
    would end the worker's session): each inherited driver connection is kept aside, never
    freed, and Django opens a new one on first use.
    """
    for conn in connections.all(initialized_only=True):
        _inherited.append(conn.connection)
        conn.connection = None


AUTOGROUP = "/proc/self/autogroup"


def _run_niced(nice: int) -> None:
    """This child ``nice`` below the processes beside it, the web's among them.

    A process's nice value weighs only against the processes of its own scheduling group. Where
    the kernel groups processes by session (its autogroups: a worker started from a shell, by
    ``setsid`` or by a supervisor that starts each program in a session of its own), the web's
    processes and the worker's are two groups that share the CPU half and half, whatever the
    handlers' nice: two busy handlers then held the web to one core, and its requests waited
    hundreds of milliseconds in bursts. So the child starts a session of its own (it still
    dies with its worker: ``_die_with``), whose group it gives the same nice. Under systemd, whose
    services are control groups, the workers' unit's ``CPUWeight`` does this (docs/operations.md)."""
    os.nice(nice)
    if nice <= 0 or not os.path.exists(AUTOGROUP):
        return
    try:
        os.setsid()
        with open(AUTOGROUP, "w") as group:  # only lowers the group's priority: no privilege needed
            group.write(str(nice))
    except OSError:
        pass  # autogroups disabled or not writable here: the nice above is what there is


def _die_with(signum: int) -> None:
    """Linux: get ``signum`` when the worker dies, even by SIGKILL."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signum)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
