"""`group_send_many` (games/layers.py) delivers exactly what one `group_send` per group does.

Why: `broadcast.send_all` sends a change's frames (one per redaction group) through it, in one
Redis round trip per host instead of several per group; a difference from channels-redis's
semantics would be a frame lost, duplicated or sent to the wrong socket. Both layers are run
against real Redis, the classic one side by side: the same groups, members and channel
contents under two prefixes, one filled by `group_send`s and one by `group_send_many`, then
every channel's queue compared.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

import pytest
import redis.asyncio as aioredis
from django.conf import settings

from games.layers import PooledRedisChannelLayer, PubSubChannelLayer

pytestmark = pytest.mark.usefixtures("redis_server")

GROUPS = ["game.1.seat.0", "game.1.seat.1", "game.1.spectators", "game.1.table"]


def _address() -> str:
    return str(settings.CHANNEL_LAYERS["default"]["CONFIG"]["hosts"][0]["address"])


def _messages() -> list[tuple[str, dict[str, Any]]]:
    return [
        (group, {"type": "game.update", "text": f'{{"to":"{group}"}}', "version": 7})
        for group in GROUPS
    ]


async def _classic_world(prefix: str) -> tuple[list[PooledRedisChannelLayer], dict[str, str]]:
    """Two processes' layers, each with process-local sockets, plus general channels: one
    full, one with room for one more push only, one whose only message has expired (so the
    cleanup makes room), and one expired group member."""
    layers = [
        PooledRedisChannelLayer(
            hosts=[{"address": _address()}],
            prefix=prefix,
            expiry=30,
            capacity=100,
            channel_capacity={"full.*": 2, "edge.*": 3, "stale.*": 1},
        )
        for _ in range(2)
    ]
    a = [await layers[0].new_channel() for _ in range(3)]
    b = [await layers[1].new_channel() for _ in range(2)]
    names = {"a0": a[0], "a1": a[1], "a2": a[2], "b0": b[0], "b1": b[1]}
    names |= {"full": "full.one", "edge": "edge.one", "stale": "stale.one", "plain": "plain.one"}
    membership = {
        "game.1.seat.0": ["a0", "b0", "full", "edge"],
        "game.1.seat.1": ["a1", "edge", "stale"],
        "game.1.spectators": ["a2", "b1", "plain"],
        "game.1.table": ["a0", "a1", "a2", "b0", "b1", "full", "edge", "stale", "plain"],
    }
    for group, members in membership.items():
        for member in members:
            await layers[0].group_add(group, names[member])
    redis = aioredis.Redis.from_url(_address())
    try:
        # A member older than group_expiry: both ways drop it and send it nothing.
        old = time.time() - layers[0].group_expiry - 100
        await redis.zadd(layers[0]._group_key("game.1.seat.1"), {"ghost.one": old})
        for _ in range(2):
            await layers[0].send("full.one", {"type": "filler"})
            await layers[0].send("edge.one", {"type": "filler"})
        # An expired message in a channel of capacity 1: the push's cleanup makes room.
        await redis.zadd(f"{prefix}stale.one", {b"expired": time.time() - 100})
    finally:
        await redis.aclose()
    return layers, names


async def _queues(prefix: str, names: dict[str, str]) -> dict[str, list[Any]]:
    """Each channel's queued messages (deserialised, random prefix dropped), sorted."""
    layer = PooledRedisChannelLayer(hosts=[{"address": _address()}], prefix=prefix)
    redis = aioredis.Redis.from_url(_address())
    try:
        # A process's sockets share one key: name it by its first socket's role ("a0", "b0").
        keys = {"ghost.one": "ghost.one"}
        for role, name in names.items():
            keys.setdefault(layer.non_local_name(name) if "!" in name else name, role)
        out = {}
        for key, label in keys.items():
            members = await redis.zrange(f"{prefix}{key}", 0, -1)
            decoded = [layer.deserialize(m) if m != b"expired" else "expired" for m in members]
            out[label] = sorted(map(repr, decoded))
        return out
    finally:
        await redis.aclose()
        await layer.close_pools()


async def _cleanup(prefix: str) -> None:
    redis = aioredis.Redis.from_url(_address())
    try:
        keys = [k async for k in redis.scan_iter(match=f"{prefix}*")]
        if keys:
            await redis.delete(*keys)
    finally:
        await redis.aclose()


