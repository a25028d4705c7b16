"""Hand SQLite's single write lock over fairly between processes.

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
import os
from contextlib import contextmanager
from typing import Iterator

from django.db import connection, transaction

_files: dict[tuple[int, str], int] = {}


def _lock_fd(path: str) -> int:
    # flock belongs to an open file description, which a forked child would share with its
    # parent: open one per process.
    key = (os.getpid(), path)
    fd = _files.get(key)
    if fd is None:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        _files[key] = fd
    return fd


@contextmanager
def write_transaction() -> Iterator[None]:
    """``transaction.atomic()``, preceded on SQLite by the fair cross-process lock."""
    name = connection.settings_dict["NAME"]
    if connection.vendor != "sqlite" or connection.in_atomic_block or not name or name == ":memory:" \
            or str(name).startswith("file:"):
        with transaction.atomic():
            yield
        return
    fd = _lock_fd(f"{name}-writelock")
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        with transaction.atomic():
            yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
