"""Migration 0010 (issue 25, session 19): the tables every change writes carry no index the
service layer does not use, and on PostgreSQL the game row is updated in place (HOT) and its
state compressed with lz4.

Each table keeps an index that leads with the game (its unique constraint), so every read by game
is still an index scan; the migration's PostgreSQL part goes back and forth; SQLite gets only the
three indexes dropped.
"""

from __future__ import annotations

import importlib
from typing import Any

import pytest
from django.db import connection

from games import consumers
from games.models import EngineCall, Event, Game, Seat

migration = importlib.import_module("games.migrations.0010_pg_hot_path_indexes")

_GONE = ("games_game_status_8c53f599_like", "games_game_kind_d310144f_like")


def _indexes(table: str) -> dict[str, list[str]]:
    """Index name -> its columns, as the database has them (unique constraints' included, the
    primary key's not)."""
    with connection.cursor() as cursor:
        found = connection.introspection.get_constraints(cursor, table)
    return {
        name: c["columns"]
        for name, c in found.items()
        if (c["index"] or c["unique"]) and not c["primary_key"]
    }


@pytest.mark.django_db
def test_each_written_table_has_one_index_leading_with_the_game() -> None:
    for model, unique in (
        (Event, ["game_id", "seq"]),
        (EngineCall, ["game_id", "version"]),
        (Seat, ["game_id", "number"]),
    ):
        indexes = _indexes(model._meta.db_table)
        assert ["game_id"] not in indexes.values(), (model, indexes)
        assert unique in indexes.values(), (model, indexes)
    if connection.vendor == "postgresql":
        names = set(_indexes("games_game"))
        assert not names & {*_GONE, "games_game_invite_code_ddc045be_like"}, names


@pytest.mark.django_db
@pytest.mark.postgres
def test_reads_by_game_are_index_scans_and_the_game_row_updates_in_place(
    start_game: Any, users: list[Any], fake_clock: Any
) -> None:
    if connection.vendor != "postgresql":
        pytest.skip("PostgreSQL's plans, storage options and HOT updates")
    game = start_game(users[:4], timers={"memorise_ms": 0, "start_delay_ms": 0})
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        for table in ("games_event", "games_enginecall", "games_seat"):
            cursor.execute(f"EXPLAIN SELECT * FROM {table} WHERE game_id = %s", [game.pk])  # noqa: S608
            plan = "\n".join(row[0] for row in cursor.fetchall())
            assert "Index" in plan and "Seq Scan" not in plan, (table, plan)
        cursor.execute("SELECT reloptions FROM pg_class WHERE relname = 'games_game'")
        assert "fillfactor=70" in (cursor.fetchone()[0] or [])
        cursor.execute(
            "SELECT attcompression FROM pg_attribute"
            " WHERE attrelid = 'games_game'::regclass AND attname = 'state'"
        )
        assert cursor.fetchone()[0] in ("l", "")  # lz4, or the default where the server lacks it
    # Moves keep working on the lighter tables (the events' and seats' writes by game).
    fake_clock.advance(10)
    game.refresh_from_db()
    seat = game.state["round"]["turn"]["seat"]
    mover = next(u for u in users[:4] if game.seats.get(number=seat).user_id == u.pk)
    for action in ({"type": "draw", "source": "deck"}, {"type": "discard"}):
        fake_clock.advance(10)
        _, ack = consumers._act(game.pk, mover, {"action": action})
        assert ack["type"] == "ack", ack
    assert Event.objects.filter(game=game).count() > 2 and Game.objects.get(pk=game.pk).version


@pytest.mark.django_db(transaction=True)
def test_the_postgres_part_goes_back_and_forth() -> None:
    from django.apps import apps

    with connection.schema_editor() as editor:
        migration.backwards(apps, editor)
    if connection.vendor == "postgresql":
        assert set(_GONE) <= set(_indexes("games_game"))
    with connection.schema_editor() as editor:
        migration.forwards(apps, editor)
        migration.forwards(apps, editor)  # twice: nothing to drop the second time
    if connection.vendor == "postgresql":
        assert not set(_GONE) & set(_indexes("games_game"))
