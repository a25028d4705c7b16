"""A fork of a process whose other threads use the database: none of them inside it at the fork.

A worker forks its handler's sandbox while its other threads may be at the database: the
completer's batches, the heartbeat's renewals, the cancel watch, the clock's readings. A fork
copies the forking thread alone, and a lock another thread held at that moment stays held in
the child for ever: SQLite's own mutexes, taken while a connection opens or a statement runs,
made the child's first query wait until its job's deadline killed it (a thread opening SQLite
connections in a loop while the process forked hung one child in six). So those threads do
their database work inside ``database_work()``, and the fork happens inside ``quiet()``, which
waits until none of them is inside and lets none enter until the fork is done. Forks are rare
(a sandbox serves hundreds of jobs); the work's cost is a lock taken twice.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager


class _Gate:
    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.cond = threading.Condition()
        self.working = 0  # threads inside database_work()
        self.forking = False
        self.local = threading.local()  # this thread's depth of database_work()


_gate = _Gate()


@contextmanager
def database_work() -> Iterator[None]:
    """A thread's database work (its connection's opening and closing too): never under a fork.
    Nested in the same thread it is one."""
    gate = _gate
    depth = getattr(gate.local, "depth", 0)
    if depth == 0:
        with gate.cond:
            while gate.forking:
                gate.cond.wait()
            gate.working += 1
    gate.local.depth = depth + 1
    try:
        yield
    finally:
        gate.local.depth = depth
        if depth == 0:
            with gate.cond:
                gate.working -= 1
                if gate.working == 0:
                    gate.cond.notify_all()


@contextmanager
def quiet() -> Iterator[None]:
    """No other thread inside ``database_work()`` for the length of the block (a fork)."""
    gate = _gate
    if getattr(gate.local, "depth", 0):
        raise RuntimeError("a thread inside database_work() cannot wait for the others to leave it")
    with gate.cond:
        while gate.forking:
            gate.cond.wait()
        gate.forking = True
        while gate.working:
            gate.cond.wait()
    try:
        yield
    finally:
        with gate.cond:
            gate.forking = False
            gate.cond.notify_all()


# The child has one thread, inside none of it: a gate of its own (the parent's lock may be taken).
os.register_at_fork(after_in_child=_gate.reset)
