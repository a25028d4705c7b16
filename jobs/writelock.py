"""Short write transactions for the queue, and a fair hand-over of SQLite's write lock.

SQLite serialises writers, and a writer that finds the database locked sleeps in growing
steps (1, 2, 5, 10... ms) before it looks again. A process in a tight claim/complete loop
commits and re-takes the lock long before a sleeping rival wakes, so a second worker
process can starve and get no job at all. Taking an exclusive ``flock`` on a file beside
the database first puts the waiters in the kernel's queue instead: the lock is handed over
as soon as it is released.

The flock only orders writers; SQLite's own lock keeps them correct. So a writer waits for
the flock at most ``SQLITE_LOCK_WAIT`` seconds and then goes on without it, with SQLite's
busy timeout (shortened by the time already spent) as the bound: a process stopped while
holding the flock (SIGSTOP, a frozen VM) costs the others that wait once, not forever, and
a writer that cannot get SQLite's lock either gives up with "database is locked" (a JSON
503 on the web, a backoff in the worker) within the busy timeout. While such a stuck holder
is known, later writers in the same process do not wait for the flock at all.

PostgreSQL needs none of this: row locks and ``SKIP LOCKED`` let claimers pass each other,
and the connection's lock and statement timeouts bound every wait (settings).
"""

from __future__ import annotations

import fcntl
import functools
import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.db import DEFAULT_DB_ALIAS, connections, transaction

from .conf import sqlite_busy_timeout, sqlite_lock_wait, sqlite_synchronous

_local = threading.local()
NEGLIGIBLE_WAIT = 0.01  # seconds of waiting for the flock that leave the busy timeout as it is
SPIN_SECONDS = float(os.environ.get("SQLITE_LOCK_SPIN", "0.005"))


class _Process:
    pid = os.getpid()  # this process's, kept current across fork: a system call saved on every write


os.register_at_fork(after_in_child=lambda: setattr(_Process, "pid", os.getpid()))


def _lock_fd(path: str) -> int:
    # flock belongs to an open file description: a forked child would share its parent's,
    # and two threads sharing one would both "hold" the lock. Open one per process and thread
    # (the worker's heartbeat thread writes too).
    files = getattr(_local, "files", None)
    if files is None:
        files = _local.files = {}
    key = (_Process.pid, path)
    fd = files.get(key)
    if fd is None:
        fd = files[key] = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    return fd


class _Waiter:
    """Blocks on the flock in a thread of its own, for a caller that may stop waiting.

    It waits on a file description of its own, so when it gets the lock after its caller
    gave up, it can release exactly that lock and nobody else's.
    """

    def __init__(self, path: str) -> None:
        self.fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        self._got = threading.Event()
        self._done = threading.Event()  # it got the lock after being abandoned, and let go
        self._abandoned = False
        self._guard = threading.Lock()
        threading.Thread(target=self._wait, name="writelock-waiter", daemon=True).start()

    def _wait(self) -> None:
        fcntl.flock(self.fd, fcntl.LOCK_EX)
        with self._guard:
            if not self._abandoned:
                self._got.set()
                return
        fcntl.flock(self.fd, fcntl.LOCK_UN)
        os.close(self.fd)
        self._done.set()

    def wait(self, timeout: float) -> bool:
        if self._got.wait(timeout):
            return True
        with self._guard:
            if self._got.is_set():
                return True
            self._abandoned = True
            return False

    @property
    def pending(self) -> bool:
        """Abandoned and still blocked: the holder it waits for has not let go."""
        return self._abandoned and not self._done.is_set()


_stuck: dict[tuple[int, str], _Waiter] = {}  # per process and lock file: an abandoned waiter


