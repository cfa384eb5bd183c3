"""Live-layer benchmark: timer lateness, action-to-every-seat latency, channel-layer fan-out.

    .venv/bin/python bench/live.py                    # SQLite in a temp dir, private Redis
    .venv/bin/python bench/live.py --database-url postgres://postgres@127.0.0.1:5432/crisp_bench

What it does, all in one run so the figures are comparable:

1. **Fan-out, side by side**: `RedisPubSubChannelLayer` vs `RedisChannelLayer` (our pooled
   variant), same Redis, same process: 250 groups of 4 receivers (a table's seats and its
   spectators), 2,000 group messages of ~3 KB; deliveries per second until the last arrives.
2. **A full stack per layer**: two daphne processes, a Celery worker and beat (real processes,
   private Redis, its own database), `--tables` tables of 3 bots over real WebSockets for
   `--seconds`. Bots think 0.5-2 s before each action (`--think-min/--think-max`; 0 for a
   stress run), then draw and play (King, else discard), never call (a round ends only through
   a call, so it goes on), and let a quarter of their turns' draw clocks run out. Product timer
   lengths except the draw limit (`--draw-seconds`, default 8 s instead of 30 s, so timeouts
   happen within the run).
   - **timer lateness**: the stored event's processing instant minus the deadline's own
     instant, for `window_closed` (3 s after a turn), `draw_timeout` and `may_start`;
   - **action to every seat**: from sending an `act` to each seat's socket receiving the
     `update` of that version, and to the last of the three.

Prints p50/p99. Needs nothing running: it starts its own Redis and processes and stops them.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BASE_DIR = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
sys.path.insert(0, str(BASE_DIR))


def pct(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def line(name: str, values: list[float], unit: str = "ms") -> str:
    return (
        f"  {name:<34} n={len(values):>6}  p50={pct(values, 50):8.1f} {unit}  "
        f"p99={pct(values, 99):8.1f} {unit}  max={max(values, default=float('nan')):8.1f}"
    )


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Proc:
    """A child process in its own session, so stopping it stops everything it started."""

    def __init__(
        self, name: str, args: list[str], env: dict[str, str], logs: Path, cwd: Path = BASE_DIR
    ) -> None:
        self.name, self.log = name, logs / f"{name}.log"
        with self.log.open("wb") as out:
            self.p = subprocess.Popen(  # noqa: S603
                args,
                env=env,
                cwd=cwd,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def stop(self) -> None:
        if self.p.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.p.pid, signal.SIGTERM)
            try:
                self.p.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(self.p.pid, signal.SIGKILL)
                self.p.wait(5)

    def errors(self) -> int:
        """ERROR lines and tracebacks in its log: every one is a fault the run must show."""
        text = self.log.read_text(errors="replace")
        return text.count("Traceback (most recent call last)") + sum(
            1 for ln in text.splitlines() if " ERROR " in ln or ln.startswith("ERROR")
        )


# --- 1. fan-out -----------------------------------------------------------------------------


async def fanout(
    kind: str, redis_url: str, groups: int = 250, members: int = 4, messages: int = 2000
) -> float:
    """Deliveries per second through one layer (sender and receivers in this process)."""
    from channels_redis.pubsub import RedisPubSubChannelLayer

    from games.layers import PooledRedisChannelLayer

    prefix = f"bench-{kind}-{time.monotonic_ns()}"
    layer: Any
    if kind == "pubsub":
        layer = RedisPubSubChannelLayer(hosts=[{"address": redis_url}], prefix=prefix)
    else:
        layer = PooledRedisChannelLayer(
            hosts=[{"address": redis_url}], prefix=prefix, capacity=1000, expiry=30
        )
    channels = [[await layer.new_channel() for _ in range(members)] for _ in range(groups)]
    for g, chans in enumerate(channels):
        for ch in chans:
            await layer.group_add(f"g{g}", ch)
    expected = messages * members
    got = 0
    progress = asyncio.Event()

    async def receiver(ch: str) -> None:
        nonlocal got
        while True:
            await layer.receive(ch)
            got += 1
            progress.set()

    async def until(count: int) -> None:
        while got < count:
            progress.clear()
            await asyncio.wait_for(progress.wait(), 30)

    tasks = [asyncio.create_task(receiver(ch)) for chans in channels for ch in chans]
    payload = "x" * 3000
    await asyncio.sleep(0.5)
    start = time.perf_counter()
    # Paced: at most ~400 deliveries in flight. The classic layer keeps one Redis queue per
    # *process* with a capacity (1,000 here) and silently drops past it; unpaced, it loses
    # messages instead of being slow.
    for i in range(0, messages, 50):
        batch = min(50, messages - i)
        await asyncio.gather(
            *(
                layer.group_send(f"g{(i + j) % groups}", {"type": "game.update", "text": payload})
                for j in range(batch)
            )
        )
        await until((i + batch) * members - 400)
    await until(expected)
    elapsed = time.perf_counter() - start
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    await layer.flush()
    return expected / elapsed


# --- 2. tables --------------------------------------------------------------------------------


def move_after_draw(events: list[dict[str, Any]]) -> dict[str, str]:
    """A bench player's move after its draw, from the draw's ack events (wire form): the
    King's power when it drew a King, else the discard (the in-process benches' one rule)."""
    held = [e for e in events if e["type"] == "draw"]
    card = held[-1]["data"].get("card") if held else None
    return {"type": "king"} if card and card[0] == "K" else {"type": "discard"}


def make_tables(n: int) -> list[tuple[int, list[str]]]:
    from django.contrib.auth import get_user_model

    from accounts.services import token_create
    from games import services

    user_model = get_user_model()
    tables = []
    stamp = time.monotonic_ns()
    for t in range(n):
        users = [
            user_model.objects.create_user(username=f"b{stamp}-{t}-{s}", password=None)
            for s in range(3)
        ]
        game = services.game_create(host=users[0], settings={"target_score": 150})
        for u in users[1:]:
            services.game_join(game=game.pk, user=u)
        tokens = [token_create(user=u, name="bench")[1] for u in users]
        tables.append((game.pk, tokens))
    return tables


def _turn_key(player: Any) -> tuple[Any, ...]:
    """Which draw of which turn of which round a player's table is at."""
    turn = (player.state or {}).get("turn") or {}
    return (player.state or {}).get("round"), turn.get("no"), turn.get("draw_no")


