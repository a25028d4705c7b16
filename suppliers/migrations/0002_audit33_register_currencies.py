from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("suppliers", "0001_initial"),
    ]

    operations = [
        migrations.AddField(
            model_name="registersettings",
            name="currencies",
            field=models.CharField(blank=True, help_text="The currencies we pay in, ISO 4217 codes separated by "
                                   "spaces; empty: the review's default list.", max_length=200),
        ),
    ]
