"""What one presence heartbeat period costs a daphne's event loop, main's way against this
tree's (issue 25, session 18).

    .venv/bin/python bench/presence_cpu.py --sockets 100,400,1000 --rounds 5 --ticks 3 --period 3

Every socket of a process refreshes its presence every `REFRESH_SECONDS`; on main all of them
on the same instant (`presence.next_beat_in`): at 100 tables x 4 seats, 400 touches in one burst
on the loop that also carries every socket's frames. This measures that in ONE process, against
a PRIVATE `redis-server` started here on a unix socket (other Redis traffic on the machine does
not count in its CPU), with the product's own heartbeat: `GameConsumer._heartbeat` of N
consumer objects (no websocket; fake channel names; 80 % seat sockets, 4 per game, 20 %
spectators spread over the games), the beat shortened to `--period` seconds. Per steady-state
period (every member known: nothing changes, as in most ticks), every phase of it:

* CPU of the loop's thread (`time.thread_time` from just before the period's first beat to
  just before the next period: the loop is otherwise idle, so this is the ticks' Python and
  syscalls, task wake-ups included);
* the longest wall time from a beat to the last touch of it answered;
* the private Redis server's CPU (`INFO cpu`, used_cpu_user + used_cpu_sys deltas; over the
  whole window, so its idle housekeeping is in every way's figure);
* on separate periods, a loop-lag probe: a callback rescheduled every 1 ms; the longest gap
  between two of its runs, minus the 1 ms (how long another socket's ready frame would wait
  behind a tick; on a loaded machine, preemption by other processes shows here too).

The ways (`--ways`), interleaved per round (in order, then reversed) on the same sockets and
keys: `before` is main 7e5dc36 (`MainTouches` and `main_server_run_id` below are its
`presence._Touches` and `server_run_id`, verbatim but for the module prefix; one beat phase);
`after` is this tree as committed. For attribution: `run-id` (main's touches, the tree's run-id
read), `script` (the tree's send, which also refreshes the run id, with main's
`server_run_id`, one phase), `one-beat` (the tree on one phase). Prints the load average per
round and a median table at the end (markdown).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

BASE_DIR = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(BASE_DIR))


# --- main's send (7e5dc36), verbatim but for the module prefix ---------------------------------


def _main_touch_commands(
    pipe: Any, now: int, game_id: int, seat: int | None, channel_name: str, person: str | None
) -> int:
    from games import presence as p

    seats_key, spectators_key = p._key(game_id), p._spectators_key(game_id)
    if person is not None:
        pipe.zadd(p._online_key(), {person: now + p.TTL_SECONDS * 1000}, gt=True)
    pipe.zremrangebyscore(seats_key, "-inf", now)
    pipe.zremrangebyscore(spectators_key, "-inf", now)
    if seat is None:
        pipe.zadd(spectators_key, {channel_name: now + p.TTL_SECONDS * 1000})
        pipe.pexpire(spectators_key, p.TTL_SECONDS * 2000)
    else:
        pipe.zadd(seats_key, {p._member(seat, channel_name): now + p.TTL_SECONDS * 1000})
        pipe.pexpire(seats_key, p.TTL_SECONDS * 2000)
    pipe.zrange(seats_key, 0, -1)
    pipe.zcard(spectators_key)
    return 7 if person is not None else 6


def _main_touch_change(seat: int | None, results: list[Any]) -> Any:
    from games import presence as p

    seats_pruned, spectators_pruned, added, _, members, count = results[-6:]
    return p.Change(
        seats=p._seats(members),
        spectators=int(count),
        seats_changed=bool(seats_pruned or (added and seat is not None)),
        spectators_changed=bool(spectators_pruned or (added and seat is None)),
    )


class MainTouches:
    """main's `presence._Touches`: every touch of an iteration in one MULTI/EXEC."""

    def __init__(self) -> None:
        self.waiting: list[tuple[tuple[Any, ...], asyncio.Future[Any]]] = []
        self.sending: set[asyncio.Task[None]] = set()

    def _start_send(self) -> None:
        task = asyncio.ensure_future(self._send())
        self.sending.add(task)
        task.add_done_callback(self.sending.discard)

    async def touch(
        self, game_id: int, seat: int | None, channel_name: str, person: str | None
    ) -> Any:
        from games import presence as p

        loop = asyncio.get_running_loop()
        entry = ((game_id, seat, channel_name, person), loop.create_future())
        if not self.waiting:
            loop.call_soon(self._start_send)
        self.waiting.append(entry)
        try:
            return await asyncio.shield(entry[1])
        except asyncio.CancelledError:
            if entry in self.waiting:
                self.waiting.remove(entry)
            elif not entry[1].done():
                await asyncio.wait([entry[1]], timeout=p.CALL_TIMEOUT_SECONDS)
            raise

    async def _send(self) -> None:
        from redis.exceptions import RedisError

        from games import presence as p

        entries, self.waiting = self.waiting, []
        if not entries:
            return
        now = p._now_ms()
        try:
            async with (
                asyncio.timeout(p.CALL_TIMEOUT_SECONDS),
                p.client().pipeline(transaction=True) as pipe,
            ):
                sizes = [_main_touch_commands(pipe, now, *args) for args, _ in entries]
                results = await pipe.execute()
        except BaseException as exc:
            for _, future in entries:
                if not future.done():
                    future.set_exception(
                        exc if isinstance(exc, Exception) else RedisError("touch cancelled")
                    )
            if not isinstance(exc, Exception):
                raise
            return
        start = 0
        for (args, future), size in zip(entries, sizes, strict=True):
            if not future.done():
                future.set_result(_main_touch_change(args[1], results[start : start + size]))
            start += size


