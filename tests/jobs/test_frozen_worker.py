"""A worker frozen anywhere in its claim or completion path holds no lock, only its leases.

PostgreSQL. A real worker process (prefetch 8, so prefetched jobs are among those it holds)
is stopped (SIGSTOP, as a paused VM) at each point of the claim and completion paths: before
a batch claim is sent, while the server runs it, after it returned, as a handler starts with
jobs held beside it, and before a completion batch is sent. A healthy worker then claims
every job the frozen one held, on a new epoch, within the lease plus 20 s, and the frozen
process's sessions show no transaction older than the server's idle-in-transaction timeout.
(SQLite: a process stopped holding the write lock is tests/jobs/test_stopped_process.py.)
"""

from __future__ import annotations

import os
import signal
import subprocess

import psycopg
import pytest
from django.db import connection

from accounts.models import Tenant
from jobs.clock import system_clock
from jobs.models import Job, JobEvent
from tests.conftest import PYTHON, ROOT, child_env, database_url, wait_for

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(connection.vendor != "postgresql",
                       reason="PostgreSQL's row locks; SQLite's write lock: test_stopped_process.py"),
]

LEASE = 2  # seconds
BOUND = LEASE + 20  # the must-show: claimed again within the lease plus 20 s
IDLE_TIMEOUT = 4  # seconds: the frozen worker's idle_in_transaction_session_timeout
APP = "jobs-frozen-worker"  # its sessions' application_name, to find them in pg_stat_activity

WORKER = f"""
import django
django.setup()
from datetime import timedelta
from jobs.worker import Worker
Worker(name="frozen", lease=timedelta(seconds={LEASE}), prefetch=8, completion_batch=4, poll_interval=0.2).run()
"""


class Frozen:
    """The worker under test: its own process group, its log in a file."""

    def __init__(self, log_path, freeze_at: str) -> None:
        self.log_path = log_path
        env = child_env(
            DATABASE_URL=f"{database_url()}?application_name={APP}", JOBS_FREEZE_AT=freeze_at,
            JOBS_PREFETCH_WINDOW="10", JOBS_COMPLETION_FLUSH_MS="60000", DB_LOCK_TIMEOUT="20s",
            DB_IDLE_IN_TRANSACTION_TIMEOUT=f"{IDLE_TIMEOUT}s",
            JOBS_LEASE_SECONDS=str(LEASE))
        with open(log_path, "w") as log:
            self.proc = subprocess.Popen([PYTHON, "-c", WORKER], cwd=ROOT, env=env, stdout=log,
                                         stderr=subprocess.STDOUT, start_new_session=True)

    def stopped(self) -> bool:
        with open(f"/proc/{self.proc.pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "T"

    def signal(self, sig: int) -> None:
        os.killpg(self.proc.pid, sig)  # the worker and any handler child it started

    def log(self) -> str:
        with open(self.log_path) as f:
            return f.read()

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.signal(signal.SIGKILL)
            self.proc.wait(timeout=10)


@pytest.fixture
def frozen(tmp_path):
    started: list[Frozen] = []

    def start(freeze_at: str) -> Frozen:
        worker = Frozen(tmp_path / f"frozen-{len(started)}.log", freeze_at)
        started.append(worker)
        return worker

    yield start
    for worker in started:
        worker.kill()


@pytest.fixture
def healthy():
    procs: list[subprocess.Popen] = []

    def start() -> subprocess.Popen:
        proc = subprocess.Popen(
            [PYTHON, "manage.py", "runworkers", "--processes", "1", "--lease", str(LEASE), "--poll-interval", "0.2"],
            cwd=ROOT, env=child_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        procs.append(proc)
        return proc

    yield start
    for proc in procs:
        proc.send_signal(signal.SIGTERM)
    for proc in procs:
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)


@pytest.fixture
def noop_jobs(transactional_db, accept):
    def make(n: int) -> list[int]:
        return [accept("diagnostic.noop", now=system_clock.now()).pk for _ in range(n)]
    return make


def held_by_frozen() -> dict[int, int]:
    """Each job the frozen worker holds (claimed, not finished): the epoch it holds."""
    return dict(Job.objects.filter(leased_by="frozen", state="leased").values_list("id", "epoch"))


def frozen_sessions() -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pid, state, wait_event, EXTRACT(EPOCH FROM now() - xact_start) FROM pg_stat_activity "
            "WHERE application_name = %s AND datname = current_database()", [APP])
        return cursor.fetchall()


