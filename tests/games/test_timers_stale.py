"""Stale timers cost nothing: scheduling makes a game's timers exactly those its change leaves
pending (``games.timers.replace``), so an entry whose key a later change resolved is removed
instead of being fired for nothing by a worker (a transaction to find it stale).

Against the test run's real Redis. What stays the authority is pinned too: a due timer still
fires exactly once, the fire path's own stale check, and the sweep when Redis was down.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import redis
from django.db import transaction

from games import clock, scheduling, services, timers
from games.models import Event, Game
from games.services import commit

from .conftest import act

pytestmark = pytest.mark.django_db

DRAW_SECONDS = 8


def _at(ms_from_now: int) -> datetime:
    return datetime.now(tz=UTC) + timedelta(milliseconds=ms_from_now)


def _clear(client: redis.Redis) -> None:
    records = list(client.scan_iter(match=f"{timers.set_key()}:game:*"))
    client.delete(timers.set_key(), timers.wake_key(), *records)


@pytest.fixture
def client(redis_client: redis.Redis) -> Iterator[redis.Redis]:
    _clear(redis_client)
    yield redis_client
    _clear(redis_client)


def _entries(client: redis.Redis, game_id: int) -> dict[str, int]:
    """The game's entries in the set: key -> due instant (ms)."""
    prefix = f"{game_id}|"
    out = {}
    for member, score in client.zrange(timers.set_key(), 0, -1, withscores=True):
        member = member.decode()
        if member.startswith(prefix):
            out[member[len(prefix) :]] = int(score)
    return out


# ------------------------------------------------------------------------------------------
# The script: exactly these timers, as of a version
# ------------------------------------------------------------------------------------------
def test_a_key_no_longer_pending_is_removed_and_one_still_pending_keeps_its_place(
    client: redis.Redis,
) -> None:
    draw, window = _at(8000), _at(2000)
    assert timers.replace(client, 7, 10, [("r1:t1:timeout", draw), ("r1:w1", window)])
    timers.replace(client, 8, 3, [("r1:t1:timeout", _at(5000))])  # another game's
    # The player drew: the draw clock is no longer pending, the window still is (passed
    # again with another instant: it keeps its first), the next clock is new.
    assert timers.replace(client, 7, 11, [("r1:w1", _at(2500)), ("r1:t2:timeout", _at(9000))])
    entries = _entries(client, 7)
    assert set(entries) == {"r1:w1", "r1:t2:timeout"}
    assert entries["r1:w1"] == timers._ms(window)
    assert set(_entries(client, 8)) == {"r1:t1:timeout"}  # untouched


def test_an_older_change_arriving_after_a_newer_one_changes_nothing(client: redis.Redis) -> None:
    assert timers.replace(client, 7, 5, [("a", _at(1000))])
    assert timers.replace(client, 7, 7, [("c", _at(3000))])  # a removed, c added
    before = _entries(client, 7)
    assert set(before) == {"c"}
    # Version 6 (handed over by another process) reaches Redis last: it must neither remove
    # c nor bring back a, nor add its own b.
    assert not timers.replace(client, 7, 6, [("a", _at(1000)), ("b", _at(2000))])
    assert not timers.replace(client, 7, 7, [])  # the same change again: nothing either
    assert _entries(client, 7) == before
    assert client.hget(timers.record_key(7), "v") == b"7"


def test_a_record_of_another_incarnation_does_not_keep_a_games_timers_out(
    client: redis.Redis,
) -> None:
    """A record older than ``RECORD_FRESH_MS`` holding a newer version is another incarnation's
    (the database restored or recreated while Redis kept its keys: one test run after another):
    the game's first change replaces it instead of being dropped until it expires."""
    now = int(time.time() * 1000)
    long_ago = now - timers.RECORD_FRESH_MS - 1
    assert timers.replace(client, 7, 40, [("old", _at(86_400_000))], now_ms=long_ago)
    # Within the window an older version is still kept out (out-of-order hand-overs).
    assert not timers.replace(client, 7, 3, [("new", _at(1000))], now_ms=long_ago + 1000)
    assert timers.replace(client, 7, 3, [("new", _at(1000))], now_ms=now)
    assert set(_entries(client, 7)) == {"new"}
    assert client.hget(timers.record_key(7), "v") == b"3"


def test_no_timer_left_removes_every_entry_and_the_record_outlives_them_briefly(
    client: redis.Redis,
) -> None:
    timers.replace(client, 7, 1, [("a", _at(60_000)), ("b", _at(120_000))])
    assert timers.replace(client, 7, 2, [])  # the game finished
    assert _entries(client, 7) == {}
    # The record stays (an older call arriving late is still dropped), a while only.
    assert not timers.replace(client, 7, 1, [("a", _at(60_000))])
    assert _entries(client, 7) == {}
    ttl = client.pttl(timers.record_key(7))
    assert 0 < ttl <= timers.RECORD_GRACE_MS
    # With timers, it lasts until the latest is due, plus the grace.
    timers.replace(client, 7, 3, [("far", _at(3_600_000))])
    ttl = client.pttl(timers.record_key(7))
    assert 3_600_000 < ttl <= 3_600_000 + timers.RECORD_GRACE_MS


