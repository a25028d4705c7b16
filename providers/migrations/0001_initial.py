"""The provider budget's models, moved from the queue's app (``jobs``) with their tables: this
migration only tells Django's state that ``providers`` has them now, on the tables they have had
since ``jobs.0004`` created them. A database migrated before the move changes nothing; a fresh
one has the tables from ``jobs.0004`` already.
"""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('jobs', '0011_move_provider_budget_out'),
    ]

    state_operations = [
        migrations.CreateModel(
            name='ProviderHold',
            fields=[
                ('id', models.PositiveSmallIntegerField(default=1, primary_key=True, serialize=False)),
                ('hold_until', models.DateTimeField()),
            ],
            options={
                'db_table': 'jobs_providerhold',
            },
        ),
        migrations.CreateModel(
            name='ProviderSlot',
            fields=[
                ('number', models.PositiveSmallIntegerField(primary_key=True, serialize=False)),
                ('epoch', models.PositiveIntegerField(default=0)),
                ('taken_at', models.DateTimeField(blank=True, null=True)),
                ('job', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='jobs.job')),
            ],
            options={
                'db_table': 'jobs_providerslot',
            },
        ),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(state_operations=state_operations),
    ]
