"""The queue benchmark: the project's claim -> complete path against a bare sqlite3 loop.

Everything is measured in one run on throwaway SQLite files, so the figures are ratios
taken on the same machine at the same moment: the project's path (Django, the queue
module, the fair write lock) drains one copy of the data; a bare ``sqlite3`` loop running
the same statements (event rows included) drains another. Child processes do the project's
part, because Django's database settings are fixed per process.

Fairness costs are measured against the first-in first-out claim the queue had before
tenants took turns (``FIFO_CLAIM``: the oldest eligible job, on its own index, which the
benchmark adds to its throwaway files): the claim time with 1,000 tenants and 100,000
queued jobs, and the drain rate.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from django.conf import settings

MANAGE = str(Path(settings.BASE_DIR) / "manage.py")


# --- Roles run inside child processes (DATABASE_URL points at a throwaway file) ---------


# Today's claim before tenants took turns: the oldest eligible job, on an index of its own.
FIFO_INDEX = "CREATE INDEX job_fifo_idx ON jobs_job (available_at, id) WHERE state = 'queued'"
FIFO_CLAIM = """
    UPDATE jobs_job SET state = 'leased', epoch = epoch + 1, attempts = attempts + 1,
        lease_expires_at = MIN(?, deadline), leased_by = ?, updated_at = ?, finished_at = NULL
    WHERE id = (SELECT id FROM jobs_job INDEXED BY job_fifo_idx
                WHERE state = 'queued' AND available_at <= ? ORDER BY available_at, id LIMIT 1)
      AND state = 'queued'
    RETURNING id, kind, state, epoch, attempts, lease_expires_at, deadline, payload, tenant_id"""


TURNS = ("fair", "fifo", "due")


def fill(jobs: int, tenants: int = 1, turns: str = "fair", by_tenant: bool = False,
         fifo_index: bool = True) -> None:
    """Make a fresh database's tables and add ``jobs`` queued diagnostic.noop jobs of ``tenants``.

    The tenants' jobs are interleaved, as when many tenants submit at once, or with
    ``by_tenant`` each tenant's jobs come together, one tenant after another (a backlog
    submitted at once), so taking turns visits rows all over the table. ``fifo_index``: add
    the index of the first-in first-out claim (``FIFO_CLAIM``), for the comparisons that run
    it; left out, the queue's statements see only the project's own indexes.

    ``turns``: ``fair`` stamps the jobs as acceptance would (every tenant's backlog starting
    at the head), ``fifo`` as acceptance with ``JOBS_FAIR_CLAIMS=0`` would (the turn is the
    id), and ``due`` leaves them without a turn, as jobs whose start time has just come, so
    the claims that take them also stamp them.
    """
    from django.db import connection
    from django.db.models import F

    from jobs.models import Job
    from jobs.sql import STRIDE
    from ops.throwaway import create_tables

    if turns not in TURNS:
        raise ValueError(f"turns is one of {TURNS}, not {turns!r}")
    create_tables()
    user, ids = _bench_tenants(tenants)
    now = datetime.now(UTC) - timedelta(seconds=1)
    batch = []
    backlog = [0] * tenants  # each tenant's jobs so far: its next job's place in its own line
    for n in range(jobs):
        tenant = n * tenants // jobs if by_tenant else n % tenants
        backlog[tenant] += 1
        at = now - timedelta(microseconds=jobs - n)  # submitted one after another, as by the web
        batch.append(Job(
            scope_id=ids[tenant], submitted_by=user, kind="diagnostic.noop", payload={},
            operation_key=f"bench-{n}", request_fingerprint="bench", state="queued",
            turn=(backlog[tenant] - 1) * STRIDE if turns == "fair" else None,
            available_at=at, deadline=at + timedelta(days=1), created_at=at, updated_at=at,
        ))
        if len(batch) == 5000:
            Job.objects.bulk_create(batch)
            batch = []
    Job.objects.bulk_create(batch)
    if turns == "fifo":
        Job.objects.update(turn=F("id"))
    with connection.cursor() as cursor:
        if fifo_index:
            cursor.execute(FIFO_INDEX)
        cursor.execute("ANALYZE")


def _bench_tenants(tenants: int) -> tuple[Any, list[int]]:
    """The benchmark's member (of tenant ``bench``) and the ids of ``tenants`` tenants, its own first."""
    from accounts.members import create_member
    from accounts.models import Tenant

    user, _ = create_member(username="bench", tenant_slug="bench", password="Bench-password-1")  # noqa: S106  a throwaway database
    ids: list[int] = [user.tenant_id or 0]
    ids += [Tenant.objects.create(slug=f"t{n}", name=f"T{n}").pk for n in range(1, tenants)]
    return user, ids


