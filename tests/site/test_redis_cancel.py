"""The asyncio Redis calls a socket makes stop when they are cancelled.

Why this exists: on Python 3.11, `asyncio.wait_for` returns the inner result and *drops the
cancellation* when both arrive together (CPython gh-86296, fixed in 3.12). redis-py sends each
command through `wait_for` when a client has a `socket_timeout`, and redis-py 8 does so on
every send. A socket's heartbeat cancelled at that instant went on beating (a ghost seat), and
the socket's close waited on it: CI saw a 1011 close arrive more than 5 s late. Found with a
loop like the one below: redis-py 8.1 lost a cancellation within 1-30 rounds; 7.4.1 without a
`socket_timeout` lost none in 2,000.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from channels.layers import get_channel_layer

from games import broadcast, presence

ROUNDS = 300


async def _cancelled_at_random_instants(call: Callable[[], Awaitable[Any]]) -> None:
    async def loop_forever() -> None:
        while True:
            await call()
            await asyncio.sleep(0)

    rng = random.Random(11)
    for round_ in range(ROUNDS):
        task = asyncio.ensure_future(loop_forever())
        await asyncio.sleep(rng.random() * 0.004)
        task.cancel()
        done, _ = await asyncio.wait([task], timeout=30)  # a lost cancellation never ends
        assert done, f"round {round_}: the task went on after cancel() (a lost cancellation)"
        assert task.cancelled()


#: A game no test makes (the presence tests' range): a probe cancelled between its touch and its
#: leave must not leave a stray seat at a game another test plays (it would stay for the TTL).
PROBE_GAME = 10**9 + 424_242


@pytest.mark.usefixtures("fresh_clients")
async def test_presence_calls_honour_cancellation() -> None:
    async def beat() -> None:
        await presence.touch(PROBE_GAME, 0, "cancel-probe")
        await presence.leave(PROBE_GAME, 0, "cancel-probe")
        presence._run_ids.clear()  # not the cached run id: a real INFO each time
        await presence.server_run_id()

    try:
        await _cancelled_at_random_instants(beat)
    finally:
        await presence.leave(PROBE_GAME, 0, "cancel-probe")


@pytest.mark.usefixtures("fresh_clients")
async def test_channel_layer_sends_honour_cancellation() -> None:
    layer = get_channel_layer()
    assert layer is not None
    channel = await layer.new_channel()
    group, message = broadcast.presence_message(PROBE_GAME, {"seats": {"0": 1}, "spectators": 0})
    await layer.group_add(group, channel)

    async def send() -> None:
        await layer.group_send(group, message)

    await _cancelled_at_random_instants(send)
    await layer.group_discard(group, channel)
