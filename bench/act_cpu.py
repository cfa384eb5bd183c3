"""CPU of one action's own thread in the service layer, in process, for one code tree (issue 25).

    .venv/bin/python bench/act_cpu.py --database-url postgres://postgres@127.0.0.1:5432/crisp_act \
        [--tree /path/to/another/checkout] --tables 20 --actions 600

Why: on a shared, loaded machine `bench/cpu.py`'s CPU per action moves by ±30 % from run to
run (a starved process does more per-time work per action; bench/RESULTS.md, session 8). This
measures only the thread that runs an action over the socket (`games.consumers._act`: the
lock, the checks, the engine, the writes, the ack; its on-commit hand-over included), with
`time.thread_time()`, against a real PostgreSQL: the cost the daphne's database thread pays per
action, free of the other processes' load. The broadcast runs on the live thread and is not in
it (`bench/cpu.py` counts it). The code measured is `--tree`'s (imported first); the players
draw and discard (a King played) in turn, as bench/live.py's do, with no draw left to time out.

Beside the thread's CPU it reports the PostgreSQL backends' CPU per action (session 18): the
run time (`/proc/PID/schedstat`, ns) of every client backend of the bench's own database (the
process's pooled connections, listed after the warm-up), summed around each action.

`--switch` (session 18): the A/B in one process, turn by turn (a draw and its discard; each
table each way in turn): every other turn with the hot path's server-side binding off
(`crisp_site.prepared.SERVER_BINDING`, psycopg's preparing off: main's path) and on; both
columns printed. A loaded machine moves both alike.

`--timers`: measures timers instead (`services.game_fire_deadline`, a worker thread's cost per
timer). After each player's draw and discard the next player's draw clock is fired at once
(the process's clock, `games.clock.now_ms`, moved on to its instant); with 3 seats no seat
times out twice in a row, so nobody gets a computer player sitting in.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

BASE_DIR = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--tree", default=str(BASE_DIR))
    parser.add_argument("--tables", type=int, default=20)
    parser.add_argument("--actions", type=int, default=600, help="measured (after 100 warm-up)")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/9")
    parser.add_argument("--timers", action="store_true", help="measure timers, not actions")
    parser.add_argument(
        "--switch", action="store_true", help="server-side binding off/on, action by action"
    )
    args = parser.parse_args()
    tree = Path(args.tree).resolve()
    sys.path.insert(0, str(tree))
    sys.path.insert(1, str(BASE_DIR / "bench"))
    setup_django(args.database_url, args.redis_url, "act-cpu", tree)
    from django.contrib.auth import get_user_model
    from live import make_tables, move_after_draw

    from games import clock, consumers, services
    from games.models import Game

    skew = [0]  # ms the process's clock runs ahead of the wall (--timers moves it on)
    wall_ms = clock.now_ms
    clock.now_ms = lambda: wall_ms() + skew[0]  # type: ignore[assignment]

    for name in ("games.consumers", "games.services", "games.models"):
        source = Path(sys.modules[name].__file__ or "").resolve()
        if tree not in source.parents:  # the bench's own guard
            raise SystemExit(f"{name} came from {source}, not from {tree}")

    tables = make_tables(args.tables)
    users = get_user_model().objects
    for game_id, _ in tables:
        game = Game.objects.get(pk=game_id)
        services.game_start(
            game=game_id,
            user=game.host,
            timers={
                "memorise_ms": 0,
                "start_delay_ms": 0,
                **({"draw_seconds": 8} if args.timers else {}),
            },
        )
    time.sleep(0.05)
    by_game = {g: {s.number: s.user for s in Game.objects.get(pk=g).seats.all()} for g, _ in tables}
    from django.db import connection

    costs: list[float] = []
    backend_costs: list[float] = []
    #: --switch: (binding on?, thread ms, backends ms) per measured action or timer
    switched: list[tuple[bool, float, float]] = []

    def switch() -> None:
        """--switch: flip the hot path's binding before each measured call."""
        if not args.switch:
            return
        from crisp_site import prepared as binding

        binding.SERVER_BINDING = not binding.SERVER_BINDING
        if not binding.SERVER_BINDING and connection.connection is not None:
            connection.connection.prepare_threshold = None

    pids: list[int] = []
    done = 0
    while done < args.actions + 100:
        for game_id, _ in tables:
            game = Game.objects.only("state", "status").get(pk=game_id)
            if game.status != Game.Status.PLAYING:
                continue
            turn = game.state["round"]["turn"]
            user = by_game[game_id][turn["seat"]]
            start_at = turn.get("start_at") or 0
            wait = start_at - clock.now_ms()
            if wait > 0 and args.timers:
                skew[0] += int(wait) + 2  # no need to wait: the clock moves on
            elif wait > 0:
                time.sleep(wait / 1000 + 0.002)
            ack: dict[str, Any] = {"events": []}
            if not args.timers:
                switch()  # per turn: each way gets as many draws as discards
            for action in ({"type": "draw", "source": "deck"}, None):
                if action is None:
                    action = move_after_draw(ack["events"])
                if done == 100 and not pids:
                    pids = _backends()
                b0 = _backends_ns(pids)
                t0 = time.thread_time()
                try:
                    _, ack = consumers._act(game_id, user, {"action": action})
                except Exception:  # a refused action (a window): next table
                    break
                if not args.timers:
                    if done >= 100:
                        costs.append(time.thread_time() - t0)
                        backend_costs.append((_backends_ns(pids) - b0) / 1e6)
                        switched.append(_mode(costs[-1] * 1000, backend_costs[-1]))
                    done += 1
            else:
                if args.timers:
                    deadlines = Game.objects.only("deadlines").get(pk=game_id).deadlines
                    due = [d for d in deadlines if d["key"].endswith(":timeout")]
                    if not due:
                        continue
                    skew[0] += max(0, due[0]["at"] - clock.now_ms())
                    if done >= 100 and not pids:
                        pids = _backends()
                    switch()
                    b0 = _backends_ns(pids)
                    t0 = time.thread_time()
                    fired = services.game_fire_deadline(game_id=game_id, key=due[0]["key"])
                    if fired and done >= 100:
                        costs.append(time.thread_time() - t0)
                        backend_costs.append((_backends_ns(pids) - b0) / 1e6)
                        switched.append(_mode(costs[-1] * 1000, backend_costs[-1]))
                    done += fired
        if len(tables) % 2 == 0:
            switch()  # each table runs each way in turn, not always the same one
    del users
    costs_ms = sorted(c * 1000 for c in costs)
    print(
        f"tree {tree.name}: {len(costs_ms)} {'timers' if args.timers else 'actions'}, "
        f"CPU of the thread per {'timer' if args.timers else 'action'}: "
        f"mean {statistics.fmean(costs_ms):.3f} ms, median {statistics.median(costs_ms):.3f}, "
        f"p90 {costs_ms[int(0.9 * (len(costs_ms) - 1))]:.3f}"
    )
    backend_ms = sorted(backend_costs)
    print(
        f"  PostgreSQL backends' CPU per {'timer' if args.timers else 'action'} "
        f"({len(pids)} backends): mean {statistics.fmean(backend_ms):.3f} ms, "
        f"median {statistics.median(backend_ms):.3f}, "
        f"p90 {backend_ms[int(0.9 * (len(backend_ms) - 1))]:.3f}"
        + ("" if _backends() == pids else "  (the backends changed during the run)")
    )
    if args.switch:
        for on in (False, True):
            mine = [(t, b) for mode, t, b in switched if mode is on]
            thread, backend = sorted(t for t, _ in mine), sorted(b for _, b in mine)
            print(
                f"  binding {'on ' if on else 'off'} ({len(mine)}): thread mean "
                f"{statistics.fmean(thread):.3f} median {statistics.median(thread):.3f}; "
                f"backends mean {statistics.fmean(backend):.3f} "
                f"median {statistics.median(backend):.3f} ms"
            )
    abandon(tables)


