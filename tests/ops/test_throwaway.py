"""A throwaway database's tables, made from the models, are the tables ``migrate`` makes."""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.conftest import PYTHON, ROOT, child_env

# In a child: the tables ``migrate`` makes, or those made from the models, on a new file,
# described as ``described`` does.
CHILD = """
import json, sys, django
django.setup()
from django.core.management import call_command
from django.db import connection
from ops.throwaway import create_tables
from tests.ops.test_throwaway import described
if sys.argv[1] == "migrate":
    call_command("migrate", verbosity=0)
else:
    create_tables()
print(json.dumps(described(connection)))
"""


def described(conn) -> dict:
    """Each table's columns (name, type, null) and constraints (columns, kind), as the database says."""
    with conn.cursor() as cursor:
        tables = sorted(t for t in conn.introspection.table_names(cursor) if t != "django_migrations")
        describe = conn.introspection.get_table_description
        return {table: {
            "columns": sorted([c.name, c.type_code, c.null_ok] for c in describe(cursor, table)),
            "constraints": sorted(
                # SQLite numbers a table's foreign keys (fk_0, fk_1...) in its columns' order.
                [name if not name.startswith(("__", "fk_")) else "", list(c["columns"] or []), bool(c["primary_key"]),
                 bool(c["unique"]), list(c["foreign_key"] or []), bool(c["index"]), bool(c["check"])]
                for name, c in conn.introspection.get_constraints(cursor, table).items()),
        } for table in tables}


def made(how: str, place) -> dict:
    done = subprocess.run([PYTHON, "-c", CHILD, how], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env=child_env(DATABASE_URL=f"sqlite:///{place / (how + '.sqlite3')}"))
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.splitlines()[-1])


def test_the_tables_made_from_the_models_are_the_migrated_ones(tmp_path):
    """(The test databases are made the same way: tests/conftest.py.)"""
    migrated, from_models = made("migrate", tmp_path), made("models", tmp_path)
    assert set(from_models) == set(migrated)
    assert {t: from_models[t] for t in from_models if from_models[t] != migrated[t]} == {}
    assert "jobs_job" in from_models and len(from_models) > 20


@pytest.mark.django_db
def test_a_database_with_tables_is_refused():
    from ops.throwaway import create_tables

    with pytest.raises(RuntimeError, match="new, empty database"):
        create_tables()
