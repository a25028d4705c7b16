"""Tables for a throwaway database: made straight from the models, not by replaying the migrations.

The lease lab and the benchmarks each run on new database files of their own that are deleted
afterwards and never migrated again. Replaying every migration on each costs about 3.5 s of CPU
(Django renders the models' state once per migration); creating the tables the models describe
costs a tenth of that and gives the same schema (``makemigrations --check`` keeps the two equal).
This is what Django's test runner does for apps without migrations. A database that lives on is
always made by ``migrate``.
"""

from __future__ import annotations

from django.apps import apps
from django.db import connections


def create_tables(using: str = "default") -> None:
    """Every installed model's table (with its indexes, constraints and many-to-many tables) on the
    empty database ``using``. Refuses a database that already has tables: it is not throwaway."""
    connection = connections[using]
    existing = connection.introspection.table_names()
    if existing:
        raise RuntimeError(f"create_tables is for a new, empty database; this one has {len(existing)} tables")
    with connection.schema_editor() as editor:
        for model in apps.get_models():
            if model._meta.managed and not model._meta.proxy and not model._meta.swapped:
                editor.create_model(model)
