"""A tick's touches run as one script server-side (`presence._TOUCH`, session 18).

Why: main's transaction queued 6-7 commands per socket and parsed their replies in Python;
at 1,000 sockets that burst held the event loop for tens of ms every beat. The script must
leave the same keys, scores and TTLs (games.tasks and the sweep read them), prune expired
members, say per touch what changed with the table as that touch left it (an unchanged touch
comes back as a bare ``0``: its table is rebuilt from the game's previous touch), and survive
Redis forgetting it (``NOSCRIPT`` after ``SCRIPT FLUSH`` or a restart).
"""

from __future__ import annotations

import asyncio
import json

import pytest
import redis

from games import presence

from .conftest import presence_game


@pytest.mark.usefixtures("fresh_clients")
async def test_same_keys_scores_and_ttls_as_the_commands_it_replaces(
    redis_client: redis.Redis,
) -> None:
    game = presence_game()
    before = presence._now_ms()
    await asyncio.gather(
        presence.touch(game, 2, "seat-a", person="u7"), presence.touch(game, None, "watch-a")
    )
    after = presence._now_ms()
    seats, spectators = presence._key(game), presence._spectators_key(game)
    ttl = presence.TTL_SECONDS * 1000
    score = redis_client.zscore(seats, "2|seat-a")
    assert score is not None and before + ttl <= score <= after + ttl
    assert redis_client.zrange(seats, 0, -1) == [b"2|seat-a"]
    assert redis_client.zrange(spectators, 0, -1) == [b"watch-a"]
    assert redis_client.zscore(spectators, "watch-a") == score
    for key in (seats, spectators):
        assert 2 * ttl - 5000 < redis_client.pttl(key) <= 2 * ttl
    # Online until the member would expire; never moved earlier (GT).
    assert redis_client.zscore(presence._online_key(), "u7") == score
    redis_client.zadd(presence._online_key(), {"u7": score + 10**7})
    await presence.touch(game, 2, "seat-a", person="u7")
    assert redis_client.zscore(presence._online_key(), "u7") == score + 10**7
    redis_client.zrem(presence._online_key(), "u7")
    await presence.leave(game, 2, "seat-a")
    await presence.leave(game, None, "watch-a")


@pytest.mark.usefixtures("fresh_clients")
async def test_each_touch_of_a_send_sees_the_table_its_own_refresh_left(
    redis_client: redis.Redis,
) -> None:
    game, other = presence_game(), presence_game()
    await asyncio.gather(presence.touch(game, 0, "s0"), presence.touch(game, None, "w0"))
    # One send: known members around a newcomer, and another table in between.
    first, elsewhere, joined, again, watcher = await asyncio.gather(
        presence.touch(game, 0, "s0"),
        presence.touch(other, 3, "o3"),
        presence.touch(game, 1, "s1"),
        presence.touch(game, 0, "s0"),
        presence.touch(game, None, "w0"),
    )
    assert (first.seats, first.spectators) == ({"0": 1}, 1)
    assert not first.seats_changed and not first.spectators_changed
    assert (elsewhere.seats, elsewhere.spectators, elsewhere.seats_changed) == ({"3": 1}, 0, True)
    assert (joined.seats, joined.spectators) == ({"0": 1, "1": 1}, 1)
    assert joined.seats_changed and not joined.spectators_changed
    for unchanged in (again, watcher):  # after the newcomer: its table, no change of their own
        assert (unchanged.seats, unchanged.spectators) == ({"0": 1, "1": 1}, 1)
        assert not unchanged.seats_changed and not unchanged.spectators_changed
    # Two sockets on one seat count twice; the summary is the frame's fields.
    two = await presence.touch(game, 1, "s1-tab2")
    assert two.summary() == {"seats": {"0": 1, "1": 2}, "spectators": 1}
    for seat, name in ((0, "s0"), (None, "w0"), (1, "s1"), (1, "s1-tab2")):
        await presence.leave(game, seat, name)
    await presence.leave(other, 3, "o3")


@pytest.mark.usefixtures("fresh_clients")
async def test_a_tick_prunes_expired_members_and_says_so(redis_client: redis.Redis) -> None:
    game = presence_game()
    await asyncio.gather(presence.touch(game, 0, "alive"), presence.touch(game, None, "w-alive"))
    gone = presence._now_ms() - 1  # a process that died without a goodbye
    redis_client.zadd(presence._key(game), {"1|ghost": gone})
    first, second = await asyncio.gather(
        presence.touch(game, 0, "alive"), presence.touch(game, None, "w-alive")
    )
    assert (first.seats, first.seats_changed, first.spectators_changed) == ({"0": 1}, True, False)
    assert (second.seats, second.seats_changed) == ({"0": 1}, False)  # pruned once, said once
    assert redis_client.zrange(presence._key(game), 0, -1) == [b"0|alive"]
    redis_client.zadd(presence._spectators_key(game), {"w-ghost-1": gone, "w-ghost-2": gone})
    pruned = await presence.touch(game, 0, "alive")
    assert (pruned.spectators, pruned.spectators_changed, pruned.seats_changed) == (1, True, False)
    await presence.leave(game, 0, "alive")
    await presence.leave(game, None, "w-alive")


