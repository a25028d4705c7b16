"""The huey side of ``workerbench``: a SqliteHuey on the file ``HUEY_DB`` names, one no-op task.

Its store is set as ours is: WAL, ``synchronous=FULL`` (``fsync=True``). The consumer loads
this module (``huey_consumer bench.huey_app.huey``); the benchmark fills the file through
``make`` before it starts.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from huey import SqliteHuey


def noop() -> None:
    return None


def make(filename: str, *, fsync: bool = True) -> tuple[SqliteHuey, Callable[[], object]]:
    """A huey on ``filename`` and its no-op task."""
    h = SqliteHuey("bench", filename=filename, fsync=fsync, journal_mode="wal")
    return h, h.task(name="noop")(noop)


huey, noop_task = make(os.environ.get("HUEY_DB", "huey-bench.sqlite3"))
