"""How many SQL round trips one action costs (issue 13): the budget the benchmark's profile set.

On a daphne process every database call of every socket runs on the *one* thread of
`database_sync_to_async`, so an action's queries are serial with everyone else's: at the knee of
`bench/scale.py` that thread is what limits the process (bench/RESULTS.md, "Scale"). These
tests pin the count so a change that adds a round trip to the hot path is seen.

The counts are of the statements Django sends, the test's savepoint and its release included
(in production the action's transaction is the outermost: BEGIN and COMMIT instead). On
PostgreSQL an action is two round trips (issue 25, session 14): the row lock (with the round's
key) sent together with the seats' read (``services.prepared.fetch_together``), and ONE write
(``services.prepared.ChangeWrite``: the engine call, the events, the row, the seats' turns).
On SQLite, in process, the same statements run one after the other (no round trip to save).

Session 18: on PostgreSQL the hot path's statements are bound server-side and prepared once per
connection (``crisp_site.prepared.binding_cursor``). The lock and the seats: the first time on a
connection two statements in ONE psycopg pipeline (one sync, one round trip: psycopg prepares
them), then one message of two ``EXECUTE`` statements. The budgets are therefore counted in
round trips (``_Trips``: the statements of one pipeline count once); the numbers did not change.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from games import clock, consumers, selectors, services
from tests.games.leak_kit import without_now

pytestmark = pytest.mark.django_db


def _four_seats(
    start_game: Any, users: list[Any], fake_clock: Any, **timers: int
) -> tuple[Any, Any]:
    game = start_game(users[:4], timers={"memorise_ms": 0, "start_delay_ms": 0, **timers})
    fake_clock.advance(10)
    game.refresh_from_db()
    seat = game.state["round"]["turn"]["seat"]
    mover = next(u for u in users[:4] if game.seats.get(number=seat).user_id == u.pk)
    return game, mover


def test_an_action_over_the_socket_costs_at_most_its_budget(
    start_game: Any, users: list[Any], fake_clock: Any
) -> None:
    game, mover = _four_seats(start_game, users, fake_clock)
    with _trips() as draw:
        seat, ack = consumers._act(game.pk, mover, {"action": {"type": "draw", "source": "deck"}})
    assert ack["type"] == "ack" and ack["events"]
    fake_clock.advance(10)
    with _trips() as discard:
        _, ack2 = consumers._act(game.pk, mover, {"action": {"type": "discard"}})
    assert ack2["version"] == ack["version"] + 1
    assert seat == game.seats.get(user=mover).number
    # The drawn card reaches its drawer in the ack (private form), and only there.
    assert any(e["type"] == "draw" and e["data"].get("card") for e in ack["events"])
    assert draw.round_trips <= _budget(BUDGET_DRAW), draw.sql
    assert discard.round_trips <= _budget(BUDGET_DISCARD), discard.sql
    if connection.vendor == "postgresql":
        for change in (draw, discard):
            writes = [
                sql
                for sql in change.sql
                if not sql.startswith(("SELECT", "EXECUTE", "SAVEPOINT", "RELEASE"))
            ]
            assert len(writes) == 1 and writes[0].startswith("WITH "), writes
            change.assert_lock_and_seats_together()


def _sql(captured: CaptureQueriesContext) -> list[str]:
    return [q["sql"].lstrip() for q in captured.captured_queries]


class _Trips:
    """The statements Django sent, each with the psycopg pipeline it went in (None: alone)."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, Any]] = []

    @property
    def sql(self) -> list[str]:
        return [sql for sql, _ in self.sent]

    @property
    def round_trips(self) -> int:
        """A statement alone is one round trip, a pipeline's statements together are one."""
        pipelines: list[Any] = []
        alone = 0
        for _, pipeline in self.sent:
            if pipeline is None:
                alone += 1
            elif not any(p is pipeline for p in pipelines):
                pipelines.append(pipeline)
        return alone + len(pipelines)

    def assert_lock_and_seats_together(self) -> None:
        """PostgreSQL: the row lock, then the seats, and nothing else read: the first time on
        a connection two statements in one pipeline (psycopg prepares them), then one message
        of two ``EXECUTE`` statements of them."""
        reads = [(sql, p) for sql, p in self.sent if sql.startswith(("SELECT", "EXECUTE"))]
        if len(reads) == 1:
            (message, _), *_ = reads
            assert message.count("EXECUTE ") == 2 and message.count(";") == 1, reads
            return
        assert len(reads) == 2, reads
        (lock, first), (seats, second) = reads
        assert first is not None and first is second, reads
        assert lock.endswith("FOR UPDATE") and '"games_seat"' in seats, reads


