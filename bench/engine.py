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

from games.engines.crisp import (
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


# CPU time of this process, not wall time: the figures should not depend on what else the
# machine is doing, and the 2- and 8-seat measurements are interleaved in short slices so that
# whatever noise remains hits both alike -- their ratios are the trustworthy output.
clock = time.process_time


class GameRate:
    """Full random games: count games and actions over many short slices."""

    def __init__(self, seats: int) -> None:
        self.seats, self.rng = seats, random.Random(seats)
        self.games = self.actions = 0
        self.seconds = 0.0

    def run(self, budget: float) -> None:
        start = clock()
        while clock() - start < budget:
            self.actions += random_game(self.seats, self.rng)
            self.games += 1
        self.seconds += clock() - start


class ActionCost:
    """What one action costs the web layer, split into its parts (seconds, summed)."""

    def __init__(self, seats: int) -> None:
        self.seats, self.rng = seats, random.Random(100 + seats)
        self.totals = {"apply": 0.0, "views": 0.0, "event_views": 0.0, "json": 0.0}
        self.count = 0
        self.viewers = [None, *range(seats)]

    def measured(self, st: GameState, seat: int, action: Action, now: int) -> GameState:
        t0 = clock()
        new, events = apply(st, seat, action, now)
        t1 = clock()
        for v in self.viewers:
            view(new, v, now)
        t2 = clock()
        for e in events:
            for v in self.viewers:
                event_view(e, v)
        t3 = clock()
        GameState.from_json(new.to_json())
        t4 = clock()
        self.totals["apply"] += t1 - t0
        self.totals["views"] += t2 - t1
        self.totals["event_views"] += t3 - t2
        self.totals["json"] += t4 - t3
        self.count += 1
        return new

    def run(self, budget: float) -> None:
        start = clock()
        while clock() - start < budget:
            random_game(self.seats, self.rng, self.measured)

    def micros(self) -> dict[str, float]:
        return {k: v / self.count * 1e6 for k, v in self.totals.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="CPU seconds per measurement")
    args = parser.parse_args()
    rates = {n: GameRate(n) for n in (2, 8)}
    costs = {n: ActionCost(n) for n in (2, 8)}
    slices = max(1, int(args.seconds / 0.25))
    for _ in range(slices):  # interleaved: 2 seats, 8 seats, 2 seats, ...
        for n in (2, 8):
            rates[n].run(args.seconds / slices)
            costs[n].run(args.seconds / slices)

    py = sys.version.split()[0]
    print(f"Crisp engine benchmark ({args.seconds:g} CPU s per measurement, Python {py})")
    print()
    print(f"{'':42}{'2 seats':>12}{'8 seats':>12}{'8 / 2':>10}")

    def line(label: str, a: float, b: float, fmt: str = "{:,.1f}") -> None:
        print(f"{label:42}{fmt.format(a):>12}{fmt.format(b):>12}{b / a:>9.2f}x")

    gps = {n: r.games / r.seconds for n, r in rates.items()}
    apg = {n: r.actions / r.games for n, r in rates.items()}
    us = {n: c.micros() for n, c in costs.items()}
    line("full random games / s", gps[2], gps[8])
    line("actions per game", apg[2], apg[8], "{:,.0f}")
    line("actions / s (apply + every view)", 1e6 / _per_action(us[2]), 1e6 / _per_action(us[8]))
    print()
    print("cost per action, microseconds")
    for key, label in (
        ("apply", "  apply"),
        ("views", "  view, every seat + spectator"),
        ("event_views", "  event_view, every event x viewer"),
        ("json", "  state to_json + from_json"),
    ):
        line(label, us[2][key], us[8][key])
    line("  total (apply + views + event views)", _per_action(us[2]), _per_action(us[8]))
    print()
    for n in (2, 8):
        c = us[n]
        print(
            f"{n} seats: one view {c['views'] / (n + 1):,.1f} us = "
            f"{c['views'] / (n + 1) / c['apply']:.2f}x an apply; all views "
            f"{c['views'] / c['apply']:.2f}x the apply; {costs[n].count:,} actions measured"
        )


def _per_action(c: dict[str, float]) -> float:
    return c["apply"] + c["views"] + c["event_views"]


if __name__ == "__main__":
    main()
