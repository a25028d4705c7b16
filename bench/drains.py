"""The drains the benchmarks time: real ``runworkers --burst`` processes, the bare loops that run
the same claim and completion statements through the driver alone, and throwaway PostgreSQL
databases to run them on. Rates run from the first claim to the last completion."""

from __future__ import annotations

import json
import multiprocessing
import os
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from jobs.sql import CANDIDATES, DUE_BATCH, ClaimParams, postgresql

from .queuebench import MANAGE, bare_drain

BATCH = 32  # the worker's prefetch and completion batch as shipped

# --- Bare loops (one per process) ------------------------------------------------------------


def bare_sqlite(path: str, synchronous: str, out: Any) -> None:
    out.put(bare_drain(Path(path), synchronous))


def bare_postgres(dsn: str, out: Any) -> None:
    """The same single statements as the project's path, in autocommit: one round trip each."""
    import psycopg
    from psycopg.types.json import Jsonb

    claim_sql = postgresql.claim()
    db = psycopg.connect(dsn, autocommit=True)
    result = Jsonb({"ok": True})
    done, t0 = 0, time.time()
    while True:
        now = datetime.now(UTC)
        claim = ClaimParams(now=now, expires=now + timedelta(seconds=30), worker="bare", actor="worker:bare")
        row = db.execute(claim_sql, claim.binding(postgresql.PostgreSQL().time), prepare=True).fetchone()
        if row is None:
            break
        if row[2] != "leased":
            continue  # 'busy' or 'stamped': try again, as the queue does
        db.execute(postgresql.COMPLETE, {"job_id": row[0], "epoch": row[3], "result": result, "outcome": "",
                                         "outcome_text": "", "needs_action": False, "reference": "",
                                         "now": datetime.now(UTC), "actor": "worker"}, prepare=True)
        done += 1
    db.close()
    out.put({"jobs": done, "t0": t0, "t1": time.time()})


def bare_sqlite_batched(path: str, out: Any, starts: bool = False) -> None:
    """The batched work alone through the sqlite3 module, ``BATCH`` jobs at a time: one
    ``BEGIN IMMEDIATE`` that stamps the jobs come due (if any) and makes ``BATCH`` fenced picks
    and leases with their events, and one that commits their ``BATCH`` fenced completions (one
    statement), releases the running counts and writes the events: the statements
    ``jobs.sql.sqlite`` runs for a claim batch and a completion batch, at ``synchronous=FULL``,
    with nothing else per job. ``starts``: and each job's fenced start record before it would
    run, one statement on a second connection at ``synchronous=NORMAL``, as the worker writes it."""
    import sqlite3

    from jobs.sql import sqlite

    stamp = sqlite.stamp_due()
    db = sqlite3.connect(path, isolation_level=None, timeout=30)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    relaxed = sqlite3.connect(path, isolation_level=None, timeout=30)
    relaxed.execute("PRAGMA synchronous=NORMAL")
    start = sqlite.start(1)
    result = json.dumps({"ok": True})
    done, t0 = 0, time.time()
    while True:
        now = datetime.now(UTC)
        claim = {"now": sqlite.time(now), "expires": sqlite.time(now + timedelta(seconds=30)), "worker": "bare",
                 "due_batch": DUE_BATCH, "candidates": CANDIDATES}
        leased = []
        db.execute("BEGIN IMMEDIATE")
        if db.execute(sqlite.ANY_DUE, claim).fetchone():
            db.execute(stamp, claim)
        for _pick in range(BATCH):
            picked = db.execute(sqlite.PICK, claim).fetchone()
            if picked is None:
                break
            if picked[2]:
                db.execute(sqlite.COUNT_RUNNING, {"scope_id": picked[1]})
            row = db.execute(sqlite.LEASE, {**claim, "job_id": picked[0]}).fetchone()
            if row is not None:
                leased.append((row[0], row[3]))
        db.executemany(sqlite.EVENT, [{"job_id": job_id, "from_state": "queued", "to_state": "leased",
                                       "epoch": epoch, "actor": "worker:bare", "reason": "claimed",
                                       "at": claim["now"]} for job_id, epoch in leased])
        db.execute("COMMIT")
        if not leased:
            break
        if starts:
            for job_id, epoch in leased:
                relaxed.execute(start, {"now": sqlite.time(datetime.now(UTC)), "job_id_0": job_id,
                                        "epoch_0": epoch}).fetchall()
        t_now = sqlite.time(datetime.now(UTC))
        binding: dict[str, Any] = {"now": t_now}
        for n, (job_id, epoch) in enumerate(leased):
            binding.update({f"job_id_{n}": job_id, f"epoch_{n}": epoch, f"result_{n}": result, f"outcome_{n}": "",
                            f"outcome_text_{n}": "", f"needs_action_{n}": False, f"reference_{n}": ""})
        db.execute("BEGIN IMMEDIATE")
        rows = db.execute(sqlite.complete_many(len(leased)), binding).fetchall()
        for tenant_id in {row[2] for row in rows}:
            db.execute(sqlite.RELEASE_RUNNING, {"jobs": sum(row[2] == tenant_id for row in rows),
                                                "scope_id": tenant_id})
        db.executemany(sqlite.EVENT, [{"job_id": job_id, "from_state": "leased", "to_state": "completed",
                                       "epoch": epoch, "actor": "worker", "reason": "completed", "at": t_now}
                                      for job_id, epoch, _ in rows])
        db.execute("COMMIT")
        done += len(rows)
    db.close()
    relaxed.close()
    out.put({"jobs": done, "t0": t0, "t1": time.time()})


