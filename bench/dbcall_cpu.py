"""What a socket's database call costs beyond the function it runs, in process (session 19).

    .venv/bin/python bench/dbcall_cpu.py \\
        --database-url postgres://postgres@127.0.0.1:5432/crisp_dbcall \\
        --redis-url redis://127.0.0.1:6379/14 --calls 600 --turns 240

A socket's database calls (`games.consumers`: `_on_act` -> `database_sync_to_async(_act)`) go
through `crisp_site.db.parallel_database_sync_to_async`. This runs three functions through
each way of calling them, interleaved call by call on one event loop (the order rotated every
round, so a loaded machine moves every way alike):

* functions: `empty` (returns None: the hand-over alone), `select1` (one `SELECT 1`: the
  hand-over and the connection's borrowing), `act` (`games.consumers._act`, a player's draw and
  discard in turn on started 3-seat games, as `bench/act_cpu.py` plays them);
* ways: `main` -- main's wrapper, a copy of `crisp_site/db.py` at 2114c76 (Channels'
  `DatabaseSyncToAsync` on asgiref's `SyncToAsync`, `close_old_connections` before and after,
  the pool's connection borrowed and given back per call); `keep` -- main's hand-over with the
  connection kept by the thread (`crisp_site.db.keep_connections` after the call: the
  connection's share alone); `new` -- `crisp_site.db` as it is (the lighter hand-over, the
  connection kept); `direct` -- the function called on a thread that keeps its connection, no
  hand-over and no checks (its own cost).

CPU of the event loop's thread (`time.thread_time` around the `await`: nothing else runs on the
loop) and of the database threads (each executor thread's CPU clock, before and after); the
function's `direct` cost subtracted gives what a call costs beyond it. The after-commit
broadcast of an action runs on the process's live thread (not counted: every way alike).

`--tight N`: then N blocks of 50 back-to-back calls of `empty` and `select1` each way, the CPU
of the whole process per call (no idle thread to wake between calls).

Prints, per function and way, the median (and mean) CPU per call, and per function the rounds
(one call each way) in which `new` cost less than `main`, with the load average.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

BASE_DIR = Path(__file__).resolve().parent.parent
WAYS = ("main", "keep", "new", "direct")


def _setup(args: argparse.Namespace) -> None:
    sys.path.insert(0, str(BASE_DIR))
    sys.path.insert(1, str(BASE_DIR / "bench"))
    from act_cpu import setup_django

    setup_django(args.database_url, args.redis_url, "dbcall")


def _main_wrapper() -> tuple[Any, Any, list[ThreadPoolExecutor]]:
    """Main's `parallel_database_sync_to_async` (crisp_site/db.py at 2114c76), on its own
    threads; and the same hand-over keeping the connection (`keep`)."""
    from asgiref.sync import SyncToAsync
    from channels.db import DatabaseSyncToAsync
    from django.db import close_old_connections, connections

    from crisp_site import db

    def keep_sqlite_connections() -> None:
        for conn in connections.all(initialized_only=True):
            if conn.vendor == "sqlite" and conn.connection is not None:
                conn.close_at = None

    class PoolDatabaseSyncToAsync(DatabaseSyncToAsync):
        def thread_handler(self, loop: Any, *args: Any, **kwargs: Any) -> Any:
            close_old_connections()
            try:
                return SyncToAsync.thread_handler(self, loop, *args, **kwargs)
            finally:
                keep_sqlite_connections()
                close_old_connections()

    class KeepDatabaseSyncToAsync(DatabaseSyncToAsync):
        def thread_handler(self, loop: Any, *args: Any, **kwargs: Any) -> Any:
            db.check_kept_connection()
            try:
                return SyncToAsync.thread_handler(self, loop, *args, **kwargs)
            finally:
                db.keep_connections()

    main_pool = ThreadPoolExecutor(max_workers=db.db_threads(), thread_name_prefix="main-db")
    keep_pool = ThreadPoolExecutor(max_workers=db.db_threads(), thread_name_prefix="keep-db")

    def main(func: Callable[..., Any]) -> Any:
        return PoolDatabaseSyncToAsync(func, thread_sensitive=False, executor=main_pool)

    def keep(func: Callable[..., Any]) -> Any:
        return KeepDatabaseSyncToAsync(func, thread_sensitive=False, executor=keep_pool)

    return main, keep, [main_pool, keep_pool]


def _threads_cpu(pools: list[ThreadPoolExecutor]) -> float:
    total = 0.0
    for pool in pools:
        for thread in list(pool._threads):
            with contextlib.suppress(OSError, TypeError):
                total += time.clock_gettime(time.pthread_getcpuclockid(thread.ident))
    return total


class Direct:
    """One thread that keeps its connection and runs functions as they are, timing them."""

    def __init__(self) -> None:
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="direct-db")

    async def run(self, func: Callable[[], Any]) -> tuple[Any, float]:
        def timed() -> tuple[Any, float]:
            t0 = time.thread_time()
            result = func()
            return result, time.thread_time() - t0

        return await asyncio.get_running_loop().run_in_executor(self.pool, timed)


async def _bench(args: argparse.Namespace) -> None:
    from django.db import connection

    from crisp_site import db
    from games import clock, consumers, services
    from games.models import Game

    main, keep, pools = _main_wrapper()
    pools.append(db.executor())
    direct = Direct()
    from live import make_tables, move_after_draw

    def setup_tables() -> list[tuple[int, dict[int, Any]]]:
        tables = make_tables(args.tables)
        found = []
        for game_id, _ in tables:
            game = Game.objects.get(pk=game_id)
            services.game_start(
                game=game_id, user=game.host, timers={"memorise_ms": 0, "start_delay_ms": 0}
            )
            seats = {s.number: s.user for s in Game.objects.get(pk=game_id).seats.all()}
            found.append((game_id, seats))
        connection.close()
        return found

    tables = (await direct.run(setup_tables))[0]

    def empty() -> None:
        return None

    def select1() -> Any:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            return cursor.fetchone()

    def next_turn(index: int) -> tuple[int, Any] | None:
        game_id, seats = tables[index % len(tables)]
        game = Game.objects.only("state", "status").get(pk=game_id)
        if game.status != Game.Status.PLAYING:
            return None
        turn = game.state["round"]["turn"]
        wait = (turn.get("start_at") or 0) - clock.now_ms()
        if wait > 0:
            time.sleep(wait / 1000 + 0.002)
        return game_id, seats[turn["seat"]]

    async def call(way: str, func: Callable[..., Any], *a: Any) -> tuple[Any, float, float]:
        """(result, loop thread ms, database threads ms)"""
        if way == "direct":
            result, spent = await direct.run(lambda: func(*a))
            return result, 0.0, spent * 1000
        wrap = {"main": main, "keep": keep, "new": db.parallel_database_sync_to_async}[way]
        d0, t0 = _threads_cpu(pools), time.thread_time()
        result = await wrap(func)(*a)
        t1 = time.thread_time()
        await asyncio.sleep(0.001)  # the thread's last steps after it woke the loop
        d1 = _threads_cpu(pools)
        return result, (t1 - t0) * 1000, (d1 - d0) * 1000

    costs: dict[tuple[str, str], list[tuple[float, float]]] = {}
    rounds: dict[str, list[dict[str, float]]] = {"empty": [], "select1": [], "act": []}

    def order(r: int) -> list[str]:
        return list(WAYS[r % len(WAYS) :] + WAYS[: r % len(WAYS)])

    # Warm-up: every way, every function, a few times (threads made, connections borrowed).
    for _ in range(20):
        for way in WAYS:
            await call(way, empty)
            await call(way, select1)
    for r in range(args.calls):
        for name, func in (("empty", empty), ("select1", select1)):
            one: dict[str, float] = {}
            for way in order(r):
                _, loop_ms, thread_ms = await call(way, func)
                costs.setdefault((name, way), []).append((loop_ms, thread_ms))
                one[way] = loop_ms + thread_ms
            rounds[name].append(one)
    index = 0
    for r in range(args.turns + 8):
        one = {}
        for way in order(r):
            while True:
                found = await direct.run(lambda i=index: next_turn(i))
                index += 1
                if found[0] is not None:
                    break
            game_id, user = found[0]
            spent = [0.0, 0.0]
            ack: dict[str, Any] = {"events": []}
            for action in ({"type": "draw", "source": "deck"}, None):
                if action is None:
                    action = move_after_draw(ack["events"])
                (_, ack), loop_ms, thread_ms = await call(
                    way, consumers._act, game_id, user, {"action": action}
                )
                spent[0] += loop_ms / 2
                spent[1] += thread_ms / 2
            if r >= 8:  # warm-up turns
                costs.setdefault(("act", way), []).append((spent[0], spent[1]))
                one[way] = spent[0] + spent[1]
        if r >= 8:
            rounds["act"].append(one)

    load = os.getloadavg()
    print(
        f"dbcall_cpu: {args.calls} calls of empty/select1 and {args.turns} turns (draw + "
        f"discard, per action) each way, interleaved; load {load[0]:.2f} {load[1]:.2f}"
    )
    print("  function way     loop thread   db thread     total (median; mean)   beyond direct")
    for name in ("empty", "select1", "act"):
        own = statistics.median(lp + th for lp, th in costs[(name, "direct")])
        for way in WAYS:
            pairs = costs[(name, way)]
            lp = statistics.median(p[0] for p in pairs)
            th = statistics.median(p[1] for p in pairs)
            tot = statistics.median(p[0] + p[1] for p in pairs)
            mean = statistics.fmean(p[0] + p[1] for p in pairs)
            print(
                f"  {name:<8} {way:<7} {lp * 1000:8.1f} us  {th * 1000:8.1f} us  "
                f"{tot * 1000:8.1f} us; {mean * 1000:8.1f}   {(tot - own) * 1000:+8.1f} us"
            )
        for a, b in (("main", "new"), ("main", "keep")):
            diffs = [one[a] - one[b] for one in rounds[name]]
            lower = sum(d > 0 for d in diffs)
            print(
                f"    {b} below {a}: {lower} of {len(diffs)} rounds, median saving "
                f"{statistics.median(diffs) * 1000:.1f} us"
            )
    if args.tight:
        await _tight(
            args.tight,
            {"main": main, "keep": keep, "new": db.parallel_database_sync_to_async},
            (empty, select1),
        )
    for game_id, _ in tables:
        await direct.run(
            lambda g=game_id: Game.objects.filter(pk=g).update(
                status=Game.Status.ABANDONED, deadlines=[], next_deadline_at=None
            )
        )


async def _tight(blocks: int, ways: dict[str, Any], funcs: tuple[Callable[..., Any], ...]) -> None:
    """`--tight`: back-to-back calls (the threads never idle long), blocks of 50 per way, the
    ways' order reversed every block; CPU of the whole process (every thread) per call."""
    per: dict[tuple[str, str], list[float]] = {}
    for b in range(blocks):
        for func in funcs:
            for way in list(ways) if b % 2 else list(reversed(list(ways))):
                t0 = time.process_time()
                for _ in range(50):
                    await ways[way](func)()
                per.setdefault((func.__name__, way), []).append((time.process_time() - t0) / 50)
    load = os.getloadavg()
    print(
        f"  tight: {blocks} blocks of 50 calls each way, process CPU per call; load {load[0]:.2f}"
    )
    for (name, way), values in per.items():
        print(f"    {name:<8} {way:<5} {statistics.median(values[2:]) * 1e6:7.1f} us")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/14")
    parser.add_argument("--tables", type=int, default=12)
    parser.add_argument("--calls", type=int, default=600, help="rounds of empty and select1")
    parser.add_argument("--turns", type=int, default=240, help="rounds of act (a turn each way)")
    parser.add_argument("--tight", type=int, default=0, help="blocks of back-to-back calls")
    args = parser.parse_args()
    _setup(args)
    asyncio.run(_bench(args))
    threading.Event().wait(0.5)  # the live thread's last broadcasts


if __name__ == "__main__":
    main()
