"""The after-game models (``GameRecord``, ``Rating``, ``PlayerStats``) now belong to the
history app (issue 23): removed from this app's state only.  Their tables stay where 0004
created them, rows and all: the history app's models keep these table names (``db_table``) and
its migration 0001 takes them over in its own state; ``EngineCall`` stays here."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("games", "0006_cribbage_hand_over_pegged")]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.DeleteModel(name="GameRecord"),
                migrations.DeleteModel(name="PlayerStats"),
                migrations.DeleteModel(name="Rating"),
            ],
            database_operations=[],
        )
    ]
