"""The search's CPU budget on the real clock: quiet, and beside another busy thread, side by side.

Run:  python bench/bots_budget.py [--ms 60] [--runs 5]

tests/bots/test_bots_budget.py proves the stopping rule exactly on a fake clock and that the
default clock is ``time.thread_time``; this prints what the real clock gives on this machine.
Per run, over a toy game (two seats add 1-3 to 21; ``ismcts`` knows no engine): a search of
``--ms`` ms alone, then the same search while another thread of the process spins.  Columns:
iterations, the searching thread's CPU (``thread_time``, what the budget is measured on), the
process's CPU and the wall time over the search.  Expected: the thread's CPU within the budget
(plus one play-out) in both columns; the process's CPU and the wall well above it in the busy
one -- a search on either of those would have stopped short of its own CPU.  How many
iterations that CPU buys under GIL contention is the machine's business (CI once saw 925
against 1,374 quiet).  The last line: the dearest search of ``--runs`` whose play-outs turn
12 ms dear after 20 cheap iterations, against the budget plus one such play-out.
"""

from __future__ import annotations

import argparse
import random
import sys
import threading
import time
from collections.abc import Hashable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from games.bots import Budget, ismcts


class Race:
    """Two seats add 1-3 to a running total; whoever reaches 21 wins (a hidden handicap per
    sample, so determinisations differ)."""

    def sample(self, rng: random.Random) -> list[int]:
        return [0, 0, rng.randrange(3)]

    def to_move(self, s: list[int]) -> int | None:
        return None if s[0] >= 21 else s[1]

    def actions(self, s: list[int]) -> Sequence[Hashable]:
        return (1, 2, 3)

    def apply_action(self, s: list[int], action: Hashable) -> Hashable:
        assert isinstance(action, int)
        s[0] += action
        s[1] = 1 - s[1]
        return None

    def rollout_action(self, s: list[int], rng: random.Random) -> Hashable:
        return rng.choice((1, 2, 3))

    def rewards(self, s: list[int]) -> Sequence[float]:
        winner = 1 - s[1]
        return [1.0 if i == winner else 0.0 for i in (0, 1)]


class Lumpy(Race):
    """``Race`` whose play-outs cost 12 ms of CPU each from the 21st iteration on."""

    def __init__(self) -> None:
        self.samples = 0

    def sample(self, rng: random.Random) -> list[int]:
        self.samples += 1
        return super().sample(rng)

    def rewards(self, s: list[int]) -> Sequence[float]:
        if self.samples > 61:
            t = time.thread_time() + 0.012
            while time.thread_time() < t:
                pass
        return super().rewards(s)


def measure(ms: float, seed: int) -> tuple[int, float, float, float]:
    """Iterations, thread CPU, process CPU and wall (s) of one search."""
    wall0, proc0, t0 = time.perf_counter(), time.process_time(), time.thread_time()
    res = ismcts.search(Race(), 0, Budget(ms), random.Random(seed))
    return (
        res.iterations,
        time.thread_time() - t0,
        time.process_time() - proc0,
        time.perf_counter() - wall0,
    )


def busy(ms: float, seed: int) -> tuple[int, float, float, float]:
    """``measure`` while another thread of this process spins."""
    stop = threading.Event()

    def spin() -> None:
        x = 0
        while not stop.is_set():
            x += 1

    spinner = threading.Thread(target=spin, daemon=True)
    spinner.start()
    try:
        return measure(ms, seed)
    finally:
        stop.set()
        spinner.join()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ms", type=float, default=60.0)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    print(
        "| run | quiet: iterations | thread CPU (ms) | process CPU | wall | "
        "busy thread beside: iterations | thread CPU (ms) | process CPU | wall |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for run in range(args.runs):
        q, b = measure(args.ms, run), busy(args.ms, run)
        print(
            f"| {run} | {q[0]} | {1000 * q[1]:.1f} | {1000 * q[2]:.1f} | {1000 * q[3]:.1f} | "
            f"{b[0]} | {1000 * b[1]:.1f} | {1000 * b[2]:.1f} | {1000 * b[3]:.1f} |",
            flush=True,
        )
    worst = 0.0
    for run in range(args.runs):
        t0 = time.thread_time()
        ismcts.search(Lumpy(), 0, Budget(40.0), random.Random(run))
        worst = max(worst, time.thread_time() - t0)
    print(
        f"\nlumpy play-outs, budget 40 ms: dearest search {1000 * worst:.1f} ms of thread CPU "
        f"(budget + one 12 ms play-out: 52 ms)"
    )


if __name__ == "__main__":
    main()
