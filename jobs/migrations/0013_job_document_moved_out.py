"""The job row keeps its work, not its input's file: the five columns about a job's document
leave it. In this project the ``documents`` app copied them to its own table first
(``documents.0001``, which runs before this one); a project that installs the queue alone had
no documents to keep.
"""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('jobs', '0012_job_scope'),
    ]

    operations = [
        migrations.RemoveField(model_name='job', name='document'),
        migrations.RemoveField(model_name='job', name='document_name'),
        migrations.RemoveField(model_name='job', name='document_type'),
        migrations.RemoveField(model_name='job', name='document_size'),
        migrations.RemoveField(model_name='job', name='document_sha256'),
    ]
