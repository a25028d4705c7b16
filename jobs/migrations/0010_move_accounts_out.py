"""The users and their API tokens left the queue for the host project (``accounts`` in this
project): a job is submitted by the project's user model (``AUTH_USER_MODEL``).

Where that model has the queue's old table (``jobs_user``), the submitter's foreign key is left
as it is and the old models leave only Django's state; their tables stay, now the other app's.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('jobs', '0009_kindslot'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        # A foreign key to the same table is no change to the schema: Django writes nothing.
        migrations.AlterField(
            model_name='job',
            name='submitted_by',
            field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='jobs', to=settings.AUTH_USER_MODEL),
        ),
        migrations.SeparateDatabaseAndState(state_operations=[
            migrations.DeleteModel(name='ApiToken'),
            migrations.DeleteModel(name='User'),
        ]),
    ]
