"""One hand-over to the live thread per committed change (issue 25, session 20).

A change used to hand the process's live thread (``games.broadcast.Dispatcher``) up to three
jobs -- its broadcast, its timers, its "your move" wake-up -- each a wake-up of that thread and
its own Redis round trip.  Now the service layer's one on-commit callback hands them over
inside ``broadcast.one_job()``: one job, whose one publish carries the frames and the wake-up,
followed by the timers' ``EVALSHA``.  What must not change: the coalescing per game (a change
whose game already has a broadcast queued rides on it, in commit order), the retry of a failed
broadcast, and that a failure is logged, never raised into the committed request.

Real commits (``transaction=True``), the real live layer and the test run's Redis; every wait
is the dispatcher's ``drain`` (or a bounded wait for an event), never a guessed sleep.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

import pytest
import redis

from games import broadcast, selectors, services, timers
from games.models import Game
from tests.live.conftest import make_game, make_user

pytestmark = pytest.mark.django_db(transaction=True)

QUICK = {"memorise_ms": 0, "start_delay_ms": 0, "window_ms": 0, "draw_seconds": 30}


class Trail:
    """What reached the live layer, in order: each hand-over (a job queued for the live
    thread), each publish (`broadcast._send`'s messages) and each timers' call."""

    def __init__(self) -> None:
        self.handovers = 0
        self.sends: list[list[tuple[str, dict[str, Any]]]] = []
        self.order: list[str] = []

    def reset(self) -> None:
        self.handovers, self.sends[:], self.order[:] = 0, [], []

    def game_frames(self, send: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
        return [m for group, m in send if group.startswith("game.")]


@pytest.fixture
def trail(monkeypatch: pytest.MonkeyPatch) -> Trail:
    broadcast.dispatcher.drain()  # nothing of an earlier test in what this one counts
    seen = Trail()
    dispatcher = broadcast.dispatcher
    submit = dispatcher.submit

    def counting_submit(job: Any) -> None:
        if dispatcher._batch() is None:  # inside one_job() a submit joins the job
            seen.handovers += 1
        submit(job)

    real_send = broadcast._send

    def recording_send(messages: list[tuple[str, dict[str, Any]]]) -> None:
        seen.sends.append(list(messages))
        seen.order.append("publish")
        real_send(messages)

    real_replace = timers.replace

    def recording_replace(*args: Any, **kwargs: Any) -> bool:
        seen.order.append("timers")
        return real_replace(*args, **kwargs)

    monkeypatch.setattr(dispatcher, "submit", counting_submit)
    monkeypatch.setattr(broadcast, "_send", recording_send)
    monkeypatch.setattr(timers, "replace", recording_replace)
    return seen


def _players_and_game(trail: Trail) -> tuple[list[Any], Game]:
    """A started two-seat game, its set-up's hand-overs done and not counted."""
    players = [make_user(), make_user()]
    game = make_game(players, timers=QUICK)
    broadcast.dispatcher.drain()
    trail.reset()
    return players, game


def _step(game: Game, players: list[Any]) -> tuple[Any, bool]:
    """One action of the player whose turn it is (a discard if they may, else a draw);
    (the user who acted, whether the turn passed on)."""
    game.refresh_from_db()
    seat = game.state["round"]["turn"]["seat"]
    user = players[seat]
    legal = selectors.game_legal_actions(game=game, user=user)
    pick = next(
        (a for a in legal if a.get("type") == "discard"),
        next((a for a in legal if a.get("type") == "draw"), legal[0]),
    )
    services.game_act(game=game.pk, user=user, action=pick, expected_version=game.version)
    game.refresh_from_db()
    return user, game.state["round"]["turn"]["seat"] != seat


def _until_the_turn_passes(game: Game, players: list[Any], each: Callable[[bool], None]) -> None:
    for _ in range(10):
        _, passed = _step(game, players)
        each(passed)
        if passed:
            return
    raise AssertionError("the turn never passed on")


def test_a_change_is_one_hand_over_and_one_publish_before_its_timers(trail: Trail) -> None:
    players, game = _players_and_game(trail)
    turn_wakeups: list[list[str]] = []

    def check(passed: bool) -> None:
        broadcast.dispatcher.drain()
        # drain() itself is one hand-over: the change was exactly one more.
        assert trail.handovers == 2, trail.handovers
        (send,) = trail.sends
        frames = trail.game_frames(send)
        assert frames and {m["version"] for m in frames} == {game.version}
        wakeups = [group for group, m in send if m["type"] == "turns.changed"]
        if passed:
            turn_wakeups.append(wakeups)
        # The frames first (what the players wait for), then the timers' one EVALSHA.
        assert trail.order == ["publish", "timers"], trail.order
        trail.reset()

    _until_the_turn_passes(game, players, check)
    # The change that passed the turn woke both players' "your move" lists, in that publish.
    (wakeups,) = turn_wakeups
    assert sorted(wakeups) == sorted(broadcast.user_group(p.pk) for p in players)


def test_a_change_whose_game_has_a_broadcast_queued_rides_on_it_in_commit_order(
    trail: Trail,
) -> None:
    players, game = _players_and_game(trail)
    gate = threading.Event()
    broadcast.dispatcher.submit(lambda: gate.wait(60))  # the live thread busy meanwhile
    first = game.version
    try:
        _step(game, players)
        _step(game, players)
    finally:
        gate.set()
    broadcast.dispatcher.drain()
    # Two changes, two hand-overs (plus the gate's and the drain's): the second's broadcast
    # joined the first's queued one rather than making a job of its own.
    assert trail.handovers == 4, trail.handovers
    game.refresh_from_db()
    assert game.version == first + 2
    # One frame per group covers both versions (the first's job took the second's too), and
    # it went out before anything of the second change's own job.
    with_frames = [i for i, send in enumerate(trail.sends) if trail.game_frames(send)]
    assert with_frames == [0], trail.sends
    frames = trail.game_frames(trail.sends[0])
    assert {(m["prev_version"], m["version"]) for m in frames} == {(first, first + 2)}


def test_a_failed_publish_is_logged_not_raised_and_retried(
    trail: Trail, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    players, game = _players_and_game(trail)
    monkeypatch.setattr(broadcast, "RETRY_DELAYS", (0.05,))
    failing = {"left": 1}
    real_send = broadcast._send
    retried = threading.Event()

    def flaky(messages: list[tuple[str, dict[str, Any]]]) -> None:
        if failing["left"]:
            failing["left"] -= 1
            real_send(messages)  # the recorder
            raise redis.ConnectionError("redis hiccup")
        real_send(messages)
        retried.set()

    monkeypatch.setattr(broadcast, "_send", flaky)
    caplog.set_level(logging.ERROR, logger="games.broadcast")
    _step(game, players)  # committed; nothing raised into the caller
    broadcast.dispatcher.drain()
    assert [r for r in caplog.records if r.getMessage() == "live job failed"]
    # The failed publish was the change's one publish; its timers were scheduled anyway.
    assert trail.order[:2] == ["publish", "timers"], trail.order
    assert retried.wait(60)  # the broadcast again (read back from the table), a moment later
    broadcast.dispatcher.drain()
    game.refresh_from_db()
    assert {m["version"] for m in trail.game_frames(trail.sends[-1])} == {game.version}