def fifo_claim(*, now: datetime, worker: str) -> Any:
    """The first-in first-out claim, on the same transaction and event as the project's."""
    from jobs import queue
    from jobs.sql import sqlite
    from jobs.writelock import raw_write_transaction

    t_now, expires = sqlite.time(now), sqlite.time(now + timedelta(seconds=30))
    with raw_write_transaction() as cursor:
        cursor.execute(FIFO_CLAIM, (expires, worker, t_now, t_now))
        row = cursor.fetchone()
        if row is None:
            return None
        cursor.execute(sqlite.EVENT, {"job_id": row[0], "from_state": "queued", "to_state": "leased", "epoch": row[3],
                                      "actor": f"worker:{worker}", "reason": "claimed", "at": t_now})
    return queue.Claim(job_id=row[0], kind=row[1], epoch=row[3], attempt=row[4], lease_expires_at=now,
                       deadline=now, payload={}, worker=worker)


def drain(worker: str, barrier: str = "", parties: int = 1, fifo: bool = False) -> dict[str, float]:
    """The project's path: queue.claim -> queue.complete until nothing is eligible.

    Sibling processes meet at ``barrier`` (a folder) once connected, so process start-up
    does not decide which of them gets the work. ``fifo``: claim with ``FIFO_CLAIM``.
    """
    from django.db import connection

    from jobs import queue
    from jobs.clock import queue_clock

    claim = fifo_claim if fifo else queue.claim
    connection.ensure_connection()
    if barrier:
        Path(barrier, worker).touch()
        while len(list(Path(barrier).iterdir())) < parties:
            time.sleep(0.0005)
    done = 0
    t0, started = time.time(), time.perf_counter()
    while (c := claim(now=queue_clock.now(), worker=worker)) is not None:
        queue.complete(job_id=c.job_id, epoch=c.epoch, result={"ok": True}, now=queue_clock.now())
        done += 1
    return {"jobs": done, "seconds": time.perf_counter() - started, "t0": t0, "t1": time.time()}


def claim_time(claims: int, fifo: bool = False) -> dict[str, float]:
    """Mean seconds per claim at the current queue depth (``fifo``: with ``FIFO_CLAIM``)."""
    from jobs import queue
    from jobs.clock import queue_clock

    claim = fifo_claim if fifo else queue.claim
    started = time.perf_counter()
    for _ in range(claims):
        claim(now=queue_clock.now(), worker="timer")
    return {"mean": (time.perf_counter() - started) / claims}


ROLES: dict[str, Callable[..., object]] = {"fill": fill, "drain": drain, "claim_time": claim_time}


# --- The bare loop ------------------------------------------------------------------------


def bare_drain(path: Path, synchronous: str) -> dict[str, float]:
    """The same statements through the sqlite3 module: BEGIN IMMEDIATE, stamp the jobs come
    due (if any), pick, count the tenant's running job (if it keeps a count), lease, event,
    COMMIT; BEGIN IMMEDIATE, complete, release the count, event, COMMIT. Several may run on
    one file."""
    from jobs.sql import CANDIDATES, DUE_BATCH, sqlite

    stamp = sqlite.stamp_due()
    db = sqlite3.connect(path, isolation_level=None, timeout=30)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute(f"PRAGMA synchronous={synchronous}")
    result = json.dumps({"ok": True})
    done = 0

    def ts(dt: datetime) -> str:
        return dt.replace(tzinfo=None).isoformat(" ")

    t0, started = time.time(), time.perf_counter()
    while True:
        now = datetime.now(UTC)
        claim = {"now": ts(now), "expires": ts(now + timedelta(seconds=30)), "worker": "bare",
                 "due_batch": DUE_BATCH, "candidates": CANDIDATES}
        db.execute("BEGIN IMMEDIATE")
        if db.execute(sqlite.ANY_DUE, claim).fetchone():
            db.execute(stamp, claim)
        picked = db.execute(sqlite.PICK, claim).fetchone()
        if picked is None:
            db.execute("COMMIT")
            break
        if picked[2]:
            db.execute(sqlite.COUNT_RUNNING, {"scope_id": picked[1]})
        row = db.execute(sqlite.LEASE, {**claim, "job_id": picked[0]}).fetchone()
        job_id, epoch = row[0], row[3]
        db.execute(sqlite.EVENT, {"job_id": job_id, "from_state": "queued", "to_state": "leased", "epoch": epoch,
                                  "actor": "worker:bare", "reason": "claimed", "at": claim["now"]})
        db.execute("COMMIT")
        t_now = ts(datetime.now(UTC))
        db.execute("BEGIN IMMEDIATE")
        done_row = db.execute(sqlite.COMPLETE, {"job_id": job_id, "epoch": epoch, "result": result, "outcome": "",
                                                "outcome_text": "", "needs_action": False, "reference": "",
                                                "now": t_now}).fetchone()
        if done_row is not None:
            db.execute(sqlite.RELEASE_RUNNING, {"jobs": 1, "scope_id": done_row[0]})
            db.execute(sqlite.EVENT, {"job_id": job_id, "from_state": "leased", "to_state": "completed",
                                      "epoch": epoch, "actor": "worker", "reason": "completed", "at": t_now})
        db.execute("COMMIT")
        done += 1
    db.close()
    return {"jobs": done, "seconds": time.perf_counter() - started, "t0": t0, "t1": time.time()}


