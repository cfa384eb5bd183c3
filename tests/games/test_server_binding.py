"""The hot path's statements bound server-side and prepared once per connection (issue 25,
session 18: ``crisp_site.prepared.binding_cursor``, ``fetch_together``'s pipeline,
``prepared.ChangeWrite``), on PostgreSQL.

A prepared statement belongs to one PostgreSQL session: these pin that the service layer keeps
working when the session's statements go (``DISCARD ALL``, ``DEALLOCATE ALL``, a rolled-back
transaction, a new connection, a pooled one given back and borrowed again), that the JSON the
write binds reads back exactly as the client-side quoting wrote it, and that an error raised at
the pipeline's sync (a lock wait that ran out) is still Django's ``OperationalError``.
"""

from __future__ import annotations

from typing import Any

import psycopg
import pytest
from django.db import OperationalError, connection, transaction
from django.test.utils import CaptureQueriesContext

from crisp_site import prepared as binding
from games import consumers
from games.errors import ServiceError
from games.exceptions import _is_lock_timeout
from games.models import Event, Game
from games.services import commit

pytestmark = [pytest.mark.postgres]


@pytest.fixture(autouse=True)
def _postgres_only() -> None:
    if connection.vendor != "postgresql":
        pytest.skip("server-side binding and prepared statements are PostgreSQL's")


def _four(start_game: Any, users: list[Any], fake_clock: Any) -> tuple[Game, Any]:
    game = start_game(users[:4], timers={"memorise_ms": 0, "start_delay_ms": 0})
    fake_clock.advance(10)
    game.refresh_from_db()
    seat = game.state["round"]["turn"]["seat"]
    mover = next(u for u in users[:4] if game.seats.get(number=seat).user_id == u.pk)
    return game, mover


