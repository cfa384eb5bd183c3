"""The history app takes over the after-game tables the games app created (its migration 0004;
issue 23).  State only: the tables, their rows, indexes and constraints stay exactly as they
are (the models keep the old table names), on a fresh database as on one with years of games.

The content types of the three models move with them (``app_label`` "games" -> "history", the
same rows), so the admin permissions granted on them and the admin log entries naming them
survive.  A database where the history content type already exists keeps it (nothing to move).
"""

import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models

MODELS = ("gamerecord", "playerstats", "rating")


def _move_content_types(apps, schema_editor, old: str, new: str) -> None:
    ContentType = apps.get_model("contenttypes", "ContentType")
    rows = ContentType.objects.using(schema_editor.connection.alias)
    for model in MODELS:
        if not rows.filter(app_label=new, model=model).exists():
            rows.filter(app_label=old, model=model).update(app_label=new)


def forwards(apps, schema_editor):
    _move_content_types(apps, schema_editor, "games", "history")


def backwards(apps, schema_editor):
    _move_content_types(apps, schema_editor, "history", "games")


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        # The tables were created by games 0004 and left the games app's state in 0007.
        ("games", "0007_history_app"),
        ("contenttypes", "0002_remove_content_type_name"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="GameRecord",
                    fields=[
                        ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                        ("kind", models.CharField(db_index=True, max_length=32, verbose_name="game")),
                        ("finished_at", models.DateTimeField(db_index=True, verbose_name="finished")),
                        ("players", models.JSONField(default=list)),
                        ("counters", models.JSONField(default=list)),
                        ("rated", models.BooleanField(default=False)),
                        ("unrated_reason", models.CharField(blank=True, max_length=32)),
                        ("ratings", models.JSONField(default=list)),
                        ("created_at", models.DateTimeField(default=django.utils.timezone.now)),
                        ("game", models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name="record", to="games.game")),
                    ],
                    options={
                        "verbose_name": "game record",
                        "verbose_name_plural": "game records",
                        "db_table": "games_gamerecord",
                        "ordering": ["id"],
                    },
                ),
                migrations.CreateModel(
                    name="PlayerStats",
                    fields=[
                        ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                        ("kind", models.CharField(max_length=32, verbose_name="game")),
                        ("games", models.PositiveIntegerField(default=0)),
                        ("wins", models.PositiveIntegerField(default=0)),
                        ("counters", models.JSONField(default=dict)),
                        ("updated_at", models.DateTimeField(default=django.utils.timezone.now)),
                        ("user", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="game_stats", to=settings.AUTH_USER_MODEL)),
                    ],
                    options={
                        "verbose_name": "player statistics",
                        "verbose_name_plural": "player statistics",
                        "db_table": "games_playerstats",
                        "constraints": [models.UniqueConstraint(fields=("user", "kind"), name="stats_unique")],
                    },
                ),
                migrations.CreateModel(
                    name="Rating",
                    fields=[
                        ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                        ("kind", models.CharField(max_length=32, verbose_name="game")),
                        ("mu", models.FloatField()),
                        ("sigma", models.FloatField()),
                        ("ordinal", models.FloatField(db_index=True)),
                        ("games", models.PositiveIntegerField(default=0)),
                        ("updated_at", models.DateTimeField(default=django.utils.timezone.now)),
                        ("user", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="ratings", to=settings.AUTH_USER_MODEL)),
                    ],
                    options={
                        "verbose_name": "rating",
                        "verbose_name_plural": "ratings",
                        "db_table": "games_rating",
                        "ordering": ["kind", "-ordinal"],
                        "indexes": [models.Index(fields=["kind", "-ordinal"], name="rating_board")],
                        "constraints": [models.UniqueConstraint(fields=("user", "kind"), name="rating_unique")],
                    },
                ),
            ],
            database_operations=[],
        ),
        migrations.RunPython(forwards, backwards),
    ]