async def main_server_run_id() -> str:
    """main's `presence.server_run_id`: cached a second, but each stale caller reads it."""
    from games import presence as p

    loop = asyncio.get_running_loop()
    cached = p._run_ids.get(loop)
    if cached is not None and time.monotonic() - cached[0] < 1.0:
        return cached[1]
    async with asyncio.timeout(p.CALL_TIMEOUT_SECONDS):
        info = await p.client().info("server")
    run_id = str(info.get("run_id", ""))
    p._run_ids[loop] = (time.monotonic(), run_id)
    return run_id


# --- the private Redis -------------------------------------------------------------------------


def start_redis(directory: Path) -> tuple[subprocess.Popen[bytes], Path]:
    """A redis-server of our own on a unix socket (no TCP, no persistence)."""
    sock = directory / "redis.sock"
    proc = subprocess.Popen(  # noqa: S603
        [
            shutil.which("redis-server") or "redis-server",
            "--port",
            "0",
            "--unixsocket",
            str(sock),
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(directory),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    for _ in range(200):
        if sock.exists():
            break
        time.sleep(0.05)
    else:
        proc.kill()
        raise SystemExit("redis-server did not start")
    return proc, sock


def redis_cpu(sync: Any) -> float:
    info = sync.info("cpu")
    return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


# --- the sockets -------------------------------------------------------------------------------


class _User:
    is_authenticated = True

    def __init__(self, pk: int) -> None:
        self.pk = pk


def make_sockets(n: int, probe: Any) -> list[Any]:
    """N consumer objects as `connect` leaves them (no websocket): 80 % seats, 4 per game."""
    from channels.layers import get_channel_layer
    from django.contrib.auth.models import AnonymousUser

    from games.consumers import GameConsumer

    class BenchSocket(GameConsumer):
        async def _touch_presence(self, force: bool = False) -> Any:
            change = await super()._touch_presence(force)
            probe.touched()
            return change

    layer = get_channel_layer()
    seats = n * 4 // 5
    games = max(1, seats // 4)
    base = 10**9 + (uuid.uuid4().int % 10**6) * 1000
    sockets = []
    for i in range(n):
        s = BenchSocket.__new__(BenchSocket)
        s.channel_layer = layer
        s.channel_name = f"specific.bench{uuid.uuid4().hex[:12]}!{uuid.uuid4().hex[:12]}"
        if i < seats:
            s.game_id, s.seat, s.user = base + i // 4, i % 4, _User(10**6 + i)
        else:
            s.game_id, s.seat, s.user = base + (i - seats) % games, None, AnonymousUser()
        sockets.append(s)
    return sockets


class Probe:
    """When each touch of a period was answered; optionally a 1 ms loop-lag probe."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.done: list[float] = []
        self.lagging = False
        self.last_run = 0.0
        self.max_gap = 0.0

    def touched(self) -> None:
        self.done.append(self.loop.time())

    def start_lag(self) -> None:
        self.lagging, self.max_gap, self.last_run = True, 0.0, self.loop.time()
        self.loop.call_later(0.001, self._lag)

    def stop_lag(self) -> float:
        self.lagging = False
        return max(0.0, self.max_gap - 0.001)

    def _lag(self) -> None:
        if not self.lagging:
            return
        now = self.loop.time()
        self.max_gap = max(self.max_gap, now - self.last_run)
        self.last_run = now
        self.loop.call_later(0.001, self._lag)


async def one_period(
    n: int, probe: Probe, sync: Any, period: float, lag: bool
) -> tuple[float, float, float, float]:
    """One whole beat period, every phase of it: (loop CPU ms, the longest wall from a phase's
    beat to its last touch answered in ms, Redis CPU ms, the longest loop lag in ms)."""
    from games import presence

    loop = probe.loop
    beat = loop.time() + presence.next_beat_in(loop)
    if beat - loop.time() < 0.035 * period:  # room to settle before the beat
        beat += period
    await asyncio.sleep(beat - 0.03 * period - loop.time())
    probe.done = []
    r0 = redis_cpu(sync)
    if lag:
        probe.start_lag()
    c0 = time.thread_time()
    await asyncio.sleep(beat + 0.95 * period - loop.time())
    c1 = time.thread_time()
    gap = probe.stop_lag() if lag else 0.0
    r1 = redis_cpu(sync)
    if len(probe.done) != n:  # a burst longer than the window: the figures would mislead
        print(f"  (period with {len(probe.done)} touches answered, not {n}: raise --period)")
    step = period / presence.BEAT_PHASES
    wall = max(((t - beat) % step for t in probe.done), default=0.0)
    return (c1 - c0) * 1000, wall * 1000, (r1 - r0) * 1000, gap * 1000


async def run_n(n: int, args: argparse.Namespace, sync: Any, table: dict[Any, list[Any]]) -> None:
    from games import presence

    loop = asyncio.get_running_loop()
    probe = Probe(loop)
    sockets = make_sockets(n, probe)
    tree_run_id = presence.server_run_id
    ways = {  # (touches, run id, phases)
        "before": (MainTouches, main_server_run_id, 1),
        "run-id": (MainTouches, tree_run_id, 1),  # main's touches, the tree's shared INFO
        "script": (presence._Touches, main_server_run_id, 1),  # the tree's send, one phase
        "one-beat": (presence._Touches, tree_run_id, 1),  # the tree but on one phase
        "after": (presence._Touches, tree_run_id, args.phases),
    }
    presence._touches[loop] = presence._Touches()
    # As connect does: registered (one batch), then beating.
    await asyncio.gather(*(s._touch_presence(force=True) for s in sockets))
    for s in sockets:
        s.heartbeat = asyncio.ensure_future(s._heartbeat())
    try:
        for round_ in range(args.rounds):
            order = args.ways if round_ % 2 == 0 else args.ways[::-1]
            line = [f"N={n} round {round_ + 1} load {os.getloadavg()[0]:.1f}"]
            for way in order:
                touches, run_id, phases = ways[way]
                presence._touches[loop] = touches()  # type: ignore[assignment]
                presence.server_run_id = run_id  # type: ignore[assignment]
                presence.BEAT_PHASES = phases  # type: ignore[misc]
                # Warm: the heartbeats move to their phases (one period may miss some).
                await asyncio.sleep(presence.REFRESH_SECONDS)
                cpu, wall, red, lags = [], [], [], []
                for _ in range(args.ticks):
                    c, w, r, _ = await one_period(n, probe, sync, args.period, lag=False)
                    cpu.append(c)
                    wall.append(w)
                    red.append(r)
                for _ in range(args.ticks):
                    lags.append((await one_period(n, probe, sync, args.period, lag=True))[3])
                row = (statistics.median(cpu), statistics.median(wall), statistics.median(red))
                table[(n, way)].append((*row, statistics.median(lags)))
                line.append(
                    f"{way}: cpu {row[0]:.1f} wall {row[1]:.1f} redis {row[2]:.1f} "
                    f"lag {statistics.median(lags):.1f} ms"
                )
            print(" | ".join(line), flush=True)
    finally:
        presence.server_run_id = tree_run_id  # type: ignore[assignment]
        for s in sockets:
            task, s.heartbeat = s.heartbeat, None
            if task is not None:
                task.cancel()
        await asyncio.sleep(0.05)
        for s in sockets:
            await presence.leave(s.game_id, s.seat, s.channel_name)


async def run(args: argparse.Namespace, sync: Any) -> None:
    from games import presence

    presence.REFRESH_SECONDS = args.period  # type: ignore[assignment]
    table: dict[Any, list[Any]] = {(n, w): [] for n in args.sockets for w in args.ways}
    for n in args.sockets:
        await run_n(n, args, sync, table)
    print(
        "\n| sockets | way | loop CPU / tick | wall to last touch | loop lag (max gap) "
        "| Redis CPU / tick |"
    )
    print("|---|---|---|---|---|---|")
    for n in args.sockets:
        for way in args.ways:
            rows = table[(n, way)]
            med = [statistics.median(r[i] for r in rows) for i in range(4)]
            print(
                f"| {n} | {way} | {med[0]:.1f} ms | {med[1]:.1f} ms | {med[3]:.1f} ms "
                f"| {med[2]:.1f} ms |"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sockets", default="100,400,1000")
    parser.add_argument("--rounds", type=int, default=4, help="interleaved pairs per N")
    parser.add_argument("--ticks", type=int, default=3, help="measured ticks per way and round")
    parser.add_argument("--period", type=float, default=2.0, help="the beat, seconds")
    parser.add_argument("--phases", type=int, default=5, help="the tree's phases per beat")
    parser.add_argument(
        "--ways",
        default="before,after",
        help="of before (main), after (this tree), run-id (main's touches, the tree's run id), "
        "script (the tree's touches, main's run id), one-beat (the tree on one phase)",
    )
    args = parser.parse_args()
    args.ways = args.ways.split(",")
    args.sockets = [int(x) for x in args.sockets.split(",")]
    directory = Path(tempfile.mkdtemp(prefix="presence-cpu-"))
    proc, sock = start_redis(directory)
    try:
        os.environ["REDIS_URL"] = f"unix://{sock}"
        os.environ["CHANNEL_PREFIX"] = f"bench-tick-{uuid.uuid4().hex[:8]}"
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "crisp_site.settings")
        import django
        import redis

        django.setup()
        sync = redis.Redis(unix_socket_path=str(sock))
        print(f"load average {os.getloadavg()[0]:.1f}; private redis-server on a unix socket")
        asyncio.run(run(args, sync))
    finally:
        proc.terminate()
        proc.wait(10)
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()
