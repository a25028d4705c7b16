"""The drains the benchmarks time: real ``runworkers --burst`` processes, the bare loops that run
the same claim and completion statements through the driver alone, and throwaway PostgreSQL
databases to run them on. Rates run from the first claim to the last completion."""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from jobs.sql import ClaimParams, postgresql

from .queuebench import MANAGE, bare_drain

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


def select_rows(url: str, sql: str, params: tuple = ()) -> list[Any]:
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
