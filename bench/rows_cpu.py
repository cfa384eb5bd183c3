"""The compiled reads' instances built by ``Model.from_db`` against directly (``crisp_site.rows``,
issue 25, session 20): interleaved A/B in one process, CPU of this thread (`time.thread_time`).

    .venv/bin/python bench/rows_cpu.py --database-url postgres://postgres@127.0.0.1:5432/crisp_rows
    .venv/bin/python bench/rows_cpu.py --database-url sqlite:///<a file>.sqlite3

Three measures, each in `--pairs` pairs (one block each way, the order alternating from pair to
pair; the 1-minute load average printed beside each pair; `crisp_site.rows.FAST` flipped):

- `build`: `Prepared._instances` alone on one action's rows (the lock's game row and its four
  seats with their users, fetched once): the instance building and the row converters, no
  database; median per call of `--calls` calls each way per pair.
- `read`: the reads themselves in a transaction (rolled back): an action's lock + seats
  (`commit._lock_with_seats`), a timer's (`_lock_playing_with_seats`), the REST game read of a
  seated viewer and the lobby card's seats; median per call, `--calls` calls each way, call by
  call.
- `action`: whole actions (`games.consumers._act`, as bench/act_cpu.py plays them: a draw and
  its discard on `--tables` tables in turn), the switch flipped per turn; median per action of
  `--turns` turns each way per pair.

`--converters`: instead of `FAST`, `build` with the row converters as Django applies them
(`SQLCompiler.apply_converters`) against the per-read converter (``crisp_site.rows`` if it has
one), to see whether the converters' own path pays.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

BASE_DIR = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(BASE_DIR))
sys.path.insert(1, str(BASE_DIR / "bench"))

from act_cpu import abandon  # noqa: E402 - a sibling bench, found through the path above


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--database-url", required=True)
    parser.add_argument(
        "--redis-url", default=os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/9")
    )
    parser.add_argument("--pairs", type=int, default=8)
    parser.add_argument("--calls", type=int, default=400, help="per pair and way (build, read)")
    parser.add_argument("--tables", type=int, default=6)
    parser.add_argument("--turns", type=int, default=60, help="per pair and way (action)")
    parser.add_argument("--only", choices=["build", "read", "action"], action="append")
    args = parser.parse_args()
    from act_cpu import setup_django

    setup_django(args.database_url, args.redis_url, "rows-cpu")
    from django.db import connection, transaction
    from live import make_tables

    from crisp_site import rows
    from crisp_site.prepared import Prepared
    from games import selectors, services
    from games.api import views
    from games.models import Game
    from games.services import commit

    tables = make_tables(args.tables)
    for game_id, _ in tables:
        services.game_start(
            game=game_id,
            user=Game.objects.get(pk=game_id).host,
            timers={"memorise_ms": 0, "start_delay_ms": 0},
        )
    game_id = tables[0][0]
    game = Game.objects.get(pk=game_id)
    viewer = game.seats.order_by("number")[1].user_id
    print(f"{connection.vendor}, {args.pairs} pairs; per pair and way: median CPU per call (ms)")
    todo = args.only or ["build", "read", "action"]

    if "build" in todo:
        with transaction.atomic():
            captured: list[tuple[Any, list[Any]]] = []
            real = Prepared._instances

            def capture(compiled: Any, fetched: list[Any], using: str) -> list[Any]:
                captured.append((compiled, list(fetched)))
                return real(compiled, fetched, using)

            Prepared._instances = staticmethod(capture)  # type: ignore[method-assign]
            try:
                commit._lock_with_seats(game_id)
            finally:
                Prepared._instances = staticmethod(real)  # type: ignore[method-assign]
            transaction.set_rollback(True)

        def build() -> None:
            for compiled, fetched in captured:
                real(compiled, fetched, "default")

        _pairs("build: lock + seats' instances", args.pairs, {"": build}, args.calls)

    if "read" in todo:
        reads = {
            "lock + seats": lambda: commit._lock_with_seats(game_id),
            "timer lock + seats": lambda: commit._lock_playing_with_seats(game_id),
            "REST game, seated": lambda: views._GAME_SEATED.fetch(game_id, viewer),
            "lobby card's seats": lambda: selectors._detail_seats(game),
        }
        with transaction.atomic():
            _pairs("read", args.pairs, reads, args.calls)
            transaction.set_rollback(True)

    if "action" in todo:
        _actions(tables, args.pairs, args.turns)
    rows.FAST = True


def _load() -> str:
    return f"{os.getloadavg()[0]:.2f}"


def _pairs(
    title: str,
    pairs: int,
    fns: dict[str, Callable[[], Any]],
    calls: int,
    *,
    switch: str = "FAST",
    label: str = "from_db",
    unit: str = "ms",
) -> None:
    """Each of ``fns`` ``calls`` times each way per pair, call by call (the way first in a
    pair alternating from pair to pair): ``crisp_site.rows``' ``switch`` off (``label``) and on
    (direct). ``unit``: "ms" or "us" (bench/rows2_cpu.py's write-side builders)."""
    from crisp_site import rows

    scale, digits = (1000, 4) if unit == "ms" else (1e6, 2)
    for name, fn in fns.items():
        print(f"{title} {name}".rstrip() + ":")
        print(f"  {'pair':>4} {'load':>5} {label:>9} {'direct':>9} {'saved':>8}")
        saved = []
        for pair in range(pairs):
            times: dict[bool, list[float]] = {False: [], True: []}
            order = (False, True) if pair % 2 == 0 else (True, False)
            for i in range(calls + 20):
                for fast in order:
                    setattr(rows, switch, fast)
                    t0 = time.thread_time()
                    fn()
                    spent = (time.thread_time() - t0) * scale
                    if i >= 20:
                        times[fast].append(spent)
            setattr(rows, switch, True)
            before, after = statistics.median(times[False]), statistics.median(times[True])
            saved.append(before - after)
            print(
                f"  {pair:>4} {_load():>5} {before:9.{digits}f} {after:9.{digits}f} "
                f"{before - after:8.{digits}f} {unit}"
            )
        _summary(saved, unit)


def _summary(saved: list[float], unit: str = "ms") -> None:
    lower = sum(s > 0 for s in saved)
    print(
        f"  median saved {statistics.median(saved):.4f} {unit}; "
        f"direct lower in {lower} of {len(saved)}"
    )


def _actions(tables: list[tuple[int, list[str]]], pairs: int, turns: int) -> None:
    """Whole actions (``consumers._act``), the switch flipped per turn (a draw and its
    discard); the per-action medians of each way per pair."""
    from live import move_after_draw

    from crisp_site import rows
    from games import clock, consumers
    from games.models import Game

    by_game = {g: {s.number: s.user for s in Game.objects.get(pk=g).seats.all()} for g, _ in tables}
    print("action (consumers._act, draw and discard):")
    print(f"  {'pair':>4} {'load':>5} {'from_db':>9} {'direct':>9} {'saved':>8}")
    saved = []
    fast = False
    for pair in range(pairs + 1):  # the first: warm-up
        times: dict[bool, list[float]] = {False: [], True: []}
        while min(len(times[False]), len(times[True])) < 2 * turns:
            for game_id, _ in tables:
                game = Game.objects.only("state", "status").get(pk=game_id)
                if game.status != Game.Status.PLAYING:
                    continue
                turn = game.state["round"]["turn"]
                user = by_game[game_id][turn["seat"]]
                wait = (turn.get("start_at") or 0) - clock.now_ms()
                if wait > 0:
                    time.sleep(wait / 1000 + 0.002)
                fast = not fast
                rows.FAST = fast
                ack: dict[str, Any] = {"events": []}
                for action in ({"type": "draw", "source": "deck"}, None):
                    if action is None:
                        action = move_after_draw(ack["events"])
                    t0 = time.thread_time()
                    try:
                        _, ack = consumers._act(game_id, user, {"action": action})
                    except Exception:  # a refused action (a window): next table
                        break
                    times[fast].append((time.thread_time() - t0) * 1000)
            if len(tables) % 2 == 0:
                fast = not fast  # each table each way in turn
        rows.FAST = True
        if pair == 0:
            continue
        before, after = statistics.median(times[False]), statistics.median(times[True])
        saved.append(before - after)
        print(f"  {pair:>4} {_load():>5} {before:9.4f} {after:9.4f} {before - after:8.4f}")
    _summary(saved)
    abandon(tables)


if __name__ == "__main__":
    main()
