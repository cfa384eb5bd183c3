"""Fixtures for the games tests: users, a controllable clock, and recorders standing in for
the live layer (``games.broadcast`` / ``games.scheduling``) so on-commit effects can be
asserted."""

from __future__ import annotations

import itertools
import sys
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

_counter = itertools.count(1)


def new_user(username: str | None = None, **extra: Any) -> Any:
    """A user with a unique name (``make_user``'s, callable where no fixture is: a module's
    shared games, tests/history/conftest.py ``shared_db``)."""
    name = username or f"player{next(_counter)}"
    return get_user_model().objects.create_user(
        username=name, password="pw-not-secret-123", **extra
    )


@pytest.fixture
def make_user(db: None) -> Callable[..., Any]:
    return new_user


@pytest.fixture
def users(make_user: Callable[..., Any]) -> list[Any]:
    return [make_user() for _ in range(8)]


@pytest.fixture
def staff(make_user: Callable[..., Any]) -> Any:
    return make_user(is_staff=True, is_superuser=True)


@dataclass
class FakeClock:
    """Server time the tests control: ``games.clock.now_ms`` reads ``ms``."""

    ms: int = 1_800_000_000_000

    def advance(self, delta: int) -> int:
        self.ms += delta
        return self.ms


@pytest.fixture
def fake_clock(monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    clk = FakeClock()
    monkeypatch.setattr("games.clock.now_ms", lambda: clk.ms)
    return clk


@dataclass
class LiveCalls:
    """What the service layer handed to the live layer (after commit only)."""

    changed: list[tuple[int, int]] = field(default_factory=list)
    scheduled: list[tuple[int, list[tuple[str, Any]]]] = field(default_factory=list)
    bots: list[tuple[int, int, list[tuple[int, int]]]] = field(default_factory=list)
    #: The people told their "your move" list changed (``broadcast.turns_changed``).
    turns: list[list[int]] = field(default_factory=list)


@pytest.fixture(autouse=True)
def live_calls(monkeypatch: pytest.MonkeyPatch) -> LiveCalls:
    """Stand-ins for ``games.broadcast`` and ``games.scheduling``: the services import them
    through ``importlib`` (which looks in ``sys.modules`` first), so these record instead of
    sending."""
    return stand_in_live_layer(monkeypatch)


def stand_in_live_layer(monkeypatch: pytest.MonkeyPatch) -> LiveCalls:
    """``live_calls``'s stand-ins, put in place with ``monkeypatch`` (of any scope)."""
    calls = LiveCalls()
    broadcast = types.ModuleType("games.broadcast")
    broadcast.game_changed = lambda game_id, version, change=None: calls.changed.append(  # type: ignore[attr-defined]
        (game_id, version)
    )
    broadcast.turns_changed = lambda user_ids: calls.turns.append(list(user_ids))  # type: ignore[attr-defined]
    scheduling = types.ModuleType("games.scheduling")
    scheduling.schedule_deadlines = lambda game_id, deadlines, version=None: calls.scheduled.append(  # type: ignore[attr-defined]
        (game_id, list(deadlines))
    )
    scheduling.schedule_bots = lambda game_id, version, moves: calls.bots.append(  # type: ignore[attr-defined]
        (game_id, version, list(moves))
    )
    monkeypatch.setitem(sys.modules, "games.broadcast", broadcast)
    monkeypatch.setitem(sys.modules, "games.scheduling", scheduling)
    return calls


def client_for(user: Any) -> APIClient:
    c = APIClient()
    c.force_authenticate(user)
    return c


@pytest.fixture
def api() -> Callable[[Any], APIClient]:
    return client_for


@pytest.fixture
def start_game(fake_clock: FakeClock) -> Callable[..., Any]:
    """A started game of the given users (the first is the host), at the fake clock's now."""
    return new_game


def new_game(
    players: list[Any],
    *,
    seed: str = "test-seed",
    kind: str = "crisp",
    private: bool = False,
    timers: dict[str, int] | None = None,
    **settings: Any,
) -> Any:
    """``start_game``'s game, callable where no fixture is (the clock: whatever patches
    ``games.clock.now_ms``)."""
    from games import services

    if kind == "crisp":
        settings = {"target_score": 50, **settings}
    game = services.game_create(host=players[0], kind=kind, settings=settings, private=private)
    for p in players[1:]:
        services.game_join(game=game, user=p, invite_code=game.invite_code)
    services.game_start(game=game, user=players[0], seed=seed, timers=timers)
    game.refresh_from_db()
    return game


def act(game: Any, user: Any, action: dict[str, Any], **kw: Any) -> Any:
    from games import services

    game.refresh_from_db()
    kw.setdefault("expected_version", game.version)
    return services.game_act(game=game, user=user, action=action, **kw)
