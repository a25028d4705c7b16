import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('agent', '0003_document_fingerprint'),
        ('jobs', '0005_claim_index_names_available_at'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='FieldCorrection',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('field', models.CharField(help_text="One of the review's required fields (agent.fields.REQUIRED).", max_length=32)),
                ('previous_value', models.TextField(blank=True, help_text="The field's value before: the review's, or an earlier correction's (empty: it had none).")),
                ('value', models.TextField(help_text='As the member typed it; the same value as before for a confirmation.')),
                ('checked_value', models.TextField(blank=True, help_text="As the field's check keeps it (an IBAN grouped in fours, an ISO date).")),
                ('status', models.CharField(help_text="The field's check on the value: present, malformed...", max_length=16)),
                ('detail', models.CharField(blank=True, help_text="The check's words about it.", max_length=300)),
                ('confirmed', models.BooleanField(default=False, help_text='Confirmed as seen, not typed anew.')),
                ('by_name', models.CharField(help_text="The member's username when they corrected it.", max_length=150)),
                ('at', models.DateTimeField()),
                ('by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                ('job', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='field_corrections', to='jobs.job')),
            ],
            options={
                'indexes': [models.Index(fields=['job', 'id'], name='fieldcorrection_job_idx')],
            },
        ),
    ]
