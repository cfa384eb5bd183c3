"""Same bots? A fingerprint of their decisions and the CPU of a fixed amount of search.

Run:  python bench/bots_same.py [--games 2] [--cpu-games 2]

Why it exists: a change meant to move code and not behaviour (issue 23's one level frame and
one search on the engine) must leave every decision as it was for the same random source, and
must not make a decision dearer.  A CPU budget makes hard's decisions depend on the machine's
speed, so both are measured with hard's search capped by iterations instead:

* **fingerprint** -- per kind, ``--games`` games of each of random, easy and hard (at most 4
  iterations per search) against medium, seats rotated, fixed seeds: the SHA-256 of every
  game's winners, scores, round scores, number of actions and simulated clock.  Run it on two
  commits: equal hashes mean the same games, decision for decision.
* **CPU** -- per kind, ``--cpu-games`` games of hard at a fixed number of iterations per
  search (Crisp 60, Cribbage 30, Triple Crown 15) against medium: the same searches on both
  commits, so hard's ``thread_time`` per iteration compares their cost.  On a shared machine
  run the two commits alternately a few times and compare the minima.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from games.bots import Bot, Budget, bot_for
from games.bots.arena import play_game
from games.engines.crisp import Settings as CrispSettings

SEATS = {"crisp": 2, "cribbage": 2, "triple_crown": 4}
CPU_ITERATIONS = {"crisp": 60, "cribbage": 30, "triple_crown": 15}


def _settings(kind: str) -> CrispSettings | None:
    return CrispSettings(target_score=30) if kind == "crisp" else None


def _seats(kind: str, first: Bot, game: int) -> list[Bot]:
    bots = [first] + [bot_for(kind, "medium") for _ in range(SEATS[kind] - 1)]
    return bots[::-1] if game % 2 else bots


def fingerprint(games: int) -> str:
    """The SHA-256 of the outcomes of fixed-seed games (see the module docstring)."""
    h = hashlib.sha256()
    for kind in SEATS:
        for g in range(games):
            for level in ("random", "easy", "hard"):
                budget = Budget(cpu_ms=1e9, max_iterations=4) if level == "hard" else None
                first = bot_for(kind, level, budget=budget)
                rec = play_game(
                    kind, _seats(kind, first, g), seed=f"fp:{kind}:{g}", settings=_settings(kind)
                )
                seats = [(s.level, s.actions, s.asked) for s in rec.seats]
                outcome = (rec.seed, rec.winners, rec.scores, rec.rounds, rec.actions)
                h.update(repr((*outcome, rec.sim_ms, seats)).encode())
    return h.hexdigest()


def cpu(games: int) -> list[str]:
    """Per kind: hard's decisions, iterations, CPU and CPU per iteration at a fixed search."""
    rows = []
    for kind in SEATS:
        spent = iterations = decisions = 0.0
        for g in range(games):
            budget = Budget(cpu_ms=1e9, max_iterations=CPU_ITERATIONS[kind])
            hard = bot_for(kind, "hard", budget=budget)
            play_game(
                kind,
                _seats(kind, hard, g),
                seed=f"cpu:{kind}:{g}",
                settings=CrispSettings(target_score=50) if kind == "crisp" else None,
            )
            spent += hard.stats.cpu_s
            iterations += hard.stats.iterations
            decisions += hard.stats.decisions
        rows.append(
            f"| {kind} | {decisions:.0f} | {iterations:.0f} | {1000 * spent:.0f} | "
            f"{1000 * spent / max(1.0, iterations):.3f} |"
        )
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--games", type=int, default=2, help="fingerprint games per kind and level")
    ap.add_argument("--cpu-games", type=int, default=2, help="games of hard per kind (0: none)")
    args = ap.parse_args()
    print(f"fingerprint ({args.games} games per kind and level): {fingerprint(args.games)}")
    if args.cpu_games:
        print()
        print("| game | hard decisions | iterations | hard CPU (ms) | CPU per iteration (ms) |")
        print("|---|---|---|---|---|")
        for row in cpu(args.cpu_games):
            print(row)


if __name__ == "__main__":
    main()