def test_the_wake_up_rule_is_kept(client: redis.Redis) -> None:
    timers.replace(client, 1, 1, [("first", _at(1000))])
    assert client.lrange(timers.wake_key(), 0, -1) != []
    client.delete(timers.wake_key())
    timers.replace(client, 1, 2, [("first", _at(1000)), ("later", _at(5000))])
    assert client.lrange(timers.wake_key(), 0, -1) == []  # not earlier: no token
    timers.replace(client, 1, 3, [("later", _at(5000))])  # the earliest removed: no token
    assert client.lrange(timers.wake_key(), 0, -1) == []
    timers.replace(client, 1, 4, [("later", _at(5000)), ("earlier", _at(10))])
    (token,) = client.lrange(timers.wake_key(), 0, -1)
    assert int(float(token)) == _entries(client, 1)["earlier"]


def test_the_loops_put_back_still_works_beside_the_record(client: redis.Redis) -> None:
    timers.replace(client, 4, 1, [("x", _at(-10)), ("y", _at(60_000))])
    due, _ = timers.pop_due(client, int(time.time() * 1000), 10)
    assert due == [(4, "x")]
    timers.add(client, 4, [("x", _at(0))])  # a stopping worker puts what it popped back
    assert set(_entries(client, 4)) == {"x", "y"}
    due, _ = timers.pop_due(client, int(time.time() * 1000) + 1, 10)
    assert due == [(4, "x")]  # once


