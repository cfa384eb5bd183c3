"""A turn-based game's deadline through the real timers (issue 26): a Celery worker's timer loop
(games/timers.py), the Redis sorted set and the service layer, no sweep (no beat running).

The game is started with its day per move shortened to a few seconds (``game_start(timers=...)``,
the test-only override the engine accepts), so the worker's loop is what must fire each
deadline, and each exactly once.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from games import services
from games.models import EngineCall, Event, Game
from tests import processes as live
from tests.live.conftest import make_user

pytestmark = [pytest.mark.live, pytest.mark.django_db(transaction=True), pytest.mark.timeout(240)]

TURN_SECONDS = 3
WAIT = 60


def test_the_worker_fires_a_turn_based_deadline_once(log_dir: Path) -> None:
    users = [make_user() for _ in range(2)]
    game = services.game_create(
        host=users[0], kind="cribbage", settings={"pace": "turn_based", "turn_seconds": 43_200}
    )
    services.game_join(game=game.pk, user=users[1])
    worker = live.celery_worker(log_dir)
    with live.running(worker):
        live.wait_until(lambda: "ready." in worker.log(), 60, "the worker to be ready")
        services.game_start(game=game.pk, user=users[0], timers={"turn_seconds": TURN_SECONDS})
        game.refresh_from_db()
        keys = [d["key"] for d in game.deadlines]
        assert keys == ["r1:lay:0", "r1:lay:1"]
        timed_out = Event.objects.filter(
            game=game, type="laid_away", data__round=1, data__timeout=True
        )
        live.wait_until(lambda: timed_out.count() == 2, WAIT, "both lay-aways to time out")
        # The next move's deadline (the play's first card) is fired by the loop in its turn.
        live.wait_until(
            lambda: (
                Event.objects.filter(game=game, data__timeout=True)
                .exclude(type="laid_away")
                .exists()
            ),
            WAIT,
            "the first play to time out",
        )
    assert timed_out.count() == 2
    fired = EngineCall.objects.filter(game=game, call="fire")
    # Each key changed the game once at most (both lay-aways are due at one instant: the first
    # timer applies both, the second finds its key stale and writes nothing).
    assert fired.filter(key__in=keys).count() == 1
    assert "sweep fired" not in worker.log()
    game.refresh_from_db()
    assert game.status == Game.Status.PLAYING
