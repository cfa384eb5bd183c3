"""Strength of the bots: round-robin tournaments, with 95 % confidence intervals.

Run:  python bench/bots.py [--games 1000] [--hard-games 150] [--hard-medium-games 300]
                          [--hard-ms 20] [--target 50] [--cpu-games 3]
                          [--pairings hard:medium,medium:easy] [--minutes 60] [--progress 50]
                          [--duplicate]

``--pairings`` plays only those pairings (A:B, A's win rate is printed); ``--minutes`` stops
the pairings with hard when that much wall clock has passed (the row says how many games were
played), for a run at the product's 200 ms that must fit a shared machine's afternoon.

For Crisp, every pair of levels (random, easy, medium, hard) plays heads-up games through the
referee (``games.bots.arena``: the bots get only their seats' redacted payloads, every move
goes through the engine's ``apply``).  The seats are rotated: level A sits at seat 0 in even
games and at seat 1 in odd ones (and the first dealer comes from the game's seed), so neither
level profits from a seat.  Printed per pairing, as a Markdown table:

* A's **win rate** (a shared win counts half) with its Wilson 95 % interval;
* the **average round score** of each level and A's mean *round-score advantage* (B's score
  minus A's per round, averaged per game, then over games) with a 95 % interval over games --
  positive means A scores lower, i.e. better, than B;
* **CPU per decision** (``time.thread_time`` of ``decide`` calls that returned a move) per
  level, mean and maximum.

``--duplicate`` plays every seed twice, the levels in swapped seats (games 2i and 2i+1): both
games of a pair deal the same cards in every round number (E19), so where the two levels
decide alike the pair's round scores cancel exactly and only their different decisions (and
what follows from them) are left.  The round advantage's interval is then taken over the
pairs, and a second win-rate interval over the pairs is printed below the table (the Wilson
interval in the table treats the games as independent; within a pair they are negatively
correlated, so it is the wider of the two).

Hard searches within a CPU budget per decision; the product's default is 200 ms, which would
take hours over hundreds of games on a shared machine, so the tournament runs it at
``--hard-ms`` (20 ms by default) and says so, and a separate short run measures the CPU per
decision at 200 ms.  Games are played to ``--target`` points (50 by default: the lobby's
shortest game, twice as many games per CPU-minute as 100).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from games.bots import Budget, bot_for
from games.bots.arena import play_game
from games.engines.crisp import Settings

LEVELS = ("random", "easy", "medium", "hard")


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
    n = len(xs)
    m = sum(xs) / n
    if n < 2:
        return (m, math.inf)
    sd = math.sqrt(sum((x - m) ** 2 for x in xs) / (n - 1))
    return (m, z * sd / math.sqrt(n))


def pairing(
    a: str,
    b: str,
    games: int,
    hard_ms: float,
    target: int,
    deadline: float | None = None,
    progress: int = 0,
    confidence: float | None = None,
    duplicate: bool = False,
) -> dict[str, object]:
    """Up to ``games`` games of level ``a`` against ``b`` (fewer if the wall clock passes
    ``deadline``, a ``time.perf_counter`` value; the row says how many were played).

    ``duplicate``: games 2i and 2i+1 share one seed -- the same first dealer and the same deck
    for every round number (E19) -- with the levels in swapped seats, and the round advantage's
    interval is taken over those pairs.  The luck of the deal, most of a round score's variance,
    then largely cancels within a pair (a wall-clock stop plays whole pairs only)."""
    budget = Budget(hard_ms)
    wins = 0.0
    adv: list[float] = []
    won_each: list[float] = []
    score = {a: [0, 0], b: [0, 0]}  # total round score, rounds
    cpu = {a: [0.0, 0], b: [0.0, 0]}
    worst = {a: 0.0, b: 0.0}
    t0 = time.perf_counter()
    played = 0
    for g in range(games):
        if deadline is not None and time.perf_counter() > deadline and not (duplicate and g % 2):
            break
        bots = [bot_for("crisp", a, budget=budget), bot_for("crisp", b, budget=budget)]
        for bot in bots:
            if confidence is not None and bot.level == "hard":
                bot.confidence = confidence  # type: ignore[attr-defined]
        sa = g % 2
        if sa:
            bots.reverse()
        rec = play_game(
            "crisp",
            bots,
            seed=f"bench:{a}:{b}:{g // 2 if duplicate else g}",
            settings=Settings(target_score=target),
            freeze_gc=True,
        )
        won = 1.0 / len(rec.winners) if sa in rec.winners else 0.0
        wins += won
        won_each.append(won)
        diffs = [r[1 - sa] - r[sa] for r in rec.rounds]
        adv.append(sum(diffs) / len(diffs))
        for r in rec.rounds:
            score[a][0] += r[sa]
            score[b][0] += r[1 - sa]
            score[a][1] += 1
            score[b][1] += 1
        for seat, lvl in ((sa, a), (1 - sa, b)):
            cpu[lvl][0] += rec.seats[seat].action_cpu_s
            cpu[lvl][1] += rec.seats[seat].actions
            worst[lvl] = max(worst[lvl], rec.seats[seat].max_cpu_s)
        played += 1
        if progress and played % progress == 0:
            lo, hi = wilson(wins, played)
            print(
                f"... {a} vs {b}: {played} games, {wins / played:.1%} ({lo:.1%} to {hi:.1%}), "
                f"{time.perf_counter() - t0:.0f} s",
                file=sys.stderr,
                flush=True,
            )
    games = played
    lo, hi = wilson(wins, games)
    pair_win = None
    if duplicate:
        m, h = mean_ci([(adv[i] + adv[i + 1]) / 2 for i in range(0, len(adv) - 1, 2)])
        pair_win = mean_ci([(won_each[i] + won_each[i + 1]) / 2 for i in range(0, games - 1, 2)])
    else:
        m, h = mean_ci(adv)
    return {
        "a": a,
        "b": b,
        "games": games,
        "win": wins / games,
        "win_ci": (lo, hi),
        "pair_win": pair_win,
        "score_a": score[a][0] / score[a][1],
        "score_b": score[b][0] / score[b][1],
        "rounds": score[a][1],
        "adv": m,
        "adv_ci": h,
        "cpu_a_ms": 1000 * cpu[a][0] / max(1, cpu[a][1]),
        "cpu_b_ms": 1000 * cpu[b][0] / max(1, cpu[b][1]),
        "max_a_ms": 1000 * worst[a],
        "max_b_ms": 1000 * worst[b],
        "wall_s": time.perf_counter() - t0,
    }


def cpu_at_product_budget(games: int) -> tuple[float, float, int]:
    """Hard at the product's 200 ms budget vs medium: mean and max CPU per decision (ms)."""
    total, worst, n = 0.0, 0.0, 0
    for g in range(games):
        bots = [bot_for("crisp", "hard", budget=Budget(200)), bot_for("crisp", "medium")]
        rec = play_game(
            "crisp", bots, seed=f"bench:cpu:{g}", settings=Settings(target_score=50), freeze_gc=True
        )
        s = rec.seats[0]
        total += s.action_cpu_s
        worst = max(worst, s.max_cpu_s)
        n += s.actions
    return 1000 * total / max(1, n), 1000 * worst, n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--games", type=int, default=1000, help="games per pairing without hard")
    ap.add_argument("--hard-games", type=int, default=150, help="games: hard vs random/easy")
    ap.add_argument("--hard-medium-games", type=int, default=300, help="games: hard vs medium")
    ap.add_argument("--hard-ms", type=float, default=20.0, help="hard's CPU budget (ms)")
    ap.add_argument("--target", type=int, default=50, help="points that end a game")
    ap.add_argument("--cpu-games", type=int, default=3, help="games of hard at 200 ms")
    ap.add_argument(
        "--pairings",
        default="",
        help="comma-separated A:B pairings to play (default: every pair of levels)",
    )
    ap.add_argument(
        "--minutes",
        type=float,
        default=0.0,
        help="wall-clock limit for pairings with hard (0: none); the row says how many games",
    )
    ap.add_argument("--progress", type=int, default=50, help="a progress line every N games")
    ap.add_argument(
        "--confidence",
        type=float,
        default=None,
        help="hard's override threshold in standard errors (default: the bot's, 2)",
    )
    ap.add_argument(
        "--duplicate",
        action="store_true",
        help="pairs of games on one seed with the seats swapped; advantage interval over pairs",
    )
    args = ap.parse_args()
    t0 = time.perf_counter()
    deadline = t0 + 60 * args.minutes if args.minutes else None
    if args.pairings:
        pairs = [tuple(p.split(":")) for p in args.pairings.split(",")]
    else:
        pairs = [(a, b) for i, a in enumerate(LEVELS) for b in LEVELS[:i]]
    print(
        f"Crisp, heads-up, target {args.target}; {args.games} games per pairing "
        f"({args.hard_games} with hard, {args.hard_medium_games} hard vs medium"
        + (f", or fewer when {args.minutes:g} min of wall clock have passed" if deadline else "")
        + f"; hard at {args.hard_ms:g} ms CPU per decision"
        + (f", confidence {args.confidence:g}" if args.confidence is not None else "")
        + "); seats rotated"
        + (
            " (duplicate: each seed played twice, seats swapped; advantage interval over pairs)"
            if args.duplicate
            else ""
        )
        + ".\n"
    )
    print(
        "| A vs B | games | A's win rate (95 % CI) | avg round score A / B | "
        "A's round advantage (95 % CI) | CPU/decision A / B (ms) | max CPU/decision A / B (ms) |"
    )
    print("|---|---|---|---|---|---|---|")
    pairs_win: list[str] = []
    for a, b in pairs:
        if (a, b) in (("hard", "medium"), ("medium", "hard")):
            n = args.hard_medium_games
        elif "hard" in (a, b):
            n = args.hard_games
        else:
            n = args.games
        r = pairing(
            a,
            b,
            n,
            args.hard_ms,
            args.target,
            deadline if "hard" in (a, b) else None,
            args.progress,
            args.confidence,
            args.duplicate,
        )
        lo, hi = r["win_ci"]  # type: ignore[misc]
        print(
            f"| {a} vs {b} | {r['games']} | {r['win']:.1%} ({lo:.1%} to {hi:.1%}) | "
            f"{r['score_a']:.2f} / {r['score_b']:.2f} | "
            f"{r['adv']:+.2f} (±{r['adv_ci']:.2f}) | "
            f"{r['cpu_a_ms']:.2f} / {r['cpu_b_ms']:.2f} | "
            f"{r['max_a_ms']:.1f} / {r['max_b_ms']:.1f} |",
            flush=True,
        )
        if r["pair_win"] is not None:
            pm, ph = r["pair_win"]  # type: ignore[misc]
            pairs_win.append(
                f"{a} vs {b}: win rate {pm:.1%} ± {ph:.1%} (normal 95 % over "
                f"{r['games'] // 2} seed pairs)"  # type: ignore[operator]
            )
    for line in pairs_win:
        print(f"\n{line}")
    if args.cpu_games:
        mean, worst, n = cpu_at_product_budget(args.cpu_games)
        print(
            f"\nHard at the product budget (200 ms), {args.cpu_games} games vs medium: "
            f"{n} decisions, CPU per decision mean {mean:.1f} ms, max {worst:.1f} ms."
        )
    print(f"\nTotal wall time {time.perf_counter() - t0:.0f} s.")


if __name__ == "__main__":
    main()
