"""`presence.touch` sends every touch of one loop iteration in one transaction.

Why: each socket's heartbeat was its own MULTI/EXEC round trip every REFRESH_SECONDS (90
sockets: 18 a second, 6.6 % of a daphne's GIL time and more in syscalls; bench/RESULTS.md,
session 14, second round). The heartbeats now wake on a common beat (`next_beat_in`) and
their touches share one send. What each caller learns must be what its own touch said, a
touch cancelled before the send must not be sent (a closed socket stops being refreshed at
once), and a Redis failure must reach every caller (each reports it, rate-limited).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from redis import asyncio as aioredis

from games import presence

from .conftest import presence_game


@pytest.mark.usefixtures("fresh_clients")
async def test_touches_of_one_iteration_share_one_send_and_each_gets_its_own_change(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sends: list[int] = []
    real_send = presence._Touches._send

    async def counted(self: Any) -> None:
        sends.append(len(self.waiting))
        await real_send(self)

    monkeypatch.setattr(presence._Touches, "_send", counted)
    game, other = presence_game(), presence_game()
    changes = await asyncio.gather(
        presence.touch(game, 0, "seat0-a", person="u1"),
        presence.touch(game, None, "watcher-a"),
        presence.touch(game, 1, "seat1-a"),
        presence.touch(other, None, "watcher-b"),
    )
    assert sends == [4]
    seat0, watcher, seat1, elsewhere = changes
    # One transaction, in order: each touch sees the table as its own commands left it.
    assert (seat0.seats, seat0.spectators, seat0.seats_changed) == ({"0": 1}, 0, True)
    assert (watcher.seats, watcher.spectators) == ({"0": 1}, 1)
    assert watcher.spectators_changed and not watcher.seats_changed
    assert (seat1.seats, seat1.spectators, seat1.seats_changed) == ({"0": 1, "1": 1}, 1, True)
    assert (elsewhere.seats, elsewhere.spectators) == ({}, 1)
    # A refresh of known members changes nothing; alone, it is a send of its own.
    again = await presence.touch(game, 0, "seat0-a", person="u1")
    assert not again.seats_changed and not again.spectators_changed
    assert sends == [4, 1]
    for seat, name in ((0, "seat0-a"), (None, "watcher-a"), (1, "seat1-a")):
        await presence.leave(game, seat, name)
    await presence.leave(other, None, "watcher-b")


@pytest.mark.usefixtures("fresh_clients")
async def test_a_touch_cancelled_before_the_send_is_not_sent() -> None:
    game = presence_game()
    kept = asyncio.ensure_future(presence.touch(game, 0, "stays"))
    dropped = asyncio.ensure_future(presence.touch(game, 1, "closed"))
    await asyncio.sleep(0)  # both queued, the send not yet run
    dropped.cancel()
    change = await kept
    done, _ = await asyncio.wait([dropped], timeout=60)  # a hang guard
    assert done and dropped.cancelled()
    assert change.seats == {"0": 1}
    assert (await presence.touch(game, None, "probe")).seats == {"0": 1}  # never registered
    await presence.leave(game, 0, "stays")
    await presence.leave(game, None, "probe")


@pytest.mark.usefixtures("fresh_clients")
async def test_a_redis_failure_reaches_every_touch_of_the_send(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    dead = aioredis.Redis.from_url("redis://127.0.0.1:1/0")  # nothing listens there
    monkeypatch.setattr(presence, "client", lambda: dead)
    results = await asyncio.gather(
        presence.touch(presence_game(), 0, "a"),
        presence.touch(presence_game(), None, "b"),
        return_exceptions=True,
    )
    assert all(isinstance(r, presence.UNAVAILABLE) for r in results), results
    await dead.aclose()


def test_heartbeats_wake_on_a_common_beat(monkeypatch: pytest.MonkeyPatch) -> None:
    class Clock:
        def __init__(self, now: float) -> None:
            self.now = now

        def time(self) -> float:
            return self.now

    monkeypatch.setattr(presence, "REFRESH_SECONDS", 5)
    for now in (100.0, 101.2, 104.999):
        assert 0 < presence.next_beat_in(Clock(now)) <= 5  # type: ignore[arg-type]
        assert (now + presence.next_beat_in(Clock(now))) == pytest.approx(105.0)  # type: ignore[arg-type]