# --- Orchestration ------------------------------------------------------------------------


@dataclass
class Workspace:
    root: Path
    copies: int = 0

    def url(self, name: str) -> str:
        return f"sqlite:///{self.root / name}"

    def copy(self, src: str, dst: str) -> Path:
        """A fresh copy under a new name: a stale -wal beside a reused name would be replayed."""
        for suffix in ("-wal", "-shm"):
            if (self.root / (src + suffix)).exists():
                raise RuntimeError("template database was not checkpointed")
        self.copies += 1
        target = self.root / f"{self.copies}-{dst}"
        shutil.copyfile(self.root / src, target)
        return target


def child(role: str, url: str, synchronous: str = "FULL", **kwargs: object) -> subprocess.Popen[str]:
    # The parent ran the system checks; its children run on the same settings and code.
    env = dict(os.environ, DATABASE_URL=url, SQLITE_SYNCHRONOUS=synchronous, JOBS_LOG_LEVEL="WARNING")
    return subprocess.Popen(
        [sys.executable, MANAGE, "queuebench", "--skip-checks", "--role", role, "--role-args", json.dumps(kwargs)],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )


def finish(proc: subprocess.Popen[str]) -> dict[str, Any]:
    out, err = proc.communicate()
    if proc.returncode != 0:
        raise RuntimeError(f"benchmark child failed: {err.strip()[-2000:]}")
    if "database is locked" in err:
        raise RuntimeError("a child saw 'database is locked'")
    return json.loads(out.strip().splitlines()[-1]) if out.strip() else {}


def make_template(ws: Workspace, name: str, jobs: int, *, tenants: int = 1, turns: str = "fair",
                  by_tenant: bool = False, fifo_index: bool = True) -> None:
    finish(child("fill", ws.url(name), jobs=jobs, tenants=tenants, turns=turns, by_tenant=by_tenant,
                 fifo_index=fifo_index))
    # Fold the WAL into the file: the copies are self-contained, and still in WAL mode, so
    # processes opening one together need not switch its journal mode (an exclusive step).
    db = sqlite3.connect(ws.root / name)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()


def run(*, jobs: int, depths: tuple[int, int], rounds: int, out: Callable[[str], None],
        tenants: int = 1000) -> dict[str, Any]:
    figures: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="queuebench-") as tmp:
        ws = Workspace(Path(tmp))
        out(f"Queueing {jobs} jobs (throwaway files in {tmp}) ...")
        make_template(ws, "template.sqlite3", jobs)

        for sync in ("FULL", "NORMAL"):
            best_project = best_bare = 0.0
            for _ in range(rounds):
                project = finish(child("drain", ws.url(ws.copy("template.sqlite3", "p.sqlite3").name), sync,
                                       worker="project"))
                bare = bare_drain(ws.copy("template.sqlite3", "b.sqlite3"), sync)
                if not project["jobs"] == bare["jobs"] == jobs:
                    raise RuntimeError(f"drained {project['jobs']} and {bare['jobs']} of {jobs} jobs")
                best_project = max(best_project, jobs / project["seconds"])
                best_bare = max(best_bare, jobs / bare["seconds"])
            ratio = best_project / best_bare
            figures[sync] = {"project": best_project, "bare": best_bare, "ratio": ratio}
            out(f"synchronous={sync:<6} project {best_project:8.0f} jobs/s   bare sqlite3 {best_bare:8.0f} jobs/s"
                f"   ratio {ratio:5.0%}  (target >= 50%)")

        for sync in ("FULL", "NORMAL"):
            one_rate = two_rate = 0.0
            for _ in range(rounds):
                one = finish(child("drain", ws.url(ws.copy("template.sqlite3", "one.sqlite3").name), sync,
                                   worker="solo"))
                two_file = ws.copy("template.sqlite3", "two.sqlite3").name
                barrier = Path(tempfile.mkdtemp(dir=ws.root, prefix="barrier-"))
                pair = [child("drain", ws.url(two_file), sync, worker=f"w{n}", barrier=str(barrier), parties=2)
                        for n in (1, 2)]
                results = [finish(p) for p in pair]
                if sum(r["jobs"] for r in results) != jobs:
                    raise RuntimeError(f"two processes drained {[r['jobs'] for r in results]} of {jobs} jobs")
                one_rate = max(one_rate, jobs / one["seconds"])
                # From the first claim of either process to the last completion of both.
                two_rate = max(two_rate, jobs / (max(r["t1"] for r in results) - min(r["t0"] for r in results)))
                split = [r["jobs"] for r in results]
            figures[f"processes_{sync}"] = {"one": one_rate, "two": two_rate, "split": split}
            out(f"synchronous={sync:<6} 1 process {one_rate:8.0f} jobs/s   2 processes {two_rate:8.0f} jobs/s"
                f"   ratio {two_rate / one_rate:4.2f}x  (target >= 1.0x)   jobs per process {split}")

        large = claim_time_by_depth(ws, depths=depths, out=out, figures=figures)
        figures.update(fairness_cost(ws, jobs=jobs, large=large, tenants=tenants, rounds=rounds, out=out))
    return figures


