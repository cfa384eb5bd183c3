"""Strength of the Cribbage and Triple Crown bots: round-robin tournaments, 95 % intervals.

Run:  python bench/bots_more.py --game cribbage [--minutes 18] [--hard-ms 25] [--cpu-decisions 40]
                                 [--pairings hard:medium] [--duplicate]
      python bench/bots_more.py --game triple_crown [...]

The companion of ``bench/bots.py`` (Crisp) for the two other games; same referee
(``games.bots.arena``: each bot gets only its seat's redacted payloads, every move goes through
the engine's ``apply``, an illegal one raises).  Every pair of levels (random, easy, medium,
hard) plays; the pairings take turns game by game until the time budget is spent, so each gets
as many games as its speed allows and the table says how many (``n``).

* **Cribbage** (two seats, to 121): level A sits at seat 0 in even games and at seat 1 in odd
  ones (the first dealer comes from the cut, C3).  Printed: A's win rate (Wilson 95 %
  interval) and A's mean final margin (A's score minus B's) with a 95 % interval over games.
* **Triple Crown** (four seats, to 15): two seats each, ``A B A B`` in even games and
  ``B A B A`` in odd ones.  Printed: the share of the game's wins that went to A's seats (a
  tie shares; 50 % is parity) with a Wilson interval over games, and A's mean points per hand
  minus B's (per seat) with a 95 % interval over games.

``--duplicate`` plays every deal twice with the seats swapped (the same seed: the same cut and
the same cards at each seat, hand by hand), so the luck of the cards cancels out of the pair;
A's margin is then given per game with its interval computed over deals.  The win share's
Wilson interval still counts games, which overstates its width for such pairs (conservative).

CPU per decision is ``time.thread_time`` of the ``decide`` calls that returned a move, per
level.  Hard searches within a CPU budget per decision; the product's default is 200 ms,
which would take hours over hundreds of games on a shared machine, so the tournament runs it
at ``--hard-ms`` and says so, and a separate short run measures CPU per decision at 200 ms.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import math
import random
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from games.bots import Budget, bot_for
from games.bots.arena import play_game
from games.engines import engine_for

LEVELS = ("random", "easy", "medium", "hard")
SEATS = {"cribbage": 2, "triple_crown": 4}


def wilson(k: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval of a proportion k/n."""
    if n == 0:
        return (0.0, 1.0)
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return (c - h, c + h)


def mean_ci(xs: list[float], z: float = 1.96) -> tuple[float, float]:
    """Mean and the half-width of its normal 95 % interval."""
    n = len(xs)
    if n == 0:
        return (0.0, math.inf)
    m = sum(xs) / n
    if n < 2:
        return (m, math.inf)
    sd = math.sqrt(sum((x - m) ** 2 for x in xs) / (n - 1))
    return (m, z * sd / math.sqrt(n))


class Pairing:
    """The running tally of level ``a`` against level ``b``."""

    def __init__(self, kind: str, a: str, b: str) -> None:
        self.kind, self.a, self.b = kind, a, b
        self.games = 0
        self.wins = 0.0  # A's share of the wins, summed over games
        self.margin: list[float] = []
        self.cpu = {a: [0.0, 0], b: [0.0, 0]}
        self.worst = {a: 0.0, b: 0.0}
        self.wall = 0.0
        self.duplicate = False
        self.deal_margin: list[float] = []  # duplicate: A's margin summed over a deal's two games

    def play(self, hard_ms: float, confidence: float | None = None) -> None:
        kind, a, b, g = self.kind, self.a, self.b, self.games
        deal = g // 2 if self.duplicate else g
        n = SEATS[kind]
        budget = Budget(hard_ms)
        if n == 2:
            pattern = [a, b] if g % 2 == 0 else [b, a]
        else:
            pattern = [a, b, a, b] if g % 2 == 0 else [b, a, b, a]
        bots = [bot_for(kind, lv, budget=budget) for lv in pattern]
        for bot in bots:
            if confidence is not None and bot.level == "hard":
                bot.confidence = confidence  # type: ignore[attr-defined]
        t0 = time.perf_counter()
        rec = play_game(kind, bots, seed=f"bench-more:{kind}:{a}:{b}:{deal}", freeze_gc=True)
        self.wall += time.perf_counter() - t0
        mine = [i for i, lv in enumerate(pattern) if lv == a]
        theirs = [i for i, lv in enumerate(pattern) if lv == b]
        self.wins += sum(1 for w in rec.winners if w in mine) / len(rec.winners)
        if n == 2:
            self.margin.append(rec.scores[mine[0]] - rec.scores[theirs[0]])
        else:
            hands = max(1, len(rec.rounds))
            pa = sum(rec.scores[i] for i in mine) / len(mine)
            pb = sum(rec.scores[i] for i in theirs) / len(theirs)
            self.margin.append((pa - pb) / hands)
        if self.duplicate and g % 2:
            self.deal_margin.append(self.margin[-1] + self.margin[-2])
        for i, lv in enumerate(pattern):
            s = rec.seats[i]
            self.cpu[lv][0] += s.action_cpu_s
            self.cpu[lv][1] += s.actions
            self.worst[lv] = max(self.worst[lv], s.max_cpu_s)
        self.games += 1

    def row(self) -> str:
        lo, hi = wilson(self.wins, self.games)
        p = self.wins / self.games if self.games else 0.0
        m, h = mean_ci(self.margin)
        unit = "points" if SEATS[self.kind] == 2 else "points/hand"

        def cpu(lv: str) -> str:
            t, k = self.cpu[lv]
            return f"{1000 * t / k:.2f}" if k else "-"

        if self.duplicate:  # per game, with the interval over deals (the pairs are the units)
            dm, dh = mean_ci(self.deal_margin)
            m, h = dm / 2, dh / 2
            unit += ", paired by deal"
        return (
            f"| {self.a} vs {self.b} | {self.games} | {100 * p:.1f} % "
            f"[{100 * lo:.1f}, {100 * hi:.1f}] | {m:+.2f} ± {h:.2f} {unit} "
            f"| {cpu(self.a)} / {cpu(self.b)} "
            f"| {1000 * self.worst[self.a]:.1f} / {1000 * self.worst[self.b]:.1f} |"
        )


