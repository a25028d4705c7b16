"""A database that had these models in the queue's app keeps their content types, and so any
permission granted on them: the types are renamed to this app, not made afresh beside the old
ones. Nothing to do on a fresh database."""

from django.apps.registry import Apps
from django.db import migrations
from django.db.backends.base.schema import BaseDatabaseSchemaEditor

MOVED = ["providerslot", "providerhold"]


def to_providers(apps: Apps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    content_types = apps.get_model("contenttypes", "ContentType").objects.using(schema_editor.connection.alias)
    if not content_types.filter(app_label="providers", model__in=MOVED).exists():
        content_types.filter(app_label="jobs", model__in=MOVED).update(app_label="providers")


def to_jobs(apps: Apps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    content_types = apps.get_model("contenttypes", "ContentType").objects.using(schema_editor.connection.alias)
    if not content_types.filter(app_label="jobs", model__in=MOVED).exists():
        content_types.filter(app_label="providers", model__in=MOVED).update(app_label="jobs")


class Migration(migrations.Migration):

    dependencies = [
        ('providers', '0001_initial'),
        ('contenttypes', '0002_remove_content_type_name'),
    ]

    operations = [
        migrations.RunPython(to_providers, to_jobs),
    ]
