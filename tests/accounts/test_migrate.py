"""A database migrated before the accounts left the queue's app migrates on: ``migrate`` records
the state-only ``accounts.0001`` that the applied migrations now depend on, and only then."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.recorder import MigrationRecorder

from accounts.management.commands.migrate import MOVED, record_moved_models

pytestmark = pytest.mark.django_db


def test_a_database_from_before_the_move_gets_the_moved_models_recorded():
    recorder = MigrationRecorder(connection)
    recorder.record_unapplied(*MOVED)  # as a database migrated before the move has it

    assert record_moved_models() is True
    assert MOVED in recorder.applied_migrations()


def test_a_database_that_has_it_is_left_alone():
    assert record_moved_models() is False