def bare_postgres_batched(dsn: str, out: Any, starts: bool = False) -> None:
    """The batched work alone through psycopg, ``BATCH`` jobs at a time: the claim batch as the
    queue sends it (``BATCH`` ``EXECUTE``s of the prepared claim in one message, one implicit
    transaction, dated by the server) and the ``BATCH`` fenced completions with their events in
    one prepared statement, in autocommit: two round trips a batch, nothing else per job.
    ``starts``: and each job's fenced start record before it would run (``START_ONE``, one round
    trip, ``synchronous_commit`` off), as the worker writes it."""
    import psycopg
    from psycopg import ClientCursor
    from psycopg.types.json import Jsonb

    _name, prepare, execute = postgresql.prepare_claim(True)
    db = psycopg.connect(dsn, autocommit=True)
    db.execute(prepare)
    result = Jsonb({"ok": True})
    claim = ClaimParams(now=None, expires=None, worker="bare", actor="worker:bare", lease=timedelta(seconds=30))
    message = postgresql.batch_message(ClientCursor(db), execute, claim.binding(postgresql.PostgreSQL().time), BATCH)
    done, t0 = 0, time.time()
    while True:
        cursor = ClientCursor(db)
        cursor.execute(message)
        rows = []
        while True:
            if cursor.description is not None:  # a pick's row (the SET before them returns none)
                rows.append(cursor.fetchone())
            if not cursor.nextset():
                break
        answer = postgresql.claimed(rows)
        if not answer.leased:
            if answer.retry:
                continue
            break
        batch = answer.leased
        if starts:
            for row in batch:
                db.execute(postgresql.START_ONE, {"now": datetime.now(UTC), "job_id": row.job_id, "epoch": row.epoch},
                           prepare=True).fetchall()
        completed = db.execute(postgresql.COMPLETE_MANY, {
            "job_ids": [r.job_id for r in batch], "epochs": [r.epoch for r in batch],
            "results": [result] * len(batch), "outcomes": [""] * len(batch), "outcome_texts": [""] * len(batch),
            "needs_actions": [False] * len(batch), "references": [""] * len(batch), "now": datetime.now(UTC),
            "actor": "worker"}, prepare=True).fetchall()
        done += len(completed)
    db.close()
    out.put({"jobs": done, "t0": t0, "t1": time.time()})


def bare_sqlite_started(path: str, out: Any) -> None:
    bare_sqlite_batched(path, out, starts=True)


def bare_postgres_started(dsn: str, out: Any) -> None:
    bare_postgres_batched(dsn, out, starts=True)