def _acquire(path: str) -> tuple[int | None, float]:
    """Take the flock; return the descriptor that holds it (None: not taken) and the wait.

    A writer's transaction is a fraction of a millisecond, while waking a process that
    sleeps in the kernel can cost as much on a virtual machine; a short spin lets the
    waiter take the lock the moment it is released. Past the spin it blocks in the kernel's
    queue, for at most ``SQLITE_LOCK_WAIT`` seconds.
    """
    started = time.perf_counter()
    fd = _lock_fd(path)
    spin_until = started + SPIN_SECONDS
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd, time.perf_counter() - started
        except BlockingIOError:
            if time.perf_counter() > spin_until:
                break
            os.sched_yield()  # with more writers than cores, let the holder run
    key = (_Process.pid, path)
    stuck = _stuck.get(key)
    if stuck is not None and stuck.pending:
        return None, time.perf_counter() - started  # known stuck holder: go straight to SQLite
    waiter = _Waiter(path)
    if waiter.wait(sqlite_lock_wait()):
        _stuck.pop(key, None)
        return waiter.fd, time.perf_counter() - started
    _stuck[key] = waiter
    return None, time.perf_counter() - started


def _release(fd: int | None) -> None:
    if fd is None:
        return
    fcntl.flock(fd, fcntl.LOCK_UN)
    if fd not in getattr(_local, "files", {}).values():
        os.close(fd)  # a waiter's own descriptor


@contextmanager
def _bounded_busy_timeout(conn: Any, waited: float) -> Iterator[None]:
    """After a wait for the flock, give SQLite only what is left of the busy timeout."""
    full = sqlite_busy_timeout()
    if waited < NEGLIGIBLE_WAIT:
        yield
        return
    conn.ensure_connection()
    raw = conn.connection
    raw.execute(f"PRAGMA busy_timeout = {max(int((full - waited) * 1000), 1)}")
    try:
        yield
    finally:
        raw.execute(f"PRAGMA busy_timeout = {int(full * 1000)}")


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
    fd, waited = _acquire(path)
    try:
        with _bounded_busy_timeout(conn, waited), transaction.atomic():
            yield
    finally:
        _release(fd)


@contextmanager
def raw_write_transaction(*, explicit: bool = True, durable: bool = True) -> Iterator[Any]:
    """One short transaction on the driver's own cursor, for the claim and the completion.

    Django's ``atomic()`` and cursor wrappers cost more than the two statements they wrap
    (measured by ``manage.py queuebench``), so at the top level this issues BEGIN / COMMIT
    itself. Inside an existing transaction (tests, a fenced block) it joins it through a
    savepoint instead. Driver errors are raised as Django's database exceptions either way.
    Statements use the driver's placeholders: ``?`` on SQLite, ``%s`` on PostgreSQL.
    ``explicit=False`` (one statement) runs it in autocommit: a transaction of its own, one
    round trip on PostgreSQL; on SQLite still behind the fair lock, without the BEGIN and
    COMMIT statements (the caller reads the statement to its end inside the block).
    ``durable=False`` (SQLite): the commit survives the process, not a power cut
    (``synchronous=NORMAL`` for this transaction alone: no wait for the disk).
    """
    conn = connections[DEFAULT_DB_ALIAS]
    if conn.in_atomic_block:
        with transaction.atomic(), conn.wrap_database_errors:
            yield _prepared_cursor(conn)
        return
    conn.ensure_connection()
    path = _lock_path(conn)
    if not explicit and path is None:
        with conn.wrap_database_errors:
            yield _prepared_cursor(conn)
        return
    fd, waited = _acquire(path) if path else (None, 0.0)
    try:
        with conn.wrap_database_errors, _bounded_busy_timeout(conn, waited):
            cursor = _prepared_cursor(conn)
            relaxed = not durable and conn.vendor == "sqlite"
            if relaxed:
                cursor.execute("PRAGMA synchronous = NORMAL")
            try:
                if not explicit:  # SQLite, one statement: its own transaction, behind the fair lock
                    yield cursor
                    return
                cursor.execute("BEGIN IMMEDIATE" if conn.vendor == "sqlite" else "BEGIN")
                try:
                    yield cursor
                except BaseException:
                    cursor.execute("ROLLBACK")
                    raise
                cursor.execute("COMMIT")
            finally:
                if relaxed:
                    cursor.execute(f"PRAGMA synchronous = {sqlite_synchronous()}")
    finally:
        _release(fd)


