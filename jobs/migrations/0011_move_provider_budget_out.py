"""The model provider's budget (its slots and its hold) left the queue for an app of its own
(``providers`` in this project): its models leave only Django's state here. Their tables stay
as they are, now that app's (``providers/migrations/0001_initial.py``); a project without it
keeps two empty tables nothing reads.
"""

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('jobs', '0010_move_accounts_out'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(state_operations=[
            migrations.DeleteModel(name='ProviderSlot'),
            migrations.DeleteModel(name='ProviderHold'),
        ]),
    ]
