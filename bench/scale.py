"""Scale benchmark (issue #13): the real stack against the bare Channels stack, in one run.

    make bench-scale                                    # 10,100,250,500,1000 tables
    .venv/bin/python bench/scale.py --tables 10,100 --daphnes 1,2 --seconds 60

For every daphne count (`--daphnes`, default 1,2) and table count (`--tables`):

1. **Product, human pace**: daphne xD serving `crisp_site.asgi` (several on one port, each with
   its own SO_REUSEPORT socket: `crisp_site.serve --reuse-port`, README "Scaling out"), a
   Celery worker (threads) and
   beat, a private Redis and a fresh PostgreSQL database (`--database-url`, default
   `postgres://postgres@127.0.0.1:5432/crisp_bench_scale`, dropped and created per run).
   N tables of 4 seats (Crisp, product timers: 2 s start delay, 3 s windows; the draw clock
   `--draw-seconds`, and `--timeout-share` of first draws are left to time out so the
   `draw_timeout` timer is exercised). Each seat acts 1-3 s (`--think`) after it may: its draw
   after the turn's `start_at` (computed from the frame, by the server's clock), its discard
   (or King) after its draw's ack. Measured over `--seconds` after `--warmup`:
   sustained actions/s and changes/s, action -> every seat's socket p50/p99/max, timer lateness
   p50/p99 (`may_start`, `window_closed`, `draw_timeout`), errors, CPU seconds per process
   (each daphne, worker, beat, Redis, the PostgreSQL backends of the bench database, and this
   client process).
2. **Bare echo, same shape and rate**: daphne xD serving `bench/echo_asgi.py` (same binary,
   same settings, same channel layer and Redis), the same N tables x 4 sockets, the same
   number of groups per table (4 seats + spectators), the product's measured changes/s as the
   message rate and its mean update frame size as the payload: p50/p99/max send -> every seat.
3. **Flat-out** (`--flat-out`, at the largest N of the list unless `--flat-out-tables`): the
   product with no think time, and the echo with every seat sending as soon as its previous
   message came back: frames delivered to sockets per second. Product / echo ratio.

Every product latency and rate is printed next to the echo's and as a ratio to it.
`--profile S` records S seconds of py-spy (when installed) on each daphne and the worker in
the middle of the product run and prints the hottest frames.

The client is one asyncio process (orjson when installed); its own CPU seconds are printed so
a run whose client is the bottleneck shows it.
"""

from __future__ import annotations

import argparse
import asyncio
import bisect
import contextlib
import json
import os
import random
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

BASE_DIR = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
sys.path.insert(0, str(BASE_DIR))

from live import Proc  # noqa: E402 - bench/ is this script's own directory

try:
    import orjson

    loads = orjson.loads

    def dumps(obj: Any) -> str:
        return orjson.dumps(obj).decode()
except ImportError:  # the bench still runs, a little heavier on the client
    loads = json.loads

    def dumps(obj: Any) -> str:
        return json.dumps(obj, separators=(",", ":"))


SEATS = 4


