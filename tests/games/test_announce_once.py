"""A committed change registers ONE on-commit callback for everything it hands the live layer
(issue 25, session 20): its broadcast, its timers, its computer players' wake-ups, the "your
move" signal and wake-up (``commit._announce``, ``commit._announce_turns`` joining it), so the
live layer can take them as one job (``games.broadcast.one_job``; tests/live/
test_one_handover.py).  Each part is still looked up by name on commit (the stand-ins of
``conftest.live_calls`` record them) and stays robust on its own.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

import pytest
from django.db import transaction

from games import selectors, signals
from games.models import Game
from games.services import commit

from .conftest import act

pytestmark = pytest.mark.django_db


def _turn(game: Game) -> tuple[int, Any]:
    game.refresh_from_db()
    seat = game.state["round"]["turn"]["seat"]
    return seat, game.seats.get(number=seat).user


def _pass_the_turn(game: Game, on_commit: Any) -> list[Any]:
    """Act for the seat to move until the turn passes; the callbacks each change registered."""
    seat, user = _turn(game)
    registered = []
    for _ in range(10):
        legal = selectors.game_legal_actions(game=game, user=user)
        pick = next(
            (a for a in legal if a.get("type") == "discard"),
            next((a for a in legal if a.get("type") == "draw"), legal[0]),
        )
        with on_commit(execute=True) as callbacks:
            act(game, user, pick)
        registered.append(list(callbacks))
        if _turn(game)[0] != seat:
            return registered
    raise AssertionError("the turn never passed on")


def test_a_change_registers_one_callback_with_its_turns(
    users: list[Any],
    start_game: Any,
    fake_clock: Any,
    live_calls: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    game = start_game(users[:2], draw_seconds=30)
    fake_clock.advance(5000)
    newly: list[list[int]] = []

    def receiver(**kwargs: Any) -> None:
        newly.append(list(kwargs["user_ids"]))

    signals.your_move.connect(receiver)
    try:
        registered = _pass_the_turn(game, django_capture_on_commit_callbacks)
    finally:
        signals.your_move.disconnect(receiver)
    assert [len(callbacks) for callbacks in registered] == [1] * len(registered)
    # Everything still reached the live layer's functions, by name, on commit.
    versions = [v for _, v in live_calls.changed]
    assert versions[-len(registered) :] == list(
        range(versions[-1] - len(registered) + 1, versions[-1] + 1)
    )
    assert len(live_calls.scheduled) >= len(registered)
    nxt = _turn(game)[1]
    assert live_calls.turns and nxt.pk in live_calls.turns[-1]
    assert newly and newly[-1] == [nxt.pk]


def test_turns_in_a_savepoint_rolled_back_are_not_announced_with_the_change(
    users: list[Any], start_game: Any, live_calls: Any, django_capture_on_commit_callbacks: Any
) -> None:
    game = start_game(users[:2])
    turns = commit.Turns(newly=[], changed=[users[0].pk], deadline=None)
    live_calls.changed.clear()
    with django_capture_on_commit_callbacks(execute=True) as callbacks, transaction.atomic():
        commit._announce(game.pk, game.version, [])
        commit._announce_turns(game, turns)  # joins: same savepoint
        try:
            with transaction.atomic():
                commit._announce_turns(game, turns)  # its own: a savepoint of its own
                raise RuntimeError("rolled back")
        except RuntimeError:
            pass
    assert len(callbacks) == 1
    assert live_calls.changed == [(game.pk, game.version)]
    assert live_calls.turns == [[users[0].pk]]


def test_a_part_that_fails_is_logged_and_the_others_still_run(
    users: list[Any],
    start_game: Any,
    live_calls: Any,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    django_capture_on_commit_callbacks: Any,
) -> None:
    game = start_game(users[:2])

    def broken(*args: Any, **kwargs: Any) -> None:
        raise ConnectionError("redis down")

    monkeypatch.setattr(sys.modules["games.broadcast"], "game_changed", broken)
    turns = commit.Turns(newly=[], changed=[users[1].pk], deadline=None)
    caplog.set_level(logging.ERROR, logger="games.services.commit")
    with django_capture_on_commit_callbacks(execute=True), transaction.atomic():
        commit._announce(game.pk, game.version, [("r1:timeout", None)], [(1, 500)])
        commit._announce_turns(game, turns)
    assert [r for r in caplog.records if "failed" in r.getMessage()]
    assert live_calls.scheduled[-1] == (game.pk, [("r1:timeout", None)])
    assert live_calls.bots[-1] == (game.pk, game.version, [(1, 500)])
    assert live_calls.turns[-1] == [users[1].pk]
