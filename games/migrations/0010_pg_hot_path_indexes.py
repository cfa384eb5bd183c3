"""The tables every change writes, lighter to write on PostgreSQL (issue 25, session 19).

- The game's own index on the seats, the events and the engine calls goes (``db_index=False``):
  each table's unique constraint leads with the game and serves every lookup by it, and the
  second index was one more insert per row written (an event, an engine call, a seat whose
  turn changed) and one more index opened per change.
- PostgreSQL only: the game row's ``varchar_pattern_ops`` copies of its ``status``, ``kind`` and
  ``invite_code`` indexes go (Django adds them for ``LIKE 'prefix%'``; nothing here filters
  those columns by a prefix: the admin's search is ``icontains``, which they cannot serve): an
  update of the row opens every index of the table, and one that is not HOT inserts into each.
- PostgreSQL only: the game's ``state`` (about 1.9 KB of JSON, compressed in the row) is
  compressed with lz4 instead of pglz where the server has lz4 (PostgreSQL 14+ built with it):
  a new row version compresses it on every change. Values already stored stay as they are.

bench/results/session19-pg.md has the figures. SQLite: nothing but the three indexes.
"""

import django.db.models.deletion
from django.db import migrations, models

#: Django's names for the ``varchar_pattern_ops`` indexes (``_create_like_index_sql``), and
#: their columns.
_LIKE = (
    ("games_game_status_8c53f599_like", "status"),
    ("games_game_kind_d310144f_like", "kind"),
    ("games_game_invite_code_ddc045be_like", "invite_code"),
)


def _postgres(schema_editor) -> bool:
    return schema_editor.connection.vendor == "postgresql"


def forwards(apps, schema_editor) -> None:
    if not _postgres(schema_editor):
        return
    for name, _ in _LIKE:
        schema_editor.execute(f'DROP INDEX IF EXISTS "{name}"')
    # lz4 where the server was built with it; else pglz stays (no error: a server without lz4
    # answers feature_not_supported).
    schema_editor.execute("ALTER TABLE games_game SET (fillfactor = 70)")
    schema_editor.execute(
        "DO $$ BEGIN ALTER TABLE games_game ALTER COLUMN state SET COMPRESSION lz4;"
        " EXCEPTION WHEN feature_not_supported OR invalid_parameter_value THEN NULL; END $$"
    )


def backwards(apps, schema_editor) -> None:
    if not _postgres(schema_editor):
        return
    schema_editor.execute("ALTER TABLE games_game RESET (fillfactor)")
    schema_editor.execute("ALTER TABLE games_game ALTER COLUMN state SET COMPRESSION default")
    for name, column in _LIKE:
        schema_editor.execute(
            f'CREATE INDEX IF NOT EXISTS "{name}" ON games_game ("{column}" varchar_pattern_ops)'
        )


class Migration(migrations.Migration):
    dependencies = [
        ("games", "0009_seat_turn"),
    ]

    operations = [
        migrations.AlterField(
            model_name="enginecall",
            name="game",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="engine_calls",
                to="games.game",
            ),
        ),
        migrations.AlterField(
            model_name="event",
            name="game",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="events",
                to="games.game",
            ),
        ),
        migrations.AlterField(
            model_name="seat",
            name="game",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="seats",
                to="games.game",
            ),
        ),
        migrations.RunPython(forwards, backwards, elidable=False),
    ]
