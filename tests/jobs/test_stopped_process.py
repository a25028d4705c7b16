"""A process stopped (SIGSTOP) while it holds a lock costs at most its own jobs, not the queue.

Each test stops a real process at the moment it holds the lock in question, for longer than a
lease, while real workers drain other jobs and the API takes new ones.
"""

from __future__ import annotations

import subprocess
import time
from datetime import timedelta

import pytest
from django.conf import settings
from django.db import connection
from django.test import Client

from accounts import tokens
from jobs import queue
from jobs.clock import system_clock
from jobs.models import Job
from tests.conftest import PYTHON, ROOT, child_env, wait_for

pytestmark = pytest.mark.slow
LEASE = 2  # seconds: every stop below lasts longer than this

# A process that takes a lock the way the queue does, says so, then stops itself.
HOLD = """
import os, signal, sys, django
django.setup()
from django.db import connection
from jobs import writelock
from jobs.models import Job
what = sys.argv[1]
if what == "flock":                      # the fair write lock alone, between transactions
    fd, _ = writelock._acquire(writelock._lock_path(connection))
    print("held", flush=True)
    os.kill(os.getpid(), signal.SIGSTOP)
elif what == "transaction":              # inside a write transaction: SQLite's own lock too
    with writelock.raw_write_transaction() as cursor:
        cursor.execute("UPDATE jobs_job SET updated_at = updated_at WHERE id = -1")
        print("held", flush=True)
        os.kill(os.getpid(), signal.SIGSTOP)
elif what == "row":                      # a worker inside fail(): its job's row locked
    with writelock.write_transaction():
        Job.objects.select_for_update().filter(pk=int(sys.argv[2])).get()
        print("held", flush=True)
        os.kill(os.getpid(), signal.SIGSTOP)
"""


class Holder:
    def __init__(self, *args: str, **env: str) -> None:
        self.proc = subprocess.Popen([PYTHON, "-c", HOLD, *args], cwd=ROOT, env=child_env(**env),
                                     stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout.readline().strip() == "held"
        wait_for(self.stopped, timeout=10)
        self.since = time.monotonic()

    def stopped(self) -> bool:
        with open(f"/proc/{self.proc.pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "T"

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait(timeout=10)


@pytest.fixture
def holders():
    started: list[Holder] = []

    def hold(*args: str, **env: str) -> Holder:
        holder = Holder(*args, **env)
        started.append(holder)
        return holder

    yield hold
    for holder in started:
        holder.kill()


@pytest.fixture
def noop_jobs(transactional_db, accept):
    def make(n: int) -> list[int]:
        return [accept("diagnostic.noop", now=system_clock.now()).pk for _ in range(n)]
    return make


def drain(timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [PYTHON, "manage.py", "runworkers", "--processes", "2", "--burst", "--lease", str(LEASE)],
        cwd=ROOT, env=child_env(), capture_output=True, text=True, timeout=timeout)


@pytest.fixture
def api(alice) -> Client:
    """An API client whose token was already used (its last use is recorded, not written again)."""
    client = Client(headers={"Authorization": f"Bearer {tokens.issue(alice)}"})
    assert client.get("/jobs").status_code == 200
    return client


def post_job(client: Client, key: str) -> tuple[int, dict, float]:
    started = time.monotonic()
    response = client.post("/jobs", {"kind": "document_review", "payload": {"text": "Supplier: Initech"}},
                           content_type="application/json", headers={"Idempotency-Key": key})
    return response.status_code, response, time.monotonic() - started


sqlite_only = pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's write lock")
postgresql_only = pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's row locks")


@sqlite_only
def test_sqlite_a_process_stopped_holding_the_fair_write_lock_does_not_stop_the_workers(
        noop_jobs, holders, api):
    ids = noop_jobs(200)
    holder = holders("flock")

    status, _, took = post_job(api, "while-stopped")
    done = drain()

    assert done.returncode == 0, done.stderr[-2000:]
    assert Job.objects.filter(pk__in=ids, state="completed").count() == 200
    assert status == 202 and took < settings.SQLITE_BUSY_TIMEOUT
    assert holder.stopped() and time.monotonic() - holder.since > LEASE  # stopped all along


@sqlite_only
def test_sqlite_a_process_stopped_inside_a_write_transaction_gets_503s_within_the_busy_timeout(
        noop_jobs, holders, api):
    ids = noop_jobs(20)
    holder = holders("transaction")

    status, response, took = post_job(api, "during-the-stop")
    assert status == 503 and response["Retry-After"]
    assert response.json()["error"] == "unavailable"
    assert took < settings.SQLITE_BUSY_TIMEOUT + 1
    assert Job.objects.count() == 20  # nothing written

    holder.kill()  # the process dies: SQLite releases its lock, and the queue goes on
    again, _, _ = post_job(api, "during-the-stop")
    done = drain()
    assert again == 202 and Job.objects.filter(operation_key="during-the-stop").count() == 1
    assert done.returncode == 0 and Job.objects.filter(pk__in=ids, state="completed").count() == 20


@postgresql_only
def test_postgresql_a_worker_stopped_holding_its_jobs_row_costs_only_that_job(noop_jobs, holders, api):
    stuck = noop_jobs(1)[0]
    claim = queue.claim(now=system_clock.now(), worker="stopped", lease=timedelta(seconds=LEASE))
    assert claim.job_id == stuck
    ids = noop_jobs(100)
    # The server ends the stopped session well after the drain below, however busy the machine.
    holder = holders("row", str(stuck), DB_IDLE_IN_TRANSACTION_TIMEOUT="20s")

    status, _, took = post_job(api, "beside-the-stop")
    time.sleep(LEASE)  # the stuck job's lease runs out while its row stays locked
    done = drain()

    assert done.returncode == 0, done.stderr[-2000:]
    assert Job.objects.filter(pk__in=ids, state="completed").count() == 100
    assert status == 202 and took < 2
    assert Job.objects.get(pk=stuck).state == "leased"  # passed over, not waited for
    assert holder.stopped() and time.monotonic() - holder.since > LEASE

    # The server ends the stopped session (idle in transaction), its lock goes, and the next
    # sweep recovers the job, which then runs on a new epoch.
    wait_for(lambda: drain().returncode == 0 and Job.objects.get(pk=stuck).state == "completed", timeout=60,
             every=1)
    assert Job.objects.get(pk=stuck).epoch == claim.epoch + 1
