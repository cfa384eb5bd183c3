"""The live thread publishes a change's frames itself (`PubSubChannelLayer.publish_many`).

Why: it used to hand them to another thread's event loop and wait (`broadcast._SenderLoop`),
two cross-thread wake-ups and an asyncio round trip per broadcast (bench/broadcast_cpu.py).
What must not change: the bytes on the wire and the channels they go to (exactly what the
layer's `group_send_many` publishes, shard by shard), the classic and in-memory layers' path,
and that a dead Redis costs the live thread at most its timeout (a failure raised, logged and
retried), never a hang.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import redis
from channels.db import database_sync_to_async
from django.conf import settings

from games import broadcast, services
from games.layers import PubSubChannelLayer
from tests.live.conftest import communicator, make_game, make_user, session_cookie
from tests.live.test_consumer import until

pytestmark = pytest.mark.usefixtures("redis_server")

GROUPS = ["game.7.seat.0", "game.7.seat.1", "game.7.seat.2", "game.7.spectators", "user.3"]


def _address() -> str:
    return str(settings.CHANNEL_LAYERS["default"]["CONFIG"]["hosts"][0]["address"])


def _messages(tag: str) -> list[tuple[str, dict[str, Any]]]:
    return [
        (group, {"type": "game.update", "version": 9, "text": f'{{"to":"{group}","{tag}":1}}'})
        for group in GROUPS
    ]


class _Tap:
    """Every message published on the layer's group channels, raw (channel, bytes), in order:
    a pattern subscription of its own."""

    def __init__(self, prefix: str) -> None:
        self.client = redis.Redis.from_url(_address())
        self.pubsub = self.client.pubsub()
        self.pubsub.psubscribe(f"{prefix}__group__*")
        # Redis has the subscription once it confirms it: nothing published later is missed.
        confirmed = None
        while confirmed is None or confirmed["type"] != "psubscribe":
            confirmed = self.pubsub.get_message(timeout=60)

    def take(self, count: int) -> list[tuple[bytes, bytes]]:
        got: list[tuple[bytes, bytes]] = []
        deadline = time.monotonic() + 60
        while len(got) < count and time.monotonic() < deadline:
            message = self.pubsub.get_message(timeout=1)
            if message is not None and message["type"] == "pmessage":
                got.append((message["channel"], message["data"]))
        return got

    def close(self) -> None:
        self.pubsub.close()
        self.client.close()


@pytest.fixture
def prefix() -> Iterator[str]:
    yield f"crisp-test-sync-{uuid.uuid4().hex[:8]}"


def test_publish_many_publishes_the_bytes_group_send_many_publishes(prefix: str) -> None:
    layer = PubSubChannelLayer(hosts=[{"address": _address()}], prefix=prefix)
    tap = _Tap(prefix)
    try:
        asyncio.run(layer.group_send_many(_messages("a")))
        by_loop = tap.take(len(GROUPS))
        layer.publish_many(_messages("a"), timeout=5)  # no event loop on this thread
        by_thread = tap.take(len(GROUPS))
    finally:
        tap.close()
    assert len(by_loop) == len(GROUPS)
    assert by_thread == by_loop  # same channels, same serialised bytes, same order
    assert [c.decode() for c, _ in by_loop] == [f"{prefix}__group__{g}" for g in GROUPS]
    assert layer.deserialize(by_thread[0][1])["text"] == '{"to":"game.7.seat.0","a":1}'


def test_publish_many_chooses_each_channels_shard_as_the_loop_layer_does(
    prefix: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three hosts (one server under three addresses): each group's messages go to the shard
    the loop layer's own `_get_shard` picks for its channel, in one pipeline per shard."""
    hosts = [{"address": _address()} for _ in range(3)]
    layer = PubSubChannelLayer(hosts=hosts, prefix=prefix)
    groups = [f"game.{n}.seat.{s}" for n in range(40) for s in range(3)]
    messages = [(g, {"type": "game.update", "text": g}) for g in groups]

    async def loop_choice() -> dict[str, int]:
        loop_layer = layer._get_layer()
        names = {g: loop_layer._get_group_channel_name(g) for g in groups}
        return {g: loop_layer._shards.index(loop_layer._get_shard(names[g])) for g in groups}

    expected = asyncio.run(loop_choice())
    assert len(set(expected.values())) == 3  # the test spreads over every shard
    publisher = layer._sync_publisher()
    real_publish = type(publisher).publish
    sent: list[tuple[int, list[str]]] = []

    def publish(self: Any, index: int, timeout: float, items: list[tuple[str, bytes]]) -> None:
        sent.append((index, [name for name, _ in items]))
        real_publish(self, index, timeout, items)

    monkeypatch.setattr(type(publisher), "publish", publish)
    layer.publish_many(messages, timeout=5)
    assert len(sent) == 3  # one pipeline per shard
    got = {name.removeprefix(f"{prefix}__group__"): index for index, ns in sent for name in ns}
    assert got == expected


