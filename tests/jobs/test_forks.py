"""Forking a process whose other threads use the database: a child forked inside ``forks.quiet()``
never inherits a driver's lock that another thread held (SQLite's mutexes, as a connection opens),
so its own first query answers instead of waiting for ever."""

from __future__ import annotations

import os
import signal
import sqlite3
import threading

from jobs import forks


def test_children_forked_while_a_thread_keeps_opening_sqlite_connections_all_reach_the_database(tmp_path):
    path = tmp_path / "forks.sqlite3"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE t (x)")
    stop = threading.Event()

    def busy() -> None:  # as the cancel watch or the completer: a connection opened and closed each time
        while not stop.is_set():
            with forks.database_work():
                db = sqlite3.connect(path)
                db.execute("SELECT count(*) FROM t").fetchall()
                db.close()

    thread = threading.Thread(target=busy, daemon=True)
    thread.start()
    stuck = 0
    try:
        for _ in range(150):
            with forks.quiet():
                pid = os.fork()
            if pid == 0:  # the child: its first connection and query, or SIGALRM ends it
                signal.alarm(5)
                db = sqlite3.connect(path)
                db.execute("SELECT 1").fetchall()
                os._exit(0)
            _, status = os.waitpid(pid, 0)
            stuck += os.WIFSIGNALED(status)
    finally:
        stop.set()
        thread.join()
    assert stuck == 0


def test_a_fork_waits_for_the_threads_inside_and_holds_off_the_next_ones():
    order: list[str] = []
    inside, release = threading.Event(), threading.Event()

    def work(name: str) -> None:
        with forks.database_work():
            if name == "first":
                inside.set()
                release.wait(10)
            order.append(name)

    first = threading.Thread(target=work, args=("first",))
    first.start()
    inside.wait(10)
    threading.Timer(0.2, release.set).start()  # the first leaves while the fork waits for it
    with forks.quiet():
        order.append("fork")
        late = threading.Thread(target=work, args=("late",))
        late.start()
        late.join(0.2)  # held off while the fork is under way
        order.append("fork done")
    late.join(10)
    first.join(10)
    assert order == ["first", "fork", "fork done", "late"]


def test_work_nested_in_one_thread_is_one_and_a_thread_inside_cannot_wait_for_a_fork():
    with forks.database_work(), forks.database_work():
        try:
            with forks.quiet():
                raise AssertionError("entered")
        except RuntimeError:
            pass
    with forks.quiet():  # everyone out again
        pass
