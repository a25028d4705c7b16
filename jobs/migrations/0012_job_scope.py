"""A job's scope is called ``scope`` in Python; its column keeps its name (``tenant_id``).

Only Django's state changes: the field's new name, the column it names, and the indexes and the
constraint that name the field. The database keeps its column, indexes and constraint as they are.
"""

import django.core.validators
import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('jobs', '0011_move_provider_budget_out'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(state_operations=[
            migrations.RemoveConstraint(model_name='job', name='job_operation_key_unique'),
            migrations.RemoveIndex(model_name='job', name='job_waiting_idx'),
            migrations.RemoveIndex(model_name='job', name='job_tenant_idx'),
            migrations.RemoveIndex(model_name='job', name='job_batch_idx'),
            migrations.RenameField(model_name='job', old_name='tenant', new_name='scope'),
            migrations.AlterField(
                model_name='job',
                name='scope',
                field=models.ForeignKey(db_column='tenant_id', db_index=False, on_delete=django.db.models.deletion.PROTECT, related_name='jobs', to='jobs.scope'),
            ),
            migrations.AddConstraint(
                model_name='job',
                constraint=models.UniqueConstraint(fields=('scope', 'submitted_by', 'operation_key'), name='job_operation_key_unique'),
            ),
            migrations.AddIndex(
                model_name='job',
                index=models.Index(condition=models.Q(('state', 'queued')), fields=['scope', 'priority', 'turn'], name='job_waiting_idx'),
            ),
            migrations.AddIndex(
                model_name='job',
                index=models.Index(fields=['scope', '-id'], name='job_tenant_idx'),
            ),
            migrations.AddIndex(
                model_name='job',
                index=models.Index(condition=models.Q(('batch', ''), _negated=True), fields=['scope', 'batch'], name='job_batch_idx'),
            ),
        ]),
        # Words for staff only: no change to the schema.
        migrations.AlterField(
            model_name='scope',
            name='weight',
            field=models.PositiveSmallIntegerField(default=1, help_text='Turns this scope gets relative to others (1-100).', validators=[django.core.validators.MinValueValidator(1), django.core.validators.MaxValueValidator(100)]),
        ),
    ]
