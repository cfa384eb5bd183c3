"""Strength of the Cribbage and Triple Crown bots: round-robin tournaments, 95 % intervals.

Run:  python bench/bots_more.py --game cribbage [--minutes 18] [--hard-ms 25] [--cpu-decisions 40]
                                 [--pairings hard:medium] [--duplicate]
                                 [--first-deal N] [--jsonl FILE]
      python bench/bots_more.py --game cribbage --combine FILE [FILE ...]
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
Wilson interval still counts games, which overstates its width for such pairs (conservative);
beside it, "over N deals" is the win share with its normal 95 % interval over the deals (each
deal scores 0, 1/2 or 1 for A), the paired measure.

Longer tournaments on both cores: run two processes side by side on disjoint deals
(``--first-deal 10000`` and ``--first-deal 20000``), each with ``--jsonl FILE``, then
``--combine FILE FILE`` prints the table over all their games.

CPU per decision is ``time.thread_time`` of the ``decide`` calls that returned a move, per
level.  Hard searches within a CPU budget per decision; the product's default is 200 ms,
which would take hours over hundreds of games on a shared machine, so the tournament runs it
at ``--hard-ms`` and says so, and a separate short run measures CPU per decision at 200 ms.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
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
        self.win_list: list[float] = []  # A's win share, game by game
        self.deal_win: list[float] = []  # duplicate: A's mean win share over a deal's two games

    def play(self, hard_ms: float, confidence: float | None = None, first_deal: int = 0) -> dict:
        """Play the next game of this pairing, tally it, and return its record (one line of
        ``--jsonl``: enough to rebuild the tally with ``--combine``)."""
        kind, a, b, g = self.kind, self.a, self.b, self.games
        deal = first_deal + (g // 2 if self.duplicate else g)
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
        wall = time.perf_counter() - t0
        mine = [i for i, lv in enumerate(pattern) if lv == a]
        theirs = [i for i, lv in enumerate(pattern) if lv == b]
        win = sum(1 for w in rec.winners if w in mine) / len(rec.winners)
        if n == 2:
            margin = rec.scores[mine[0]] - rec.scores[theirs[0]]
        else:
            hands = max(1, len(rec.rounds))
            pa = sum(rec.scores[i] for i in mine) / len(mine)
            pb = sum(rec.scores[i] for i in theirs) / len(theirs)
            margin = (pa - pb) / hands
        record = {
            "kind": kind,
            "a": a,
            "b": b,
            "deal": deal,
            "game": g,
            "duplicate": self.duplicate,
            "hard_ms": hard_ms,
            "win": win,
            "margin": margin,
            "wall": wall,
            "cpu": {
                lv: [
                    sum(rec.seats[i].action_cpu_s for i, x in enumerate(pattern) if x == lv),
                    sum(rec.seats[i].actions for i, x in enumerate(pattern) if x == lv),
                    max(rec.seats[i].max_cpu_s for i, x in enumerate(pattern) if x == lv),
                ]
                for lv in (a, b)
            },
        }
        self.add(record)
        return record

    def add(self, record: dict) -> None:
        """Tally one game's record (from ``play`` or a ``--jsonl`` file).  In duplicate mode
        a deal's two games arrive one after the other (the second has an odd ``game``)."""
        self.wall += record["wall"]
        self.wins += record["win"]
        self.margin.append(record["margin"])
        self.win_list.append(record["win"])
        if self.duplicate and record["game"] % 2:
            self.deal_margin.append(self.margin[-1] + self.margin[-2])
            self.deal_win.append((self.win_list[-1] + self.win_list[-2]) / 2)
        for lv, (t, k, worst) in record["cpu"].items():
            self.cpu[lv][0] += t
            self.cpu[lv][1] += k
            self.worst[lv] = max(self.worst[lv], worst)
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
        paired = ""
        if self.duplicate and self.deal_win:
            pm, ph = mean_ci(self.deal_win)
            paired = f"; over {len(self.deal_win)} deals {100 * pm:.1f} ± {100 * ph:.1f} %"
        return (
            f"| {self.a} vs {self.b} | {self.games} | {100 * p:.1f} % "
            f"[{100 * lo:.1f}, {100 * hi:.1f}]{paired} | {m:+.2f} ± {h:.2f} {unit} "
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


TABLE_HEAD = (
    "| pairing (A vs B) | games | A's win share [95 % CI] | A's margin ± 95 % "
    "| CPU ms/decision A / B | max CPU ms/decision A / B |\n|---|---|---|---|---|---|"
)


def combine(kind: str, files: list[str]) -> None:
    """Print one table over the games of several runs (``--jsonl`` files), pairing by pairing.

    Runs side by side on disjoint deals make one longer tournament; the deals of each file stay
    in order, so a duplicate deal's two games stay together.  A deal recorded twice (two runs
    over the same range) is an error: it would count the same cards twice."""
    pairs: dict[tuple[str, str], Pairing] = {}
    seen: set[tuple[str, str, int, int]] = set()
    hard_ms: set[float] = set()
    for name in files:
        with open(name) as f:
            records = [json.loads(line) for line in f if line.strip()]
        records = [r for r in records if r["kind"] == kind]
        by_pairing: dict[tuple[str, str], list[dict]] = {}
        for r in records:
            by_pairing.setdefault((r["a"], r["b"]), []).append(r)
        for (a, b), rs in by_pairing.items():
            if rs[0]["duplicate"] and rs[-1]["game"] % 2 == 0:
                rs.pop()  # the run stopped between a deal's two games: that deal is incomplete
            p = pairs.get((a, b))
            if p is None:
                p = pairs[(a, b)] = Pairing(kind, a, b)
                p.duplicate = rs[0]["duplicate"] if rs else False
            for i, r in enumerate(rs):
                key = (a, b, r["deal"], r["game"] % 2)
                if key in seen:
                    raise SystemExit(f"{name}: deal {r['deal']} of {a}:{b} recorded twice")
                if p.duplicate and r["game"] % 2 != i % 2:
                    raise SystemExit(f"{name}: deal {r['deal']} of {a}:{b} is out of order")
                seen.add(key)
                hard_ms.add(r["hard_ms"])
                p.add(r)
    ms = ", ".join(f"{x:g}" for x in sorted(hard_ms))
    print(f"## {kind}, combined from {len(files)} runs (hard at {ms} ms CPU/decision)")
    print()
    print(TABLE_HEAD)
    for p in pairs.values():
        print(p.row())


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
    ap.add_argument(
        "--first-deal",
        type=int,
        default=0,
        help="the first deal's number (its seed); runs side by side take disjoint ranges",
    )
    ap.add_argument("--jsonl", default="", help="append every game's record to this file")
    ap.add_argument(
        "--combine",
        nargs="+",
        default=None,
        metavar="FILE",
        help="play nothing: print the table of the games recorded in these --jsonl files",
    )
    args = ap.parse_args()
    kind = args.game
    if args.combine:
        combine(kind, args.combine)
        return
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
        record = p.play(args.hard_ms, args.confidence, args.first_deal)
        if args.jsonl:
            with open(args.jsonl, "a") as out:
                out.write(json.dumps(record) + "\n")
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
    print(TABLE_HEAD)
    for p in pairs:
        print(p.row())
    print()
    print(cpu_line)


if __name__ == "__main__":
    main()
