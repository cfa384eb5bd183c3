"""A change's group sends, one way against the other, in one
process (issue 25, session 15).

    REDIS_URL=redis://127.0.0.1:6379/5 .venv/bin/python bench/send_cpu.py

Alternating one round of each way, `--rounds` times, on one event loop against a real Redis;
CPU of this thread per round (`time.thread_time`: the sender's Python and its syscalls, not
Redis's), median and p90:

* a change's 4 frames (3 seats + spectators, ~2 KB each) through the pub/sub layer (the
  default): 4 `group_send`s gathered, as `broadcast.send_all` did, against one
  `group_send_many` (`games.layers`);
* the same through the classic layer, each group with 2 sockets of this process;
(Its third comparison, session 15's presence beat -- each socket's own `MULTI`/`EXEC` against
one per beat -- went with session 18: the beat is one script per send now, and
`bench/presence_cpu.py` measures it against the session-15 send it replaced.)

`--receive` (session 16) measures the other end, channels-redis's pub/sub layer (the product's
reader: it hands the published bytes to every local channel of the group, and each channel's
`receive` decodes them) against the decode-once candidate (`_decode_once_layer`: decoded once
per process, each channel handed its own dict), per frame delivered to a socket, for groups of
`--per-group` sockets each (e.g. 1,4,8), in two ways:

* the layer's part alone: the reader's hand-over of a message and each socket's `receive` of
  it, in a loop (no Redis, no consumer): what the lever changes, with little noise;
* in situ: 4 groups of real Channels consumers (`await_many_dispatch`, the layer's `receive`)
  whose handler does what the bare echo's does (`self.send` of the frame's text, to an ASGI
  send that drops it), dispatching as the product's consumer does (no database hop). A thread
  with its own Redis connection publishes one change at a time (4 frames in one pipeline, the
  product's message shape) and waits until every socket has it; CPU of the event loop's thread
  per round of `--changes` changes, one round per layer alternately (each first every other
  round), `--receive-rounds` rounds.

`--daphne` (session 16): one daphne serving the bare echo (`bench/echo_asgi.py`) with 4 seat
groups of `--per-group` sockets (websockets clients here), changes published straight to
Redis one at a time; the daphne's CPU per frame delivered, one daphne per layer and round
(`--daphne-pairs`), channels-redis's reader against the candidate's (through a generated
settings module naming `send_cpu.DecodeOnceChannelLayer`).

`--dispatch` (session 16): Channels' receive loop (`await_many_dispatch`: a task and an
`asyncio.wait` per message per socket) against ours (`games.consumer_loop`), per frame
delivered to a socket: the loop alone (no Redis, no consumer), then in situ as above with the
product's layer, the consumers run by either loop. With `--daphne`: the bare echo's daphne,
its consumer as it is against the same class with `SerialDispatchMixin` first.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import os
import queue
import signal
import socket
import statistics
import subprocess
import sys
import threading
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


@functools.cache
def _decode_once_layer() -> Any:
    """The lever measured (session 16): `games.layers.PubSubChannelLayer` whose reader decodes
    each published message once per process and hands it to every local channel of its group,
    where channels-redis 4.3 hands over the bytes and each channel's `receive` decodes them.
    Kept here, not in `games.layers`, because it did not pay (bench/RESULTS.md, session 16);
    branch `pubsub-lever` has it as the layer, with tests of the channels-redis internals it
    replaces (`_get_layer`, the loop layer's `receive`, the shard's `_receive_message`)."""
    import logging

    from channels_redis.pubsub import RedisPubSubLoopLayer, RedisSingleShardConnection
    from channels_redis.utils import _wrap_close

    from games.layers import PubSubChannelLayer

    logger = logging.getLogger(__name__)

    class _DecodeOnceShard(RedisSingleShardConnection):
        """A shard connection whose reader decodes each published message once per process.

        channels-redis's `_receive_message` puts the published bytes into the queue of every local
        channel of the group, and each channel's `receive` decodes them again. This decodes them
        once, here, and puts the message into each queue as its own top-level dict (the values
        are shared: no handler of ours mutates them). Only decoded if some local channel is
        there to take it; a message that does not decode is logged and dropped (in
        channels-redis it raised in every receiving consumer).
        """

        def _receive_message(self, message: dict[str, Any] | None) -> None:
            if message is None:
                return
            name = message["channel"]
            if isinstance(name, bytes):
                name = name.decode()
            layer = self.channel_layer
            channels = layer.channels
            own = channels.get(name)
            if own is not None:  # a channel's own name (`send`): one receiver
                queues = [own]
            else:
                members = layer.groups.get(name)
                if not members:
                    return
                queues = [channels[c] for c in members if c in channels]
                if not queues:
                    return
            try:
                decoded = layer.channel_layer.deserialize(message["data"])
            except Exception:
                logger.exception("undecodable message on %s dropped", name)
                return
            queues[0].put_nowait(decoded)
            for other in queues[1:]:
                other.put_nowait(dict(decoded))

    class _DecodeOnceLoopLayer(RedisPubSubLoopLayer):
        """The loop layer whose queues hold decoded messages (see `_DecodeOnceShard`)."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self._shards = [_DecodeOnceShard(shard.host, self) for shard in self._shards]

        async def receive(self, channel: str) -> dict[str, Any]:
            """channels-redis 4.3's `receive`, less the decode (the reader did it)."""
            if channel not in self.channels:
                await self._subscribe_to_channel(channel)
            q = self.channels[channel]
            try:
                return await q.get()
            except (TimeoutError, asyncio.CancelledError, GeneratorExit):
                # As channels-redis: a cancelled receive means the consumer is exiting.
                if channel in self.channels:
                    del self.channels[channel]
                    try:
                        await self._get_shard(channel).unsubscribe(channel)
                    except BaseException:
                        logger.exception("Unexpected exception while cleaning-up channel:")
                raise

    class DecodeOnceChannelLayer(PubSubChannelLayer):
        def _get_layer(self) -> _DecodeOnceLoopLayer:
            """channels-redis 4.3's `_get_layer`, building the decode-once loop layer."""
            loop = asyncio.get_running_loop()
            try:
                return self._layers[loop]
            except KeyError:
                layer = _DecodeOnceLoopLayer(*self._args, **self._kwargs, channel_layer=self)
                self._layers[loop] = layer
                _wrap_close(self, loop)
                return layer

    return DecodeOnceChannelLayer