def pct(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_listening(pids: list[int], port: int, timeout: float = 60) -> None:
    """Until every one of ``pids`` listens on ``port`` (daphnes sharing it: ``wait_ports``
    sees the first one only)."""
    import psutil

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if all(
            any(
                c.status == psutil.CONN_LISTEN and c.laddr.port == port
                for c in psutil.Process(pid).net_connections("tcp")
            )
            for pid in pids
        ):
            return
        time.sleep(0.2)
    raise RuntimeError(f"not every daphne of {pids} listens on {port}")


def wait_ports(ports: list[int], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ok = True
        for p in ports:
            with socket.socket() as s:
                ok = ok and s.connect_ex(("127.0.0.1", p)) == 0
        if ok:
            return
        time.sleep(0.2)
    raise RuntimeError(f"ports {ports} did not open")


# --- CPU accounting ---------------------------------------------------------------------------


def cpu_of(pid: int) -> float:
    import psutil

    try:
        t = psutil.Process(pid).cpu_times()
        return t.user + t.system + t.children_user + t.children_system
    except psutil.Error:
        return 0.0


def postgres_cpu(dbname: str) -> float:
    """CPU seconds of the PostgreSQL backends serving the bench database (none of anyone
    else's: the machine is shared)."""
    import psutil

    total = 0.0
    for proc in psutil.process_iter(["name", "cmdline"]):
        try:
            cmd = " ".join(proc.info["cmdline"] or [])
            if cmd.startswith("postgres:") and f" {dbname} " in f"{cmd} ":
                t = proc.cpu_times()
                total += t.user + t.system
        except psutil.Error:
            continue
    return total


class CpuMeter:
    def __init__(self, procs: dict[str, int], dbname: str | None) -> None:
        self.procs, self.dbname = procs, dbname

    def read(self) -> dict[str, float]:
        out = {name: cpu_of(pid) for name, pid in self.procs.items()}
        if self.dbname:
            out["postgres"] = postgres_cpu(self.dbname)
        return out


# --- the client ---------------------------------------------------------------------------------


class Seat:
    """One seat's socket: keeps the version and state, records when each version arrived."""

    def __init__(self, url: str, name: str, stats: Stats) -> None:
        self.url, self.name, self.stats = url, name, stats
        self.ws: Any = None
        self.version = -1
        self.state: dict[str, Any] | None = None
        self.arrivals_v: list[int] = []
        self.arrivals_t: list[float] = []
        self.pending: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self.changed = asyncio.Event()
        self.ids = 0
        self.skew_ms = 0.0
        self.task: asyncio.Task[None] | None = None
        self.ready = asyncio.Event()
        self.closing = False
        self.background: set[asyncio.Future[None]] = set()

    async def start(self) -> None:
        self.task = asyncio.create_task(self._run())
        await asyncio.wait_for(self.ready.wait(), 60)

    async def _run(self) -> None:
        import websockets

        while not self.closing:
            url = self.url + (f"&version={self.version}" if self.version >= 0 else "")
            try:
                async with websockets.connect(
                    url, open_timeout=30, max_size=2**22, compression=None
                ) as ws:
                    self.ws = ws
                    async for text in ws:
                        self.on_frame(text)
            except Exception as error:  # every failure is counted
                if not self.closing:
                    self.stats.errors[f"socket: {type(error).__name__}"] += 1
            finally:
                self.ws = None
                for fut in self.pending.values():
                    if not fut.done():
                        fut.set_exception(ConnectionError("closed"))
                self.pending.clear()
            if not self.closing:
                self.stats.errors["socket closed"] += 1
                await asyncio.sleep(0.5)

    def on_frame(self, text: str | bytes) -> None:
        now = time.time()
        frame = loads(text)
        kind = frame.get("type")
        if "server_time" in frame:
            self.skew_ms = frame["server_time"] - now * 1000
        if kind in ("update", "snapshot"):
            self.stats.frames += 1
            self.stats.frame_bytes += len(text)
            v = frame["version"]
            if kind == "update" and frame["prev_version"] > self.version >= 0:
                self.stats.resyncs += 1
                task = asyncio.ensure_future(self.send({"type": "resync", "version": self.version}))
                self.background.add(task)
                task.add_done_callback(self.background.discard)
                return
            if v > self.version:
                self.version = v
                self.state = frame["state"]["state"]
                self.arrivals_v.append(v)
                self.arrivals_t.append(now)
                self.ready.set()
                self.changed.set()
        elif kind in ("ack", "error"):
            fut = self.pending.pop(frame.get("id"), None)
            if fut is not None and not fut.done():
                fut.set_result(frame)
            elif kind == "error":
                self.stats.errors[f"error frame: {frame.get('code')}"] += 1
        elif kind == "echo":
            self.stats.frames += 1
            self.stats.frame_bytes += len(text)
            self.arrivals_v.append(frame["n"])
            self.arrivals_t.append(now)
            fut = self.pending.pop(frame.get("id"), None)
            if fut is not None and not fut.done():
                fut.set_result(frame)

    async def send(self, frame: dict[str, Any]) -> None:
        if self.ws is not None:
            with contextlib.suppress(Exception):
                await self.ws.send(dumps(frame))

    async def request(self, frame: dict[str, Any], timeout: float = 30) -> dict[str, Any]:
        self.ids += 1
        ref = f"{self.name}.{self.ids}"
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.pending[ref] = fut
        await self.send({**frame, "id": ref})
        return await asyncio.wait_for(fut, timeout)

    def arrival_of(self, version: int) -> float | None:
        """When this socket first had `version` or a later one."""
        i = bisect.bisect_left(self.arrivals_v, version)
        return self.arrivals_t[i] if i < len(self.arrivals_t) else None

    async def wait(self, check: Any, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while not check():
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            self.changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.changed.wait(), left)
        return True

    async def stop(self) -> None:
        self.closing = True
        if self.ws is not None:
            with contextlib.suppress(Exception):
                await self.ws.close()
        if self.task is not None:
            self.task.cancel()
            with contextlib.suppress(BaseException):
                await self.task


class Stats:
    def __init__(self) -> None:
        self.errors: Counter[str] = Counter()
        self.frames = 0
        self.frame_bytes = 0
        self.resyncs = 0
        self.moved_on = 0  # moves not made: the table moved on while the player thought
        self.sent: list[tuple[int, int, float]] = []  # (table index, version, t0)


async def connect_all(seats: list[Seat]) -> None:
    for i in range(0, len(seats), 100):
        await asyncio.gather(*(s.start() for s in seats[i : i + 100]))


def still_asked(state: dict[str, Any] | None, key: tuple[int, int, int], draw: bool) -> bool:
    """Whether the seat's table still asks it for this move of turn `key` (round, turn, draw):
    a draw while that draw is open, a play while it holds the card it drew."""
    t = state and state.get("turn")
    if not t or t["seat"] != state["seat"] or (state["round"], t["no"], t["draw_no"]) != key:
        return False
    if draw:
        return t["phase"] in ("start", "draw")
    held = state.get("held") or {}
    return t["phase"] == "play" and held.get("seat") == state["seat"]


async def product_bot(
    me: Seat,
    index: int,
    stats: Stats,
    cfg: dict[str, Any],
    stop_at: float,
    window_from: float,
    rng: random.Random,
) -> None:
    """Act 1-3 s after it may: draw after `start_at` (server clock), discard after the ack."""
    think = cfg["think"]
    done: set[tuple[int, int, int]] = set()
    while time.monotonic() < stop_at:

        def mine() -> bool:
            st = me.state
            t = st and st.get("turn")
            return bool(
                t
                and t["seat"] == st["seat"]
                and t["phase"] in ("start", "draw")
                and (st["round"], t["no"], t["draw_no"]) not in done
            )

        if not await me.wait(mine, max(0.1, stop_at - time.monotonic())):
            return
        st = me.state
        assert st is not None
        t = st["turn"]
        key = (st["round"], t["no"], t["draw_no"])
        done.add(key)
        if cfg["timeout_share"] and t["draw_no"] == 1 and rng.random() < cfg["timeout_share"]:
            continue  # let this draw's clock run out (the draw_timeout timer)
        may_at = (t["start_at"] - me.skew_ms) / 1000 if t["phase"] == "start" else time.time()
        await asyncio.sleep(max(0.0, may_at - time.time()) + rng.uniform(*think))
        for action in ({"type": "draw", "source": "deck"}, None):
            if action is None:
                await asyncio.sleep(rng.uniform(*think))
                held = (me.state or {}).get("held") or {}
                card = held.get("card")
                action = {"type": "king"} if card and card[0] == "K" else {"type": "discard"}
            # Look at the table again before moving, as a player does after thinking: a seat
            # that timed out twice in a row is played by a computer until its player moves
            # again (games.services.commit._sit_in), and that computer may have made this very
            # move meanwhile (the refusals main's runs counted as errors, session 20).
            if not still_asked(me.state, key, action["type"] == "draw"):
                stats.moved_on += 1
                break
            t0 = time.time()
            try:
                ack = await me.request({"type": "act", "action": action})
            except (TimeoutError, ConnectionError) as error:
                stats.errors[f"act: {type(error).__name__}"] += 1
                break
            if ack["type"] != "ack":
                stats.errors[f"act refused: {ack.get('code')}"] += 1
                break
            if t0 >= window_from:
                stats.sent.append((index, ack["version"], t0))
            await me.wait(lambda v=ack["version"]: me.version >= v, 30)


def every_seat(
    tables: list[list[Seat]], sent: list[tuple[int, int, float]]
) -> tuple[list[float], int]:
    out, missing = [], 0
    for index, version, t0 in sent:
        arrivals = [s.arrival_of(version) for s in tables[index]]
        if None in arrivals:
            missing += 1
            continue
        out.append((max(arrivals) - t0) * 1000)  # type: ignore[type-var]
    return out, missing


async def client_product(
    ports: list[int], tables: list[tuple[int, list[str]]], cfg: dict[str, Any], start_games: Any
) -> dict[str, Any]:
    stats = Stats()
    seats = [
        [
            Seat(
                f"ws://127.0.0.1:{ports[(t + s) % len(ports)]}/ws/games/{gid}/?token={tok}",
                f"t{t}s{s}",
                stats,
            )
            for s, tok in enumerate(toks)
        ]
        for t, (gid, toks) in enumerate(tables)
    ]
    flat = [s for table in seats for s in table]
    await connect_all(flat)
    await asyncio.to_thread(_closing(start_games))
    rng = random.Random(13)
    begin = time.monotonic()
    window_from = time.time() + cfg["warmup"]
    stop_at = begin + cfg["warmup"] + cfg["seconds"]
    versions0: list[int] = []
    frames0 = bytes0 = 0
    cpu0: dict[str, float] = {}

    async def mark() -> None:
        nonlocal frames0, bytes0, cpu0
        await asyncio.sleep(cfg["warmup"])
        versions0.extend(max(s.version for s in table) for table in seats)
        frames0, bytes0 = stats.frames, stats.frame_bytes
        cpu0 = {**cfg["meter"].read(), "client": time.process_time()}
        if cfg.get("on_window"):
            await asyncio.to_thread(_closing(cfg["on_window"]))

    marker = asyncio.create_task(mark())
    await asyncio.gather(
        *(
            product_bot(s, i, stats, cfg, stop_at, window_from, rng)
            for i, table in enumerate(seats)
            for s in table
        ),
        return_exceptions=True,
    )
    await marker
    cpu1 = {**cfg["meter"].read(), "client": time.process_time()}
    changes = sum(max(s.version for s in table) for table in seats) - sum(versions0)
    await asyncio.sleep(1.0)
    lat, missing = every_seat(seats, stats.sent)
    await asyncio.gather(*(s.stop() for s in flat))
    frames = stats.frames - frames0
    return {
        "acts": len(stats.sent),
        "changes": changes,
        "every": lat,
        "missing": missing,
        "frames": frames,
        "frame_size": (stats.frame_bytes - bytes0) / max(1, frames),
        "errors": stats.errors,
        "resyncs": stats.resyncs,
        "moved_on": stats.moved_on,
        "cpu": {k: cpu1[k] - cpu0.get(k, 0.0) for k in cpu1},
    }


async def client_echo(ports: list[int], n_tables: int, cfg: dict[str, Any]) -> dict[str, Any]:
    """The same sockets and groups as the product; `rate` messages/s in all (None: flat out)."""
    stats = Stats()
    seats = [
        [
            Seat(
                f"ws://127.0.0.1:{ports[(t + s) % len(ports)]}/echo/{t}/{s}/?x=1",
                f"t{t}s{s}",
                stats,
            )
            for s in range(SEATS)
        ]
        for t in range(n_tables)
    ]
    flat = [s for table in seats for s in table]
    for s in flat:
        s.ready.set()

    async def connected(s: Seat) -> None:
        s.task = asyncio.create_task(s._run())
        while s.ws is None:
            await asyncio.sleep(0.05)

    for i in range(0, len(flat), 100):
        await asyncio.wait_for(asyncio.gather(*(connected(s) for s in flat[i : i + 100])), 60)
    await asyncio.sleep(1.0)
    rng = random.Random(17)
    counter = iter(range(1, 1 << 62))
    begin = time.monotonic()
    window_from = time.time() + cfg["warmup"]
    stop_at = begin + cfg["warmup"] + cfg["seconds"]
    pad = int(cfg["frame_size"])
    rate = cfg["rate"]
    frames0 = 0
    cpu0: dict[str, float] = {}

    async def send_one(me: Seat, index: int) -> None:
        n = next(counter)
        t0 = time.time()
        try:
            await me.request({"type": "echo", "n": n, "pad": pad}, timeout=30)
        except (TimeoutError, ConnectionError) as error:
            stats.errors[f"echo: {type(error).__name__}"] += 1
            return
        if t0 >= window_from:
            stats.sent.append((index, n, t0))

    async def paced(index: int, table: list[Seat]) -> None:
        mean = n_tables / rate
        while True:
            await asyncio.sleep(min(rng.uniform(0, 2 * mean), stop_at - time.monotonic()))
            if time.monotonic() >= stop_at:
                return
            sends.add(asyncio.ensure_future(send_one(rng.choice(table), index)))

    sends: set[asyncio.Future[None]] = set()

    async def flat_out(index: int, me: Seat) -> None:
        while time.monotonic() < stop_at:
            await send_one(me, index)

    async def mark() -> None:
        nonlocal frames0, cpu0
        await asyncio.sleep(cfg["warmup"])
        frames0 = stats.frames
        cpu0 = {**cfg["meter"].read(), "client": time.process_time()}

    marker = asyncio.create_task(mark())
    if rate:
        await asyncio.gather(*(paced(i, t) for i, t in enumerate(seats)))
        await asyncio.gather(*sends)
    else:
        await asyncio.gather(*(flat_out(i, s) for i, t in enumerate(seats) for s in t))
    await marker
    frames = stats.frames - frames0
    cpu1 = {**cfg["meter"].read(), "client": time.process_time()}
    await asyncio.sleep(1.0)
    # Arrival "versions" are message numbers, in order per socket only by luck: look them up.
    lat, missing = [], 0
    where = [[dict(zip(s.arrivals_v, s.arrivals_t, strict=True)) for s in t] for t in seats]
    for index, n, t0 in stats.sent:
        got = [w.get(n) for w in where[index]]
        if None in got:
            missing += 1
            continue
        lat.append((max(got) - t0) * 1000)  # type: ignore[type-var]
    await asyncio.gather(*(s.stop() for s in flat))
    return {
        "acts": len(stats.sent),
        "every": lat,
        "missing": missing,
        "frames": frames,
        "errors": stats.errors,
        "cpu": {k: cpu1[k] - cpu0.get(k, 0.0) for k in cpu1},
    }


# --- the stacks -----------------------------------------------------------------------------


def _closing(fn: Callable[[], Any]) -> Callable[[], None]:
    """``fn`` for a worker thread, giving its database connection back to the pool after.

    A Django connection belongs to the thread that opened it; the executor's threads never
    closed theirs, so each cell held more of the bench process's 10 pooled connections until
    the 500-table cell with two daphnes waited 20 s for one and the run died.
    """

    def run() -> None:
        from django.db import connections

        try:
            fn()
        finally:
            connections.close_all()

    return run


def database_reset(url: str) -> str:
    """Drop and create the bench database; its name."""
    import psycopg

    name = url.rsplit("/", 1)[1]
    admin = url.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    return name


_people: list[tuple[Any, str]] = []


def make_tables(n: int) -> list[tuple[int, list[str]]]:
    """n fresh lobbies of 4 seats, started later. The people (users and API tokens) are made
    once and reused: a user may sit at many games, and earlier runs' games are abandoned."""
    from django.contrib.auth import get_user_model

    from accounts.services import token_create
    from games import services

    user_model = get_user_model()
    stamp = time.monotonic_ns()
    while len(_people) < n * SEATS:
        u = user_model.objects.create_user(username=f"s{stamp}-{len(_people)}", password=None)
        _people.append((u, token_create(user=u, name="bench")[1]))
    tables = []
    for t in range(n):
        people = _people[t * SEATS : (t + 1) * SEATS]
        game = services.game_create(host=people[0][0], settings={"target_score": 150})
        for u, _ in people[1:]:
            services.game_join(game=game.pk, user=u)
        tables.append((game.pk, [tok for _, tok in people]))
    return tables


def lateness(game_ids: list[int], since: float) -> dict[str, list[float]]:
    from games import clock
    from games.models import Event

    out: dict[str, list[float]] = {"may_start": [], "window_closed": [], "draw_timeout": []}
    rows = Event.objects.filter(
        game_id__in=game_ids,
        created_at__gte=clock.to_datetime(int(since * 1000)),
        type__in=["window_closed", "timeout", "draw_ready"],
    )
    for row in rows.iterator(chunk_size=5000):
        due = row.data.get("at")
        if due is None or (row.type == "draw_ready" and row.data.get("draw_no") != 1):
            continue  # a King's extra draw opens at once: no timer involved
        if row.type == "draw_ready" and row.data.get("turn") == 1:
            continue  # a round's first turn opens with memorise_over, not may_start
        key = {"timeout": "draw_timeout", "draw_ready": "may_start"}.get(row.type, row.type)
        out[key].append(float(clock.from_datetime(row.created_at) - due))
    return out


class Stack:
    """daphne xD (product or echo application), and for the product a worker and beat."""

    def __init__(
        self,
        app: str,
        daphnes: int,
        env: dict[str, str],
        logs: Path,
        tag: str,
        redis_pid: int | None,
        dbname: str | None,
    ) -> None:
        # Several daphnes serve ONE port, as production runs them (README, "Scaling out"):
        # each binds it with SO_REUSEPORT (`crisp_site.serve --reuse-port`) and the kernel
        # spreads the connections; the client connects every socket to that one port.
        port = free_port()
        self.ports = [port] * daphnes
        shared = ["--reuse-port"] if daphnes > 1 else []
        # `crisp_site.serve` is daphne as `make run` starts it (close frames, not TCP drops),
        # for the echo too: the same server code under both applications.
        self.procs = [
            Proc(
                f"{tag}-daphne{i}",
                [
                    str(BIN / "python"),
                    "-m",
                    "crisp_site.serve",
                    *shared,
                    "-b",
                    "127.0.0.1",
                    "-p",
                    str(p),
                    app,
                ],
                env,
                logs,
            )
            for i, p in enumerate(self.ports)
        ]
        if app.startswith("crisp_site"):
            self.procs.append(
                Proc(
                    f"{tag}-worker",
                    [
                        str(BIN / "celery"),
                        "-A",
                        "crisp_site",
                        "worker",
                        "--loglevel",
                        "WARNING",
                        "--pool",
                        "threads",
                        "--concurrency",
                        "8",
                        "--without-mingle",
                        "--without-gossip",
                    ],
                    env,
                    logs,
                )
            )
            self.procs.append(
                Proc(
                    f"{tag}-beat",
                    [
                        str(BIN / "celery"),
                        "-A",
                        "crisp_site",
                        "beat",
                        "--loglevel",
                        "WARNING",
                        "--schedule",
                        str(logs / f"{tag}-beat-schedule"),
                    ],
                    env,
                    logs,
                )
            )
        wait_ports(self.ports)
        wait_listening([p.p.pid for p in self.procs if "-daphne" in p.name], port)
        pids = {p.name[len(tag) + 1 :]: p.p.pid for p in self.procs}
        if redis_pid:
            pids["redis"] = redis_pid
        self.meter = CpuMeter(pids, dbname)
        if app.startswith("crisp_site"):
            time.sleep(3)  # the worker connects to the broker

    def errors(self) -> int:
        return sum(p.errors() for p in self.procs)

    def stop(self) -> None:
        for proc in reversed(self.procs):
            proc.stop()


def profile(stack: Stack, seconds: float, logs: Path, tag: str) -> dict[str, Path]:
    """py-spy `raw` (collapsed) stacks of each daphne and the worker, `seconds` long."""
    spy = shutil.which("py-spy") or str(BIN / "py-spy")
    if not Path(spy).exists():
        print("  (py-spy not installed: no profile; pip install -r requirements-dev.txt)")
        return {}
    out, runs = {}, []
    for proc in stack.procs:
        if "beat" in proc.name:
            continue
        # Two views: every thread that is not idle (time spent waiting on PostgreSQL counts:
        # psycopg waits in Python), and only the thread holding the GIL (where the CPU goes).
        for view, extra in (("wall", []), ("gil", ["--gil"])):
            path = logs / f"{proc.name}.pyspy-{view}.txt"
            runs.append(
                subprocess.Popen(  # noqa: S603
                    [
                        spy,
                        "record",
                        "-p",
                        str(proc.p.pid),
                        "-d",
                        str(int(seconds)),
                        "-r",
                        "50",
                        "-f",
                        "raw",
                        "-o",
                        str(path),
                        "--nonblocking",
                        "--threads",
                        *extra,
                    ],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            )
            out[f"{proc.name} ({view})"] = path
    for run in runs:
        run.wait()
    return out


#: What a sampled stack was doing, by the first of these frames found in it.
PROFILE_KINDS = (
    ("_act (games/consumers.py", "an action over a socket (service layer, its queries, the ack)"),
    ("_catch_up (games/consumers.py", "a socket's catch-up from the database (resync, connect)"),
    ("fire_timer (games/tasks.py", "a timer (service layer and its queries)"),
    ("fire_deadline (games/tasks.py", "a timer task (service layer and its queries)"),
    ("run (games/timers.py", "the timer loop (popping due entries)"),
    ("enqueue_deadlines (games/scheduling.py", "scheduling timers (ZADD)"),
    ("_broadcast (games/broadcast.py", "broadcast: reading the table, frames, channel layer"),
    ("sweep (games/tasks.py", "the sweep (beat, every 2 s)"),
    ("bot_move (games/tasks.py", "computer players"),
    ("game_update (games/consumers.py", "forwarding a frame to a socket"),
    ("_heartbeat (games/consumers.py", "presence heartbeats"),
    ("kombu", "Celery/kombu machinery"),
    ("celery", "Celery/kombu machinery"),
    ("twisted", "daphne/Twisted I/O"),
    ("autobahn", "daphne/Twisted I/O"),
    ("channels_redis", "channel layer (Redis)"),
)


def summarize_profile(path: Path, top: int = 14) -> list[str]:
    """The frames holding the most samples (inclusive) and doing the most work (self),
    idle waits (a thread blocked in select/epoll/queue get) left out so the busy part shows."""
    if not path.exists():
        return ["  (no samples)"]
    inclusive: Counter[str] = Counter()
    own: Counter[str] = Counter()
    kinds: Counter[str] = Counter()
    total = 0
    idle = (
        "select (",
        "poll (",
        "_worker (concurrent",
        "wait (threading",
        "get (queue",
        "run_forever",
        "_run_once",
        "sleep (",
        "doRead",
        "doPoll",
        "mainLoop",
    )
    for raw in path.read_text(errors="replace").splitlines():
        stack, _, count = raw.rpartition(" ")
        if not count.isdigit():
            continue
        frames = stack.split(";")
        leaf = frames[-1]
        if any(i in leaf for i in idle):
            continue
        n = int(count)
        total += n
        own[leaf] += n
        kinds[next((label for mark, label in PROFILE_KINDS if mark in stack), "other")] += n
        for f in set(frames):
            inclusive[f] += n
    lines = [f"  busy samples: {total}; by what the thread was doing:"]
    lines += [f"    {c / total:6.1%}  {k}" for k, c in kinds.most_common()]
    lines += ["  self:"] + [f"    {c / total:6.1%}  {f[:110]}" for f, c in own.most_common(top)]
    project = [
        (f, c)
        for f, c in inclusive.most_common(400)
        if "games/" in f or "crisp_site/" in f or "channels" in f or "django/db" in f
    ]
    lines += ["  inclusive (project, channels, Django ORM):"]
    lines += [f"    {c / total:6.1%}  {f[:110]}" for f, c in project[:top]]
    return lines


# --- one size -------------------------------------------------------------------------------


def fmt(values: list[float]) -> tuple[float, float, float]:
    return pct(values, 50), pct(values, 99), max(values, default=float("nan"))


def ratio(a: float, b: float) -> str:
    return f"{a / b:5.2f}x" if b and b == b and a == a else "  n/a"


def run_size(
    n: int,
    daphnes: int,
    args: argparse.Namespace,
    env: dict[str, str],
    logs: Path,
    redis: Any,
    dbname: str | None,
    think: tuple[float, float],
    seconds: float,
    label: str,
    profile_s: float = 0,
) -> dict[str, Any]:
    from games import services
    from games.models import Game

    tag = f"{label}-n{n}-d{daphnes}"
    t_setup = time.monotonic()
    tables = make_tables(n)
    ids = [g for g, _ in tables]
    setup_s = time.monotonic() - t_setup
    stack = Stack(
        "crisp_site.asgi:application",
        daphnes,
        env,
        logs,
        tag,
        redis.process.pid if redis.process else None,
        dbname,
    )
    window: dict[str, float] = {}
    prof: dict[str, Path] = {}

    def start_games() -> None:
        for g in ids:
            services.game_start(
                game=g, user=Game.objects.get(pk=g).host, timers={"draw_seconds": args.draw_seconds}
            )

    def on_window() -> None:
        window["from"] = time.time()
        if profile_s:
            prof.update(profile(stack, profile_s, logs, tag))

    try:
        cfg = {
            "think": think,
            "warmup": args.warmup,
            "seconds": seconds,
            "timeout_share": args.timeout_share if think[1] else 0.0,
            "meter": stack.meter,
            "on_window": on_window,
        }
        product = asyncio.run(client_product(stack.ports, tables, cfg, start_games))
        product["late"] = lateness(ids, window.get("from", time.time() - seconds))
        product["server_errors"] = stack.errors()
        Game.objects.filter(pk__in=ids).update(
            status=Game.Status.ABANDONED, deadlines=[], next_deadline_at=None
        )
    finally:
        stack.stop()
    product["profile"] = prof
    product["setup_s"] = setup_s
    rate = max(0.1, product["changes"] / seconds) if think[1] else 0.0
    echo_stack = Stack(
        "bench.echo_asgi:application",
        daphnes,
        env,
        logs,
        f"echo-{tag}",
        redis.process.pid if redis.process else None,
        None,
    )
    try:
        cfg = {
            "warmup": args.warmup,
            "seconds": seconds,
            "rate": rate,
            "frame_size": product["frame_size"],
            "meter": echo_stack.meter,
        }
        echo = asyncio.run(client_echo(echo_stack.ports, n, cfg))
        echo["server_errors"] = echo_stack.errors()
    finally:
        echo_stack.stop()
    return {
        "n": n,
        "daphnes": daphnes,
        "seconds": seconds,
        "product": product,
        "echo": echo,
        "rate": rate,
    }


def silent_kinds() -> frozenset[str]:
    """Crisp's deadline kinds with no timer (docs/ENGINE.md, "Silent deadlines"): their
    "lateness" is when the next change applied them, not a timer's delay."""
    from games.engines import engine_for

    return getattr(engine_for("crisp"), "SILENT_DEADLINES", frozenset())


def report(r: dict[str, Any], flat: bool) -> None:
    p, e, s = r["product"], r["echo"], r["seconds"]
    pe, ee = fmt(p["every"]), fmt(e["every"])
    load = os.getloadavg()
    mode = "FLAT OUT (no think time)" if flat else "human pace"
    print(
        f"\n== {r['n']} tables x {SEATS} seats, daphne x{r['daphnes']}, {mode}, {s:.0f} s "
        f"window; load average {load[0]:.1f} / {load[1]:.1f} (1 / 5 min); tables made in "
        f"{p['setup_s']:.0f} s"
    )
    print(
        f"  product: {p['acts'] / s:7.1f} actions/s, {p['changes'] / s:7.1f} changes/s "
        f"({p['changes'] / max(1, p['acts']):.2f} per action), "
        f"{p['frames'] / s:8.1f} frames/s delivered, mean update frame {p['frame_size']:.0f} B"
    )
    print(
        f"  echo   : {e['acts'] / s:7.1f} messages/s,                     "
        f"{e['frames'] / s:8.1f} frames/s delivered, payload {p['frame_size']:.0f} B"
    )
    if flat:
        print(f"  fan-out rate product / echo: {ratio(p['frames'], e['frames'])}")
    print(f"  {'send -> every seat (ms)':<28}{'p50':>9}{'p99':>9}{'max':>9}    n")
    print(
        f"  {'product (action)':<28}{pe[0]:9.1f}{pe[1]:9.1f}{pe[2]:9.1f}  {len(p['every'])}"
        f" (+{p['missing']} never reached every seat)"
    )
    print(
        f"  {'bare echo':<28}{ee[0]:9.1f}{ee[1]:9.1f}{ee[2]:9.1f}  {len(e['every'])}"
        f" (+{e['missing']} never reached every seat)"
    )
    print(
        f"  {'ratio product / echo':<28}{ratio(pe[0], ee[0]):>9}{ratio(pe[1], ee[1]):>9}"
        f"{ratio(pe[2], ee[2]):>9}"
    )
    silent = silent_kinds()
    timers = [v for k, vals in p["late"].items() if k not in silent for v in vals]
    for key, vals in [*p["late"].items(), ("(all timers)", timers)]:
        if vals:
            what = "silent: applied by the next change" if key in silent else "timer lateness"
            print(
                f"  {key:<14} {what:<36} n={len(vals):6d}  p50={pct(vals, 50):7.1f} ms  "
                f"p99={pct(vals, 99):7.1f} ms  max={max(vals):7.1f} ms"
            )
    errs = sum(p["errors"].values()) + p["server_errors"]
    print(
        f"  errors: product {errs} (client {dict(p['errors']) or 0}, server log lines "
        f"{p['server_errors']}), resyncs {p['resyncs']}, moves not made (the table moved on: "
        f"a computer sitting in) {p.get('moved_on', 0)}; echo "
        f"{sum(e['errors'].values()) + e['server_errors']} {dict(e['errors']) or ''}"
    )
    cpu = "  ".join(f"{k} {v:.1f}" for k, v in sorted(p["cpu"].items()))
    print(f"  CPU s over the window, product: {cpu}")
    server = sum(v for k, v in p["cpu"].items() if k != "client")
    daphnes = sum(v for k, v in p["cpu"].items() if k.startswith("daphne"))
    print(
        f"    = {server / s:.2f} cores server side, client {p['cpu'].get('client', 0) / s:.2f}"
        f" cores; server CPU per change {1000 * server / max(1, p['changes']):.1f} ms "
        f"(daphnes {1000 * daphnes / max(1, p['changes']):.1f}, worker "
        f"{1000 * p['cpu'].get('worker', 0) / max(1, p['changes']):.1f}, postgres "
        f"{1000 * p['cpu'].get('postgres', 0) / max(1, p['changes']):.1f})"
    )
    cpu = "  ".join(f"{k} {v:.1f}" for k, v in sorted(e["cpu"].items()))
    print(f"  CPU s over the window, echo:    {cpu}")
    for name, path in p.get("profile", {}).items():
        print(f"  profile of {name} (py-spy, {path.name}):")
        print("\n".join(summarize_profile(path)))
    sys.stdout.flush()


def ratio_row(r: dict[str, Any]) -> str:
    """One row of issue 25's table: the product against the bare echo of the same run.

    CPU per action is every server process's (daphnes, worker, beat, Redis, PostgreSQL's
    backends); the echo's is its daphnes' and Redis's per message fanned out, the same
    shape (one message to every seat group and the spectators' of a table).
    """
    p, e, s = r["product"], r["echo"], r["seconds"]
    pe, ee = fmt(p["every"]), fmt(e["every"])
    acts, msgs = max(1, p["acts"]), max(1, e["acts"])
    server = sum(v for k, v in p["cpu"].items() if k != "client")
    daphnes = sum(v for k, v in p["cpu"].items() if k.startswith("daphne"))
    echo_server = sum(v for k, v in e["cpu"].items() if k != "client")
    echo_daphnes = sum(v for k, v in e["cpu"].items() if k.startswith("daphne"))
    timers = [v for k, vals in p["late"].items() if k not in silent_kinds() for v in vals]
    errors = sum(p["errors"].values()) + p["server_errors"]
    late = f"{pct(timers, 99):.0f} ms" if timers else "none fired"
    return (
        f"| {r['n']} | {r['daphnes']} | {p['acts'] / s:.1f} | {pe[0]:.0f} / {pe[1]:.0f} ms "
        f"| {ee[1]:.0f} ms | {ratio(pe[1], ee[1]).strip()} | {late} "
        f"| {1000 * server / acts:.1f} ms | {1000 * daphnes / acts:.1f} ms "
        f"| {1000 * echo_server / msgs:.1f} ms | {1000 * echo_daphnes / msgs:.1f} ms "
        f"| {ratio(server / acts, echo_server / msgs).strip()} | {errors} |"
    )


RATIO_HEADER = (
    "| tables | daphnes | actions/s | act -> every seat p50 / p99 | echo p99 | p99 ratio "
    "| timers p99 | server CPU per action | daphnes' | echo server CPU per message "
    "| echo daphnes' | CPU ratio | errors |\n" + "|---" * 13 + "|"
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--tables", default="10,100,250,500,1000", help="comma-separated table counts"
    )
    parser.add_argument("--daphnes", default="1,2", help="comma-separated daphne counts")
    parser.add_argument("--seconds", type=float, default=60, help="measured window per size")
    parser.add_argument("--warmup", type=float, default=15)
    parser.add_argument("--think", default="1,3", help="min,max seconds a seat takes to act")
    parser.add_argument("--draw-seconds", type=int, default=8)
    parser.add_argument("--timeout-share", type=float, default=0.1)
    parser.add_argument("--flat-out", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument(
        "--flat-out-tables",
        type=int,
        default=0,
        help="tables for the flat-out run (default: the largest of --tables)",
    )
    parser.add_argument("--flat-out-seconds", type=float, default=30)
    parser.add_argument(
        "--profile",
        type=float,
        default=0,
        help="py-spy seconds on each daphne and the worker (at every size)",
    )
    parser.add_argument(
        "--database-url", default="postgres://postgres@127.0.0.1:5432/crisp_bench_scale"
    )
    args = parser.parse_args()
    sizes = [int(x) for x in args.tables.split(",") if x.strip()]
    daphne_counts = [int(x) for x in args.daphnes.split(",") if x.strip()]
    think = tuple(float(x) for x in args.think.split(","))
    assert len(think) == 2

    def on_term(_signum: int, _frame: object) -> None:
        raise KeyboardInterrupt  # so the `finally` blocks stop every process we started

    signal.signal(signal.SIGTERM, on_term)
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    tmp = Path(tempfile.mkdtemp(prefix="crisp-scale-"))
    logs = tmp / "logs"
    logs.mkdir()
    from crisp_site.embedded_redis import EmbeddedRedis

    redis = EmbeddedRedis(
        Path(tempfile.gettempdir()) / f"crisp-scale-{os.getpid()}.sock", tmp / "redis"
    ).start()
    dbname = database_reset(args.database_url) if args.database_url.startswith("postgres") else None
    env = dict(os.environ)
    env.update(
        DJANGO_SETTINGS_MODULE="crisp_site.settings",
        CRISP_VAR_DIR=str(tmp),
        REDIS_URL=redis.url,
        DATABASE_URL=args.database_url,
        LOG_LEVEL="WARNING",
        PYTHONUNBUFFERED="1",
        CONN_MAX_AGE="0",
        DEBUG="0",
        ALLOWED_HOSTS="127.0.0.1,localhost",
        SECRET_KEY="bench-scale-not-secret",  # noqa: S106 - a throwaway bench key
    )
    os.environ.update(env)
    started = time.monotonic()
    try:
        import django

        django.setup()
        subprocess.run(  # noqa: S603
            [str(BIN / "python"), "manage.py", "migrate", "--noinput", "-v", "0"],
            env=env,
            cwd=BASE_DIR,
            check=True,
        )
        import platform

        print(
            f"Crisp scale bench — {os.cpu_count()} cores ({platform.processor() or '?'}), "
            f"Python {platform.python_version()}, database {dbname or args.database_url}, "
            f"private Redis, think {think[0]}-{think[1]} s, logs in {logs}; "
            f"json: {'orjson' if loads is not json.loads else 'stdlib'} (client)"
        )
        if os.environ.get("ECHO_BARE_DISPATCH") == "1":
            print("echo: ECHO_BARE_DISPATCH=1 (no database-thread hop per message; echo_asgi.py)")
        rows = []
        for d in daphne_counts:
            for n in sizes:
                r = run_size(
                    n, d, args, env, logs, redis, dbname, think, args.seconds, "human", args.profile
                )
                report(r, flat=False)
                rows.append(ratio_row(r))
            if args.flat_out:
                n = args.flat_out_tables or max(sizes)
                r = run_size(
                    n,
                    d,
                    args,
                    env,
                    logs,
                    redis,
                    dbname,
                    (0.0, 0.0),
                    args.flat_out_seconds,
                    "flat",
                    0,
                )
                report(r, flat=True)
        # Issue 25's table, every human-pace cell of this run (bench/RESULTS.md quotes it).
        print(f"\nthe product against the bare echo, human pace\n{RATIO_HEADER}")
        print("\n".join(rows))
        print(f"\ntotal wall time {time.monotonic() - started:.0f} s")
    finally:
        redis.stop()


if __name__ == "__main__":
    main()