def test_redis_down_at_schedule_time_logs_and_returns(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    class Down:
        def register_script(self, *a: Any, **k: Any) -> Any:
            def run(*a: Any, **k: Any) -> Any:
                raise redis.ConnectionError("down")

            return run

    monkeypatch.setattr(timers, "client", lambda: Down())
    scheduling.enqueue_deadlines(1, [("k", _at(10))], 3)
    scheduling.enqueue_deadlines(1, [], 4)
    assert caplog.text.count("the sweep will enforce them") == 2


# ------------------------------------------------------------------------------------------
# Through the service layer: the changes of a Crisp game, scheduled on a real Redis
# ------------------------------------------------------------------------------------------
@pytest.fixture
def real_timers(
    live_calls: Any, monkeypatch: pytest.MonkeyPatch, client: redis.Redis
) -> list[tuple[int, list[tuple[str, datetime]], int | None]]:
    """The service layer's scheduling goes to the real timers (synchronously, on commit);
    every call is also recorded, with its version."""
    calls: list[tuple[int, list[tuple[str, datetime]], int | None]] = []

    def schedule(game_id: int, deadlines: Any, version: int | None = None) -> None:
        calls.append((game_id, list(deadlines), version))
        live_calls.scheduled.append((game_id, list(deadlines)))
        scheduling.enqueue_deadlines(game_id, list(deadlines), version)

    monkeypatch.setattr(sys.modules["games.scheduling"], "schedule_deadlines", schedule)
    return calls


@pytest.fixture
def game(start_game: Any, users: list[Any], django_capture_on_commit_callbacks: Any) -> Game:
    with django_capture_on_commit_callbacks(execute=True):
        return start_game(users[:3], timers={"memorise_ms": 0, "draw_seconds": DRAW_SECONDS})


def _mover(game: Game) -> Any:
    game.refresh_from_db()
    return game.seats.get(number=game.state["round"]["turn"]["seat"]).user


def _clock_key(calls: list[tuple[int, list[tuple[str, datetime]], int | None]]) -> str:
    """The draw clock the last change scheduled (in a turn's start delay it is not among the
    stored deadlines yet: it follows the silent ``may_start``)."""
    (key,) = [key for key, _due in calls[-1][1] if key.endswith(":timeout")]
    return key


def _turn(game: Game, fake_clock: Any, on_commit: Any, *, after_ms: int = 1500) -> None:
    """The mover draws ``after_ms`` into the turn and discards; their changes scheduled."""
    game.refresh_from_db()
    fake_clock.ms = game.state["round"]["turn"]["start_at"] + after_ms
    with on_commit(execute=True):
        act(game, _mover(game), {"type": "draw", "source": "deck"})
    fake_clock.advance(10)
    with on_commit(execute=True):
        act(game, _mover(game), {"type": "discard"})


def test_a_turn_that_ends_before_its_draw_clock_removes_the_clocks_entry(
    real_timers: Any,
    game: Game,
    fake_clock: Any,
    client: redis.Redis,
    django_capture_on_commit_callbacks: Any,
) -> None:
    clock_key = _clock_key(real_timers)
    assert clock_key in _entries(client, game.pk)
    _turn(game, fake_clock, django_capture_on_commit_callbacks)  # drawn after 1.5 s of 8
    game.refresh_from_db()
    assert real_timers[-1][2] == game.version  # the change's version is passed
    assert clock_key not in _entries(client, game.pk)  # no stale fire to come
    next_key = _clock_key(real_timers)
    assert next_key != clock_key
    # Exactly what the change left pending.
    assert set(_entries(client, game.pk)) == {key for key, _due in real_timers[-1][1]}
    assert next_key in _entries(client, game.pk)


def test_a_due_timer_still_fires_exactly_once(
    real_timers: Any,
    game: Game,
    fake_clock: Any,
    client: redis.Redis,
    django_capture_on_commit_callbacks: Any,
) -> None:
    key = _clock_key(real_timers)
    due = _entries(client, game.pk)[key]
    fake_clock.ms = due
    popped, _ = timers.pop_due(client, due, 10)
    assert popped == [(game.pk, key)]
    version = game.version
    with django_capture_on_commit_callbacks(execute=True):
        assert services.game_fire_deadline(game_id=game.pk, key=key)
        assert not services.game_fire_deadline(game_id=game.pk, key=key)  # a duplicate
    game.refresh_from_db()
    assert game.version == version + 1
    assert key not in _entries(client, game.pk)  # the fire's own change did not re-add it
    assert timers.pop_due(client, due, 10)[0] == []


def test_a_stale_entry_that_escapes_removal_is_still_a_no_op(
    real_timers: Any,
    game: Game,
    fake_clock: Any,
    client: redis.Redis,
    django_capture_on_commit_callbacks: Any,
) -> None:
    """Removal is only an optimisation: an entry popped before the change that resolved its
    key was scheduled fires, and the fire path's check under the row lock finds it stale."""
    key = _clock_key(real_timers)
    game.refresh_from_db()
    fake_clock.ms = game.state["round"]["turn"]["start_at"] + 1000
    act(game, _mover(game), {"type": "draw", "source": "deck"})  # not scheduled (no commit)
    fake_clock.advance(10)
    act(game, _mover(game), {"type": "discard"})
    game.refresh_from_db()
    version = game.version
    fake_clock.ms = _entries(client, game.pk)[key]
    assert not services.game_fire_deadline(game_id=game.pk, key=key)
    game.refresh_from_db()
    assert game.version == version


def test_a_change_leaving_no_timer_schedules_and_removes_the_games_entries(
    real_timers: Any, game: Game, client: redis.Redis, django_capture_on_commit_callbacks: Any
) -> None:
    """A finished game (the engine's last change leaves nothing pending) keeps no entry: the
    change is scheduled with an empty list (it used to be skipped), as of its version."""
    assert _entries(client, game.pk)
    game.refresh_from_db()
    with django_capture_on_commit_callbacks(execute=True), transaction.atomic():
        commit._announce(game.pk, game.version + 1, [], None, change=object())  # type: ignore[arg-type]
    assert real_timers[-1] == (game.pk, [], game.version + 1)
    assert _entries(client, game.pk) == {}


def test_a_lobby_change_leaves_the_timers_alone(
    real_timers: Any, game: Game, client: redis.Redis, django_capture_on_commit_callbacks: Any
) -> None:
    """A lobby change (a rename, "I'm back") passes no deadlines and no committed change: the
    engine's timers are as they were, so nothing is scheduled."""
    before, calls = _entries(client, game.pk), len(real_timers)
    with django_capture_on_commit_callbacks(execute=True), transaction.atomic():
        commit._announce(game.pk, game.version + 1, [])
    assert len(real_timers) == calls and _entries(client, game.pk) == before


def test_redis_down_when_scheduled_leaves_the_sweep_to_enforce_the_deadline(
    real_timers: Any,
    game: Game,
    fake_clock: Any,
    client: redis.Redis,
    monkeypatch: pytest.MonkeyPatch,
    django_capture_on_commit_callbacks: Any,
) -> None:
    stale = _clock_key(real_timers)

    class Down:
        def register_script(self, *a: Any, **k: Any) -> Any:
            def run(*a: Any, **k: Any) -> Any:
                raise redis.ConnectionError("down")

            return run

    with monkeypatch.context() as down:
        down.setattr(timers, "client", lambda: Down())
        _turn(game, fake_clock, django_capture_on_commit_callbacks)
    key = _clock_key(real_timers)
    assert set(_entries(client, game.pk)) == {stale}  # the turn's scheduling was lost
    game.refresh_from_db()
    at = clock.from_datetime(game.next_deadline_at)
    version = game.version
    assert services.game_sweep(now=clock.to_datetime(at - 1)) == 0
    fake_clock.ms = at
    with django_capture_on_commit_callbacks(execute=True):
        assert services.game_sweep() == 1
    game.refresh_from_db()
    assert game.version > version
    assert Event.objects.filter(game=game, type="timeout").count() == 1
    # Redis is back: the sweep's change is newer than the record, so its call replaces the
    # entry left behind (the first turn's clock) with the timers pending now.
    assert key not in _entries(client, game.pk)
    assert set(_entries(client, game.pk)) == {k for k, _due in real_timers[-1][1]}
    assert stale not in _entries(client, game.pk)
