"""Fixtures of the notifications tests: the games tests' users, clock, started games and
live-layer stand-ins (``tests/games/conftest.py``), and a mail outbox per test."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.games.conftest import (  # noqa: F401 - fixtures
    api,
    fake_clock,
    live_calls,
    make_user,
    start_game,
    users,
)


@pytest.fixture
def notify_live(settings: Any) -> None:
    """Live games notify too, for these tests: what a notification says does not depend on the
    pace, and the leak kit's tables (each kind's live menu) play far more moves per game than a
    turn-based game's tests would. The path of a real turn-based game, with the default
    ``CRISP_NOTIFY_PACES``, is ``test_integration.py``'s."""
    settings.CRISP_NOTIFY_PACES = ("live", "turn_based")


@pytest.fixture
def move(fake_clock: Any) -> Callable[[Any, Any], Any]:  # noqa: F811 - the fixture above
    """Play a legal move of ``user``'s seat through the service layer."""
    from games import services
    from games.engines import engine_for
    from games.models import Seat

    def play(game: Any, user: Any) -> Any:
        game.refresh_from_db()
        engine = engine_for(game.kind)
        seat = Seat.objects.get(game=game, user=user).number
        state = engine.GameState.from_json(game.state)
        action = engine.legal_actions(state, seat, fake_clock.ms)[0]
        return services.game_act(
            game=game, user=user, action=action.to_wire(), expected_version=game.version
        )

    return play


@pytest.fixture
def push_service(settings: Any) -> Any:
    """The local push service, with the site's VAPID keys set and http endpoints allowed."""
    from tests.notifications.push_endpoint import push_service as serve
    from tests.notifications.push_endpoint import vapid_pair

    settings.VAPID_PUBLIC_KEY, settings.VAPID_PRIVATE_KEY = vapid_pair()
    settings.VAPID_SUBJECT = "mailto:admin@example.com"
    settings.CRISP_PUSH_ALLOW_HTTP = True
    yield from serve()


@pytest.fixture
def queued(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """What the receiver hands to Celery, the broker left out: ``(task, args, countdown)``; a
    test runs them as the worker would (``task(*args)``)."""
    from notifications import tasks

    calls: list[Any] = []
    digest, push = tasks.mail_digest, tasks.push_your_move
    monkeypatch.setattr(
        digest, "apply_async", lambda args, countdown=None: calls.append((digest, args, countdown))
    )
    monkeypatch.setattr(push, "delay", lambda *args: calls.append((push, args, None)))
    return calls
