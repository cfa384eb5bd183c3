"""A transaction's ``BEGIN`` sent in the message of its first statement (issue 25, session 19:
``crisp_site.prepared._with_begin``), on PostgreSQL.

psycopg opens a transaction with a ``BEGIN`` of its own, a round trip before the first statement.
When that statement is the lock + seats' message (``fetch_together``: an action, a timer) or a
compiled read (``Prepared.fetch``), ``BEGIN`` goes in front of it instead. These count the
messages libpq sends (its protocol trace: each ``Query`` and each ``Sync`` is a round trip), and
pin that nothing else moved: the refusal's rollback, a failure after the lock, a lock wait that
ran out in that message, ``on_commit`` after the commit only, ``DB_SERVER_BINDING=0``, and a
transaction opened by something else first (no second ``BEGIN``).
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
import pytest
from django.db import OperationalError, connection, transaction
from psycopg import pq

from crisp_site import prepared as binding
from games import consumers, services
from games.errors import ServiceError
from games.exceptions import _is_lock_timeout
from games.models import Game
from games.services import commit

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def _postgres_only() -> None:
    if connection.vendor != "postgresql":
        pytest.skip("psycopg's BEGIN and libpq's trace are PostgreSQL's")


@contextmanager
def _sent() -> Iterator[list[str]]:
    """The round trips this connection's libpq makes meanwhile: each ``Query`` message (its
    text) and each ``Sync`` (extended protocol: ``"Sync"``), in order."""
    connection.ensure_connection()
    pgconn = connection.connection.pgconn
    trips: list[str] = []
    with tempfile.TemporaryFile("w+") as trace:
        pgconn.trace(trace.fileno())
        pgconn.set_trace_flags(pq.Trace.SUPPRESS_TIMESTAMPS | pq.Trace.REGRESS_MODE)
        try:
            yield trips
        finally:
            pgconn.untrace()
            trace.seek(0)
            for line in trace.read().splitlines():
                fields = line.split("\t")
                if len(fields) >= 3 and fields[0] == "F" and fields[2] in ("Query", "Sync"):
                    trips.append(fields[3].strip()[1:-1] if fields[2] == "Query" else "Sync")


def _four(start_game: Any, users: list[Any], fake_clock: Any) -> Game:
    game = start_game(users[:4], timers={"memorise_ms": 0, "start_delay_ms": 0})
    fake_clock.advance(10)
    return game


def _mover(game: Game, users: list[Any]) -> Any:
    game.refresh_from_db()
    seat = game.state["round"]["turn"]["seat"]
    return next(u for u in users[:4] if game.seats.get(number=seat).user_id == u.pk)


def _turn(game: Game, users: list[Any], fake_clock: Any) -> None:
    mover = _mover(game, users)
    for action in ({"type": "draw", "source": "deck"}, {"type": "discard"}):
        fake_clock.advance(10)
        _, ack = consumers._act(game.pk, mover, {"action": action})
        assert ack["type"] == "ack", ack


def _idle() -> bool:
    """No transaction open on the session, and psycopg in autocommit as Django left it."""
    raw = connection.connection
    return raw.pgconn.transaction_status == pq.TransactionStatus.IDLE and raw.autocommit


@pytest.mark.parametrize("first", [True, False])
def test_an_action_is_three_round_trips_with_begin_in_the_locks_message(
    start_game: Any, users: list[Any], fake_clock: Any, monkeypatch: pytest.MonkeyPatch, first: bool
) -> None:
    monkeypatch.setattr(binding, "BEGIN_WITH_FIRST", first)
    game = _four(start_game, users, fake_clock)
    _turn(game, users, fake_clock)  # the connection's statements prepared
    mover = _mover(game, users)
    version = Game.objects.get(pk=game.pk).version
    fake_clock.advance(10)
    with _sent() as trips:
        _, ack = consumers._act(game.pk, mover, {"action": {"type": "draw", "source": "deck"}})
    assert ack["type"] == "ack" and ack["version"] == version + 1
    assert Game.objects.get(pk=game.pk).version == version + 1
    if first:  # BEGIN, the lock and the seats; the write; COMMIT
        assert len(trips) == 3, trips
        assert trips[0].startswith("BEGIN; EXECUTE _pg3_") and trips[0].count("EXECUTE") == 2
    else:  # psycopg's BEGIN on its own first
        assert len(trips) == 4, trips
        assert trips[0] == "BEGIN" and trips[1].startswith("EXECUTE _pg3_")
    assert trips[-2:] == ["Sync", "COMMIT"]  # the write (bound), then Django's commit
    assert _idle()


def test_a_timers_begin_goes_with_its_lock(
    start_game: Any, users: list[Any], fake_clock: Any
) -> None:
    game = start_game(users[:4], timers={"memorise_ms": 0, "start_delay_ms": 0, "draw_seconds": 30})
    fake_clock.advance(10)
    _turn(game, users, fake_clock)
    game.refresh_from_db()
    (due, *_) = [d for d in game.deadlines if d["key"].endswith(":timeout")]
    fake_clock.ms = due["at"]
    with transaction.atomic():  # the timer's statements prepared on this connection
        commit._lock_playing_with_seats(game.pk)
    with _sent() as trips:
        assert services.game_fire_deadline(game_id=game.pk, key=due["key"])
    # BEGIN, the lock and the seats; the write (its shape's first time on this connection:
    # psycopg prepares it with a round trip of its own first); COMMIT.
    assert trips[0].startswith("BEGIN; EXECUTE _pg3_") and trips[0].count("EXECUTE") == 2, trips
    assert trips[1:] in (["Sync", "COMMIT"], ["Sync", "Sync", "COMMIT"]), trips
    assert _idle()


def test_a_refused_action_rolls_back_and_the_next_one_begins_again(
    start_game: Any, users: list[Any], fake_clock: Any
) -> None:
    game = _four(start_game, users, fake_clock)
    _turn(game, users, fake_clock)
    mover = _mover(game, users)
    version = Game.objects.get(pk=game.pk).version
    stale = {"action": {"type": "draw", "source": "deck"}, "version": version - 1}
    with _sent() as trips, pytest.raises(ServiceError) as refused:
        consumers._act(game.pk, mover, stale)
    assert refused.value.code == "stale_version"
    # psycopg forgets its prepared statements after a rollback (``DEALLOCATE ALL``).
    assert trips[0].startswith("BEGIN; ") and "ROLLBACK" in trips, trips
    assert _idle() and Game.objects.get(pk=game.pk).version == version
    _turn(game, users, fake_clock)  # prepared again after the rollback, and begun again
    assert Game.objects.get(pk=game.pk).version == version + 2


def test_a_failure_after_the_lock_leaves_nothing_and_calls_no_hook(
    start_game: Any, users: list[Any], fake_clock: Any
) -> None:
    game = _four(start_game, users, fake_clock)
    _turn(game, users, fake_clock)
    called: list[str] = []
    with _sent() as trips, pytest.raises(RuntimeError), transaction.atomic():
        _, seats = commit._lock_with_seats(game.pk)
        assert len(seats) == 4
        Game.objects.filter(pk=game.pk).update(name="never")
        transaction.on_commit(lambda: called.append("rolled back"))
        raise RuntimeError
    assert trips[0].startswith("BEGIN; EXECUTE _pg3_") and "ROLLBACK" in trips, trips
    assert Game.objects.get(pk=game.pk).name == "" and not called and _idle()
    with transaction.atomic():  # prepared again (psycopg dropped them with the rollback)
        commit._lock_with_seats(game.pk)
    with _sent() as trips, transaction.atomic():
        commit._lock_with_seats(game.pk)
        Game.objects.filter(pk=game.pk).update(name="kept")
        transaction.on_commit(lambda: called.append(Game.objects.get(pk=game.pk).name))
        assert not called
    assert called == ["kept"]  # after the commit, once, and it sees the committed row
    assert trips[0].startswith("BEGIN; EXECUTE _pg3_") and trips[2] == "COMMIT", trips


def test_a_lock_wait_that_ran_out_in_the_begin_message(
    start_game: Any, users: list[Any], fake_clock: Any
) -> None:
    game = _four(start_game, users, fake_clock)
    _turn(game, users, fake_clock)
    with connection.cursor() as cursor:
        cursor.execute("SET lock_timeout = '50ms'")  # the session's, outside any transaction
    try:
        with psycopg.connect(_admin_dsn()) as holder:
            holder.execute("SELECT 1 FROM games_game WHERE id = %s FOR UPDATE", [game.pk])
            with (
                _sent() as trips,
                pytest.raises(OperationalError) as raised,
                transaction.atomic(),
            ):
                commit._lock_with_seats(game.pk)
            assert _is_lock_timeout(raised.value), raised.value
            assert trips[0].startswith("BEGIN; EXECUTE _pg3_"), trips
            assert _idle()
            holder.rollback()
    finally:
        with connection.cursor() as cursor:
            cursor.execute("RESET lock_timeout")
    _turn(game, users, fake_clock)


def test_a_transaction_begun_by_something_else_gets_no_second_begin(
    start_game: Any, users: list[Any], fake_clock: Any
) -> None:
    game = _four(start_game, users, fake_clock)
    _turn(game, users, fake_clock)
    with _sent() as trips, transaction.atomic():
        Game.objects.filter(pk=game.pk).exists()
        commit._lock_with_seats(game.pk)
        with transaction.atomic():  # a savepoint inside: BEGIN is not ours to send
            commit._lock_with_seats(game.pk)
    assert trips[0] == "BEGIN", trips  # psycopg's, before the first statement
    assert sum("BEGIN" in t for t in trips) == 1, trips
    assert _idle()


def test_autocommit_reads_and_a_compiled_read_first_in_a_transaction(
    start_game: Any, users: list[Any], fake_clock: Any
) -> None:
    game = _four(start_game, users, fake_clock)
    with _sent() as trips:
        assert commit._SEATS.fetch(game.pk)  # autocommit: no transaction to open
    assert trips == [trips[0]] and not trips[0].startswith("BEGIN"), trips
    with _sent() as trips, transaction.atomic():
        assert commit._lock(game.pk).pk == game.pk
    assert len(trips) == 2 and trips[0].startswith("BEGIN; SELECT"), trips
    assert _idle()


def test_db_server_binding_off_sends_begin_with_the_quoted_reads(
    start_game: Any, users: list[Any], fake_clock: Any, settings: Any
) -> None:
    settings.DB_SERVER_BINDING = False
    game = _four(start_game, users, fake_clock)
    _turn(game, users, fake_clock)
    mover = _mover(game, users)
    fake_clock.advance(10)
    with _sent() as trips:
        consumers._act(game.pk, mover, {"action": {"type": "draw", "source": "deck"}})
    assert len(trips) == 3, trips
    assert trips[0].startswith("BEGIN; SELECT") and "EXECUTE" not in trips[0], trips
    assert "FOR UPDATE" in trips[0] and trips[1].startswith("WITH "), trips
    assert _idle()


def _admin_dsn() -> str:
    db = connection.settings_dict
    return (
        f"host={db.get('HOST') or '127.0.0.1'} port={db.get('PORT') or 5432} "
        f"user={db.get('USER') or 'postgres'} dbname={db['NAME']}"
        + (f" password={db['PASSWORD']}" if db.get("PASSWORD") else "")
    )
