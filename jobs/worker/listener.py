"""How a worker hears of new jobs and of cancel requests between its polls and renewals."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from django.db import DatabaseError, connection

from .. import forks, queue
from ..logs import Repeats, event

log = logging.getLogger("jobs.worker")
_errors = Repeats(log)  # an outage: one line per interval with the count, not one per try
INFO, WARNING = logging.INFO, logging.WARNING

NOTIFY_CHANNEL = "jobs_accepted"  # queue.accept sends NOTIFY jobs_accepted on PostgreSQL


class Listener:
    """LISTEN jobs_accepted on a connection of its own; each notification wakes the worker.

    It also listens for cancel requests (``queue.CANCEL_CHANNEL``, "job:epoch") and hands each
    to ``cancelled``, so a running handler hears of one at once rather than at its next renewal
    (one sent while the connection was lost is heard at that renewal, as without a listener).

    Django's connection cannot wait for notifications while it runs transactions, so a
    small thread owns a second, autocommit connection for the worker's lifetime. When that
    connection is lost (the database restarted, the network failed), or cannot be opened at
    all (the worker started before the database), the thread connects again with backoff
    and listens, waking the worker once so it polls for anything it missed meanwhile.
    """

    BACKOFF = (0.5, 1.0, 2.0, 5.0)

    def __init__(self, wake: threading.Event, *, worker: str = "",
                 cancelled: Callable[[int, int], None] | None = None) -> None:
        self._wake = wake
        self._cancelled = cancelled
        self._closed = threading.Event()
        self._conn: Any = None
        try:
            self._conn = self._connect()
        except Exception as exc:  # noqa: BLE001  not up yet: the thread keeps trying
            event(log, WARNING, "listen_failed", worker=worker, error=type(exc).__name__, detail=str(exc)[:200],
                  retrying=True)
        self.reconnects = 0
        self._thread = threading.Thread(target=self._run, name="listener", daemon=True)
        self._thread.start()

    def _connect(self) -> Any:
        # Opening a connection takes the resolver's and the TLS library's locks: never under a fork
        # (``jobs.forks``). Waiting for notices holds none of them; it runs outside.
        with forks.database_work():
            conn = connection.get_new_connection(connection.get_connection_params())
            conn.autocommit = True
            conn.execute(f"LISTEN {queue.CANCEL_CHANNEL}")
            conn.execute(f"LISTEN {NOTIFY_CHANNEL}")  # last: what pg_stat_activity shows of the session
        return conn

    def _run(self) -> None:
        failures = 0
        while not self._closed.is_set():
            if self._conn is None:
                try:
                    self._conn = self._connect()
                except Exception:  # noqa: BLE001  still away: try again later
                    self._closed.wait(self.BACKOFF[min(failures, len(self.BACKOFF) - 1)])
                    failures += 1
                    continue
                failures = 0
                self.reconnects += 1
                event(log, INFO, "listener_reconnected", reconnects=self.reconnects)
                self._wake.set()
            try:
                for notice in self._conn.notifies(timeout=0.5):
                    if notice.channel == queue.CANCEL_CHANNEL:
                        self._cancel(notice.payload)
                    else:
                        self._wake.set()
            except Exception as exc:  # noqa: BLE001  polling still finds the work meanwhile
                if self._closed.is_set():
                    return
                event(log, WARNING, "listener_lost", error=type(exc).__name__, detail=str(exc)[:200])
                self._discard()

    def _cancel(self, payload: str) -> None:
        if self._cancelled is None:
            return
        try:
            job_id, epoch = (int(part) for part in payload.split(":"))
        except ValueError:
            return
        self._cancelled(job_id, epoch)

    def _discard(self) -> None:
        conn, self._conn = self._conn, None
        try:
            if conn is not None:
                conn.close()
        except Exception:  # noqa: BLE001, S110  already broken: nothing to close
            pass

    def close(self) -> None:
        self._closed.set()
        self._thread.join(timeout=2)
        self._discard()


class CancelWatch:
    """Without a listener (SQLite, or burst mode): look every ``EVERY`` seconds whether someone
    asked to cancel a job this worker holds, and hand each request to ``cancelled``.

    One primary-key lookup of the held jobs, only while the worker holds some; the thread's
    connection is closed after each look, so a handler sandbox forked meanwhile inherits none.
    """

    EVERY = 0.5

    def __init__(self, held: Callable[[], list[tuple[int, int]]], cancelled: Callable[[int, int], None]) -> None:
        self._held = held
        self._cancelled = cancelled
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._run, name="cancel-watch", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._closed.wait(self.EVERY):
            claims = self._held()
            if not claims:
                continue
            with forks.database_work():
                try:
                    for job_id, epoch in queue.cancels_requested(claims=claims):
                        self._cancelled(job_id, epoch)
                    _errors.settle()
                except DatabaseError as exc:  # the renewal tells the worker all the same
                    _errors.event(WARNING, "cancel_check_error", error=type(exc).__name__, detail=str(exc)[:200])
                finally:
                    connection.close()

    def close(self) -> None:
        self._closed.set()
        self._thread.join(timeout=2)

