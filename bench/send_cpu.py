"""A change's group sends and a beat's presence touches, one way against the other, in one
process (issue 25, session 15).

    REDIS_URL=redis://127.0.0.1:6379/5 .venv/bin/python bench/send_cpu.py

Alternating one round of each way, `--rounds` times, on one event loop against a real Redis;
CPU of this thread per round (`time.thread_time`: the sender's Python and its syscalls, not
Redis's), median and p90:

* a change's 4 frames (3 seats + spectators, ~2 KB each) through the pub/sub layer (the
  default): 4 `group_send`s gathered, as `broadcast.send_all` did, against one
  `group_send_many` (`games.layers`);
* the same through the classic layer, each group with 2 sockets of this process;
* one beat of `--sockets` sockets' presence: each socket's own `MULTI`/`EXEC` (the touch as it
  was) gathered, against `presence.touch` batching them into one.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

BASE_DIR = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(BASE_DIR))


async def _cpu(call: Callable[[], Awaitable[Any]]) -> float:
    start = time.thread_time()
    await call()
    return (time.thread_time() - start) * 1000


async def compare(
    name: str, before: Callable[[], Awaitable[Any]], after: Callable[[], Awaitable[Any]], n: int
) -> None:
    await before()
    await after()  # warm: connections open, scripts cached
    a, b = [], []
    for _ in range(n):
        a.append(await _cpu(before))
        b.append(await _cpu(after))

    def fmt(xs: list[float]) -> str:
        return f"{statistics.median(xs):.3f} / {statistics.quantiles(xs, n=10)[-1]:.3f}"

    saved = statistics.median(a) - statistics.median(b)
    print(f"{name:34} before {fmt(a)}  after {fmt(b)}  ms p50 / p90; saved {saved:.3f} ms")


async def run(args: argparse.Namespace) -> None:
    from django.conf import settings

    from games import presence
    from games.layers import PooledRedisChannelLayer, PubSubChannelLayer

    url = settings.REDIS_URL
    prefix = f"bench-send-{uuid.uuid4().hex[:8]}"
    groups = [f"game.1.seat.{n}" for n in range(3)] + ["game.1.spectators"]
    messages = [
        (g, {"type": "game.update", "version": 9, "prev_version": 8, "text": "x" * 2000})
        for g in groups
    ]

    pubsub = PubSubChannelLayer(hosts=[{"address": url}], prefix=prefix)

    async def pubsub_one() -> None:
        await asyncio.gather(*(pubsub.group_send(g, m) for g, m in messages))

    await compare(
        "change, pub/sub layer", pubsub_one, lambda: pubsub.group_send_many(messages), args.rounds
    )
    await pubsub.flush()

    # Nobody reads the queues: room for every round (all sockets of a process share one key).
    classic = PooledRedisChannelLayer(
        hosts=[{"address": url}], prefix=prefix, expiry=60, capacity=10**7
    )
    for g in groups:
        for _ in range(2):
            await classic.group_add(g, await classic.new_channel())

    async def classic_one() -> None:
        await asyncio.gather(*(classic.group_send(g, m) for g, m in messages))

    await compare(
        "change, classic layer",
        classic_one,
        lambda: classic.group_send_many(messages),
        args.rounds,
    )
    await classic.flush()
    await classic.close_pools()

    sockets = [
        (10**9 + n // 4, n % 4 if n % 4 < 3 else None, f"bench!{n}") for n in range(args.sockets)
    ]

    async def touch_alone(game: int, seat: int | None, name: str) -> None:
        async with presence.client().pipeline(transaction=True) as pipe:
            presence._touch_commands(pipe, presence._now_ms(), game, seat, name, f"p{name}")
            presence._touch_change(seat, await pipe.execute())

    async def beat_one() -> None:
        await asyncio.gather(*(touch_alone(*s) for s in sockets))

    async def beat_many() -> None:
        await asyncio.gather(*(presence.touch(*s, person=f"p{s[2]}") for s in sockets))

    await compare(
        f"beat of {args.sockets} sockets", beat_one, beat_many, max(20, args.rounds // 10)
    )
    for game, seat, name in sockets:
        await presence.leave(game, seat, name)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=1000)
    parser.add_argument("--sockets", type=int, default=90)
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "crisp_site.settings")
    import django

    django.setup()
    print(f"load average {os.getloadavg()[0]:.1f}")
    asyncio.run(run(args))
    print(f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
