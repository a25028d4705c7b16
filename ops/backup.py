"""A copy of the job store taken while the site runs: consistent, and complete up to one moment.

SQLite: the online backup API (``sqlite3.Connection.backup``) copies the database as one
read transaction sees it, so every job committed before the copy began is in it, including
the ones so far only in the write-ahead log; a plain ``cp`` of the database file misses
those (and may copy a page half-written). Writers go on meanwhile: in WAL mode a reader
does not block them. The copy is one self-contained file (rollback journal, no ``-wal``).

PostgreSQL: ``pg_dump`` in its custom format (restore it with ``pg_restore``). It reads one
snapshot; the snapshot is exported from a transaction here first, so the number of jobs
reported is the number in the dump, counted in the same snapshot.

Either way the copy is written next to its destination under a temporary name and renamed
into place only when complete: a failed backup leaves no file that looks like a backup.
Uploaded documents are files under MEDIA_ROOT, not rows: copy them after the database
(docs/operations.md, Backup and restore), so every document the copy names is in the file copy too.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from django.db import DEFAULT_DB_ALIAS, connections

from jobs.clock import queue_clock
from jobs.models import Job

if TYPE_CHECKING:
    from django.db.backends.base.base import BaseDatabaseWrapper

PG_DUMP_TIMEOUT = 3600  # seconds; a dump of the job tables takes far less


class BackupError(Exception):
    """The backup could not be made; nothing was left at the destination."""


@dataclass(frozen=True)
class Backup:
    path: Path
    store: str  # "sqlite" or "postgresql"
    jobs: int  # jobs in the copy
    size: int  # bytes
    taken_at: datetime  # every job committed before this is in the copy


def backup(path: str | Path, *, using: str = DEFAULT_DB_ALIAS) -> Backup:
    """Copy the database behind ``using`` to ``path``, which must not exist yet."""
    target = Path(path).expanduser().absolute()
    if target.exists() or target.is_symlink():
        raise BackupError(f"{target} already exists: choose a new name (a backup never overwrites)")
    if not target.parent.is_dir():
        raise BackupError(f"{target.parent} is not a folder")
    connection = connections[using]
    partial = target.with_name(f".{target.name}.partial-{os.getpid()}")
    try:
        if connection.vendor == "sqlite":
            taken_at, jobs = _sqlite(connection, partial)
        elif connection.vendor == "postgresql":
            taken_at, jobs = _postgresql(connection, partial)
        else:
            raise BackupError(f"no backup for a {connection.vendor} database")
        _fsync(partial)
        os.replace(partial, target)
        _fsync(target.parent)
    finally:
        partial.unlink(missing_ok=True)
    return Backup(target, connection.vendor, jobs, target.stat().st_size, taken_at)


def _sqlite(connection: BaseDatabaseWrapper, partial: Path) -> tuple[datetime, int]:
    connection.ensure_connection()
    copy = sqlite3.connect(partial)
    try:
        taken_at = queue_clock.now()
        # All pages in one step: one read transaction, one consistent moment.
        connection.connection.backup(copy)
        copy.execute("PRAGMA journal_mode=DELETE")  # a single file, whatever the source used
        checked = copy.execute("PRAGMA quick_check").fetchone()[0]
        if checked != "ok":
            raise BackupError(f"the copy failed its integrity check: {checked}")
        jobs = copy.execute(f"SELECT count(*) FROM {Job._meta.db_table}").fetchone()[0]  # noqa: S608  our model's table
    finally:
        copy.close()
    return taken_at, jobs


def _postgresql(connection: BaseDatabaseWrapper, partial: Path) -> tuple[datetime, int]:
    pg_dump = os.environ.get("PG_DUMP") or shutil.which("pg_dump")
    if not pg_dump:
        raise BackupError("pg_dump is not installed (apt-get install postgresql-client, or set PG_DUMP)")
    settings = connection.settings_dict
    env = {**os.environ, "PGDATABASE": settings["NAME"], "PGCONNECT_TIMEOUT": "10"}
    for variable, key in (("PGHOST", "HOST"), ("PGPORT", "PORT"), ("PGUSER", "USER"), ("PGPASSWORD", "PASSWORD")):
        if settings.get(key):
            env[variable] = str(settings[key])
    if settings.get("OPTIONS", {}).get("sslmode"):
        env["PGSSLMODE"] = settings["OPTIONS"]["sslmode"]
    # Export this transaction's snapshot and dump exactly it, so the count below is the dump's.
    # The transaction only has to outlive pg_dump's start, which imports the snapshot.
    raw = connection.get_new_connection(connection.get_connection_params())
    try:
        with raw.transaction():
            raw.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            raw.execute("SET LOCAL idle_in_transaction_session_timeout = 0")
            taken_at = queue_clock.now()
            snapshot = raw.execute("SELECT pg_export_snapshot()").fetchone()[0]
            jobs = raw.execute(f"SELECT count(*) FROM {Job._meta.db_table}").fetchone()[0]  # noqa: S608  our model's table
            done = subprocess.run(  # noqa: S603  the operator's pg_dump (PG_DUMP or PATH), our arguments
                [pg_dump, "--format=custom", f"--snapshot={snapshot}", f"--file={partial}"],
                env=env, capture_output=True, text=True, timeout=PG_DUMP_TIMEOUT, check=False,
            )
    finally:
        raw.close()
    if done.returncode != 0:
        raise BackupError(f"pg_dump exited with {done.returncode}: {done.stderr.strip()}")
    return taken_at, jobs


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