def _receive_consumer(lean: bool = False) -> Any:
    """A Channels consumer that forwards every `echo.frame` as the bare echo does, and
    dispatches without Channels' database hop, as the product's consumer does; `lean`: run by
    our receive loop (`games.consumer_loop.SerialDispatchMixin`, as the product's consumers
    are since session 16) instead of Channels' `await_many_dispatch`."""
    from channels.consumer import AsyncConsumer

    from games.consumer_loop import SerialDispatchMixin

    bases = (SerialDispatchMixin, AsyncConsumer) if lean else (AsyncConsumer,)

    class Socket(*bases):  # type: ignore[misc]
        def __init__(self, alias: str, groups: list[str], joined: Any, got: Any) -> None:
            self.channel_layer_alias = alias
            self.groups, self.joined, self.got = groups, joined, got

        async def dispatch(self, message: dict[str, Any]) -> None:
            await getattr(self, message["type"].replace(".", "_"))(message)

        async def bench_join(self, message: dict[str, Any]) -> None:
            for group in self.groups:
                await self.channel_layer.group_add(group, self.channel_name)
            self.joined()

        async def echo_frame(self, message: dict[str, Any]) -> None:
            await self.send({"type": "websocket.send", "text": message["text"]})
            self.got()

    return Socket


class _Receivers:
    """`per_group` consumers in each of `groups` on one layer, and a tally of what they got:
    `delivered` (a thread's event) is set whenever every socket has the latest change,
    `done` when a round's frames are all in."""

    def __init__(
        self, alias: str, layer: Any, groups: list[str], per_group: int, lean: bool = False
    ) -> None:
        self.alias, self.layer, self.groups, self.per_group = alias, layer, groups, per_group
        self.lean = lean
        self.per_change = len(groups) * per_group
        self.count = 0
        self.target = 0
        self.delivered = threading.Event()
        self.done = asyncio.Event()
        self.tasks: list[asyncio.Task[Any]] = []

    def got(self) -> None:
        self.count += 1
        if self.count % self.per_change == 0:
            self.delivered.set()
        if self.count == self.target:
            self.done.set()

    def expect(self, frames: int) -> None:
        self.count, self.target = 0, frames
        self.done.clear()

    async def start(self) -> None:
        from channels.layers import channel_layers

        channel_layers.set(self.alias, self.layer)
        socket = _receive_consumer(self.lean)
        joined = 0
        all_joined = asyncio.Event()

        def one_joined() -> None:
            nonlocal joined
            joined += 1
            if joined == self.per_change:
                all_joined.set()

        async def send(message: dict[str, Any]) -> None:
            return None

        def client() -> Any:
            said = False

            async def receive() -> dict[str, Any]:
                nonlocal said
                if not said:
                    said = True
                    return {"type": "bench.join"}
                await asyncio.Future()  # the client never speaks again
                raise AssertionError

            return receive

        for group in self.groups:
            for _ in range(self.per_group):
                consumer = socket(self.alias, [group], one_joined, self.got)
                self.tasks.append(
                    asyncio.ensure_future(consumer({"type": "websocket"}, client(), send))
                )
        await all_joined.wait()

    async def stop(self) -> None:
        for task in self.tasks:
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)
        await self.layer.flush()