@contextmanager
def _trips() -> Iterator[_Trips]:
    """Count an action's round trips: Django's statements (as ``CaptureQueriesContext``),
    those sent in one psycopg pipeline counted once."""
    trips = _Trips()

    def record(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        raw = context["connection"].connection
        trips.sent.append((sql.lstrip(), getattr(raw, "_pipeline", None)))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(record):
        yield trips


def _budget(budgets: dict[str, int]) -> int:
    return budgets.get(connection.vendor, budgets["sqlite"])


#: Measured before issue 13's change: 11 and 13 (an INSERT per event, a query for the seats
#: of computer players, and two reads again for the ack). Now: the lock, the seats (one
#: query, users joined), the engine call, the round, the events (one bulk insert), the game.
#: Issue 26 added one: the seats' "your move" columns, every changed seat in one UPDATE
#: (``commit._persist_turns``; a change that moves the turn always has one): 9 and 9.
#: Issue 25, session 14: the round's key comes with the lock (``commit._with_round``), and on
#: PostgreSQL the lock and the seats go as one message and the engine call, the events, the
#: row and the seats' turns are one statement (``prepared.ChangeWrite``): savepoint, lock and
#: seats, write, release. SQLite runs them one by one (a discard moves the turn: one more,
#: the seats' turns).
BUDGET_DRAW = {"postgresql": 4, "sqlite": 7}
BUDGET_DISCARD = {"postgresql": 4, "sqlite": 8}
#: A timer: the lock, the seats (one query, users joined: the sit-in count, the computer
#: players and the broadcast's seat map), the timed-out seat's count, the engine call, the
#: round, the events, the game (and the transaction's two statements). The timer measured is
#: the draw clock's since the crisp window became silent (session 4; it was the window's, 8,
#: which wrote no seat); a turn now has this one timer at most.
#: Issue 26: one more, the seats' "your move" columns (one UPDATE): 10. Issue 25, session 14:
#: as an action's (the round's key with the lock, one write on PostgreSQL), plus the timed-out
#: seat's count. Second round: the timer's lock and seats one message too
#: (``commit._lock_playing_with_seats``): 5. Third round: the timed-out seat's count rides in
#: the seats' UPDATE of the one write (``commit._seat_writes``): 4 (savepoint, lock and seats,
#: write, release), and 8 on SQLite.
BUDGET_TIMER = {"postgresql": 4, "sqlite": 8}


def test_a_timer_costs_at_most_its_budget(
    start_game: Any,
    users: list[Any],
    fake_clock: Any,
    live_calls: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    game, mover = _four_seats(start_game, users, fake_clock, draw_seconds=30)
    consumers._act(game.pk, mover, {"action": {"type": "draw", "source": "deck"}})
    with django_capture_on_commit_callbacks(execute=True):
        consumers._act(game.pk, mover, {"action": {"type": "discard"}})
    # The one timer a turn has now: the next player's draw clock (the crisp window and the
    # start delay are silent, applied by this timer at their own instants).
    (key, due), *_ = live_calls.scheduled[-1][1]
    assert key.endswith(":timeout")
    fake_clock.ms = clock.from_datetime(due)
    with _trips() as fired:
        assert services.game_fire_deadline(game_id=game.pk, key=key)
    game.refresh_from_db()
    assert not any(d["key"] == key for d in game.deadlines)
    assert fired.round_trips <= _budget(BUDGET_TIMER), fired.sql
    # The timed-out seat's count was written, in the change's one write.
    assert sorted(game.seats.values_list("missed", flat=True)) == [0, 0, 0, 1]
    if connection.vendor == "postgresql":
        fired.assert_lock_and_seats_together()


def test_a_rest_read_reads_the_viewers_seat_once_with_the_game(
    start_game: Any, users: list[Any], fake_clock: Any, api: Any
) -> None:
    """A per-game REST read asks for its viewer's seat several times (the access check, the
    legal actions, the payload): it is read once, in the game's own query
    (``selectors.game_for_user``), and remembered on the instance for that version."""
    game, mover = _four_seats(start_game, users, fake_clock)
    client = api(mover)
    seat = game.seats.get(user=mover).number
    for path in ("actions/", "state/", "events/"):
        with CaptureQueriesContext(connection) as read:
            r = client.get(f"/api/v1/games/{game.pk}/{path}")
        assert r.status_code == 200, r.content
        seat_reads = [sql for sql in _sql(read) if '"games_seat"' in sql]
        assert len(seat_reads) == 1 and '"games_game"' in seat_reads[0], (path, seat_reads)
    assert client.get(f"/api/v1/games/{game.pk}/actions/").json()["seat"] == seat
    # The state is the viewer's seat's view, not a spectator's.
    fresh = type(game).objects.get(pk=game.pk)
    state = client.get(f"/api/v1/games/{game.pk}/state/").json()
    assert without_now(state) == without_now(
        selectors.game_payload_for_seat(game=fresh, seat=seat, now=clock.now_ms())
    )
    assert without_now(state) != without_now(
        selectors.game_payload_for_seat(game=fresh, seat=None, now=clock.now_ms())
    )


def test_a_remembered_seat_is_read_again_at_a_new_version(
    start_game: Any, users: list[Any], fake_clock: Any
) -> None:
    """The memo of ``seat_for_user`` is per version: an instance refreshed after a change asks
    the database again (a lobby change -- a seat taken or left -- is always a new version)."""
    host, other = users[:2]
    game = services.game_create(host=host, kind="crisp", settings={})
    game = selectors.game_for_user(game_id=game.pk, user=other)
    assert selectors.seat_for_user(game=game, user=other) is None
    services.game_join(game=game.pk, user=other)
    assert selectors.seat_for_user(game=game, user=other) is None  # the instance's version
    game.refresh_from_db()
    assert selectors.seat_for_user(game=game, user=other) == 1


#: A per-game REST read's statements once warm (issue 25, bench/rest_cpu.py): the state and
#: the legal actions are ONE query (the game with its host and the viewer's seat), the events
#: two (the game, the events), the detail two (the game, the seats with their users: compiled
#: once too since session 16). Before the reads were compiled once they were the same count.
BUDGET_REST_READ = {"state/": 1, "actions/": 1, "events/": 2, "": 2}


def _compiled_selects(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """From now on, the SQL of every query Django builds (``SQLCompiler.as_sql``): a warm
    compiled-once read adds nothing to it."""
    from django.db.models.sql.compiler import SQLCompiler

    compiled: list[str] = []
    real = SQLCompiler.as_sql

    def counting(self: SQLCompiler, *args: Any, **kwargs: Any) -> Any:
        out = real(self, *args, **kwargs)
        compiled.append(out[0])
        return out

    monkeypatch.setattr(SQLCompiler, "as_sql", counting)
    return compiled


@pytest.mark.parametrize("signed_in", [True, False])
def test_a_rest_read_compiles_no_sql_once_warm(
    start_game: Any,
    users: list[Any],
    fake_clock: Any,
    api: Any,
    monkeypatch: pytest.MonkeyPatch,
    signed_in: bool,
) -> None:
    """Django building the game's and the events' SQL was most of a REST read's CPU
    (bench/RESULTS.md, "REST reads"): ``games.api.views`` compiles them once per process.
    Pinned here: a warm read of the state, the legal actions, the events and the detail builds
    no SQL at all, and makes no more statements than its budget."""
    from rest_framework.test import APIClient

    game, mover = _four_seats(start_game, users, fake_clock)
    client = api(mover) if signed_in else APIClient()
    base = f"/api/v1/games/{game.pk}/"
    for path in BUDGET_REST_READ:
        client.get(base + path, {"since": 0, "limit": 500} if path == "events/" else {})  # warm
    compiled = _compiled_selects(monkeypatch)
    for path, budget in BUDGET_REST_READ.items():
        with CaptureQueriesContext(connection) as read:
            r = client.get(base + path, {"since": 0, "limit": 500} if path == "events/" else {})
        assert r.status_code == 200, r.content
        assert len(read) <= budget, (path, _sql(read))
    assert compiled == [], compiled
    type(game).objects.filter(pk=game.pk).count()  # the counter counts
    assert len(compiled) == 1


def test_a_token_request_compiles_no_sql_once_warm(
    start_game: Any, users: list[Any], fake_clock: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A third-party client's request (``Authorization: Token``): its token's lookup was the
    largest part of the bare request stack, Django building it per request (bench/rest_cpu.py,
    session 16); it is compiled once per process (``accounts.selectors.token_for_key``).
    Pinned: warm, a token request builds no SQL, and costs its read's budget and ONE statement
    more (the token with its user)."""
    from rest_framework.test import APIClient

    from accounts.services import token_create

    game, mover = _four_seats(start_game, users, fake_clock)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token_create(user=mover, name='bot')[1]}")
    base = f"/api/v1/games/{game.pk}/"
    for path in BUDGET_REST_READ:  # warm (the first also marks the token used: an UPDATE)
        assert client.get(base + path).status_code == 200
    compiled = _compiled_selects(monkeypatch)
    for path, budget in BUDGET_REST_READ.items():
        with CaptureQueriesContext(connection) as read:
            r = client.get(base + path)
        assert r.status_code == 200, r.content
        assert r.json() and len(read) <= budget + 1, (path, _sql(read))
        assert sum('"accounts_apitoken"' in sql for sql in _sql(read)) == 1, _sql(read)
    assert compiled == [], compiled


#: The games list's statements, however many games (issue 25, session 16): the games (their
#: hosts joined) and their seats with their users in one prefetch, where the users were a third.
BUDGET_LIST = 2


def test_a_games_list_costs_its_budget_however_many_games(
    start_game: Any, users: list[Any], fake_clock: Any, api: Any
) -> None:
    for i in range(3):
        start_game([users[0], users[1 + i]], seed=f"list-{i}")
    client = api(users[0])
    with CaptureQueriesContext(connection) as listed:
        r = client.get("/api/v1/games/", {"scope": "mine"})
    assert r.status_code == 200 and len(r.json()) == 3
    assert all(len(g["seats"]) == 2 and g["seats"][0]["name"] for g in r.json())
    assert len(listed) <= BUDGET_LIST, _sql(listed)


#: A REST action: the request's game read (its seat in it), the action's own (as over the
#: socket: ``BUDGET_DRAW``), and the game read again for the answer -- the same compiled read,
#: where it was a refresh and a seat query (issue 25, bench/rest_cpu.py): one fewer.
BUDGET_REST_DRAW = {
    "postgresql": 2 + BUDGET_DRAW["postgresql"],
    "sqlite": 2 + BUDGET_DRAW["sqlite"],
}


def test_a_rest_action_costs_at_most_its_budget(
    start_game: Any, users: list[Any], fake_clock: Any, api: Any
) -> None:
    game, mover = _four_seats(start_game, users, fake_clock)
    client = api(mover)
    with _trips() as act:
        r = client.post(
            f"/api/v1/games/{game.pk}/actions/",
            {"action": {"type": "draw", "source": "deck"}},
            format="json",
        )
    assert r.status_code == 200, r.content
    body = r.json()
    game.refresh_from_db()
    assert body["version"] == body["state"]["version"] == game.version
    # The answer is the actor's seat's view of the game as the action left it.
    seat = game.seats.get(user=mover).number
    assert without_now(body["state"]) == without_now(
        selectors.game_payload_for_seat(game=game, seat=seat, now=clock.now_ms())
    )
    assert act.round_trips <= _budget(BUDGET_REST_DRAW), act.sql