def tenant_row_locked(tenant_id: int) -> psycopg.Connection:
    """A transaction of the test's own that holds the tenant's row (a claim of its jobs waits)."""
    conn = psycopg.connect(database_url())
    conn.execute("SELECT 1 FROM jobs_tenant WHERE id = %s FOR UPDATE", [tenant_id])
    return conn


def no_frozen_session_active() -> bool:
    """No session of the frozen worker is running a statement (or waiting on it for more)."""
    return not any(state == "active" for _, state, _, _ in frozen_sessions())


def waiting_on_a_lock() -> bool:
    return any(wait in {"transactionid", "tuple"} for _, _, wait, _ in frozen_sessions())


@pytest.mark.parametrize("point", ["claim", "mid-claim", "claimed", "handler", "complete"])
def test_a_worker_frozen_anywhere_in_its_claim_or_completion_path_holds_nothing_past_its_lease(
        point, noop_jobs, alice, frozen, healthy):
    ids = noop_jobs(16)
    if point == "mid-claim":  # a limited tenant: its claims write its row, which the test can hold
        Tenant.objects.filter(pk=alice.tenant_id).update(max_running=100, running=0)
    worker = frozen("claim" if point == "mid-claim" else point)
    wait_for(worker.stopped, timeout=30)
    if point == "mid-claim":
        # Stopped before its batch claim is sent: hold the tenant's row, let the claim reach
        # the server and wait there on the lock, stop the worker, then let the claim go on.
        holder = tenant_row_locked(alice.tenant_id)
        worker.signal(signal.SIGCONT)
        wait_for(waiting_on_a_lock, timeout=20)
        worker.signal(signal.SIGSTOP)
        wait_for(worker.stopped, timeout=10)
        holder.commit()
        holder.close()
        wait_for(no_frozen_session_active, timeout=10)  # the server ran the claim without its client
    frozen_at = system_clock.now()
    assert f"point={point if point != 'mid-claim' else 'claim'}" in worker.log(), worker.log()[-3000:]
    held = held_by_frozen()
    if point != "claim":
        assert len(held) >= 2, (held, worker.log()[-3000:])  # a batch: prefetched jobs included

    healthy()
    wait_for(lambda: Job.objects.filter(pk__in=ids, state="completed").count() == len(ids), timeout=BOUND + 10,
             every=0.2)

    assert worker.stopped()  # frozen all along
    delays = []
    for job_id, epoch in held.items():
        again = (JobEvent.objects.filter(job_id=job_id, to_state="leased", epoch__gt=epoch)
                 .exclude(actor="worker:frozen").order_by("at").first())
        assert again is not None, job_id
        delays.append((again.at - frozen_at).total_seconds())
    assert not Job.objects.filter(pk__in=ids, leased_by="frozen").exclude(state="completed").exists()
    assert all(d <= BOUND for d in delays), delays
    sessions = frozen_sessions()
    assert all(age is None or age < IDLE_TIMEOUT + 1 for _, _, _, age in sessions), sessions
    assert not any(state == "active" and wait == "ClientRead" for _, state, wait, _ in sessions), sessions
    print(f"\n{point}: {len(held)} held jobs claimed again {min(delays, default=0):.1f}-{max(delays, default=0):.1f} s "
          f"after the freeze (bound {BOUND} s); frozen sessions {[(s, w) for _, s, w, _ in sessions]}")
