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
import uuid

import pytest
import redis

from games import presence


@pytest.fixture
def fresh_clients(redis_server: str) -> None:
    """Presence clients are per loop; make sure this test's loop builds its own."""
    presence._clients.clear()
    presence._run_ids.clear()
    presence._touches.clear()


def _game() -> int:
    return 10**9 + uuid.uuid4().int % 10**6  # no other test's table


@pytest.mark.usefixtures("fresh_clients")
async def test_same_keys_scores_and_ttls_as_the_commands_it_replaces(
    redis_client: redis.Redis,
) -> None:
    game = _game()
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
    game, other = _game(), _game()
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
    game = _game()
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
    game = _game()
    assert (await presence.touch(game, 0, "s0")).seats_changed
    redis_client.script_flush()  # what a Redis restart also does
    change = await presence.touch(game, 1, "s1")
    assert (change.seats, change.seats_changed) == ({"0": 1, "1": 1}, True)
    assert redis_client.script_exists(presence._scripts[presence._TOUCH].sha) == [True]
    await presence.leave(game, 0, "s0")
    await presence.leave(game, 1, "s1")
