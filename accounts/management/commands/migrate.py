"""``migrate``, first recording the accounts' state-only first migration on a database made
before the accounts left the queue's app (``accounts.migrations.0001_initial``).

On such a database, migrations already applied (the admin's, the product apps') depend on the
user model's app, ``accounts`` now, and Django refuses to plan while one of them has a parent
not applied. That parent only tells Django's state what the tables already are, so recording
it is all that applying it would do. A fresh database is left to migrate in order.
"""

from __future__ import annotations

from typing import Any

from django.core.management.commands import migrate
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.migrations.loader import MigrationLoader
from django.db.migrations.recorder import MigrationRecorder

MOVED = ("accounts", "0001_initial")


def record_moved_models(alias: str = DEFAULT_DB_ALIAS) -> bool:
    """Record ``MOVED`` as applied where applied migrations already rely on it and everything it
    relies on is applied; True if this call recorded it."""
    connection = connections[alias]
    recorder = MigrationRecorder(connection)
    if not recorder.has_table():
        return False
    loader = MigrationLoader(connection, ignore_no_migrations=True)
    applied = set(loader.applied_migrations or {})
    if MOVED in applied or MOVED not in loader.graph.nodes:
        return False
    node = loader.graph.node_map[MOVED]
    relied_on = any(child.key in applied for child in node.children)
    if not relied_on or not all(parent.key in applied for parent in node.parents):
        return False
    recorder.record_applied(*MOVED)
    return True


class Command(migrate.Command):
    def handle(self, *args: Any, **options: Any) -> None:
        if record_moved_models(options["database"]) and options["verbosity"] >= 1:
            self.stdout.write(f"Recorded {'.'.join(MOVED)} as applied: its tables were the queue's app's.")
        super().handle(*args, **options)