def _on_server() -> set[str]:
    """The names of the statements prepared in this connection's PostgreSQL session."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT name FROM pg_prepared_statements")
        return {row[0] for row in cursor.fetchall()}


def _known() -> set[str]:
    """The names psycopg believes are prepared on this connection."""
    return {name.decode() for name in connection.connection._prepared._names.values()}


def _turn(game: Game, users: list[Any], fake_clock: Any) -> None:
    """The player whose turn it is draws and discards (two changes, each its own transaction
    where the test's is not the outermost)."""
    game.refresh_from_db()
    seat = game.state["round"]["turn"]["seat"]
    mover = next(u for u in users[:4] if game.seats.get(number=seat).user_id == u.pk)
    for action in ({"type": "draw", "source": "deck"}, {"type": "discard"}):
        fake_clock.advance(10)
        _, ack = consumers._act(game.pk, mover, {"action": action})
        assert ack["type"] == "ack", ack


@pytest.mark.django_db
def test_an_actions_statements_are_prepared_once_and_bound(
    start_game: Any, users: list[Any], fake_clock: Any
) -> None:
    game, _ = _four(start_game, users, fake_clock)
    _turn(game, users, fake_clock)
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        prepared = [row[0] for row in cursor.fetchall()]
    # The lock, the seats and the write, each with $n parameters: no value in their text.
    assert any("FOR UPDATE" in s and "$1" in s for s in prepared), prepared
    assert any(s.lstrip().startswith("SELECT") and '"games_seat"' in s for s in prepared)
    assert any(s.startswith("WITH ") and '"games_event"' in s for s in prepared), prepared
    assert _known() <= _on_server()
    with transaction.atomic():
        commit._lock_playing_with_seats(game.pk)  # the timer's lock: its first use
        before = _on_server()
        for _ in range(3):
            commit._lock_with_seats(game.pk)
            commit._lock_playing_with_seats(game.pk)
        assert _on_server() == before  # prepared once, executed again
        with CaptureQueriesContext(connection) as warm:
            commit._lock_with_seats(game.pk)
    # Warm, the two reads are one message of two EXECUTEs of the prepared statements.
    ((sql,),) = [[q["sql"]] for q in warm.captured_queries]
    assert sql.startswith("EXECUTE _pg3_") and sql.count("; EXECUTE _pg3_") == 1, sql


@pytest.mark.django_db
def test_json_bound_server_side_reads_back_as_quoted_client_side(
    start_game: Any, users: list[Any], fake_clock: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The state's and the events' JSON (``jsonb`` columns, Django's ``Jsonb`` adapter) read
    back the same, value and stored text, whether bound or quoted into the SQL."""
    game, _ = _four(start_game, users, fake_clock)
    tricky = {
        "quote'": 'it\'s "quoted" \\ back\\slash %s %(x)s $1 ? ;',
        "unicode": "é ß 漢字 😀 \u2028",
        "numbers": [0, -1, 2**53 + 1, 10**30, 1.5, -0.0, 1e-7, 3.141592653589793],
        "nested": {"a": [None, True, False, [], {}], "": ""},
        "newline": "a\nb\tc\r",
    }
    stored: dict[bool, tuple[Any, str, Any, str]] = {}
    for bound in (False, True):
        monkeypatch.setattr(binding, "SERVER_BINDING", bound)
        with transaction.atomic():
            locked, _ = commit._lock_with_seats(game.pk)
            (rnd,) = commit._ROUND.fetch(game.pk, locked.state["round"]["number"])
            locked.version += 1
            locked.state = {**locked.state, "tricky": tricky}
            event = commit._event_row(
                locked,
                origin=Event.Origin.ENGINE,
                type="tricky",
                data=tricky,
                version=locked.version,
                round=rnd,
                at_ms=fake_clock.ms,
            )
            commit._WRITE_CHANGE.write(locked, None, [event], {})
        assert event.pk
        fresh = Game.objects.get(pk=game.pk)
        with connection.cursor() as cursor:
            cursor.execute("SELECT state->>'tricky' FROM games_game WHERE id = %s", [game.pk])
            (state_text,) = cursor.fetchone()
            cursor.execute("SELECT data::text FROM games_event WHERE id = %s", [event.pk])
            (data_text,) = cursor.fetchone()
        stored[bound] = (
            fresh.state["tricky"],
            state_text,
            Event.objects.get(pk=event.pk).data,
            data_text,
        )
        assert fresh.state["tricky"] == tricky
        assert stored[bound][2] == tricky
    assert stored[True] == stored[False]


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("statement", ["DISCARD ALL", "DEALLOCATE ALL"])
def test_the_session_losing_its_statements_is_survived(
    start_game: Any, users: list[Any], fake_clock: Any, statement: str
) -> None:
    """psycopg forgets its names when it sees them dropped; twice in a row too (a second
    ``DISCARD ALL`` is a statement psycopg has already seen once)."""
    game, _ = _four(start_game, users, fake_clock)
    for _ in range(2):
        _turn(game, users, fake_clock)
        assert _known() and _known() <= _on_server()
        with connection.cursor() as cursor:
            cursor.execute(statement)  # autocommit: DISCARD ALL refuses a transaction block
        assert _known() <= _on_server()
    _turn(game, users, fake_clock)
    assert _known() <= _on_server()


@pytest.mark.django_db(transaction=True)
def test_a_rolled_back_action_then_a_new_connection(
    start_game: Any, users: list[Any], fake_clock: Any
) -> None:
    """A refused action rolls its transaction back after the lock and the seats were read
    (psycopg then drops every statement it prepared: a ``ROLLBACK`` may undo what they were
    planned against); a connection given back to the pool and borrowed again, and a new one
    after its backend was terminated, keep working."""
    game, mover = _four(start_game, users, fake_clock)
    _turn(game, users, fake_clock)
    game.refresh_from_db()
    seat = game.state["round"]["turn"]["seat"]
    mover = next(u for u in users[:4] if game.seats.get(number=seat).user_id == u.pk)
    stale = {"action": {"type": "draw", "source": "deck"}, "version": game.version - 1}
    with pytest.raises(ServiceError):  # checked under the lock: the version moved on
        consumers._act(game.pk, mover, stale)
    assert _known() <= _on_server()
    _turn(game, users, fake_clock)
    connection.close()  # back to the pool
    _turn(game, users, fake_clock)
    assert _known() <= _on_server()
    dead = connection.connection.info.backend_pid
    with psycopg.connect(_admin_dsn(), autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", [dead])
    connection.close()
    if connection.pool is not None:
        connection.pool.check()  # the pool drops the dead connection (it checks none on lending)
    _turn(game, users, fake_clock)  # a new session: nothing prepared, prepared again
    assert connection.connection.info.backend_pid != dead
    assert _known() <= _on_server()


@pytest.mark.django_db(transaction=True)
def test_a_lock_wait_ran_out_in_the_pipeline_is_djangos_operational_error(
    start_game: Any, users: list[Any], fake_clock: Any
) -> None:
    game, _ = _four(start_game, users, fake_clock)
    with psycopg.connect(_admin_dsn()) as holder:
        holder.execute("SELECT 1 FROM games_game WHERE id = %s FOR UPDATE", [game.pk])
        with pytest.raises(OperationalError) as raised, transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute("SET LOCAL lock_timeout = '50ms'")
            commit._lock_with_seats(game.pk)
        assert _is_lock_timeout(raised.value), raised.value
        holder.rollback()
    with transaction.atomic():
        locked, seats = commit._lock_with_seats(game.pk)
    assert locked.pk == game.pk and len(seats) == 4
    _turn(game, users, fake_clock)


def _admin_dsn() -> str:
    """A connection of its own, outside Django and its pool."""
    db = connection.settings_dict
    return (
        f"host={db.get('HOST') or '127.0.0.1'} port={db.get('PORT') or 5432} "
        f"user={db.get('USER') or 'postgres'} dbname={db['NAME']}"
        + (f" password={db['PASSWORD']}" if db.get("PASSWORD") else "")
    )


@pytest.mark.django_db
def test_db_server_binding_off_prepares_nothing(
    start_game: Any, users: list[Any], fake_clock: Any, settings: Any
) -> None:
    """``DB_SERVER_BINDING=0`` (behind PgBouncer in transaction mode): the hot path quotes its
    values client-side again and leaves no statement prepared in the session."""
    settings.DB_SERVER_BINDING = False
    game, _ = _four(start_game, users, fake_clock)
    with connection.cursor() as cursor:
        cursor.execute("DEALLOCATE ALL")
    _turn(game, users, fake_clock)
    with transaction.atomic(), CaptureQueriesContext(connection) as reads:
        commit._lock_with_seats(game.pk)
    assert not _on_server()
    ((sql,),) = [[q["sql"]] for q in reads.captured_queries]
    assert "EXECUTE" not in sql and "FOR UPDATE" in sql, sql