def _publisher(url: str, channels: list[str], data: bytes, delivered: threading.Event) -> Any:
    """A thread publishing one change (a frame per group, one pipeline) when asked, and the
    next only once the loop says every socket got the last one."""
    import redis

    client = redis.Redis.from_url(url)
    asks: queue.SimpleQueue[int | None] = queue.SimpleQueue()

    def run() -> None:
        while (changes := asks.get()) is not None:
            for _ in range(changes):
                delivered.clear()
                pipe = client.pipeline(transaction=False)
                for name in channels:
                    pipe.publish(name, data)
                pipe.execute()
                if not delivered.wait(30):
                    raise RuntimeError("a change was not delivered within 30 s")
        client.close()

    thread = threading.Thread(target=run, name="bench-publisher", daemon=True)
    thread.start()
    return asks, thread


async def _layer_path(layer: Any, per_group: int, data: bytes, n: int) -> float:
    """us of CPU per delivered frame for the layer's own part alone: its reader's hand-over
    of one published message (`_receive_message`, as its Redis reader calls it) and each local
    socket's `receive` of it (no Redis, no consumer, no waiting: the queues are filled)."""
    loop_layer = layer._get_layer()
    name = loop_layer._get_group_channel_name("game.1.spectators")
    channels = [await layer.new_channel() for _ in range(per_group)]
    for channel in channels:
        await layer.group_add("game.1.spectators", channel)
    shard = loop_layer._get_shard(name)
    published = {"type": "message", "pattern": None, "channel": name.encode(), "data": data}
    receive = layer.receive
    start = time.thread_time()
    for _ in range(n):
        shard._receive_message(published)
        for channel in channels:
            await receive(channel)
    cpu = time.thread_time() - start
    await layer.flush()
    return cpu / (n * per_group) * 1e6