def run_bare(target: Callable[..., None], processes: int, *args: Any) -> dict[str, Any]:
    # Forked, not spawned: the children need the statements, not a Django set-up of their own.
    ctx = multiprocessing.get_context("fork")
    out = ctx.Queue()
    procs = [ctx.Process(target=target, args=(*args, out)) for _ in range(processes)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=600)
        if p.exitcode != 0:
            raise RuntimeError(f"a bare loop process failed (exit code {p.exitcode})")
    results = [out.get(timeout=5) for _ in procs]
    jobs = sum(r["jobs"] for r in results)
    span = max(r["t1"] for r in results) - min(r["t0"] for r in results)
    return {"jobs": jobs, "rate": jobs / span, "split": [r["jobs"] for r in results]}


# --- The workers -----------------------------------------------------------------------------


def run_workers(url: str, processes: int, env: dict[str, str] | None = None, manage: str = MANAGE) -> dict[str, Any]:
    """``runworkers --burst`` to the end; the rate from its own claim and completion events.

    ``manage``: another checkout's ``manage.py`` (``--baseline``), on the same database."""
    done = subprocess.run(
        [sys.executable, manage, "runworkers", "--processes", str(processes), "--burst", "--lease", "30",
         "--poll-interval", "0.05"],
        env=dict(os.environ, DATABASE_URL=url, JOBS_LOG_LEVEL="WARNING", **(env or {})),
        capture_output=True, text=True, timeout=900,
    )
    if done.returncode != 0:
        raise RuntimeError(f"runworkers failed: {done.stderr[-2000:]}")
    if "database is locked" in done.stderr:
        raise RuntimeError("runworkers saw 'database is locked'")
    return _rate_from_events(url)


def _rate_from_events(url: str) -> dict[str, Any]:
    sql = (
        "SELECT MIN(CASE WHEN to_state = 'leased' THEN at END), MAX(CASE WHEN to_state = 'completed' THEN at END), "
        "SUM(CASE WHEN to_state = 'completed' THEN 1 ELSE 0 END) FROM jobs_jobevent"
    )
    workers = "SELECT actor, COUNT(*) FROM jobs_jobevent WHERE to_state = 'leased' GROUP BY actor"
    ((first, last, jobs),) = select_rows(url, sql)
    split = [n for _, n in select_rows(url, workers)]
    return {"jobs": jobs, "rate": jobs / (as_datetime(last) - as_datetime(first)).total_seconds(), "split": split}


def select_rows(url: str, sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
    """The rows of one query (``%s`` placeholders) on the database ``url`` names, by the driver."""
    if url.startswith("sqlite"):
        import sqlite3

        db = sqlite3.connect(url.removeprefix("sqlite:///"))
        rows = db.execute(sql.replace("%s", "?"), params).fetchall()
        db.close()
        return rows
    import psycopg

    with psycopg.connect(url) as pg:
        return pg.execute(sql, params).fetchall()


def as_datetime(value: datetime | str) -> datetime:
    """A timestamp as the driver gives it: SQLite's are text."""
    return datetime.fromisoformat(value) if isinstance(value, str) else value


# --- PostgreSQL throwaway databases ----------------------------------------------------------


class PostgresScratch:
    """Throwaway databases on a PostgreSQL server, each a copy of one filled template."""

    def __init__(self, server_url: str) -> None:
        self.server_url = server_url
        self.base = server_url.rsplit("/", 1)[0]
        self.prefix = f"jobsbench_{os.getpid()}"
        self.made: list[str] = []

    def _admin(self, sql: str) -> None:
        import psycopg

        with psycopg.connect(self.server_url, autocommit=True) as db:
            db.execute(sql)

    def create(self, name: str, template: str | None = None) -> str:
        full = f"{self.prefix}_{name}"
        self._admin(f'CREATE DATABASE "{full}"' + (f' TEMPLATE "{self.prefix}_{template}"' if template else ""))
        self.made.append(full)
        return f"{self.base}/{full}"

    def drop_all(self) -> None:
        for name in reversed(self.made):
            self._admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def postgres_reachable(url: str) -> bool:
    try:
        import psycopg

        psycopg.connect(url, connect_timeout=3).close()
        return True
    except psycopg.Error:
        return False