def setup_django(database_url: str, redis_url: str, name: str, tree: Path = BASE_DIR) -> None:
    """Django in this process on the bench's database (migrated first) and Redis, from `tree`
    (an in-process bench's set-up; `name` tells its throwaway secret key apart)."""
    os.environ.update(
        DJANGO_SETTINGS_MODULE="crisp_site.settings",
        DATABASE_URL=database_url,
        REDIS_URL=redis_url,
        DEBUG="0",
        LOG_LEVEL="WARNING",
        CONN_MAX_AGE="0",  # the pool keeps the connection (crisp_site/settings.py)
        ALLOWED_HOSTS="127.0.0.1",
        SECRET_KEY=f"bench-{name}-not-secret",
    )
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=tree, check=True
    )
    import django

    # Celery's Django fix-up puts the working directory first on the path when the app is
    # made (django.setup): from another checkout, that checkout's `games` was imported and
    # measured instead of --tree's (session 14 found every earlier --tree A/B measured the
    # driver's own code twice). Run from the tree, and check.
    os.chdir(tree)
    django.setup()


def _mode(thread_ms: float, backend_ms: float) -> tuple[bool, float, float]:
    """A measured call with the binding it ran with (--switch; True without it)."""
    from crisp_site import prepared as binding

    return bool(getattr(binding, "SERVER_BINDING", True)), thread_ms, backend_ms


def _backends() -> list[int]:
    """The client backends of this bench's database: this process's pooled connections."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database()"
            " AND backend_type = 'client backend' ORDER BY pid"
        )
        return [row[0] for row in cursor.fetchall()]


def _backends_ns(pids: list[int]) -> int:
    """Their CPU so far, ns (the scheduler's run time, accounted when a backend sleeps)."""
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/schedstat") as f:
                total += int(f.read().split()[0])
        except FileNotFoundError:  # a backend gone (the pool's idle reaper): counted no more
            pass
    return total


def alternate_turns(
    tables: list[Any],
    one_turn: Callable[[int, bool], list[tuple[float, float]]],
    count: int,
) -> dict[bool, list[tuple[float, float]]]:
    """At least `count` measurements a side of an in-process A/B, its sides taking turns table
    by table (`one_turn(game_id, side)`); with an even number of tables each table alternates
    sides too, so neither side always plays the same tables (`engine_ab.py`, `json_ab.py`)."""
    got: dict[bool, list[tuple[float, float]]] = {True: [], False: []}
    side = len(tables) % 2 == 0
    while min(len(got[True]), len(got[False])) < count:
        for game_id, _ in tables:
            side = not side
            if len(got[side]) < count:
                got[side] += one_turn(game_id, side)
        side = not side if len(tables) % 2 == 0 else side
    return got


def abandon(tables: list[Any]) -> None:
    """End a bench's tables (``(game_id, ...)`` pairs) and drop their deadlines, so no timer of
    theirs fires into the next run."""
    from games.models import Game

    Game.objects.filter(pk__in=[game_id for game_id, *_ in tables]).update(
        status=Game.Status.ABANDONED, deadlines=[], next_deadline_at=None
    )


if __name__ == "__main__":
    main()