async def test_classic_group_send_many_queues_what_group_sends_queue(
    caplog: pytest.LogCaptureFixture,
) -> None:
    run = uuid.uuid4().hex[:8]
    one, many = f"crisp-test-layers-{run}-one:", f"crisp-test-layers-{run}-many:"
    try:
        layers_one, names_one = await _classic_world(one)
        layers_many, names_many = await _classic_world(many)
        # The two worlds' process-local channel names differ (random): compare by role.
        with caplog.at_level("INFO"):
            for group, message in _messages():
                await layers_one[0].group_send(group, message)
            sent_one = [r.getMessage() for r in caplog.records]
            caplog.clear()
            await layers_many[0].group_send_many(_messages())
            sent_many = [r.getMessage() for r in caplog.records]
        got_one, got_many = await _queues(one, names_one), await _queues(many, names_many)
        # Routing lists name each world's own channels; map them to roles to compare.
        for world, names in ((got_one, names_one), (got_many, names_many)):
            for role, channel in names.items():
                for key in world:
                    world[key] = [m.replace(channel, role) for m in world[key]]
        assert got_many == got_one
        assert got_one["ghost.one"] == []
        # What the sends themselves deliver, read back through each process's receive.
        for role in ("a0", "a1", "b0", "b1"):
            layer = layers_many[0] if role.startswith("a") else layers_many[1]
            seen = []
            expected = {
                "a0": ["game.1.seat.0", "game.1.table"],
                "a1": ["game.1.seat.1", "game.1.table"],
                "b0": ["game.1.seat.0", "game.1.table"],
                "b1": ["game.1.spectators", "game.1.table"],
            }[role]
            for _ in expected:
                seen.append((await layer.receive(names_many[role]))["text"])
            assert sorted(seen) == sorted(f'{{"to":"{g}"}}' for g in expected)
        # Full channels were reported as group_send reports them (per group).
        # (seat.0: "full"; seat.1: "edge", filled by seat.0's push; the table: all three.)
        assert (
            sent_many
            == sent_one
            == [
                "1 of 4 channels over capacity in group game.1.seat.0",
                "1 of 3 channels over capacity in group game.1.seat.1",
                "3 of 9 channels over capacity in group game.1.table",
            ]
        )
    finally:
        for layer in [*layers_one, *layers_many]:
            await layer.close_pools()
        await _cleanup(one)
        await _cleanup(many)


async def test_pubsub_group_send_many_publishes_what_group_sends_publish() -> None:
    """Two processes' pub/sub layers: every socket gets each of its groups' messages once, the
    same as after `group_send`s, and nothing else (a sentinel sent last to every group marks
    the end: one connection publishes in order)."""
    prefix = f"crisp-test-layers-{uuid.uuid4().hex[:8]}"
    layers = [PubSubChannelLayer(hosts=[{"address": _address()}], prefix=prefix) for _ in range(2)]
    membership = {
        "game.1.seat.0": [(0, 0), (1, 0)],
        "game.1.seat.1": [(0, 1)],
        "game.1.spectators": [(1, 1)],
        "game.1.table": [(0, 0), (0, 1), (1, 0), (1, 1)],
    }
    channels = [[await layer.new_channel() for _ in range(2)] for layer in layers]
    try:
        for group, members in membership.items():
            for p, n in members:
                await layers[p].group_add(group, channels[p][n])
        results = {}
        for way in ("one", "many"):
            if way == "one":
                for group, message in _messages():
                    await layers[0].group_send(group, message)
            else:
                await layers[0].group_send_many(_messages())
            await layers[0].group_send_many([("game.1.table", {"type": "end", "text": ""})])
            for p in (0, 1):
                for n in (0, 1):
                    seen = []
                    while (message := await layers[p].receive(channels[p][n]))["type"] != "end":
                        seen.append(message["text"])
                    results[way, p, n] = sorted(seen)
        for p in (0, 1):
            for n in (0, 1):
                expected = sorted(
                    f'{{"to":"{g}"}}' for g, members in membership.items() if (p, n) in members
                )
                assert results["one", p, n] == expected
                assert results["many", p, n] == expected
    finally:
        for layer in layers:
            await layer.flush()


async def test_send_all_uses_group_send_many_and_falls_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`broadcast.send_all` takes the one-round-trip path when the layer has it, and sends one
    `group_send` per group on a layer without it (the in-memory layer of some tests)."""
    from channels.layers import InMemoryChannelLayer

    from games import broadcast

    memory = InMemoryChannelLayer()
    channel = await memory.new_channel()
    for group in GROUPS[:2]:
        await memory.group_add(group, channel)
    calls: list[Any] = []

    class Many:
        async def group_send_many(self, messages: list[Any]) -> None:
            calls.append(messages)

    for layer in (memory, Many()):
        monkeypatch.setattr(broadcast, "get_channel_layer", lambda layer=layer: layer)
        await broadcast.send_all(_messages()[:2])
    assert calls == [_messages()[:2]]
    assert sorted([(await memory.receive(channel))["text"] for _ in range(2)]) == sorted(
        f'{{"to":"{g}"}}' for g in GROUPS[:2]
    )
