"""The Procrastinate side of ``workerbench``: an app on ``PROCRASTINATE_DSN``, one no-op task.

The workers load it (``procrastinate --app bench.procrastinate_app.app worker``); the
benchmark fills the database through ``fill`` before they start.
"""

from __future__ import annotations

import os

from procrastinate import App, PsycopgConnector, SyncPsycopgConnector

app = App(connector=PsycopgConnector(conninfo=os.environ.get("PROCRASTINATE_DSN", "")))


@app.task(name="noop")
def noop() -> None:
    return None


def fill(dsn: str, count: int) -> None:
    """Apply Procrastinate's schema to the database ``dsn`` and defer ``count`` no-op jobs."""
    filler = App(connector=SyncPsycopgConnector(conninfo=dsn))
    with filler.open():
        filler.schema_manager.apply_schema()
        task = filler.configure_task("noop")
        for start in range(0, count, 500):
            task.batch_defer(*[{} for _ in range(min(500, count - start))])