async def run_tables(
    ports: list[int],
    tables: list[tuple[int, list[str]]],
    seconds: float,
    start_games: Any,
    think: tuple[float, float],
) -> dict[str, Any]:
    from tests.live.client import Player

    class Timed(Player):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.arrivals: dict[int, float] = {}

        def _on_frame(self, frame: dict[str, Any]) -> None:
            if frame["type"] in {"update", "snapshot"}:
                self.arrivals.setdefault(frame["version"], time.time())
            self.frames = []  # keep memory flat: the bench does not need them
            super()._on_frame(frame)

    players = [
        [
            Timed(ports[(t + s) % len(ports)], game_id, tok, f"t{t}s{s}")
            for s, tok in enumerate(tokens)
        ]
        for t, (game_id, tokens) in enumerate(tables)
    ]
    flat = [p for table in players for p in table]
    for i in range(0, len(flat), 50):
        await asyncio.gather(*(p.start() for p in flat[i : i + 50]))
    await asyncio.to_thread(start_games)
    sent: list[tuple[list[Timed], int, float]] = []
    stop_at = time.monotonic() + seconds
    rng = random.Random(7)

    async def bot(me: Timed, table: list[Timed]) -> None:
        while time.monotonic() < stop_at:
            try:
                await me.wait_for(
                    lambda p: p.my_turn_to_draw(), max(0.1, stop_at - time.monotonic())
                )
            except TimeoutError:
                return
            if me.state["turn"]["draw_no"] == 1 and rng.random() < 0.25:
                # Let it time out: wait until the turn moves on (not merely the next version:
                # a deadline with a frame of its own, such as a crisp window closing, is not
                # the draw clock), within the window (a finished game never moves on).
                key = _turn_key(me)
                try:
                    await me.wait_for(
                        lambda p, k=key: _turn_key(p) != k, max(0.1, stop_at - time.monotonic())
                    )
                except TimeoutError:
                    return
                continue
            for action in ({"type": "draw", "source": "deck"}, None):
                if think:
                    await asyncio.sleep(rng.uniform(*think))
                t0 = time.time()
                if action is None:
                    card = me.state["held"]["card"] if me.state.get("held") else None
                    action = {"type": "king"} if card and card[0] == "K" else {"type": "discard"}
                try:
                    ack = await me.act(action)
                except (TimeoutError, ConnectionError):
                    break
                if ack["type"] != "ack":
                    break
                sent.append((table, ack["version"], t0))
                await me.wait_for(lambda p, v=ack["version"]: p.version >= v, 30)

    await asyncio.gather(
        *(bot(p, table) for table in players for p in table), return_exceptions=True
    )
    await asyncio.sleep(1.0)
    per_seat, every_seat = [], []
    for table, version, t0 in sent:
        arrivals = [
            min((t for v, t in p.arrivals.items() if v >= version), default=None) for p in table
        ]
        if None in arrivals:
            continue
        per_seat.extend((a - t0) * 1000 for a in arrivals)
        every_seat.append((max(arrivals) - t0) * 1000)
    await asyncio.gather(*(p.stop() for p in flat), return_exceptions=True)
    return {"per_seat": per_seat, "every_seat": every_seat, "acts": len(sent)}


