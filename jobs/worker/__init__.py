"""The worker runtime: the loop and the parts it runs with, one module each.

- ``loop``: ``Worker``, recover, claim, run, finish; what ``runworkers`` runs in each process.
- ``run``: ``Run``, the claim being run and since when.
- ``heartbeat``: lease renewal and self-fencing (``Beat``, ``Held``, ``Heartbeat``).
- ``completer``: completions committed in batches (``Completer``).
- ``endings``: the fenced write for each way a run ends, counted and logged.
- ``listener``: wake-ups and cancel requests (``Listener`` on PostgreSQL, ``CancelWatch``).
- ``sandbox``: isolated handlers in a child process under hard limits.
- ``supervisor``: N worker processes, replaced when they die, and the shutdown signals.
- ``testing``: the one place tests reach into a worker process (pauses at named points).

``Worker`` is imported on first use, so ``jobs.worker.supervisor`` can be imported (by a
spawned child unpickling its target) before Django is set up.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .loop import Worker, WorkerStats

__all__ = ["Worker", "WorkerStats"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from . import loop

        return getattr(loop, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
