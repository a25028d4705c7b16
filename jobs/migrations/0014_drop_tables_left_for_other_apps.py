"""A project that installs the queue without the apps its first models moved to drops the empty
tables the queue's early migrations made for them.

The queue once held the site's users and API tokens (now ``accounts``) and the model providers'
budget (now ``providers``). Those models left in Django's state only (``0010``, ``0011``), so
their tables stayed where the product needs them. A project that installs the queue alone has
no such apps: the tables its first migrations made are empty and nobody's, and go. A table with
rows in it is left alone (a project that once had those apps keeps its data), and on a site that
installs the apps nothing happens. Backwards nothing is made again: migrating a queue-only
project back past ``0004`` is not supported.
"""

from django.apps import apps as installed
from django.apps.registry import Apps
from django.db import migrations
from django.db.backends.base.schema import BaseDatabaseSchemaEditor

# Each app's leftover tables, the ones that refer to others first.
LEFT_FOR = {
    "accounts": ("jobs_apitoken", "jobs_user_groups", "jobs_user_user_permissions", "jobs_user"),
    "providers": ("jobs_providerhold", "jobs_providerslot"),
}


def drop_tables_left_for_missing_apps(apps: Apps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    connection = schema_editor.connection
    existing = set(connection.introspection.table_names())
    for app, tables in LEFT_FOR.items():
        if installed.is_installed(app):
            continue
        for table in tables:
            if table not in existing:
                continue
            with connection.cursor() as cursor:
                cursor.execute(f"SELECT 1 FROM {schema_editor.quote_name(table)} LIMIT 1")  # noqa: S608  a name above
                if cursor.fetchone() is not None:
                    continue
            schema_editor.execute(f"DROP TABLE {schema_editor.quote_name(table)}")


class Migration(migrations.Migration):

    dependencies = [
        ("jobs", "0013_job_document_moved_out"),
    ]

    operations = [
        migrations.RunPython(drop_tables_left_for_missing_apps, migrations.RunPython.noop, elidable=True),
    ]
