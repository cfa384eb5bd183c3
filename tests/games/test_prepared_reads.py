"""The commit's hot reads are compiled to SQL once per process (issue 25, bench/RESULTS.md
session 8), and give exactly what their querysets gave.

Django building the SQL of the row lock and of the seats' read cost a daphne process more CPU
than running them; `games.services.prepared.Prepared` compiles each once. These tests pin both
halves: no SQL is compiled on an action once the process has made one (a counter on the ORM's
compiler), and the instances are the queryset's (values, deferred columns, the joined users,
`seat.game`), the row lock's refusals too.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection, transaction
from django.db.models.sql.compiler import SQLCompiler, SQLInsertCompiler, SQLUpdateCompiler
from django.db.transaction import TransactionManagementError

from games import consumers
from games.errors import ServiceError
from games.models import Game, Seat
from games.services import commit

pytestmark = pytest.mark.django_db


def _mover(game: Any, users: list[Any]) -> Any:
    game.refresh_from_db()
    seat = game.state["round"]["turn"]["seat"]
    return next(u for u in users[:4] if game.seats.get(number=seat).user_id == u.pk)


def test_an_action_compiles_no_select_once_warm(
    start_game: Any, users: list[Any], fake_clock: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    game = start_game(users[:4], timers={"memorise_ms": 0, "start_delay_ms": 0})
    fake_clock.advance(10)
    mover = _mover(game, users)
    consumers._act(game.pk, mover, {"action": {"type": "draw", "source": "deck"}})  # warm
    compiled: list[str] = []

    def counting(real: Any) -> Any:
        def as_sql(self: SQLCompiler, *args: Any, **kwargs: Any) -> Any:
            out = real(self, *args, **kwargs)
            # An insert compiler gives a list of (sql, params); the others one pair.
            compiled.extend(sql for sql, _ in (out if isinstance(out, list) else [out]))
            return out

        return as_sql

    # The update and insert compilers have their own `as_sql`: each is counted.
    for cls in (SQLCompiler, SQLUpdateCompiler, SQLInsertCompiler):
        monkeypatch.setattr(cls, "as_sql", counting(cls.as_sql))
    fake_clock.advance(10)
    _, ack = consumers._act(game.pk, mover, {"action": {"type": "discard"}})
    assert ack["type"] == "ack"
    # The lock, the seats and the round's id were three of these (the ORM built them on
    # every action); the action reads nothing else.
    selects = [sql for sql in compiled if sql.lstrip().upper().startswith("SELECT")]
    assert selects == []
    # Nor is the game row's UPDATE built (``commit.PreparedUpdate``); the row holds the change.
    # (The seats' "your move" columns, issue 26, are one ORM-built UPDATE of the seats whose
    # turn changed: its CASE has one branch per such seat, so it is not prepared.)
    updates = [sql for sql in compiled if sql.lstrip().upper().startswith("UPDATE")]
    assert not any('"games_game"' in sql for sql in updates), compiled
    assert all('"games_seat"' in sql for sql in updates), updates
    assert any('INSERT INTO "games_event"' in sql for sql in compiled), compiled  # counted
    game.refresh_from_db()
    assert game.version == ack["version"] and game.state["round"]["turn"]["seat"] != _seat_of(
        game, mover
    )


def _seat_of(game: Any, user: Any) -> int:
    return game.seats.get(user=user).number


def test_the_change_update_fails_as_save_did_when_the_row_is_gone(
    start_game: Any, users: list[Any], fake_clock: Any
) -> None:
    from django.db import DatabaseError

    game = start_game(users[:4], timers={"memorise_ms": 0, "start_delay_ms": 0})
    ghost = Game.objects.get(pk=game.pk)
    ghost.pk = game.pk + 1000
    with pytest.raises(DatabaseError):
        commit._SAVE_CHANGE.save(ghost)


def test_the_reads_give_what_their_querysets_gave(
    start_game: Any, users: list[Any], fake_clock: Any
) -> None:
    game = start_game(users[:4], timers={"memorise_ms": 0, "start_delay_ms": 0})
    with transaction.atomic():
        locked = commit._lock(game.pk)
        orm = Game.objects.get(pk=game.pk)
        for field in Game._meta.concrete_fields:
            assert getattr(locked, field.attname) == getattr(orm, field.attname), field.name
        assert commit._lock_playing(game.pk).pk == game.pk
        assert commit._lock_playing(game.pk, skip_locked=True).pk == game.pk
        seats = commit._seats(locked)
    expected = list(Seat.objects.filter(game=game).order_by("number"))
    assert [s.pk for s in seats] == [s.pk for s in expected]
    for got, want in zip(seats, expected, strict=True):
        for name in ("number", "user_id", "score", "missed", "sitting_in", "bot_level"):
            assert getattr(got, name) == getattr(want, name)
        assert got.user.username == want.user.username  # joined, no query
        assert got.game is locked  # no query of its own
        assert "bot_memory" in got.get_deferred_fields()  # loads on access, as with .only()
        assert got.bot_memory == want.bot_memory
    (rnd,) = commit._ROUND.fetch(game.pk, orm.state["round"]["number"])
    assert rnd.number == orm.state["round"]["number"] and rnd.game_id == game.pk
    assert "deck" in rnd.get_deferred_fields()
    assert commit._ROUND.fetch(game.pk, 99) == []


def test_the_lock_refuses_as_before(start_game: Any, users: list[Any], fake_clock: Any) -> None:
    game = start_game(users[:4], timers={"memorise_ms": 0, "start_delay_ms": 0})
    with transaction.atomic():
        for bad in (game.pk + 1000, "nope", None, 2**70, -1):
            with pytest.raises(ServiceError) as refused:
                commit._lock(bad)
            assert refused.value.code == "not_found"
        assert commit._lock_playing(game.pk + 1000) is None
    Game.objects.filter(pk=game.pk).update(status=Game.Status.FINISHED)
    with transaction.atomic():
        assert commit._lock_playing(game.pk) is None


@pytest.mark.django_db(transaction=True)
def test_the_lock_still_needs_a_transaction(
    start_game: Any, users: list[Any], fake_clock: Any
) -> None:
    """Where the database has row locks (PostgreSQL), as the queryset refused it."""
    game = start_game(users[:4], timers={"memorise_ms": 0, "start_delay_ms": 0})
    if not connection.features.has_select_for_update:
        assert commit._lock(game.pk).pk == game.pk  # SQLite: the ORM ignores the clause
        return
    with pytest.raises(TransactionManagementError):
        commit._lock(game.pk)
