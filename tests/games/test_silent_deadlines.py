"""Silent deadlines (issue 13): Crisp's ``may_start`` and ``window_closed`` get no timer and no
change of their own.

Their only effects -- the next player may draw from the turn's ``start_at``; a seat may no
longer call crisp after its window's ``closes_at`` -- are in every view already, so the service
layer schedules what comes *after* them (the draw clock's timeout) and lets the next change
apply them. These tests pin that the game is the same as with a timer: the same events at the
same instants, the same state, timers and computer players still on time.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.conf import settings

from games import services
from games.engines import engine_for
from games.models import Event, Game

from .conftest import act

pytestmark = pytest.mark.django_db

DRAW_SECONDS = 30


def _turn(game: Game) -> dict[str, Any]:
    game.refresh_from_db()
    return game.state["round"]["turn"]


def _user_at(game: Game, seat: int) -> Any:
    return game.seats.get(number=seat).user


def _one_turn(game: Game, fake_clock: Any, on_commit: Any = None) -> dict[str, Any]:
    """The mover draws and discards (running the discard's on-commit work if `on_commit` is
    pytest-django's capture fixture); returns the next turn, in its start delay."""
    mover = _user_at(game, _turn(game)["seat"])
    fake_clock.advance(10)
    act(game, mover, {"type": "draw", "source": "deck"})
    fake_clock.advance(10)
    if on_commit is None:
        act(game, mover, {"type": "discard"})
    else:
        with on_commit(execute=True):
            act(game, mover, {"type": "discard"})
    turn = _turn(game)
    assert turn["phase"] == "start" and turn["start_at"] > fake_clock.ms
    return turn


@pytest.fixture
def game(start_game: Any, users: list[Any]) -> Game:
    return start_game(users[:4], timers={"memorise_ms": 0, "draw_seconds": DRAW_SECONDS})


def test_may_start_and_the_window_get_no_timer_but_the_draw_clock_after_them_does(
    game: Game, fake_clock: Any, live_calls: Any, django_capture_on_commit_callbacks: Any
) -> None:
    turn = _one_turn(game, fake_clock, django_capture_on_commit_callbacks)
    game_id, timers = live_calls.scheduled[-1]
    assert game_id == game.pk
    keys = {key: due for key, due in timers}
    assert not any(key.endswith(":start") for key in keys)  # no may_start timer
    assert not any(key.endswith(":window") for key in keys)  # no window_closed timer
    timeout_key = f"r1:t{turn['no']}:d1:timeout"
    due_ms = int(keys[timeout_key].timestamp() * 1000)
    assert due_ms == turn["start_at"] + DRAW_SECONDS * 1000 + 1  # R18: from start_at
    # The stored deadlines still list both (views show them); the sweep's index skips them.
    assert any(d["kind"] == "may_start" for d in game.deadlines)
    assert any(d["kind"] == "window_closed" for d in game.deadlines)
    assert int(game.next_deadline_at.timestamp() * 1000) == due_ms


def _window(game: Game) -> dict[str, Any]:
    game.refresh_from_db()
    (window,) = game.state["round"]["windows"]
    return window


def test_the_next_change_closes_the_window_at_its_own_instant(game: Game, fake_clock: Any) -> None:
    turn = _one_turn(game, fake_clock)
    window = _window(game)
    fake_clock.ms = window["closes_at"] + 250  # no timer ran at the close
    res = act(game, _user_at(game, turn["seat"]), {"type": "draw", "source": "deck"})
    closed = next(e for e in res.events if e.type == "window_closed")
    assert closed.data == {
        "seat": window["seat"],
        "turn": window["turn_no"],
        "at": window["closes_at"] + 1,
    }  # the boundary still counted
    assert [e.type for e in res.events] == ["draw_ready", "window_closed", "draw"]
    assert _turn(game)["phase"] == "play" and game.state["round"]["windows"] == []


def test_a_call_after_the_close_is_refused_and_one_at_the_boundary_counts(
    game: Game, fake_clock: Any
) -> None:
    turn = _one_turn(game, fake_clock)
    window = _window(game)
    caller = _user_at(game, window["seat"])
    fake_clock.ms = window["closes_at"] + 1
    with pytest.raises(services.ServiceError):
        act(game, caller, {"type": "call"}, expected_version=None)
    game.refresh_from_db()
    assert game.state["round"]["caller"] is None

    other = _one_turn(game, fake_clock)  # the next seat's turn opens its own window
    assert other["seat"] != turn["seat"]
    window = _window(game)
    fake_clock.ms = window["closes_at"]  # R18: the boundary instant still belongs to the seat
    act(game, _user_at(game, window["seat"]), {"type": "call"}, expected_version=None)
    game.refresh_from_db()
    assert game.state["round"]["caller"] == window["seat"]


def test_the_draw_clock_timer_applies_may_start_first_each_at_its_instant(
    game: Game, fake_clock: Any
) -> None:
    turn = _one_turn(game, fake_clock)
    version = game.version
    engine = engine_for(game.kind)
    before = engine.GameState.from_json(game.state)
    due = turn["start_at"] + DRAW_SECONDS * 1000 + 1
    fake_clock.ms = due + 7  # a little late, as timers are
    assert services.game_fire_deadline(game_id=game.pk, key=f"r1:t{turn['no']}:d1:timeout")
    game.refresh_from_db()
    assert game.version == version + 1  # one change, not one per deadline
    rows = list(Event.objects.filter(game=game, version=game.version).order_by("seq"))
    ready = next(r for r in rows if r.type == "draw_ready")
    timeout = next(r for r in rows if r.type == "timeout")
    assert ready.data["at"] == turn["start_at"]  # the engine's instant, not the timer's
    assert ready.data["deadline"] == turn["start_at"] + DRAW_SECONDS * 1000
    assert timeout.data["at"] == due
    # Exactly what the engine gives when every deadline runs at its own instant.
    expected, events = engine.advance(before, due + 7)
    assert game.state == expected.to_json()
    assert [r.type for r in rows] == [e.type for e in events]


def test_a_stale_draw_clock_timer_changes_nothing(game: Game, fake_clock: Any) -> None:
    turn = _one_turn(game, fake_clock)
    fake_clock.ms = turn["start_at"] + 1500
    mover = _user_at(game, turn["seat"])
    act(game, mover, {"type": "draw", "source": "deck"})
    act(game, mover, {"type": "discard"})
    game.refresh_from_db()
    version = game.version
    fake_clock.ms = turn["start_at"] + DRAW_SECONDS * 1000 + 1
    assert not services.game_fire_deadline(game_id=game.pk, key=f"r1:t{turn['no']}:d1:timeout")
    game.refresh_from_db()
    assert game.version == version


def test_an_action_after_start_at_applies_may_start_at_its_own_instant(
    game: Game, fake_clock: Any
) -> None:
    turn = _one_turn(game, fake_clock)
    fake_clock.ms = turn["start_at"] + 567  # no timer ran in between (the window is open)
    res = act(game, _user_at(game, turn["seat"]), {"type": "draw", "source": "deck"})
    assert [e.type for e in res.events] == ["draw_ready", "draw"]
    assert res.events[0].data["at"] == turn["start_at"]
    assert res.events[1].data["at"] == turn["start_at"] + 567


def test_a_draw_before_start_at_is_still_refused(game: Game, fake_clock: Any) -> None:
    turn = _one_turn(game, fake_clock)
    fake_clock.ms = turn["start_at"] - 1
    with pytest.raises(services.ServiceError):
        act(game, _user_at(game, turn["seat"]), {"type": "draw", "source": "deck"})


def test_a_computer_player_is_woken_after_the_start_delay(
    users: list[Any], fake_clock: Any, live_calls: Any, django_capture_on_commit_callbacks: Any
) -> None:
    for n in range(40):  # a deal whose first turn is the host's, so a bot moves next
        game = services.game_create(host=users[0], settings={"target_score": 50})
        for _ in range(3):
            services.game_add_bot(game=game, host=users[0], level="easy")
        services.game_start(game=game, user=users[0], seed=f"silent-{n}", timers={"memorise_ms": 0})
        game.refresh_from_db()
        if game.state["round"]["turn"]["seat"] == 0:
            break
        services.game_abandon(game=game, user=users[0])
    else:
        pytest.fail("no deal with the host first")
    fake_clock.advance(10)
    act(game, users[0], {"type": "draw", "source": "deck"})
    with django_capture_on_commit_callbacks(execute=True):
        act(game, users[0], {"type": "discard"})
    turn = _turn(game)
    game_id, version, moves = live_calls.bots[-1]
    assert (game_id, version) == (game.pk, game.version)
    # Woken (also) a think time after start_at, when its draw is open: no change comes then.
    low, high = settings.CRISP_BOT_THINK_MS
    delay = turn["start_at"] - fake_clock.ms
    assert any(seat == turn["seat"] and delay + low <= wake < delay + high for seat, wake in moves)
