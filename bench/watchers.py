"""500 watchers on one game: handshakes answered, presence frames per socket, a clean mass close.

    .venv/bin/python bench/watchers.py                      # SQLite in a temp dir, private Redis
    .venv/bin/python bench/watchers.py --database-url postgres://postgres@127.0.0.1:5432/crisp_w

What it does (issue 21, item 5):

1. Starts a private Redis and one real daphne (`crisp_site.serve`, as `make run` does) on its
   own database; makes a started game of `--players` seats and `--watchers` spectators (a user
   and an API token each).
2. Connects the players' sockets, then the watchers in bursts of `--burst-min`..`--burst-max`
   sockets opening at once (each burst waits for its handshakes, answered or failed, before the
   next; or, with `--burst-gap`, a burst every so many seconds regardless), and counts the
   handshakes answered (HTTP 101) and the sockets whose first frame, the `snapshot`, came
   within `--open-timeout` s of dialling; the others, by what failed.
3. Holds every socket open `--hold` s, then reads the frames each received, by type.
4. Closes every socket at once (a closing handshake each), waits past daphne's application
   close timeout (10 s) and counts the "took too long to shut down" warnings, ERROR lines and
   tracebacks in daphne's log; stops everything it started.

Nothing goes anywhere but 127.0.0.1; every loop is bounded. The figures go in bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import resource
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

BASE_DIR = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
sys.path.insert(0, str(BASE_DIR))
sys.path.insert(0, str(BASE_DIR / "bench"))

from live import Proc, pct  # noqa: E402
from scale import cpu_of, database_reset, wait_ports  # noqa: E402

SHUTDOWN_WARNING = "took too long to shut down"
APP = "crisp_site.asgi:application"


class Socket:
    """One client socket: when its handshake was answered, and the frames it received."""

    def __init__(self, url: str, name: str) -> None:
        self.url, self.name = url, name
        self.frames: Counter[str] = Counter()
        self.open_ms: float | None = None  # from dialling to the first frame (the snapshot)
        self.accepted_ms: float | None = None  # from dialling to the handshake's answer (101)
        self.failure = ""
        self.ws: Any = None
        self.reader: asyncio.Task[None] | None = None
        self.closed_by_server: int | None = None

    async def open(self, timeout: float) -> None:
        from websockets.asyncio.client import connect
        from websockets.exceptions import ConnectionClosed

        started = time.monotonic()
        try:
            async with asyncio.timeout(timeout):
                self.ws = await connect(self.url, open_timeout=None, max_size=None)
                self.accepted_ms = (time.monotonic() - started) * 1000
                first = json.loads(await self.ws.recv())
        except TimeoutError:
            self.failure = "timeout"
        except ConnectionClosed as exc:  # answered, then closed before the snapshot
            self.failure = f"closed {exc.rcvd.code if exc.rcvd else 'without a code'}"
        except Exception as exc:  # refused, reset, closed: a handshake not answered
            self.failure = type(exc).__name__
        else:
            self.frames[first["type"]] += 1
            if first["type"] != "snapshot":
                self.failure = f"first frame {first['type']}"
            else:
                self.open_ms = (time.monotonic() - started) * 1000
                self.reader = asyncio.create_task(self._read())
                return
        if self.ws is not None:
            self.ws.transport.abort()

    async def _read(self) -> None:
        from websockets.exceptions import ConnectionClosed

        try:
            async for raw in self.ws:
                self.frames[json.loads(raw).get("type", "?")] += 1
        except ConnectionClosed:
            pass
        if self.ws.close_code is not None and self.ws.close_code != 1000:
            self.closed_by_server = self.ws.close_code

    async def close(self, abrupt: bool) -> None:
        """A closing handshake, or (`abrupt`) the TCP connection dropped as a crash would."""
        if self.ws is None or self.reader is None:
            return
        if abrupt:
            self.ws.transport.abort()
        else:
            with contextlib.suppress(Exception):
                async with asyncio.timeout(30):
                    await self.ws.close()
        self.reader.cancel()


def make_game(players: int, watchers: int) -> tuple[int, list[str], list[str]]:
    """A started public game of `players` seats; API tokens of its players and of the watchers."""
    from django.contrib.auth import get_user_model

    from accounts.services import token_create
    from games import services
    from games.models import Game

    user_model = get_user_model()
    stamp = time.monotonic_ns()
    people = []
    for i in range(players + watchers):
        user = user_model.objects.create_user(username=f"w{stamp}-{i}", password=None)
        people.append((user, token_create(user=user, name="bench")[1]))
    host = people[0][0]
    game = services.game_create(host=host, settings={"target_score": 150})
    for user, _ in people[1:players]:
        services.game_join(game=game.pk, user=user)
    services.game_start(game=game.pk, user=host)
    assert Game.objects.get(pk=game.pk).status == Game.Status.PLAYING
    return game.pk, [t for _, t in people[:players]], [t for _, t in people[players:]]


async def run(args: argparse.Namespace, port: int, game_id: int, tokens: tuple[list[str], ...]):
    player_tokens, watcher_tokens = tokens
    base = f"ws://127.0.0.1:{port}/ws/games/{game_id}/?token="
    players = [Socket(base + t, f"p{i}") for i, t in enumerate(player_tokens)]
    watchers = [Socket(base + t, f"w{i}") for i, t in enumerate(watcher_tokens)]
    await asyncio.gather(*(s.open(args.open_timeout) for s in players))
    rng = random.Random(args.seed)
    bursts = 0
    started = time.monotonic()
    i = 0
    opening: list[asyncio.Future[list[None]]] = []
    while i < len(watchers):
        size = rng.randint(args.burst_min, args.burst_max)
        burst = asyncio.gather(*(s.open(args.open_timeout) for s in watchers[i : i + size]))
        i += size
        bursts += 1
        if args.burst_gap:  # the next burst on a schedule, whether this one is answered or not
            opening.append(burst)
            await asyncio.sleep(args.burst_gap)
        else:
            await burst
    await asyncio.gather(*opening)
    connect_s = time.monotonic() - started
    await asyncio.sleep(args.hold)
    held = {s.name: Counter(s.frames) for s in players + watchers}
    started = time.monotonic()
    await asyncio.gather(*(s.close(args.abrupt) for s in players + watchers))
    close_s = time.monotonic() - started
    return players, watchers, held, bursts, connect_s, close_s


def report(
    players: list[Socket],
    watchers: list[Socket],
    held: dict[str, Counter[str]],
    extra: dict[str, Any],
) -> None:
    ok = [s for s in watchers if s.open_ms is not None]
    failures = Counter(s.failure for s in watchers if s.open_ms is None)
    accepted = [s.accepted_ms for s in watchers if s.accepted_ms is not None]
    print(
        f"  handshakes answered      {len(accepted)} of {len(watchers)} watchers (HTTP 101), "
        f"p50 {pct(accepted, 50):.0f} ms, max {max(accepted, default=float('nan')):.0f} ms"
    )
    print(
        f"  snapshot received        {len(ok)} of {len(watchers)} watchers "
        f"({extra['bursts']} bursts in {extra['connect_s']:.1f} s), "
        f"players {sum(s.open_ms is not None for s in players)} of {len(players)}"
    )
    if failures:
        print(f"  not answered             {dict(failures)}")
    times = [s.open_ms for s in ok if s.open_ms is not None]
    print(
        f"  handshake to snapshot    p50 {pct(times, 50):.0f} ms, p99 {pct(times, 99):.0f} ms, "
        f"max {max(times, default=float('nan')):.0f} ms"
    )
    for label, group in (("player", players), ("watcher", ok)):
        counts = [held[s.name] for s in group]
        if not counts:
            continue
        kinds = sorted({k for c in counts for k in c})
        parts = []
        for kind in kinds:
            values = [float(c.get(kind, 0)) for c in counts]
            parts.append(f"{kind} mean {sum(values) / len(values):.1f} max {max(values):.0f}")
        print(f"  frames per {label:<8}     " + "; ".join(parts))
    dropped = sum(1 for s in ok if s.closed_by_server)
    print(f"  closed by the server     {dropped} while held (before the mass close)")
    print(f"  mass close               {extra['close_s']:.1f} s for every socket's close handshake")
    print(
        f"  daphne log               {extra['warnings']} '{SHUTDOWN_WARNING}' warnings, "
        f"{extra['errors']} ERROR lines/tracebacks"
    )
    print(f"  daphne CPU               {extra['cpu']:.1f} s over the run ({extra['wall']:.0f} s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--watchers", type=int, default=500)
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--burst-min", type=int, default=10)
    parser.add_argument("--burst-max", type=int, default=50)
    parser.add_argument(
        "--burst-gap",
        type=float,
        default=0.0,
        help="s between burst starts (0: each burst waits for the previous one's handshakes)",
    )
    parser.add_argument(
        "--abrupt", action="store_true", help="drop every TCP connection instead of closing"
    )
    parser.add_argument("--open-timeout", type=float, default=10.0, help="s, per handshake")
    parser.add_argument("--hold", type=float, default=10.0, help="s with every socket open")
    parser.add_argument("--settle", type=float, default=15.0, help="s after the mass close")
    parser.add_argument("--port", type=int, default=18500)
    parser.add_argument("--seed", type=int, default=21)
    parser.add_argument(
        "--database-url", default="", help="postgres://... (dropped, made again); else SQLite"
    )
    args = parser.parse_args()

    def on_term(_signum: int, _frame: object) -> None:
        raise KeyboardInterrupt  # so the `finally` blocks stop every process we started

    signal.signal(signal.SIGTERM, on_term)
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    tmp = Path(tempfile.mkdtemp(prefix="crisp-watchers-"))
    logs = tmp / "logs"
    logs.mkdir()
    from crisp_site.embedded_redis import EmbeddedRedis

    redis = EmbeddedRedis(tmp / "redis.sock", tmp / "redis").start()
    database_url = args.database_url or f"sqlite:///{tmp / 'db.sqlite3'}"
    if database_url.startswith("postgres"):
        database_reset(database_url)
    env = dict(os.environ)
    env.update(
        DJANGO_SETTINGS_MODULE="crisp_site.settings",
        CRISP_VAR_DIR=str(tmp),
        REDIS_URL=redis.url,
        DATABASE_URL=database_url,
        LOG_LEVEL="WARNING",
        PYTHONUNBUFFERED="1",
        CONN_MAX_AGE="0",
        DEBUG="0",
        ALLOWED_HOSTS="127.0.0.1,localhost",
        SECRET_KEY="bench-watchers-not-secret",  # noqa: S106 - a throwaway bench key
    )
    os.environ.update(env)
    daphne = None
    try:
        import django

        django.setup()
        subprocess.run(  # noqa: S603
            [str(BIN / "python"), "manage.py", "migrate", "--noinput", "-v", "0"],
            env=env,
            cwd=BASE_DIR,
            check=True,
        )
        game_id, player_tokens, watcher_tokens = make_game(args.players, args.watchers)
        daphne = Proc(
            "daphne",
            [
                str(BIN / "python"),
                "-m",
                "crisp_site.serve",
                "-b",
                "127.0.0.1",
                "-p",
                str(args.port),
                APP,
            ],
            env,
            logs,
        )
        wait_ports([args.port])
        cpu_before, wall_before = cpu_of(daphne.p.pid), time.monotonic()
        players, watchers, held, bursts, connect_s, close_s = asyncio.run(
            run(args, args.port, game_id, (player_tokens, watcher_tokens))
        )
        time.sleep(args.settle)  # past daphne's application close timeout (10 s)
        cpu = cpu_of(daphne.p.pid) - cpu_before
        wall = time.monotonic() - wall_before
        text = daphne.log.read_text(errors="replace")
        print(
            f"Watchers bench — {os.cpu_count()} cores, game {game_id} with {args.players} players "
            f"and {args.watchers} watchers in bursts of {args.burst_min}-{args.burst_max} "
            f"({f'every {args.burst_gap} s' if args.burst_gap else 'each after the last'}), "
            f"{'abrupt' if args.abrupt else 'clean'} mass close, "
            f"database {database_url.split(':', 1)[0]}, private Redis, one daphne; logs in {logs}"
        )
        report(
            players,
            watchers,
            held,
            {
                "bursts": bursts,
                "connect_s": connect_s,
                "close_s": close_s,
                "warnings": text.count(SHUTDOWN_WARNING),
                "errors": daphne.errors(),
                "cpu": cpu,
                "wall": wall,
            },
        )
    finally:
        if daphne is not None:
            daphne.stop()
        redis.stop()


if __name__ == "__main__":
    main()