async def receive_side(args: argparse.Namespace) -> None:
    """CPU of this loop's thread per delivered frame, channels-redis's pub/sub layer against
    ours, alternately, for each `--per-group`."""
    from channels_redis.pubsub import RedisPubSubChannelLayer
    from django.conf import settings

    url = settings.REDIS_URL
    run = uuid.uuid4().hex[:8]
    message = {
        "type": "echo.frame",
        "version": 9,
        "prev_version": 8,
        "seats": {"11": 0, "12": 1, "13": 2},
        "text": "x" * 2000,
    }
    print(
        f"receive side: 4 groups x N sockets, {args.changes} changes per round, "
        f"{args.receive_rounds} rounds per layer; us of the loop thread's CPU per frame "
        "delivered, median / p90 over rounds"
    )
    layers = {"channels-redis": RedisPubSubChannelLayer, "decode-once": _decode_once_layer()}
    for per_group in args.per_group:
        path: dict[str, list[float]] = {way: [] for way in layers}
        for index in range(2 * args.receive_rounds):
            way = list(layers)[index % 2]
            layer = layers[way](hosts=[{"address": url}], prefix=f"bench-path-{run}")
            data = layer.serialize(message)
            path[way].append(await _layer_path(layer, per_group, data, 2000 // per_group + 50))
        print(
            f"  {per_group} per group, the layer's part alone: "
            + "   ".join(f"{way} {statistics.median(xs):5.1f}" for way, xs in path.items())
        )
    for per_group in args.per_group:
        ways = {way: (cls, False) for way, cls in layers.items()}
        per_frame = await _in_situ(url, f"{run}-{per_group}", ways, per_group, message, args)
        _print_pair(f"{per_group} per group", per_frame, "channels-redis", "decode-once")


async def _in_situ(
    url: str,
    run: str,
    spec: dict[str, tuple[Any, bool]],
    per_group: int,
    message: dict[str, Any],
    args: argparse.Namespace,
) -> dict[str, list[float]]:
    """us of the loop thread's CPU per frame delivered, per round, for each way of `spec`
    (its layer class and whether our receive loop runs the consumers), 4 groups of
    `per_group` real consumers each, the ways' rounds alternating."""
    groups = [f"game.1.seat.{n}" for n in range(3)] + ["game.1.spectators"]
    ways: dict[str, tuple[_Receivers, Any]] = {}
    for way, (cls, lean) in spec.items():
        prefix = f"bench-receive-{run}-{way}"
        layer = cls(hosts=[{"address": url}], prefix=prefix)
        receivers = _Receivers(f"bench-{way}", layer, groups, per_group, lean)
        await receivers.start()
        names = [f"{prefix}__group__{g}" for g in groups]
        data = layer.serialize(message)
        ways[way] = (receivers, _publisher(url, names, data, receivers.delivered))
    per_frame: dict[str, list[float]] = {way: [] for way in ways}
    frames = args.changes * len(groups) * per_group
    for index in range(args.receive_rounds + 1):
        # Each way first in every other round: neither gains from going second.
        for way in list(ways)[:: 1 if index % 2 else -1]:
            receivers, (asks, _) = ways[way]
            receivers.expect(frames)
            start = time.thread_time()
            asks.put(args.changes)
            await receivers.done.wait()
            cpu = time.thread_time() - start
            if index:  # the first round warms up
                per_frame[way].append(cpu / frames * 1e6)
    for receivers, (asks, thread) in ways.values():
        asks.put(None)
        thread.join(10)
        await receivers.stop()
    return per_frame


def _print_pair(label: str, per_frame: dict[str, list[float]], before: str, after: str) -> None:
    """One line: each way's median / p90 over rounds, and what `after` saved against
    `before` (median of each round's difference with the round just before or after it)."""
    row = []
    for way, xs in per_frame.items():
        p90 = statistics.quantiles(xs, n=10)[-1] if len(xs) > 1 else xs[0]
        row.append(f"{way} {statistics.median(xs):6.1f} / {p90:6.1f}")
    paired = [a - b for a, b in zip(per_frame[before], per_frame[after], strict=True)]
    saved = statistics.median(paired)
    share = saved / statistics.median(per_frame[before]) * 100
    print(
        f"  {label}: " + "   ".join(row) + f"   saved (median of pairs) {saved:.1f} us "
        f"({share:.0f} %), {after} lower in {sum(d > 0 for d in paired)} of {len(paired)} pairs"
    )


async def _loop_alone(lean: bool, sockets: int, frames: int) -> float:
    """us of CPU per message dispatched by the receive loop alone: `sockets` consumers' loops
    (Channels' `await_many_dispatch`, or ours), each over an idle client source and a queue
    standing for its channel; one message put in every queue at a time, the next once every
    handler has it (the shape of a group's frame). No Redis, no consumer class, no send."""
    from channels.exceptions import StopConsumer
    from channels.utils import await_many_dispatch

    from games.consumer_loop import dispatch_serially

    run = dispatch_serially if lean else await_many_dispatch
    queues = [asyncio.Queue[dict[str, Any]]() for _ in range(sockets)]
    got = 0
    all_got = asyncio.Event()

    async def dispatch(message: dict[str, Any]) -> None:
        nonlocal got
        if message["type"] == "stop":
            raise StopConsumer()
        got += 1
        if got == sockets:
            all_got.set()

    async def idle() -> dict[str, Any]:
        await asyncio.Future()
        raise AssertionError

    async def one(queue: asyncio.Queue[dict[str, Any]]) -> None:
        with contextlib.suppress(StopConsumer):
            await run([idle, queue.get], dispatch)

    loops = [asyncio.ensure_future(one(q)) for q in queues]
    message = {"type": "echo.frame", "text": "x"}
    await asyncio.sleep(0)
    start = time.thread_time()
    for _ in range(frames):
        got = 0
        all_got.clear()
        for q in queues:
            q.put_nowait(message)
        await all_got.wait()
    cpu = time.thread_time() - start
    for q in queues:
        q.put_nowait({"type": "stop"})
    await asyncio.gather(*loops)
    return cpu / (frames * sockets) * 1e6


async def dispatch_side(args: argparse.Namespace) -> None:
    """Channels' receive loop against ours (`games.consumer_loop`), per delivered frame, for
    each `--per-group`: the loop alone, then real consumers on the product's layer."""
    from django.conf import settings

    from games.layers import PubSubChannelLayer

    url = settings.REDIS_URL
    run = uuid.uuid4().hex[:8]
    print(
        "dispatch loop: us of the loop thread's CPU per frame delivered to a socket, "
        "median / p90 over rounds, Channels' await_many_dispatch against ours "
        "(games.consumer_loop), rounds alternating"
    )
    for per_group in args.per_group:
        alone: dict[str, list[float]] = {"channels": [], "ours": []}
        for index in range(2 * args.receive_rounds):
            way = list(alone)[index % 2]
            alone[way].append(await _loop_alone(way == "ours", 4 * per_group, 500))
        _print_pair(f"{per_group} per group, the loop alone", alone, "channels", "ours")
    message = {
        "type": "echo.frame",
        "version": 9,
        "prev_version": 8,
        "seats": {"11": 0, "12": 1, "13": 2},
        "text": "x" * 2000,
    }
    for per_group in args.per_group:
        spec = {"channels": (PubSubChannelLayer, False), "ours": (PubSubChannelLayer, True)}
        per_frame = await _in_situ(url, f"{run}-{per_group}", spec, per_group, message, args)
        _print_pair(f"{per_group} per group, in situ (4 groups)", per_frame, "channels", "ours")


def __getattr__(name: str) -> Any:
    """`send_cpu.DecodeOnceChannelLayer`: the candidate, for a daphne's `CHANNEL_LAYERS`."""
    if name == "DecodeOnceChannelLayer":
        return _decode_once_layer()
    raise AttributeError(name)


async def _daphne_round(
    url: str,
    per_group: int,
    changes: int,
    way: str,
    log: Any,
    settings_dir: str,
    app: str = "bench.echo_asgi:application",
) -> float:
    """One daphne serving the bare echo (`bench/echo_asgi.py`) through `way`'s layer, 4 seat
    groups of `per_group` sockets; ms of the daphne's CPU (user + system) per frame delivered
    while `changes` changes are published straight to Redis, one at a time."""
    import msgpack
    import psutil
    import redis.asyncio as aioredis
    import websockets

    prefix = f"bench-daphne-{uuid.uuid4().hex[:8]}"
    env = {**os.environ, "CHANNEL_PREFIX": prefix, "CHANNEL_LAYER": "pubsub"}
    env["PYTHONPATH"] = os.pathsep.join([settings_dir, str(BASE_DIR / "bench"), str(BASE_DIR)])
    if way == "decode-once":
        env["DJANGO_SETTINGS_MODULE"] = "bench_decode_once_settings"
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [sys.executable, "-m", "crisp_site.serve", "-b", "127.0.0.1", "-p", str(port)]
    proc = subprocess.Popen(  # noqa: S603 - this interpreter, a fixed module
        [*command, app], env=env, cwd=BASE_DIR, stdout=log, stderr=log
    )
    redis = aioredis.Redis.from_url(url)
    sockets: list[Any] = []
    try:
        for _ in range(300):  # until it listens (60 s at most)
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            await asyncio.sleep(0.2)
        for seat in range(4):
            for _ in range(per_group):
                sockets.append(
                    await websockets.connect(
                        f"ws://127.0.0.1:{port}/echo/0/{seat}/", compression=None
                    )
                )
        data = msgpack.packb({"type": "echo.frame", "text": "x" * 2000})
        names = [f"{prefix}__group__echo.0.seat.{seat}" for seat in range(4)]
        meter = psutil.Process(proc.pid)

        async def change() -> None:
            async with redis.pipeline(transaction=False) as pipe:
                for name in names:
                    pipe.publish(name, data)
                await pipe.execute()
            await asyncio.gather(*(asyncio.wait_for(ws.recv(), 30) for ws in sockets))

        await asyncio.sleep(0.5)  # every group_add done before the first publish
        for _ in range(20):
            await change()  # warm-up
        before = meter.cpu_times()
        for _ in range(changes):
            await change()
        after = meter.cpu_times()
        cpu = (after.user - before.user) + (after.system - before.system)
        return cpu / (changes * 4 * per_group) * 1000
    finally:
        for ws in sockets:
            await ws.close()
        await redis.aclose()
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


async def daphne_side(args: argparse.Namespace) -> None:
    """The bare echo's daphne per delivered frame, channels-redis's reader against the
    candidate's, one daphne at a time, alternately."""
    import tempfile

    from django.conf import settings

    with tempfile.TemporaryDirectory(prefix="bench-send-") as tmp:
        Path(tmp, "bench_decode_once_settings.py").write_text(
            "from crisp_site.settings import *  # noqa: F403\n"
            "CHANNEL_LAYERS['default']['BACKEND'] = 'send_cpu.DecodeOnceChannelLayer'  # noqa\n"
        )
        print(
            f"one daphne serving bench/echo_asgi.py, 4 seat groups x N sockets, "
            f"{args.changes} changes of 4 frames (2 KB) per daphne; ms of the daphne's CPU "
            "per frame delivered"
        )
        with open(Path(tmp, "daphne.log"), "w") as log:
            for per_group in args.per_group:
                got: dict[str, list[float]] = {"channels-redis": [], "decode-once": []}
                for index in range(args.daphne_pairs):
                    for way in list(got)[:: 1 if index % 2 == 0 else -1]:
                        got[way].append(
                            await _daphne_round(
                                settings.REDIS_URL, per_group, args.changes, way, log, tmp
                            )
                        )
                cells = "   ".join(
                    f"{way} " + " ".join(f"{x:.3f}" for x in xs) for way, xs in got.items()
                )
                print(f"  {per_group} per group: {cells}")


async def daphne_dispatch_side(args: argparse.Namespace) -> None:
    """The bare echo's daphne per delivered frame, its consumer run by Channels' loop against
    the same consumer run by ours (`SerialDispatchMixin` put first, in a generated module),
    one daphne at a time, alternately; the product's layer for both."""
    import tempfile

    from django.conf import settings

    with tempfile.TemporaryDirectory(prefix="bench-send-") as tmp:
        Path(tmp, "bench_lean_echo.py").write_text(
            "from channels.routing import ProtocolTypeRouter, URLRouter\n"
            "from django.urls import path\n"
            "from echo_asgi import EchoConsumer\n"
            "from games.consumer_loop import SerialDispatchMixin\n"
            "class LeanEcho(SerialDispatchMixin, EchoConsumer):\n"
            "    pass\n"
            "application = ProtocolTypeRouter({'websocket': URLRouter(\n"
            "    [path('echo/<int:table>/<int:seat>/', LeanEcho.as_asgi())])})\n"
        )
        apps = {"channels": "bench.echo_asgi:application", "ours": "bench_lean_echo:application"}
        print(
            f"one daphne serving bench/echo_asgi.py, 4 seat groups x N sockets, "
            f"{args.changes} changes of 4 frames (2 KB) per daphne; us of the daphne's CPU "
            "per frame delivered, its consumer run by Channels' loop or ours"
        )
        with open(Path(tmp, "daphne.log"), "w") as log:
            for per_group in args.per_group:
                got: dict[str, list[float]] = {way: [] for way in apps}
                for index in range(args.daphne_pairs):
                    for way in list(got)[:: 1 if index % 2 == 0 else -1]:
                        ms = await _daphne_round(
                            settings.REDIS_URL, per_group, args.changes, way, log, tmp, apps[way]
                        )
                        got[way].append(ms * 1000)
                _print_pair(f"{per_group} per group, daphne", got, "channels", "ours")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=1000)
    parser.add_argument("--receive", action="store_true", help="the receive side only")
    parser.add_argument(
        "--per-group", type=lambda v: [int(x) for x in v.split(",")], default=[1, 4, 8]
    )
    parser.add_argument("--changes", type=int, default=50)
    parser.add_argument("--receive-rounds", type=int, default=20)
    parser.add_argument("--daphne", action="store_true", help="the receive side in a daphne")
    parser.add_argument("--daphne-pairs", type=int, default=3)
    parser.add_argument(
        "--dispatch", action="store_true", help="Channels' receive loop against ours"
    )
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "crisp_site.settings")
    import django

    django.setup()
    print(f"load average {os.getloadavg()[0]:.1f}")
    if args.dispatch and args.daphne:
        asyncio.run(daphne_dispatch_side(args))
    elif args.dispatch:
        asyncio.run(dispatch_side(args))
    elif args.daphne:
        asyncio.run(daphne_side(args))
    elif args.receive:
        asyncio.run(receive_side(args))
    else:
        asyncio.run(run(args))
    print(f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
