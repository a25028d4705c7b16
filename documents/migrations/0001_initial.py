"""The jobs' documents leave the queue's job row for a table of their own: this creates it and
copies the document of every job that has one (one INSERT ... SELECT, on SQLite and PostgreSQL
alike), before ``jobs.0013`` drops the job's five columns (``run_before``: the queue's migration
never names this app, so a project that installs the queue alone still migrates).

Backwards, the columns come back (``jobs.0013``'s reverse) and are filled from the rows here
before the table is dropped.
"""

import django.db.models.deletion
from django.apps.registry import Apps
from django.db import migrations, models
from django.db.backends.base.schema import BaseDatabaseSchemaEditor


def copy_in(apps: Apps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    schema_editor.execute(
        "INSERT INTO documents_document (job_id, name, original_name, content_type, size, sha256) "
        "SELECT id, document, document_name, document_type, COALESCE(document_size, 0), document_sha256 "
        "FROM jobs_job WHERE document <> ''")


def copy_out(apps: Apps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    columns = {"document": "name", "document_name": "original_name", "document_type": "content_type",
               "document_size": "size", "document_sha256": "sha256"}
    assignments = ", ".join(f"{column} = (SELECT d.{field} FROM documents_document d WHERE d.job_id = jobs_job.id)"
                            for column, field in columns.items())
    schema_editor.execute(f"UPDATE jobs_job SET {assignments} "  # noqa: S608  fixed names, no input
                          "WHERE id IN (SELECT job_id FROM documents_document)")


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('jobs', '0012_job_scope'),
    ]

    run_before = [
        ('jobs', '0013_job_document_moved_out'),
    ]

    operations = [
        migrations.CreateModel(
            name='Document',
            fields=[
                ('job', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, primary_key=True, related_name='document', serialize=False, to='jobs.job')),
                ('name', models.CharField(help_text='Storage name of the accepted document.', max_length=255)),
                ('original_name', models.CharField(blank=True, help_text="The sent file's name.", max_length=255)),
                ('content_type', models.CharField(blank=True, max_length=100)),
                ('size', models.PositiveBigIntegerField()),
                ('sha256', models.CharField(max_length=64)),
            ],
        ),
        migrations.RunPython(copy_in, copy_out, elidable=False),
    ]