def _silent_server() -> tuple[socket.socket, int]:
    """A TCP port that accepts connections (the kernel's backlog) and never answers."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    return server, server.getsockname()[1]


def _closed_port() -> int:
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    return port


def test_a_redis_that_never_answers_costs_the_timeout_not_a_hang() -> None:
    server, port = _silent_server()
    try:
        layer = PubSubChannelLayer(hosts=[{"address": f"redis://127.0.0.1:{port}"}])
        started = time.monotonic()
        with pytest.raises(redis.exceptions.TimeoutError):
            layer.publish_many(_messages("b"), timeout=0.3)
        # Connect (taken by the backlog) and one read, each bounded: not another attempt.
        assert time.monotonic() - started < 5
    finally:
        server.close()


def test_a_refused_redis_fails_at_once() -> None:
    layer = PubSubChannelLayer(hosts=[{"address": f"redis://127.0.0.1:{_closed_port()}"}])
    with pytest.raises(redis.exceptions.ConnectionError):
        layer.publish_many(_messages("c"), timeout=5)


def test_the_live_thread_logs_a_dead_redis_and_goes_on(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A job that cannot publish raises into the live thread's loop, which logs it; the next
    job runs (the thread did not hang on the dead Redis)."""
    server, port = _silent_server()
    try:
        dead = PubSubChannelLayer(hosts=[{"address": f"redis://127.0.0.1:{port}"}])
        monkeypatch.setattr(broadcast, "get_channel_layer", lambda: dead)
        monkeypatch.setattr(broadcast, "SEND_TIMEOUT", 0.3)
        ran = threading.Event()
        with caplog.at_level("ERROR", logger="games.broadcast"):
            broadcast.turns_changed([1, 2])
            broadcast.dispatcher.submit(ran.set)
            assert ran.wait(60)
        failures = [r for r in caplog.records if r.getMessage() == "live job failed"]
        assert len(failures) == 1
        assert isinstance(failures[0].exc_info[1], redis.exceptions.TimeoutError)  # type: ignore[index]
    finally:
        server.close()


def test_layers_without_publish_many_still_send_through_the_sender_loop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from channels.layers import InMemoryChannelLayer

    from games.layers import PooledRedisChannelLayer

    for layer in (InMemoryChannelLayer(), PooledRedisChannelLayer(hosts=[_address()])):
        monkeypatch.setattr(broadcast, "get_channel_layer", lambda layer=layer: layer)
        assert broadcast._publish(_messages("d")) is False


@pytest.mark.django_db(transaction=True)
async def test_a_change_reaches_a_socket_without_the_sender_loop(
    scheduled: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the settings' layer (pub/sub), a change's frames go out from the live thread:
    the sender loop is never asked, and the socket gets the update."""
    players = await database_sync_to_async(lambda: [make_user(), make_user()])()
    game = await database_sync_to_async(make_game)(
        players, timers={"memorise_ms": 0, "start_delay_ms": 0, "window_ms": 0}
    )
    comm = communicator(game.pk, cookie=await database_sync_to_async(session_cookie)(players[0]))
    await comm.connect()
    await until(comm, "snapshot")

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("the sender loop was used")

    monkeypatch.setattr(broadcast._sender, "run", refuse)
    await database_sync_to_async(services.game_act)(
        game=game.pk,
        user=players[1],
        action={"type": "look"},
        expected_version=None,
        idempotency_key=None,
    )
    update = await until(comm, "update")
    assert update["version"] == game.version + 1
    await comm.disconnect()