# Per thread: (process id, database file, connection) of ``relaxed_statement``'s own connection.
_relaxed = threading.local()
_inherited: list[sqlite3.Connection] = []  # a parent's, carried across fork: never used or closed here


def relaxed_statement(statement: str, binding: dict[str, Any]) -> list[Any]:
    """One write statement in a transaction of its own that survives the process, not a power
    cut, and its rows (read to the end): a worker's start record.

    SQLite: on a connection of this thread's own kept at ``synchronous=NORMAL``, behind the
    fair lock, so the statement is the whole transaction (no BEGIN, COMMIT, or switch of the
    shared connection's ``synchronous`` and back, which cost more than the write itself).
    Inside a transaction (tests, a fenced block), on PostgreSQL, or on a database with no file,
    it runs through ``raw_write_transaction(explicit=False, durable=False)``. The statement
    uses the driver's placeholders. Driver errors are raised as Django's.
    """
    conn = connections[DEFAULT_DB_ALIAS]
    path = None if conn.in_atomic_block else _lock_path(conn)
    if path is None:
        with raw_write_transaction(explicit=False, durable=False) as cursor:
            cursor.execute(statement, binding)
            rows: list[Any] = cursor.fetchall()
            return rows
    db = _relaxed_connection(str(conn.settings_dict["NAME"]))
    fd, waited = _acquire(path)
    try:
        with conn.wrap_database_errors:
            if waited >= NEGLIGIBLE_WAIT:  # give SQLite only what is left of the busy timeout
                db.execute(f"PRAGMA busy_timeout = {max(int((sqlite_busy_timeout() - waited) * 1000), 1)}")
            try:
                rows = db.execute(statement, binding).fetchall()
                return rows
            finally:
                if waited >= NEGLIGIBLE_WAIT:
                    db.execute(f"PRAGMA busy_timeout = {int(sqlite_busy_timeout() * 1000)}")
    except Exception:
        _relaxed.__dict__.pop("held", None)  # a fresh connection next time
        db.close()
        raise
    finally:
        _release(fd)


def _relaxed_connection(name: str) -> sqlite3.Connection:
    held = getattr(_relaxed, "held", None)
    if held is not None and held[:2] == (_Process.pid, name):
        kept: sqlite3.Connection = held[2]
        return kept
    if held is not None and held[0] != _Process.pid:
        _inherited.append(held[2])  # the parent's: closing it here could disturb its locks
    db = sqlite3.connect(name, isolation_level=None, timeout=sqlite_busy_timeout(), check_same_thread=True)
    db.execute("PRAGMA synchronous = NORMAL")
    _relaxed.held = (_Process.pid, name, db)
    return db


def _prepared_cursor(conn: Any) -> Any:
    """The driver's cursor; on PostgreSQL one that binds on the server and prepares.

    Django's psycopg cursors bind parameters on the client and never prepare, so the server
    would parse and plan the claim afresh every time; the hot path's few statements are
    better prepared once per connection. On SQLite, the sqlite3 module's own cursor, not
    the one Django's connection makes, which rewrites every statement's text for Django's
    ``%s`` placeholders on each call: these statements are written with the driver's.
    """
    if conn.vendor != "postgresql":
        return sqlite3.Cursor(conn.connection)
    return _prepared_cursor_class()(conn.connection)


@functools.cache
def _prepared_cursor_class() -> type:
    from psycopg import Cursor

    class PreparedCursor(Cursor):
        def execute(self, query: Any, params: Any = None, *, prepare: bool | None = True, **kwargs: Any) -> Any:
            return super().execute(query, params, prepare=prepare, **kwargs)

    return PreparedCursor
