"""Benchmark of the rules engine: full random games per second and the cost of one action.

Run:  python bench/engine.py [--seconds 3]

What it measures, at 2 and at 8 seats, side by side in one run (so the ratios are meaningful on
whatever machine runs it):

* full random games per second: new_game, then random legal play (a random pause, a random legal
  action of the player to move, a crisp call now and then, timers fired when nothing can be done)
  until the game ends at a 50-point target;
* the cost of one action as the web layer pays it: ``apply`` plus ``view`` for every seat and a
  spectator plus ``event_view`` of every event for every seat and a spectator, and the pieces of
  that cost (apply alone, the views alone, the state's JSON round trip).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from games.engine import (
    Action,
    GameState,
    Settings,
    apply,
    event_view,
    fire,
    legal_actions,
    new_game,
    pending_deadlines,
    view,
)


def random_game(seats: int, rng: random.Random, on_action=None) -> int:
    """Play one game to its end; return the number of actions applied."""
    cfg = Settings(target_score=50, draw_seconds=30, pile_draw=rng.random() < 0.5)
    st, _ = new_game(seats=seats, settings=cfg, seed=str(rng.random()), now=0)
    now = 0
    actions = 0
    while st.status == "playing":
        now += rng.choice((0, 0, 500, 2000, 3001))
        t = st.round.turn
        choices: list[tuple[int, Action]] = []
        if t is not None:
            choices = [(t.seat, a) for a in legal_actions(st, t.seat, now) if a.type != "call"]
            for w in st.round.windows:
                if rng.random() < 0.08 and Action.call() in legal_actions(st, w.seat, now):
                    choices = [(w.seat, Action.call())]
        if not choices:
            ds = pending_deadlines(st)
            now = max(now, ds[0].at)
            st, _ = fire(st, ds[0].key, now)
            continue
        seat, action = rng.choice(choices)
        if on_action is None:
            st, _ = apply(st, seat, action, now)
        else:
            st = on_action(st, seat, action, now)
        actions += 1
    return actions


def games_per_second(seats: int, seconds: float) -> tuple[float, float]:
    rng = random.Random(seats)
    games = actions = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        actions += random_game(seats, rng)
        games += 1
    elapsed = time.perf_counter() - start
    return games / elapsed, actions / games


def action_costs(seats: int, seconds: float) -> dict[str, float]:
    """Mean microseconds per action for apply, views, event views and the JSON round trip."""
    rng = random.Random(100 + seats)
    totals = {"apply": 0.0, "views": 0.0, "event_views": 0.0, "json": 0.0}
    count = 0
    viewers = [None, *range(seats)]

    def measured(st: GameState, seat: int, action: Action, now: int) -> GameState:
        nonlocal count
        t0 = time.perf_counter()
        new, events = apply(st, seat, action, now)
        t1 = time.perf_counter()
        for v in viewers:
            view(new, v, now)
        t2 = time.perf_counter()
        for e in events:
            for v in viewers:
                event_view(e, v)
        t3 = time.perf_counter()
        GameState.from_json(new.to_json())
        t4 = time.perf_counter()
        totals["apply"] += t1 - t0
        totals["views"] += t2 - t1
        totals["event_views"] += t3 - t2
        totals["json"] += t4 - t3
        count += 1
        return new

    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        random_game(seats, rng, measured)
    return {k: v / count * 1e6 for k, v in totals.items()} | {"actions": count}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="per measurement")
    args = parser.parse_args()
    rows = {}
    for seats in (2, 8):
        gps, apg = games_per_second(seats, args.seconds)
        costs = action_costs(seats, args.seconds)
        rows[seats] = (gps, apg, costs)

    py = sys.version.split()[0]
    print(f"Crisp engine benchmark ({args.seconds:g} s per measurement, Python {py})")
    print()
    print(f"{'':40}{'2 seats':>14}{'8 seats':>14}{'8 / 2':>10}")

    def line(label: str, a: float, b: float, fmt: str = "{:,.1f}") -> None:
        print(f"{label:40}{fmt.format(a):>14}{fmt.format(b):>14}{b / a:>9.2f}x")

    line("full random games / s", rows[2][0], rows[8][0])
    line("actions per game", rows[2][1], rows[8][1], "{:,.0f}")
    line("actions / s (apply + all views)", 1e6 / _per_action(rows[2][2]),
         1e6 / _per_action(rows[8][2]), "{:,.0f}")  # fmt: skip
    print()
    print("cost per action, microseconds")
    for key, label in (
        ("apply", "  apply"),
        ("views", "  view, every seat + spectator"),
        ("event_views", "  event_view, every event x viewer"),
        ("json", "  state to_json + from_json"),
    ):
        line(label, rows[2][2][key], rows[8][2][key])
    line("  total (apply + views + event views)", _per_action(rows[2][2]), _per_action(rows[8][2]))
    print()
    for seats in (2, 8):
        c = rows[seats][2]
        print(
            f"{seats} seats: one view costs {c['views'] / (seats + 1):,.1f} us; "
            f"all views are {c['views'] / c['apply']:.2f}x the apply; "
            f"{int(c['actions']):,} actions measured"
        )


def _per_action(c: dict[str, float]) -> float:
    return c["apply"] + c["views"] + c["event_views"]


if __name__ == "__main__":
    main()