def claim_time_by_depth(ws: Workspace, *, depths: tuple[int, int], out: Callable[[str], None],
                        figures: dict[str, Any]) -> int:
    """A claim's time with a short queue and a long one (``depths``); the long one's depth."""
    times = {}
    for depth in depths:
        name = f"depth-{depth}.sqlite3"
        make_template(ws, name, depth)
        times[depth] = finish(child("claim_time", ws.url(ws.copy(name, "t.sqlite3").name), "NORMAL",
                                    claims=200))["mean"]
    small, large = depths
    figures["claim_time"] = {str(k): v for k, v in times.items()}
    out(f"claim time: {small:,} queued {times[small] * 1e6:7.0f} us   {large:,} queued "
        f"{times[large] * 1e6:7.0f} us   ratio {times[large] / times[small]:4.2f}x  (target <= 1.5x)")
    return large


def fairness_cost(ws: Workspace, *, jobs: int, large: int, tenants: int, rounds: int,
                  out: Callable[[str], None]) -> dict[str, dict[str, float]]:
    """What fairness costs: the turn-taking claim and drain against the first-in first-out ones."""
    name = f"tenants-{large}.sqlite3"
    make_template(ws, name, large, tenants=tenants)
    fair = fifo = float("inf")
    for _ in range(rounds):  # interleaved, best of each
        fair = min(fair, finish(child("claim_time", ws.url(ws.copy(name, "fair.sqlite3").name), "NORMAL",
                                      claims=500))["mean"])
        fifo = min(fifo, finish(child("claim_time", ws.url(ws.copy(name, "fifo.sqlite3").name), "NORMAL",
                                      claims=500, fifo=True))["mean"])
    figures = {"fair_claim": {"fair": fair, "fifo": fifo, "ratio": fair / fifo}}
    out(f"claim time, {tenants:,} tenants, {large:,} queued: taking turns {fair * 1e6:6.0f} us   "
        f"first in first out {fifo * 1e6:6.0f} us   ratio {fair / fifo:4.2f}x  (target <= 1.5x)")
    name = f"drain-{tenants}.sqlite3"
    make_template(ws, name, jobs, tenants=tenants)
    fair_rate = fifo_rate = 0.0
    for _ in range(rounds):
        fair_run = finish(child("drain", ws.url(ws.copy(name, "fd.sqlite3").name), "FULL", worker="fair"))
        fifo_run = finish(child("drain", ws.url(ws.copy(name, "ff.sqlite3").name), "FULL", worker="fifo",
                                fifo=True))
        fair_rate = max(fair_rate, jobs / fair_run["seconds"])
        fifo_rate = max(fifo_rate, jobs / fifo_run["seconds"])
    figures["fair_drain"] = {"fair": fair_rate, "fifo": fifo_rate, "ratio": fair_rate / fifo_rate}
    out(f"drain, {tenants:,} tenants, synchronous=FULL: taking turns {fair_rate:7.0f} jobs/s   "
        f"first in first out {fifo_rate:7.0f} jobs/s   ratio {fair_rate / fifo_rate:5.0%}  (target >= 85%)")
    return figures
