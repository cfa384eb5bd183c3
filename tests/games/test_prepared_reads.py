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
from django.test.utils import CaptureQueriesContext

from games import consumers, services
from games.errors import ServiceError
from games.models import EngineCall, Event, Game, Round, Seat
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
    # every action); the action reads nothing else. Nor is any write built (issue 25, session
    # 14): the engine call's and the events' INSERTs, the row's UPDATE and the seats' "your
    # move" columns are ``commit._WRITE_CHANGE``'s SQL, written once per shape.
    assert compiled == []
    Seat.objects.filter(game=game).count()  # the counter counts
    assert len(compiled) == 1
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


def test_the_one_write_fails_as_save_did_when_the_row_is_gone(
    start_game: Any, users: list[Any], fake_clock: Any
) -> None:
    from django.db import DatabaseError

    game = start_game(users[:4], timers={"memorise_ms": 0, "start_delay_ms": 0})
    ghost = Game.objects.get(pk=game.pk)
    ghost.pk = game.pk + 1000
    with pytest.raises(DatabaseError), transaction.atomic():
        commit._WRITE_CHANGE.write(ghost, None, [], {})


def test_the_one_write_stores_what_the_orm_stored(
    start_game: Any, users: list[Any], fake_clock: Any
) -> None:
    """The engine call, the events (with their keys, as ``bulk_create`` gave them), the
    row's columns and the seats' turns, each as the ORM would have written it."""
    game = start_game(users[:4], timers={"memorise_ms": 0, "start_delay_ms": 0})
    fake_clock.advance(10)
    mover = _mover(game, users)
    consumers._act(game.pk, mover, {"action": {"type": "draw", "source": "deck"}})
    fake_clock.advance(10)
    result = services.game_act(
        game=game.pk, user=mover, action={"type": "discard"}, expected_version=None
    )
    stored = list(Event.objects.filter(game=game, version=result.version).order_by("seq"))
    assert [e.pk for e in result.events] == [e.pk for e in stored] and stored
    for got, want in zip(result.events, stored, strict=True):
        assert not got._state.adding
        for field in Event._meta.concrete_fields:
            assert getattr(got, field.attname) == getattr(want, field.attname), field.name
    call = EngineCall.objects.get(game=game, version=result.version)
    assert (call.call, call.action, call.seat) == (
        "apply",
        {"type": "discard"},
        _seat_of(game, mover),
    )
    game.refresh_from_db()
    assert game.version == result.version and game.last_seq == stored[-1].seq
    awaited = game.state["round"]["turn"]["seat"]
    for seat in Seat.objects.filter(game=game):
        assert (seat.turn_since is not None) == (seat.number == awaited), seat.number
        assert seat.turn_deadline is None  # no draw clock at this table
    # The round's key came with the lock (``commit._with_round``): the events' round is it.
    assert {e.round_id for e in stored} == {
        Round.objects.get(game=game, number=game.state["round"]["number"]).pk
    }


def test_the_lock_reads_the_latest_round(
    start_game: Any, users: list[Any], fake_clock: Any
) -> None:
    game = start_game(users[:4], timers={"memorise_ms": 0, "start_delay_ms": 0})
    number = game.state["round"]["number"]
    with transaction.atomic():
        locked = commit._lock(game.pk)
        rnd = commit._round(locked, number)
        (read,) = commit._ROUND.fetch(game.pk, number)
        assert (rnd.pk, rnd.game_id, rnd.number) == (read.pk, read.game_id, read.number)
        assert rnd.get_deferred_fields() == read.get_deferred_fields()
        # Another round than the lock's: read (and none there is none).
        assert commit._round(locked, number + 1) is None


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
        # The lock and the seats sent together (one round trip on PostgreSQL) give the same.
        together, with_seats = commit._lock_with_seats(game.pk)
        for field in Game._meta.concrete_fields:
            assert getattr(together, field.attname) == getattr(orm, field.attname), field.name
        assert together.lock_round_id == locked.lock_round_id is not None
        assert [(s.pk, s.user.username, s.turn_since) for s in with_seats] == [
            (s.pk, s.user.username, s.turn_since) for s in seats
        ]
        assert all(s.game is together for s in with_seats)
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
            with pytest.raises(ServiceError) as refused:
                commit._lock_with_seats(bad)
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


def test_the_token_read_gives_what_its_queryset_gave(users: list[Any]) -> None:
    """``accounts.selectors.token_for_key`` is a string-keyed compiled read (session 16): the
    token and its user as the queryset gave them, nothing for an unknown or malformed key, and
    a string key that is not a ``str`` refused rather than compared as something else."""
    from accounts import selectors as account_selectors
    from accounts import services as account_services
    from accounts.keys import key_hash
    from accounts.models import ApiToken

    token, key = account_services.token_create(user=users[0], name="bot")
    account_services.token_create(user=users[1], name="another")
    got = account_selectors.token_for_key(key=key)
    want = ApiToken.objects.select_related("user").get(key_hash=key_hash(key))
    assert got is not None and got.pk == token.pk
    for field in ApiToken._meta.concrete_fields:
        assert getattr(got, field.attname) == getattr(want, field.attname), field.name
    with CaptureQueriesContext(connection) as joined:
        assert got.user.username == want.user.username and got.user.is_active
    assert len(joined) == 0  # the user came in the same query
    assert account_selectors.token_for_key(key=key[:-1] + ("A" if key[-1] != "A" else "B")) is None
    assert account_selectors.token_for_key(key="not-a-token") is None
    with pytest.raises(TypeError):
        account_selectors._TOKEN.fetch(None)


def test_a_warm_token_read_sees_a_revoked_token_and_an_inactive_user(users: list[Any]) -> None:
    """Compiled once, read afresh every request: revoking a token, or deactivating its user,
    refuses its next request (401 with its code), as the queryset did."""
    from rest_framework.test import APIClient

    from accounts import services as account_services

    token, key = account_services.token_create(user=users[0], name="bot")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert client.get("/api/v1/games/?scope=mine").status_code == 200  # warm
    users[0].is_active = False
    users[0].save(update_fields=["is_active"])
    refused = client.get("/api/v1/games/?scope=mine")
    assert refused.status_code == 401 and "inactive" in refused.json()["detail"]
    users[0].is_active = True
    users[0].save(update_fields=["is_active"])
    assert client.get("/api/v1/games/?scope=mine").status_code == 200
    account_services.token_revoke(token=token)
    refused = client.get("/api/v1/games/?scope=mine")
    assert refused.status_code == 401
    assert refused.json()["detail"] == "This token has been revoked."


def test_the_detail_seats_read_gives_what_its_queryset_gave(
    start_game: Any, users: list[Any], fake_clock: Any
) -> None:
    from games import selectors

    game = start_game(users[:4], timers={"memorise_ms": 0, "start_delay_ms": 0})
    got = selectors._detail_seats(game)
    want = list(game.seats.select_related("user").order_by("number"))
    assert [s.pk for s in got] == [s.pk for s in want] and len(got) == 4
    for a, b in zip(got, want, strict=True):
        for field in Seat._meta.concrete_fields:
            assert getattr(a, field.attname) == getattr(b, field.attname), field.name
        assert a.user.username == b.user.username
    assert selectors._detail_seats(Game(pk=game.pk + 1000)) == []