def lateness(game_ids: list[int]) -> dict[str, list[float]]:
    from games import clock
    from games.models import Event

    out: dict[str, list[float]] = {"window_closed": [], "draw_timeout": [], "may_start": []}
    rows = Event.objects.filter(
        game_id__in=game_ids, type__in=["window_closed", "timeout", "draw_ready"]
    )
    for row in rows.iterator():
        due = row.data.get("at")
        if due is None or (row.type == "draw_ready" and row.data.get("draw_no") != 1):
            continue  # a King's extra draw opens at once: no timer involved
        late = clock.from_datetime(row.created_at) - due
        key = {"timeout": "draw_timeout", "draw_ready": "may_start"}.get(row.type, row.type)
        out[key].append(float(late))
    return out


def stack_run(kind: str, args: argparse.Namespace, env: dict[str, str], logs: Path) -> None:
    from games import services
    from games.models import Game

    env = {**env, "CHANNEL_LAYER": kind}
    ports = [free_port(), free_port()]
    procs = [
        Proc(
            f"{kind}-daphne{i}",
            [str(BIN / "daphne"), "-b", "127.0.0.1", "-p", str(p), "crisp_site.asgi:application"],
            env,
            logs,
        )
        for i, p in enumerate(ports)
    ]
    procs.append(
        Proc(
            f"{kind}-worker",
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
    procs.append(
        Proc(
            f"{kind}-beat",
            [
                str(BIN / "celery"),
                "-A",
                "crisp_site",
                "beat",
                "--loglevel",
                "WARNING",
                "--schedule",
                str(logs / f"{kind}-beat-schedule"),
            ],
            env,
            logs,
        )
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if all(socket.socket().connect_ex(("127.0.0.1", p)) == 0 for p in ports):
                break
            time.sleep(0.2)
        time.sleep(3)  # the worker
        tables = make_tables(args.tables)
        ids = [g for g, _ in tables]

        def start_games() -> None:
            for g in ids:
                services.game_start(
                    game=g,
                    user=Game.objects.get(pk=g).host,
                    timers={"draw_seconds": args.draw_seconds},
                )

        think = (args.think_min, args.think_max)
        result = asyncio.run(run_tables(ports, tables, args.seconds, start_games, think))
        late = lateness(ids)
        fired = sum(len(v) for v in late.values())
        load = os.getloadavg()[0]
        print(
            f"\n[{kind}] {args.tables} tables x 3 bots, {args.seconds:.0f} s, 2 daphnes, "
            f"think {think[0]}-{think[1]} s: {result['acts'] / args.seconds:.0f} acts/s, "
            f"{fired / args.seconds:.0f} timer events/s, load average {load:.1f}"
        )
        print(line("timer lateness: window_closed", late["window_closed"]))
        print(line("timer lateness: draw_timeout", late["draw_timeout"]))
        print(line("timer lateness: may_start", late["may_start"]))
        print(line("action -> a seat's socket", result["per_seat"]))
        print(line("action -> every seat's socket", result["every_seat"]))
        sys.stdout.flush()
        for g in ids:  # stop their timers before the next stack starts
            Game.objects.filter(pk=g).update(
                status=Game.Status.ABANDONED, deadlines=[], next_deadline_at=None
            )
    finally:
        for proc in reversed(procs):
            proc.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tables", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=45)
    parser.add_argument("--draw-seconds", type=int, default=8)
    parser.add_argument(
        "--think-min",
        type=float,
        default=0.5,
        help="a bot's least thinking time before each action (s)",
    )
    parser.add_argument("--think-max", type=float, default=2.0)
    parser.add_argument("--layers", default="pubsub,classic")
    parser.add_argument("--conn-max-age", type=int, default=0)
    parser.add_argument("--database-url", default="")
    args = parser.parse_args()

    def on_term(_signum: int, _frame: object) -> None:
        raise KeyboardInterrupt  # so the `finally` blocks stop every process we started

    signal.signal(signal.SIGTERM, on_term)
    tmp = Path(tempfile.mkdtemp(prefix="crisp-bench-"))
    logs = tmp / "logs"
    logs.mkdir()
    from crisp_site.embedded_redis import EmbeddedRedis

    redis = EmbeddedRedis(
        Path(tempfile.gettempdir()) / f"crisp-bench-{os.getpid()}.sock", tmp / "redis"
    ).start()
    env = dict(os.environ)
    env.update(
        DJANGO_SETTINGS_MODULE="crisp_site.settings",
        CRISP_VAR_DIR=str(tmp),
        REDIS_URL=redis.url,
        DATABASE_URL=args.database_url or f"sqlite:///{tmp / 'bench.sqlite3'}",
        LOG_LEVEL="WARNING",
        PYTHONUNBUFFERED="1",
    )
    # CONN_MAX_AGE=0 as production runs: on PostgreSQL connections are reused through the
    # psycopg pool (settings DB_POOL), which Django refuses to combine with persistent ones.
    env.setdefault("CONN_MAX_AGE", str(args.conn_max_age))
    os.environ.update(env)
    try:
        import django

        django.setup()
        subprocess.run(  # noqa: S603
            [str(BIN / "python"), "manage.py", "migrate", "--noinput", "-v", "0"],
            env=env,
            cwd=BASE_DIR,
            check=True,
        )
        print(
            f"Crisp live bench — {os.cpu_count()} cores, database "
            f"{env['DATABASE_URL'].split(':')[0]} (CONN_MAX_AGE={env['CONN_MAX_AGE']}), "
            f"private Redis, logs in {logs}"
        )
        print("\nchannel-layer fan-out (250 groups x 4 receivers, 2,000 messages of 3 KB):")
        rates = {}
        for kind in ("pubsub", "classic"):
            rates[kind] = asyncio.run(fanout(kind, redis.url))
            print(f"  {kind:<8} {rates[kind]:10.0f} deliveries/s")
        print(f"  pubsub / classic = {rates['pubsub'] / rates['classic']:.2f}x")
        for kind in args.layers.split(","):
            stack_run(kind.strip(), args, env, logs)
    finally:
        redis.stop()


if __name__ == "__main__":
    main()
