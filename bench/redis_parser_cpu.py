"""redis-py's RESP parser in Python against hiredis's (C), per call of the product's Redis
traffic, in one process (issue 25, session 18): is `hiredis` worth a dependency?

    .venv/bin/python bench/redis_parser_cpu.py --hiredis-site DIR [--rounds 20]

``DIR`` holds hiredis (``pip install --target DIR hiredis==3.5.0``); it is put on ``sys.path``
before redis-py is imported, in this process only, so redis-py can use either parser and each
client below names its own (``parser_class``: ``_AsyncRESP2Parser`` / ``_AsyncHiredisParser``,
``_RESP2Parser`` / ``_HiredisParser``; checked on the live connection). A private
``redis-server`` on its own port (``--port``) serves it all. Per section, one round of each
parser alternately (which goes first alternates too), ``--rounds`` rounds; CPU of the measuring
thread (``time.thread_time``: redis-py's Python, the parsing and the syscalls, not Redis's),
median / p90, the median of the paired differences and how many rounds hiredis was lower; the
load average is printed per round:

* ``receive``: the daphne's pub/sub reader. Two of our `games.layers.PubSubChannelLayer`
  (channels-redis 4.3's reader), one per parser, each with 4 groups of one local channel (the
  product's seat groups); a thread with its own connection publishes one change at a time (4
  msgpack frames of ~2 KB, one pipeline, as `group_send_many` does) and waits until all 4
  are received (the layer's `receive`: `get_message`, the hand-over, the decode). µs per
  received message.
* ``publish``: the sender's side of a change, `group_send_many` of the same 4 frames (4
  `PUBLISH` in one pipeline; replies are 4 integers). µs per change.
* ``multi``: one beat of presence, `games.presence`'s MULTI of ``--touches`` touches
  (`_touch_commands`: 7 commands for a seat, 6 for a spectator; 100 games of 3 seats + 1
  spectator, 2,700 commands for 400), as `_Touches._send` sends it. ms per MULTI.
* ``evalsha``: the timers' scripts on the sync client (`games.timers.add` of one deadline,
  then `pop_due` popping it). µs per call.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import math
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
WAYS = ("python", "hiredis")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def _redis_server(port: int) -> Iterator[str]:
    """A private redis-server (no persistence) on ``port``; its URL."""
    work = tempfile.mkdtemp(prefix="redis-parser-")
    proc = subprocess.Popen(  # noqa: S603 - our own fixed command line
        [
            shutil.which("redis-server") or "redis-server",
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            work,
        ],
        stdout=subprocess.DEVNULL,
    )
    try:
        for _ in range(100):
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
                break
            time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        proc.wait(10)
        shutil.rmtree(work, ignore_errors=True)


def _report(label: str, unit: str, cpu: dict[str, list[float]], loads: list[float]) -> None:
    """Median / p90 per parser, paired differences, rounds where hiredis was lower."""

    def p90(xs: list[float]) -> float:
        return sorted(xs)[min(len(xs) - 1, math.ceil(len(xs) * 0.9) - 1)]

    print(f"\n## {label} ({unit}; load {min(loads):.1f}-{max(loads):.1f})")
    print("| parser | median | p90 | rounds |")
    print("|---|---|---|---|")
    for way in WAYS:
        xs = cpu[way]
        print(f"| {way} | {statistics.median(xs):.2f} | {p90(xs):.2f} | {len(xs)} |")
    paired = [a - b for a, b in zip(cpu["python"], cpu["hiredis"], strict=True)]
    saved = statistics.median(paired)
    lower = sum(d > 0 for d in paired)
    share = saved / statistics.median(cpu["python"]) * 100
    print(
        f"saved by hiredis (median of pairs): {saved:.2f} {unit} ({share:.0f} %), "
        f"hiredis lower in {lower} of {len(paired)} rounds"
    )


def _alternate(
    label: str,
    rounds: int,
    one: Callable[[str, int], float],
) -> tuple[dict[str, list[float]], list[float]]:
    """``one(way, round)`` for each parser per round, the first alternating; CPU per unit."""
    cpu: dict[str, list[float]] = {w: [] for w in WAYS}
    loads: list[float] = []
    for r in range(rounds):
        order = WAYS if r % 2 == 0 else WAYS[::-1]
        load = os.getloadavg()[0]
        loads.append(load)
        got = {way: one(way, r) for way in order}
        for way in WAYS:
            cpu[way].append(got[way])
        print(
            f"{label} round {r + 1}: load {load:.1f}  "
            + "  ".join(f"{w} {got[w]:.2f}" for w in WAYS),
            flush=True,
        )
    return cpu, loads


async def _alternate_async(
    label: str, rounds: int, one: Callable[[str, int], Awaitable[float]]
) -> tuple[dict[str, list[float]], list[float]]:
    cpu: dict[str, list[float]] = {w: [] for w in WAYS}
    loads: list[float] = []
    for r in range(rounds):
        order = WAYS if r % 2 == 0 else WAYS[::-1]
        load = os.getloadavg()[0]
        loads.append(load)
        got = {}
        for way in order:
            got[way] = await one(way, r)
        for way in WAYS:
            cpu[way].append(got[way])
        print(
            f"{label} round {r + 1}: load {load:.1f}  "
            + "  ".join(f"{w} {got[w]:.2f}" for w in WAYS),
            flush=True,
        )
    return cpu, loads


def _frame(n: int) -> dict[str, Any]:
    """A broadcast frame as `games.broadcast` hands it to the layer (~2 KB of JSON text)."""
    state = "x" * 1950
    text = f'{{"t":"update","version":{n + 1},"prev_version":{n},"state":"{state}"}}'
    return {"type": "game.update", "version": n + 1, "prev_version": n, "text": text}


async def _main_async(url: str, args: argparse.Namespace) -> None:
    import redis
    from redis import asyncio as aioredis
    from redis._parsers import _AsyncHiredisParser, _AsyncRESP2Parser

    from games import presence
    from games.layers import PubSubChannelLayer

    parsers = {"python": _AsyncRESP2Parser, "hiredis": _AsyncHiredisParser}
    groups = [f"game-1.seat-{s}" for s in range(3)] + ["game-1.spectators"]

    # -- receive ----------------------------------------------------------------------------
    layers: dict[str, Any] = {}
    channels: dict[str, list[str]] = {}
    for way, parser in parsers.items():
        layer = PubSubChannelLayer(
            hosts=[{"address": url, "parser_class": parser}], prefix=f"bench-{way}"
        )
        layers[way] = layer
        channels[way] = []
        for group in groups:
            name = await layer.new_channel()
            await layer.group_add(group, name)
            channels[way].append(name)
        shard = layer._get_layer()._shards[0]
        got = type(shard._pubsub.connection._parser)
        assert got is parser, (way, got)
    publisher = redis.Redis.from_url(url)
    go: dict[str, Any] = {}
    delivered = threading.Event()
    start = threading.Event()
    stop = threading.Event()

    def publish() -> None:
        while True:
            start.wait()
            start.clear()
            if stop.is_set():
                return
            names, frames, changes = go["names"], go["frames"], go["changes"]
            for i in range(changes):
                pipe = publisher.pipeline(transaction=False)
                for name, data in zip(names, frames[i % len(frames)], strict=True):
                    pipe.publish(name, data)
                pipe.execute()
                delivered.wait()
                delivered.clear()

    thread = threading.Thread(target=publish, daemon=True)
    thread.start()
    frames_of: dict[str, list[list[bytes]]] = {}
    names_of: dict[str, list[str]] = {}
    for way, layer in layers.items():
        inner = layer._get_layer()
        names_of[way] = [inner._get_group_channel_name(g) for g in groups]
        frames_of[way] = [[layer.serialize(_frame(n)) for _ in groups] for n in range(50)]
    print(f"frame: {len(frames_of['python'][0][0])} bytes serialised", flush=True)

    async def receive(way: str, _: int) -> float:
        layer, names = layers[way], channels[way]
        go.update(names=names_of[way], frames=frames_of[way], changes=args.changes)
        began = time.thread_time()
        start.set()
        for _ in range(args.changes):
            for name in names:
                await layer.receive(name)
            delivered.set()
        return (time.thread_time() - began) / (args.changes * len(names)) * 1e6

    for way in WAYS:  # warm up
        go.update(names=names_of[way], frames=frames_of[way], changes=20)
        start.set()
        for _ in range(20):
            for name in channels[way]:
                await layers[way].receive(name)
            delivered.set()
    results = {"receive": await _alternate_async("receive", args.rounds, receive)}
    stop.set()
    start.set()
    thread.join(5)

    # -- publish ----------------------------------------------------------------------------
    messages = {
        way: [[(g, _frame(n)) for g in groups] for n in range(50)] for way in WAYS
    }  # the send side serialises each frame itself, as the product does

    for way, layer in layers.items():  # the receivers done: unsubscribed, closed
        for group, name in zip(groups, channels[way], strict=True):
            await layer.group_discard(group, name)
        await layer.flush()
    senders = {  # subscribed to nothing: the send side alone
        way: PubSubChannelLayer(
            hosts=[{"address": url, "parser_class": parser}], prefix=f"bench-{way}"
        )
        for way, parser in parsers.items()
    }
    for way, layer in senders.items():
        await layer.group_send_many(messages[way][0])
        shard = layer._get_layer()._shards[0]
        conn = await shard._redis.connection_pool.get_connection()
        assert type(conn._parser) is parsers[way], way
        await shard._redis.connection_pool.release(conn)

    async def send(way: str, _: int) -> float:
        layer = senders[way]
        began = time.thread_time()
        for i in range(args.sends):
            await layer.group_send_many(messages[way][i % 50])
        return (time.thread_time() - began) / args.sends * 1e6

    results["publish"] = await _alternate_async("publish", args.rounds, send)
    for layer in senders.values():
        await layer.flush()

    # -- presence MULTI ---------------------------------------------------------------------
    clients = {
        way: aioredis.Redis(
            connection_pool=aioredis.BlockingConnectionPool.from_url(
                url, max_connections=50, timeout=10, parser_class=parser
            )
        )
        for way, parser in parsers.items()
    }
    sockets = []
    for n in range(args.touches):
        game, seat = 1000 + n // 4, n % 4
        if seat == 3:
            sockets.append((game, None, f"specific.bench!{n}", None))
        else:
            sockets.append((game, seat, f"specific.bench!{n}", f"u{n}"))

    commands = [0]

    async def multi(way: str, _: int) -> float:
        client = clients[way]
        began = time.thread_time()
        for _ in range(args.multis):
            now = presence._now_ms()
            async with client.pipeline(transaction=True) as pipe:
                sizes = [presence._touch_commands(pipe, now, *s) for s in sockets]
                results = await pipe.execute()
            assert len(results) == sum(sizes)
        commands[0] = len(results)
        return (time.thread_time() - began) / args.multis * 1e3

    await multi("python", 0)
    await multi("hiredis", 0)
    for way, client in clients.items():
        conn = await client.connection_pool.get_connection()
        assert type(conn._parser) is parsers[way], way
        await client.connection_pool.release(conn)
    print(f"presence MULTI: {args.touches} touches, {commands[0]} commands", flush=True)
    results["multi"] = await _alternate_async("multi", args.rounds, multi)
    for client in clients.values():
        await client.aclose()
    _results.update(results)


_results: dict[str, tuple[dict[str, list[float]], list[float]]] = {}


def _timers(url: str, args: argparse.Namespace) -> None:
    import redis
    from redis._parsers import _HiredisParser, _RESP2Parser

    from games import timers

    parsers = {"python": _RESP2Parser, "hiredis": _HiredisParser}
    clients = {
        way: redis.Redis(
            connection_pool=redis.ConnectionPool.from_url(
                url, socket_timeout=2, parser_class=parser
            )
        )
        for way, parser in parsers.items()
    }
    for way, client in clients.items():
        client.ping()
        conn = client.connection_pool.get_connection()
        assert type(conn._parser) is parsers[way], way
        client.connection_pool.release(conn)

    def evalsha(way: str, _: int) -> float:
        client = clients[way]
        began = time.thread_time()
        for i in range(args.evals):
            due = int(time.time() * 1000) - 1
            timers.add(client, 7, [(f"k{i}", due)])
            got, _next = timers.pop_due(client, due + 1, 50)
            assert got, got
        return (time.thread_time() - began) / (2 * args.evals) * 1e6

    evalsha("python", 0)
    evalsha("hiredis", 0)
    _results["evalsha"] = _alternate("evalsha", args.rounds, evalsha)
    for client in clients.values():
        client.close()


def main() -> None:
    """Parse the options, start the private Redis, run each section, print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hiredis-site", default=os.environ.get("HIREDIS_SITE"), required=False)
    parser.add_argument("--port", type=int, default=0, help="0: a free one")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--changes", type=int, default=200, help="per receive round")
    parser.add_argument("--sends", type=int, default=300, help="changes per publish round")
    parser.add_argument("--touches", type=int, default=400, help="touches per MULTI")
    parser.add_argument("--multis", type=int, default=10, help="MULTIs per round")
    parser.add_argument("--evals", type=int, default=300, help="add+pop_due pairs per round")
    args = parser.parse_args()
    if not args.hiredis_site:
        parser.error("--hiredis-site (or HIREDIS_SITE) is required")
    sys.path.insert(0, args.hiredis_site)
    sys.path.insert(0, str(ROOT))
    import hiredis  # before redis-py: it decides HIREDIS_AVAILABLE on import
    from django.conf import settings

    settings.configure(
        CHANNEL_LAYERS={"default": {"BACKEND": "x", "CONFIG": {"prefix": "bench"}}},
        REDIS_URL="redis://unused",
    )
    print(f"python {sys.version.split()[0]}, hiredis {hiredis.__version__}", flush=True)
    with _redis_server(args.port or _free_port()) as url:
        asyncio.run(_main_async(url, args))
        _timers(url, args)
    units = {
        "receive": "µs per received message",
        "publish": "µs per change (4 PUBLISH, one pipeline)",
        "multi": f"ms per presence MULTI of {args.touches} touches",
        "evalsha": "µs per timers EVALSHA",
    }
    for key, (cpu, loads) in _results.items():
        _report(key, units[key], cpu, loads)


if __name__ == "__main__":
    main()