@pytest.mark.usefixtures("fresh_clients")
async def test_the_script_is_loaded_again_after_redis_forgets_it(
    redis_client: redis.Redis,
) -> None:
    game = presence_game()
    assert (await presence.touch(game, 0, "s0")).seats_changed
    redis_client.script_flush()  # what a Redis restart also does
    change = await presence.touch(game, 1, "s1")
    assert (change.seats, change.seats_changed) == ({"0": 1, "1": 1}, True)
    assert redis_client.script_exists(presence._scripts[presence._TOUCH].sha) == [True]
    await presence.leave(game, 0, "s0")
    await presence.leave(game, 1, "s1")


@pytest.mark.usefixtures("fresh_clients")
async def test_a_touch_cancelled_in_flight_returns_only_after_its_send_landed(
    monkeypatch: pytest.MonkeyPatch, redis_client: redis.Redis
) -> None:
    """A closing socket's `leave` must not run before its last refresh lands (a ghost)."""
    game = presence_game()
    in_flight, release = asyncio.Event(), asyncio.Event()
    real = presence._script

    def gated(client: object, source: str) -> object:
        script = real(client, source)  # type: ignore[arg-type]

        async def call(*args: object, **kwargs: object) -> object:
            in_flight.set()
            await release.wait()
            return await script(*args, **kwargs)

        return call

    monkeypatch.setattr(presence, "_script", gated)
    task = asyncio.ensure_future(presence.touch(game, 0, "closing"))
    await asyncio.wait_for(in_flight.wait(), 10)
    task.cancel()
    for _ in range(5):
        await asyncio.sleep(0)
    assert not task.done()  # still waiting for its send
    release.set()
    done, _ = await asyncio.wait([task], timeout=10)
    assert done and task.cancelled()
    assert redis_client.zrange(presence._key(game), 0, -1) == [b"0|closing"]  # landed first
    await presence.leave(game, 0, "closing")


@pytest.mark.usefixtures("fresh_clients")
async def test_a_tick_reads_the_run_id_once_for_every_socket(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each socket asks for the run id right after its touch, when the cache is stale: one
    read per tick (in the touches' own call), not one `INFO` per socket."""
    game = presence_game()
    infos: list[str] = []
    real_info = presence.client().info

    async def info(section: str) -> dict[str, object]:
        infos.append(section)
        return await real_info(section)

    monkeypatch.setattr(presence.client(), "info", info)

    async def beat(seat: int) -> str:
        await presence.touch(game, seat, f"s{seat}")
        return await presence.server_run_id()

    run_ids = await asyncio.gather(*(beat(seat) for seat in range(8)))
    assert infos == [] and len(set(run_ids)) == 1 and run_ids[0]
    presence._run_ids.clear()  # stale, and nobody touching: concurrent askers share one INFO
    assert await asyncio.gather(*(presence.server_run_id() for _ in range(8))) == run_ids
    assert infos == ["server"]
    for seat in range(8):
        await presence.leave(game, seat, f"s{seat}")


def test_a_games_sockets_beat_on_its_own_phase_of_the_period(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    class Clock:
        def __init__(self, now: float) -> None:
            self.now = now

        def time(self) -> float:
            return self.now

    monkeypatch.setattr(presence, "REFRESH_SECONDS", 5)
    games = range(1000, 1040)
    phases = {presence.beat_phase(game) for game in games}
    assert phases == {k / presence.BEAT_PHASES for k in range(presence.BEAT_PHASES)}
    for game in games[:10]:
        phase = presence.beat_phase(game)
        assert phase == presence.beat_phase(game)  # fixed: its beats stay a period apart
        at = 100.0
        for _ in range(3):
            wait = presence.next_beat_in(Clock(at), phase)  # type: ignore[arg-type]
            assert 0 < wait <= 5
            at += wait
            beats = (at - 5 * phase) / 5  # a whole number of periods after its phase's origin
            assert beats == pytest.approx(round(beats), abs=1e-9)


@pytest.mark.usefixtures("fresh_clients")
async def test_a_seat_expiring_is_announced_by_the_next_heartbeat(
    monkeypatch: pytest.MonkeyPatch, redis_client: redis.Redis
) -> None:
    """The consumer's own heartbeat: a tick that prunes a gone seat tells the table."""
    from channels.layers import InMemoryChannelLayer

    from games import broadcast
    from games.consumers import GameConsumer

    monkeypatch.setattr(presence, "REFRESH_SECONDS", 0.05)
    game = presence_game()
    layer = InMemoryChannelLayer()
    listener = await layer.new_channel()
    group, _ = broadcast.presence_message(game, {"seats": {}, "spectators": 0})
    await layer.group_add(group, listener)
    socket = GameConsumer.__new__(GameConsumer)
    socket.channel_layer, socket.channel_name = layer, "specific.test!seat0"
    socket.game_id, socket.seat, socket.user = game, 0, None
    assert await socket._touch_presence(force=True) is not None
    ghost_until = presence._now_ms() + 150  # a process that died: its member runs out
    redis_client.zadd(presence._key(game), {"1|specific.dead!seat1": ghost_until})
    socket.heartbeat = asyncio.ensure_future(socket._heartbeat())
    try:
        message = await asyncio.wait_for(layer.receive(listener), 10)
        while message["type"] != "game.presence":  # pragma: no cover - nothing else is sent
            message = await asyncio.wait_for(layer.receive(listener), 10)
        assert presence._now_ms() >= ghost_until
        assert json.loads(message["text"])["seats"] == {"0": 1}
        assert redis_client.zrange(presence._key(game), 0, -1) == [b"0|specific.test!seat0"]
    finally:
        task, socket.heartbeat = socket.heartbeat, None
        task.cancel()
        await asyncio.wait([task], timeout=10)
    await presence.leave(game, 0, "specific.test!seat0")
