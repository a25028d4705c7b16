from django.conf import settings
from django.db import migrations, models
import django.db.models.deletion


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ("jobs", "0009_kindslot"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="SavedFilter",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("name", models.CharField(max_length=60)),
                ("query", models.CharField(blank=True, max_length=1000)),
                ("created_at", models.DateTimeField()),
                ("updated_at", models.DateTimeField()),
                ("tenant", models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE,
                                             related_name="+", to="jobs.scope")),
                ("user", models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE,
                                           related_name="+", to=settings.AUTH_USER_MODEL)),
            ],
            options={"ordering": ["name"]},
        ),
        migrations.AddConstraint(
            model_name="savedfilter",
            constraint=models.UniqueConstraint(fields=("tenant", "user", "name"), name="saved_filter_name_once"),
        ),
    ]
