"""A broadcast that fails is tried again; a burst too long to replay goes out as a snapshot."""

from __future__ import annotations

import json
from typing import Any

import pytest
from channels.db import database_sync_to_async

from games import broadcast, services
from tests.live.conftest import communicator, make_game, make_user, session_cookie
from tests.live.test_consumer import until

db = database_sync_to_async


@pytest.mark.django_db
def test_a_change_with_too_many_events_to_replay_is_broadcast_as_a_snapshot(
    scheduled: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    game = make_game([make_user(), make_user()])
    monkeypatch.setattr(broadcast, "MAX_CATCHUP_EVENTS", 0)
    messages = broadcast.change_messages(game.pk, game.version)
    assert messages
    for _group, message in messages:
        frame = json.loads(message["text"])
        assert frame["type"] == "snapshot" and frame["version"] == game.version
        assert message["version"] == game.version


@pytest.mark.django_db(transaction=True)
async def test_a_failed_broadcast_is_retried(
    scheduled: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    players = await db(lambda: [make_user(), make_user()])()
    game = await db(make_game)(
        players, timers={"memorise_ms": 0, "start_delay_ms": 0, "window_ms": 0}
    )
    comm = communicator(game.pk, cookie=await db(session_cookie)(players[0]))
    await comm.connect()
    await until(comm, "snapshot")

    monkeypatch.setattr(broadcast, "RETRY_DELAYS", (0.05, 0.05))
    real = broadcast.change_messages
    calls: list[str] = []

    def flaky(changes: Any) -> Any:
        # The first attempt builds from the committed change (no read) and fails.
        calls.append("committed")
        raise ConnectionError("redis hiccup")

    def read(game_id: int, version: int) -> Any:
        calls.append("read")
        return real(game_id, version)

    monkeypatch.setattr(broadcast, "committed_messages", flaky)
    monkeypatch.setattr(broadcast, "change_messages", read)
    await db(services.game_act)(
        game=game.pk,
        user=players[1],
        action={"type": "look"},
        expected_version=None,
        idempotency_key=None,
    )
    update = await until(comm, "update")
    assert update["version"] == game.version + 1
    assert calls == ["committed", "read"]  # the retry reads the table
    await comm.disconnect()
