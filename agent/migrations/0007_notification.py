import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("agent", "0006_provider_call"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="NotificationPreference",
            fields=[
                ("user", models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, primary_key=True,
                                              related_name="notification_preference", serialize=False,
                                              to=settings.AUTH_USER_MODEL)),
                ("enabled", models.BooleanField(default=True,
                                                help_text="Email me when a batch finishes or a document needs me.")),
                ("every_minutes", models.PositiveIntegerField(default=15,
                                                              help_text="At most one email per this many minutes.")),
                ("last_sent_at", models.DateTimeField(blank=True, null=True)),
                ("covered_until", models.DateTimeField(blank=True, help_text="What finished later is still to tell.",
                                                       null=True)),
            ],
        ),
        migrations.CreateModel(
            name="TriageAlert",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("raised", models.BooleanField(default=False)),
                ("rises", models.PositiveIntegerField(default=0,
                                                      help_text="How many times the count rose from zero.")),
                ("changed_at", models.DateTimeField(blank=True, null=True)),
            ],
        ),
    ]
