"""The budget's models left the queue's app in Django's state only: the two migrations of the
move write no SQL, and the models read the tables ``jobs.0004`` made, on any database."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.loader import MigrationLoader

from providers.models import ProviderHold, ProviderSlot

MOVE = [("jobs", "0011_move_provider_budget_out"), ("providers", "0001_initial")]


@pytest.mark.django_db(transaction=True)  # SQLite's schema editor, even collecting, runs outside a transaction
def test_the_move_writes_no_sql():
    loader = MigrationLoader(connection)
    for key in MOVE:
        for backwards in (False, True):
            statements = loader.collect_sql([(loader.graph.nodes[key], backwards)])
            assert statements and [s for s in statements if not s.lstrip().startswith("--")] == [], (key, backwards)


@pytest.mark.django_db
def test_the_models_keep_the_queues_old_tables():
    assert (ProviderSlot._meta.db_table, ProviderHold._meta.db_table) == ("jobs_providerslot", "jobs_providerhold")
    assert {"jobs_providerslot", "jobs_providerhold"} <= set(connection.introspection.table_names())
