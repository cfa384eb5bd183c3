"""Fixtures for the history tests: the games tests' users, fake clock, live-layer recorders and
``start_game`` (imported, so they are the same fixtures), plus a driver that plays random legal
games to their end through the service layer, and ``shared_db``: a module's random games played
once and read by all its tests."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from django.db import connection, transaction

from games import clock, services
from games.engines import engine_for
from games.models import Game
from tests.games import conftest as games_conftest
from tests.games.conftest import FakeClock

# The games tests' fixtures, the very same functions (pytest finds them by these names).
api = games_conftest.api
fake_clock = games_conftest.fake_clock
live_calls = games_conftest.live_calls
make_user = games_conftest.make_user
staff = games_conftest.staff
start_game = games_conftest.start_game
users = games_conftest.users
client_for = games_conftest.client_for

JUMPS = [0, 1, 700, 2000, 3001, 5000, 31_000]


def play(
    game: Game,
    fake_clock: FakeClock,
    rng: random.Random,
    steps: int = 3000,
    observe: Callable[[Game], None] | None = None,
    tolerant: bool = False,
) -> Game:
    """Random legal actions, clock jumps, timers fired and swept, until the game is over (or
    ``steps`` run out).  Calls crisp-like actions eagerly so games end in a few rounds: any
    action named ``call`` is taken when offered (a kind-neutral nudge, not a rule).
    ``observe(game)`` runs at the start and after every step that made a new version, at the
    instant of that step (each step makes at most one version).  ``tolerant``: a refused
    action is skipped (threads sharing the fake clock move time between a read and an act)."""
    seats = list(game.seats.order_by("number").select_related("user"))
    engine = engine_for(game.kind)
    seen = -1
    changed = True  # the row may differ from ``game``: read it again before the next step
    for _ in range(steps):
        if changed:
            game.refresh_from_db()
        changed = True
        if observe is not None and game.version != seen:
            seen = game.version
            observe(game)
        if game.status != Game.Status.PLAYING:
            break
        fake_clock.advance(rng.choice(JUMPS))
        roll = rng.random()
        # A timer or sweep that changed nothing leaves the row as read: no read again (the
        # same game either way; one query fewer per such step).
        if roll < 0.08 and game.deadlines:
            key = rng.choice(game.deadlines)["key"]
            changed = services.game_fire_deadline(game_id=game.pk, key=key)
            continue
        if roll < 0.16:
            changed = services.game_sweep() > 0
            continue
        # Each seat's legal actions, as ``selectors.game_legal_actions`` lists them (the
        # engine's, in wire form, at the clock's now), from one parse of the state instead of a
        # seat query and a parse per seat: the same options in the same order, so a seed plays
        # the same game (the selector itself is tested in tests/games).
        state, now = engine.GameState.from_json(game.state), clock.now_ms()
        options = [
            (s, a.to_wire()) for s in seats for a in engine.legal_actions(state, s.number, now)
        ]
        if not options:
            changed = False
            continue
        calls = [o for o in options if o[1].get("type") == "call"]
        seat, action = rng.choice(calls if calls and rng.random() < 0.7 else options)
        try:
            services.game_act(
                game=game, user=seat.user, action=action, expected_version=game.version
            )
        except services.ServiceError:
            if not tolerant:
                raise
    game.refresh_from_db()
    return game


@pytest.fixture
def finished_game(
    users: list[Any], start_game: Callable[..., Game], fake_clock: FakeClock
) -> Callable[..., Game]:
    """A random game of ``kind`` with ``n`` of the users (or ``players``), played to its end."""

    def make(
        seed: int = 0,
        n: int = 2,
        players: list[Any] | None = None,
        kind: str = "crisp",
        **kw: Any,
    ) -> Game:
        rng = random.Random(seed)
        if kind == "crisp":  # Crisp's timers and pile drawing make games varied and quick
            kw.setdefault("draw_seconds", 30)
            kw.setdefault("pile_draw", bool(seed % 2))
        g = start_game(players or users[:n], seed=f"hist-{seed}", kind=kind, **kw)
        g = play(g, fake_clock, rng)
        assert g.status == Game.Status.FINISHED, "the random game did not finish"
        return g

    return make


def seats_for(kind: str, seed: int) -> int:
    """A seat count the kind allows, varied by ``seed`` (at most the 8 test users)."""
    from games.engines import engine_for

    engine = engine_for(kind)
    high = min(engine.MAX_SEATS, 8)
    return engine.MIN_SEATS + seed % (high - engine.MIN_SEATS + 1)


@contextmanager
def shared_db(django_db_blocker: Any) -> Iterator[None]:
    """For a module-scoped fixture: games played once (through the service layer, as
    ``finished_game``, under ``playing()``) and read by every test of the module, instead of
    one game per test.

    The module's writes happen in one outer transaction, rolled back when the module is done;
    each test runs in a savepoint inside it (pytest-django's ``django_db``), so what a test
    writes -- even over a shared game -- is undone before the next one.  Mark the module
    ``xdist_group`` so that one worker plays its games, not each.
    """
    with django_db_blocker.unblock(), transaction.atomic():
        yield
        transaction.set_rollback(True)


@contextmanager
def playing() -> Iterator[FakeClock]:
    """While a module's shared games are played: a fake clock of their own and the live
    layer's stand-ins (``fake_clock`` and ``live_calls``, for a wider scope)."""
    clk = FakeClock()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("games.clock.now_ms", lambda: clk.ms)
        games_conftest.stand_in_live_layer(mp)
        # No savepoint per service call while the module's games are played: its transaction
        # is rolled back whole, and a call that failed fails the module (``play`` re-raises),
        # so no call's partial writes need undoing on their own.  In production each call is
        # its own transaction, never a savepoint; here SAVEPOINT and RELEASE were two round
        # trips of every step's five on PostgreSQL.  An error caught inside a call (a failing
        # stats hook: tests of their own, with savepoints) would leave the transaction
        # unusable: the module's games fail loudly then, never silently.
        mp.setattr(connection.features, "uses_savepoints", False)
        yield clk
    # The games' deferred foreign-key checks, run once here in the module's transaction.  Else
    # every test's teardown runs them (Django's ``TestCase`` checks constraints at each test's
    # end): on PostgreSQL inside the test's savepoint, whose rollback leaves the module's checks
    # pending again, so each test re-checked every row of every shared game (2-4 s a test).
    connection.check_constraints()
