"""An action's lock with the game's state cached in the process, or read and parsed, A/B in one
process (issue 25, session 21).

    .venv/bin/python bench/statecache_ab.py --database-url postgres://postgres@127.0.0.1:5432/x \
        [--redis-url redis://127.0.0.1:6379/9] [--tree .] [--tables 10] [--pairs 8] [--actions 150]

What a hit of ``games.services.statecache`` saves: the lock's read of the ``state`` column
(PostgreSQL's output of the jsonb, its transfer, ``JSONField.from_db_value``) and
``GameState.from_json`` in ``_require_playing``. Turn by turn (a draw and its discard; each
table each way in turn, ``act_cpu.alternate_turns``), every other turn with the cache off
(``statecache.ENABLED = False``: the lock reads and parses the state, as before, and nothing is
filled) and on; each action's CPU of this thread (``games.consumers._act``: lock, engine,
write, commit, its on-commit callbacks) and of the PostgreSQL backends
(``act_cpu._backends_ns``). Within a pair half the tables play with the cache and half
without, turn by turn, and the halves swap from one pair to the next (a table that changes
sides every turn would find its entry stale half the time: a real table's actions all go
through one process's cache). ``--pairs`` pairs of ``--actions`` actions a side, the
1-minute load beside each; the summary gives the median of the pairs' means and how many
pairs went each way. The hits are counted (``statecache.STATS``) and printed.

``--tree``: another checkout's code (imported first). The cache was measured and not kept
(bench/results/session21-statecache.md): check out its commit (``git worktree add --detach
DIR 6b4a32d``) and pass ``--tree DIR``; a prototype that exposes its switch as
``games.services.commit.PROTO_ENABLED`` instead is driven the same way.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

BASE_DIR = Path(__file__).resolve().parent.parent


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/9")
    parser.add_argument("--tree", default=str(BASE_DIR))
    parser.add_argument("--tables", type=int, default=10)
    parser.add_argument("--pairs", type=int, default=8)
    parser.add_argument("--actions", type=int, default=150, help="per pair, each way")
    parser.add_argument("--warmup", type=int, default=40, help="actions each way, not counted")
    args = parser.parse_args()
    tree = Path(args.tree).resolve()
    sys.path.insert(0, str(tree))
    sys.path.insert(1, str(BASE_DIR / "bench"))
    from act_cpu import _backends, _backends_ns, abandon, setup_django

    setup_django(args.database_url, args.redis_url, "statecache-ab", tree)
    from live import make_tables, move_after_draw

    from games import broadcast, clock, consumers, services
    from games.models import Game
    from games.services import commit

    source = Path(sys.modules["games.services"].__file__ or "").resolve()
    if tree not in source.parents:
        raise SystemExit(f"games.services came from {source}, not from {tree}")
    try:
        from games.services import statecache

        def use(on: bool) -> None:
            statecache.ENABLED = on

        stats: dict[str, int] | None = statecache.STATS
    except ImportError:  # the prototype

        def use(on: bool) -> None:
            commit.PROTO_ENABLED = on  # type: ignore[attr-defined]

        stats = None

    broadcast.game_changed = lambda game_id, version, change=None: None  # not measured here
    tables = make_tables(args.tables)
    for game_id, _ in tables:
        game = Game.objects.get(pk=game_id)
        services.game_start(
            game=game_id, user=game.host, timers={"memorise_ms": 0, "start_delay_ms": 0}
        )
    time.sleep(0.05)
    by_game = {g: {s.number: s.user for s in Game.objects.get(pk=g).seats.all()} for g, _ in tables}
    pids: list[int] = []

    def one_turn(game_id: int, on: bool) -> list[tuple[float, float]]:
        out: list[tuple[float, float]] = []
        game = Game.objects.only("state", "status").get(pk=game_id)
        if game.status != Game.Status.PLAYING:
            return out
        turn = game.state["round"]["turn"]
        user = by_game[game_id][turn["seat"]]
        wait = (turn.get("start_at") or 0) - clock.now_ms()
        if wait > 0:
            time.sleep(wait / 1000 + 0.002)
        use(on)
        try:
            ack: dict[str, Any] = {"events": []}
            for action in ({"type": "draw", "source": "deck"}, None):
                if action is None:
                    action = move_after_draw(ack["events"])
                b0, t0 = _backends_ns(pids), time.thread_time()
                try:
                    _, ack = consumers._act(game_id, user, {"action": action})
                except Exception:  # a refused action (a window): next table
                    return out
                out.append(((time.thread_time() - t0) * 1000, (_backends_ns(pids) - b0) / 1e6))
        finally:
            use(True)
        return out

    def halves(count: int, first: bool) -> dict[bool, list[tuple[float, float]]]:
        """At least ``count`` actions a side: the even tables on ``first``'s side, the odd
        ones on the other, turn by turn."""
        got: dict[bool, list[tuple[float, float]]] = {True: [], False: []}
        while min(len(got[True]), len(got[False])) < count:
            for i, (game_id, _) in enumerate(tables):
                side = first if i % 2 == 0 else not first
                if len(got[side]) < count:
                    got[side] += one_turn(game_id, side)
        return got

    halves(args.warmup, True)
    pids = _backends()
    print(f"tree {tree.name}; {args.tables} tables; {len(pids)} backends; load {load()}")
    got: list[tuple[float, float, float, float]] = []
    for i in range(args.pairs):
        if stats is not None:
            stats.clear()
        sides = halves(args.actions, i % 2 == 0)
        off, on = sides[False], sides[True]
        row = (
            statistics.fmean(t for t, _ in off),
            statistics.fmean(t for t, _ in on),
            statistics.fmean(b for _, b in off),
            statistics.fmean(b for _, b in on),
        )
        got.append(row)
        hits = f"; cache {dict(stats)}" if stats is not None else ""
        print(
            f"  pair {i + 1}: thread off {row[0]:.3f} on {row[1]:.3f} ms "
            f"({100 * (row[1] / row[0] - 1):+.1f} %); backends off {row[2]:.3f} on {row[3]:.3f} ms "
            f"({100 * (row[3] / row[2] - 1):+.1f} %); n {len(off)}/{len(on)}; load {load()}{hits}"
        )
    for name, a, b in (("thread", 0, 1), ("backends", 2, 3)):
        off_med = statistics.median(r[a] for r in got)
        on_med = statistics.median(r[b] for r in got)
        lower = sum(1 for r in got if r[b] < r[a])
        print(
            f"{name}: median of pairs off {off_med:.3f} ms, on {on_med:.3f} ms "
            f"({100 * (on_med / off_med - 1):+.1f} %, {1000 * (off_med - on_med):.1f} µs saved); "
            f"on lower in {lower} of {len(got)} pairs"
        )
    abandon(tables)


if __name__ == "__main__":
    main()
