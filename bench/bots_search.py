"""What hard's search does per decision, per game: iterations, how often it overrides medium.

Run:  python bench/bots_search.py [--ms 200 25] [--games 2] [--gc freeze|default|both]

Hard plays ``--games`` games against medium (seats rotated; Crisp to 50 points, Cribbage to
121, Triple Crown one hard seat among three medium ones, to 15) at each budget.  Printed per
game and budget: hard's decisions, searches (decisions with more than one option), iterations
per search (one iteration plays *every* root action in one sampled world, ``ismcts`` paired
root), the share of searches whose choice was not medium's (the prior is kept unless a move is
better by the bot's ``confidence`` standard errors: two, one in Crisp), and CPU per decision
(``time.thread_time``), mean and max.

Why it exists: a hard level that keeps medium's choice in almost every decision can only be as
strong as medium plus what those few overrides gain, which is the first thing to know when a
tournament shows hard = medium.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from games.bots import Budget, bot_for
from games.bots.arena import play_game
from games.engines.crisp import Settings as CrispSettings

SEATS = {"crisp": 2, "cribbage": 2, "triple_crown": 4}


def run(
    kind: str, ms: float, games: int, confidence: float | None = None, freeze: bool = True
) -> str:
    dec = searches = overrides = iters = 0
    cpu = worst = 0.0
    for g in range(games):
        n = SEATS[kind]
        hard = bot_for(kind, "hard", budget=Budget(ms))
        if confidence is not None:
            hard.confidence = confidence  # type: ignore[attr-defined]
        bots = [hard] + [bot_for(kind, "medium") for _ in range(n - 1)]
        if g % 2:
            bots.reverse()
        settings = CrispSettings(target_score=50) if kind == "crisp" else None
        play_game(kind, bots, seed=f"bench-search:{kind}:{g}", settings=settings, freeze_gc=freeze)
        st = hard.stats
        dec += st.decisions
        searches += st.searches
        overrides += st.overrides
        iters += st.iterations
        cpu += st.cpu_s
        worst = max(worst, st.max_cpu_s)
    return (
        f"| {kind} | {ms:g} | {'frozen' if freeze else 'default'} | {games} | {dec} | "
        f"{searches} | {iters / max(1, searches):.1f} | "
        f"{100 * overrides / max(1, searches):.1f} % | {1000 * cpu / max(1, dec):.1f} / "
        f"{1000 * worst:.1f} |"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ms", type=float, nargs="+", default=[200.0, 25.0])
    ap.add_argument("--games", type=int, default=2)
    ap.add_argument("--kinds", nargs="+", default=list(SEATS))
    ap.add_argument("--confidence", type=float, default=None, help="hard's override threshold")
    ap.add_argument(
        "--gc",
        choices=("freeze", "default", "both"),
        default="freeze",
        help="freeze long-lived objects before each game (as the Celery worker does), the "
        "default collector, or both alternately (same seeds), to compare the CPU tail",
    )
    args = ap.parse_args()
    modes = {"freeze": [True], "default": [False], "both": [False, True]}[args.gc]
    print(
        "| game | budget (ms) | gc | games | hard decisions | searches | iterations/search | "
        "searches overriding medium | CPU/decision mean / max (ms) |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for kind in args.kinds:
        for ms in args.ms:
            for freeze in modes:
                print(run(kind, ms, args.games, args.confidence, freeze), flush=True)


if __name__ == "__main__":
    main()