class _Enough(Exception):
    """Enough decisions measured: stop the game."""


def cpu_at_default(kind: str, decisions: int) -> str:
    """Hard at the product's 200 ms budget: CPU per decision over ``decisions`` moves of one
    game against medium (mean and maximum, ms)."""
    n = SEATS[kind]
    bots: list[Any] = [bot_for(kind, "hard", budget=Budget(200.0))] + [
        bot_for(kind, "medium") for _ in range(n - 1)
    ]
    hard = bots[0]
    times: list[float] = []
    orig = hard.decide

    def timed(memory: Any, now: int, rng: random.Random) -> Any:
        t0 = time.thread_time()
        out = orig(memory, now, rng)
        if out is not None:
            times.append(time.thread_time() - t0)
        if len(times) >= decisions:
            raise _Enough
        return out

    hard.decide = timed  # the wrapper calls the checked entry point itself
    with contextlib.suppress(_Enough):
        play_game(kind, bots, seed=f"bench-more-cpu:{kind}", freeze_gc=True)
    if not times:
        return "no decision measured"
    return (
        f"hard at 200 ms: {len(times)} decisions, CPU per decision mean "
        f"{1000 * sum(times) / len(times):.0f} ms, max {1000 * max(times):.0f} ms"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--game", choices=sorted(SEATS), required=True)
    ap.add_argument("--minutes", type=float, default=18.0, help="wall-clock budget")
    ap.add_argument("--hard-ms", type=float, default=25.0, help="hard's CPU budget per decision")
    ap.add_argument("--cpu-decisions", type=int, default=30)
    ap.add_argument("--max-games", type=int, default=1000, help="per pairing")
    ap.add_argument("--every", type=float, default=120.0, help="print the table every s")
    ap.add_argument(
        "--pairings",
        default="",
        help="comma-separated A:B pairings to play (default: every pair of levels)",
    )
    ap.add_argument(
        "--confidence",
        type=float,
        default=None,
        help="hard's override threshold in standard errors (default: the bot's, 2)",
    )
    ap.add_argument(
        "--duplicate",
        action="store_true",
        help="play every deal twice, seats swapped (the same cards: luck cancels out of the "
        "paired margin)",
    )
    args = ap.parse_args()
    kind = args.game
    engine_for(kind)
    if args.pairings:
        chosen = [tuple(p.split(":")) for p in args.pairings.split(",")]
    else:
        chosen = list(itertools.combinations(LEVELS, 2))
    pairs = [Pairing(kind, a, b) for a, b in chosen]
    for p in pairs:
        p.duplicate = args.duplicate
    t0 = time.perf_counter()
    end = t0 + 60 * args.minutes
    last = t0
    conf = f", confidence {args.confidence:g}" if args.confidence is not None else ""
    conf += ", duplicate deals" if args.duplicate else ""
    print(f"# {kind}: hard at {args.hard_ms:g} ms CPU per decision{conf}", flush=True)
    cpu_line = cpu_at_default(kind, args.cpu_decisions) if args.cpu_decisions else ""
    print(cpu_line, flush=True)
    # Cheap pairings must not starve the expensive ones: each turn plays the pairing that has
    # used the least wall time so far (games without hard are fast, so they get more).
    while time.perf_counter() < end:
        open_ = [p for p in pairs if p.games < args.max_games]
        if not open_:
            break
        p = min(open_, key=lambda p: (p.wall, p.games))
        p.play(args.hard_ms, args.confidence)
        if time.perf_counter() - last > args.every:
            last = time.perf_counter()
            print(f"... {last - t0:.0f} s, games {[p.games for p in pairs]}", flush=True)
            for p in pairs:
                print("...", p.row(), flush=True)
    print()
    print(
        f"## {kind} (hard at {args.hard_ms:g} ms CPU/decision{conf}; "
        f"{time.perf_counter() - t0:.0f} s)"
    )
    print()
    print(
        "| pairing (A vs B) | games | A's win share [95 % CI] | A's margin ± 95 % "
        "| CPU ms/decision A / B | max CPU ms/decision A / B |"
    )
    print("|---|---|---|---|---|---|")
    for p in pairs:
        print(p.row())
    print()
    print(cpu_line)


if __name__ == "__main__":
    main()
