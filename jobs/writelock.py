"""Short write transactions for the queue, and a fair hand-over of SQLite's write lock.

SQLite serialises writers, and a writer that finds the database locked sleeps in growing
steps (1, 2, 5, 10... ms) before it looks again. A process in a tight claim/complete loop
commits and re-takes the lock long before a sleeping rival wakes, so a second worker
process can starve and get no job at all. Taking an exclusive ``flock`` on a file beside
the database first puts the waiters in the kernel's queue instead: the lock is handed over
as soon as it is released. The busy timeout stays as the guarantee for writers that do not
take the flock (Django's own writes, the admin, migrations).

PostgreSQL needs none of this: row locks and ``SKIP LOCKED`` let claimers pass each other.
"""

from __future__ import annotations

import fcntl
import functools
import os
import threading
import time
from contextlib import contextmanager
from typing import Any, Iterator

from django.db import DEFAULT_DB_ALIAS, connections, transaction

_local = threading.local()
SPIN_SECONDS = float(os.environ.get("SQLITE_LOCK_SPIN", "0.005"))


def _lock_fd(path: str) -> int:
    # flock belongs to an open file description: a forked child would share its parent's,
    # and two threads sharing one would both "hold" the lock. Open one per process and thread
    # (the worker's heartbeat thread writes too).
    files = getattr(_local, "files", None)
    if files is None:
        files = _local.files = {}
    key = (os.getpid(), path)
    fd = files.get(key)
    if fd is None:
        fd = files[key] = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    return fd


def _acquire(fd: int) -> None:
    """Take the lock, trying without blocking for a moment first.

    A writer's transaction is a fraction of a millisecond, while waking a process that
    sleeps in the kernel can cost as much on a virtual machine; a short spin lets the
    waiter take the lock the moment it is released. Past the spin it blocks (FIFO-ish).
    """
    deadline = time.perf_counter() + SPIN_SECONDS
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.perf_counter() > deadline:
                break
            os.sched_yield()  # with more writers than cores, let the holder run
    fcntl.flock(fd, fcntl.LOCK_EX)


def _lock_path(conn: Any) -> str | None:
    name = str(conn.settings_dict["NAME"] or "")
    if conn.vendor != "sqlite" or not name or name == ":memory:" or name.startswith("file:"):
        return None
    return f"{name}-writelock"


@contextmanager
def write_transaction() -> Iterator[None]:
    """``transaction.atomic()``, preceded on SQLite by the fair cross-process lock."""
    conn = connections[DEFAULT_DB_ALIAS]
    path = None if conn.in_atomic_block else _lock_path(conn)
    if path is None:
        with transaction.atomic():
            yield
        return
    fd = _lock_fd(path)
    _acquire(fd)
    try:
        with transaction.atomic():
            yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)


@contextmanager
def raw_write_transaction(*, explicit: bool = True) -> Iterator[Any]:
    """One short transaction on the driver's own cursor, for the claim and the completion.

    Django's ``atomic()`` and cursor wrappers cost more than the two statements they wrap
    (measured by ``manage.py queuebench``), so at the top level this issues BEGIN / COMMIT
    itself. Inside an existing transaction (tests, a fenced block) it joins it through a
    savepoint instead. Driver errors are raised as Django's database exceptions either way.
    Statements use the driver's placeholders: ``?`` on SQLite, ``%s`` on PostgreSQL.
    ``explicit=False`` (PostgreSQL, one statement) runs it in autocommit: a transaction of
    its own, one round trip.
    """
    conn = connections[DEFAULT_DB_ALIAS]
    if conn.in_atomic_block:
        with transaction.atomic(), conn.wrap_database_errors:
            yield _prepared_cursor(conn)
        return
    conn.ensure_connection()
    if not explicit:
        with conn.wrap_database_errors:
            yield _prepared_cursor(conn)
        return
    path = _lock_path(conn)
    fd = _lock_fd(path) if path else None
    if fd is not None:
        _acquire(fd)
    try:
        with conn.wrap_database_errors:
            cursor = _prepared_cursor(conn)
            cursor.execute("BEGIN IMMEDIATE" if conn.vendor == "sqlite" else "BEGIN")
            try:
                yield cursor
            except BaseException:
                cursor.execute("ROLLBACK")
                raise
            cursor.execute("COMMIT")
    finally:
        if fd is not None:
            fcntl.flock(fd, fcntl.LOCK_UN)


def _prepared_cursor(conn: Any) -> Any:
    """The driver's cursor; on PostgreSQL one that binds on the server and prepares.

    Django's psycopg cursors bind parameters on the client and never prepare, so the server
    would parse and plan the claim afresh every time; the hot path's few statements are
    better prepared once per connection.
    """
    if conn.vendor != "postgresql":
        return conn.connection.cursor()
    return _prepared_cursor_class()(conn.connection)


@functools.cache
def _prepared_cursor_class() -> type:
    from psycopg import Cursor

    class PreparedCursor(Cursor):
        def execute(self, query: Any, params: Any = None, *, prepare: bool | None = True, **kwargs: Any) -> Any:
            return super().execute(query, params, prepare=prepare, **kwargs)

    return PreparedCursor
