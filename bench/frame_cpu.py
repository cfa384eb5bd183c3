"""A broadcast frame's cost per socket: the product's consumer against the bare echo's (session 19).

    .venv/bin/python bench/frame_cpu.py [--frames 20000] [--size 1500]

In process, no network: the same frame text handed to `GameConsumer.dispatch` as a
`game.update` (the product: the version and seat checks, `broadcast.stamp`, the send) and to
`bench/echo_asgi.py`'s `EchoConsumer.dispatch` as an `echo.frame` (Channels' own `dispatch`:
its `aclose_old_connections()` hop to the thread-sensitive thread, then the send), each
socket's `base_send` a no-op coroutine. What is below `base_send` (daphne, Twisted) and above
`dispatch` (the channel layer's receive, the consumer's loop) is not here. Interleaved in
blocks of 100 frames, alternating; CPU of the whole process (`time.process_time`: the echo's
hop runs on another thread), per frame, median of the blocks; and how many blocks each way.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

BASE_DIR = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(BASE_DIR))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "crisp_site.settings")


async def _bench(frames: int, size: int) -> None:
    from types import SimpleNamespace

    from bench.echo_asgi import EchoConsumer
    from games.consumers import GameConsumer

    sent = [0]

    async def base_send(message: dict[str, Any]) -> None:
        sent[0] += 1

    text = '{"type":"update","version":1,"x":"' + "x" * size + '"}'
    game = GameConsumer()
    game.scope = {"type": "websocket"}
    game.base_send = base_send
    game.user = SimpleNamespace(pk=7)
    game.seat, game.version, game.game_id = 1, 0, 1
    echo = EchoConsumer()
    echo.scope = {"type": "websocket"}
    echo.base_send = base_send

    async def product(n: int) -> None:
        for _ in range(n):
            v = game.version + 1
            await game.dispatch(
                {
                    "type": "game.update",
                    "version": v,
                    "prev_version": v - 1,
                    "seats": {"7": 1, "8": 0},
                    "text": text,
                }
            )

    async def bare(n: int) -> None:
        for _ in range(n):
            await echo.dispatch({"type": "echo.frame", "text": text})

    for run in (product, bare):  # warm-up
        await run(200)
    block = 100
    per: dict[str, list[float]] = {"product": [], "echo": []}
    for b in range(frames // block):
        ways = [("product", product), ("echo", bare)]
        for name, run in ways if b % 2 == 0 else reversed(ways):
            t0 = time.process_time()
            await run(block)
            per[name].append((time.process_time() - t0) / block * 1e6)
    load = os.getloadavg()
    lower = sum(p < e for p, e in zip(per["product"], per["echo"], strict=True))
    print(
        f"frame_cpu: {frames} frames each way of {len(text)} characters, blocks of {block}, "
        f"load {load[0]:.2f}"
    )
    for name, values in per.items():
        print(
            f"  {name:<8} {statistics.median(values):6.1f} us per frame (median of "
            f"{len(values)} blocks; mean {statistics.fmean(values):.1f})"
        )
    print(f"  product below echo in {lower} of {len(per['product'])} blocks")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--frames", type=int, default=20000)
    parser.add_argument("--size", type=int, default=1500)
    args = parser.parse_args()
    asyncio.run(_bench(args.frames, args.size))


if __name__ == "__main__":
    main()
