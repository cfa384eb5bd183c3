"""Whole stack, two code trees interleaved: `bench/cpu.py` runs (one daphne, a worker, beat,
PostgreSQL, bots over real sockets) alternately for a base tree and this one, plus the daphne's
context switches per change (issue 25, session 20).

    .venv/bin/python bench/handover_stack.py --database-url postgres://... \
        --base BASE_EXPORT [--tree THIS_CHECKOUT] --tables 100 --seconds 30 --pairs 6

Each pair runs `cpu.py --tree` for both trees (which goes first alternates: ABBA). While a run
goes, every thread of its daphne (`/proc/<pid>/task/*/status`: voluntary and involuntary
context switches) is polled every half second; the last reading before the daphne stops is
its lifetime's (its start and the tables' set-up are a small, equal share either way), divided
by the run's changes. Printed per run: the daphne's CPU per action and per change, the
server total with PostgreSQL per action, action -> every seat p50 / p99 (ms), the daphne's
context switches per change, and the 1-minute load average; then medians and pairs each way.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import psutil

BASE_DIR = Path(__file__).resolve().parent.parent


def _daphne_switches(root: int) -> tuple[int, int] | None:
    """(voluntary, involuntary) switches summed over the daphne's threads, under `root`."""
    try:
        children = psutil.Process(root).children(recursive=True)
    except psutil.Error:
        return None
    for child in children:
        try:
            cmd = " ".join(child.cmdline())
        except psutil.Error:
            continue
        if "crisp_site.serve" not in cmd and "daphne" not in cmd:
            continue
        vol = invol = 0
        try:
            for task in os.listdir(f"/proc/{child.pid}/task"):
                with open(f"/proc/{child.pid}/task/{task}/status") as f:
                    for row in f:
                        if row.startswith("voluntary_ctxt_switches"):
                            vol += int(row.split()[1])
                        elif row.startswith("nonvoluntary_ctxt_switches"):
                            invol += int(row.split()[1])
        except OSError:
            return None
        return vol, invol
    return None


def run(tree: Path, args: argparse.Namespace) -> dict[str, float]:
    cmd = [
        sys.executable,
        str(BASE_DIR / "bench" / "cpu.py"),
        "--database-url",
        args.database_url,
        "--tree",
        str(tree),
        "--tables",
        str(args.tables),
        "--seconds",
        str(args.seconds),
    ]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, cwd=BASE_DIR)  # noqa: S603
    last: list[tuple[int, int] | None] = [None]

    def poll() -> None:
        while proc.poll() is None:
            got = _daphne_switches(proc.pid)
            if got is not None:
                last[0] = got
            time.sleep(0.5)

    poller = threading.Thread(target=poll, daemon=True)
    poller.start()
    out, _ = proc.communicate()
    poller.join()
    if proc.returncode:
        print(out)
        raise SystemExit(f"cpu.py failed ({proc.returncode})")
    daphne = re.search(r"daphne\s+([\d.]+) s CPU\s+([\d.]+) ms/action", out)
    actions = re.search(r"bots, \d+ s, (\d+) actions", out)
    changes = re.search(r"changes\s+(\d+)", out)
    withpg = re.search(r"with it ([\d.]+) ms/action", out)
    seat = re.search(r"every seat's socket\s+n=\s*\d+\s+p50=\s*([\d.]+) ms\s+p99=\s*([\d.]+)", out)
    assert daphne and actions and changes and withpg and seat, out
    n_changes = int(changes.group(1))
    vol, invol = last[0] or (0, 0)
    return {
        "actions": float(actions.group(1)),
        "daphne_act": float(daphne.group(2)),
        "daphne_chg": float(daphne.group(1)) / n_changes * 1000,
        "server_act": float(withpg.group(1)),
        "p50": float(seat.group(1)),
        "p99": float(seat.group(2)),
        "vol_chg": vol / n_changes,
        "invol_chg": invol / n_changes,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--base", required=True, help="the base tree (e.g. a `git archive`)")
    parser.add_argument("--tree", default=str(BASE_DIR))
    parser.add_argument(
        "--also", action="append", default=[], help="NAME=PATH: another tree in each round"
    )
    parser.add_argument("--tables", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--pairs", type=int, default=6, help="rounds (one run of each tree)")
    args = parser.parse_args()
    trees = {"base": Path(args.base).resolve(), "tree": Path(args.tree).resolve()}
    trees.update((n, Path(p).resolve()) for n, p in (a.split("=", 1) for a in args.also))
    names = list(trees)
    keys = ("daphne_act", "daphne_chg", "server_act", "p50", "p99", "vol_chg", "invol_chg")
    rows: dict[str, list[dict[str, Any]]] = {name: [] for name in names}
    print(f"{'pair':>4} {'load':>5} {'way':>6} {'acts':>6} " + " ".join(f"{k:>10}" for k in keys))
    for pair in range(args.pairs):
        # Each tree first in turn (two trees: ABBA).
        shift = pair % len(names)
        order = names[shift:] + names[:shift]
        if len(names) == 2 and pair % 2:
            order = names[::-1]
        for way in order:
            load = os.getloadavg()[0]
            r = run(trees[way], args)
            rows[way].append(r)
            print(
                f"{pair + 1:>4} {load:>5.1f} {way:>6} {r['actions']:>6.0f} "
                + " ".join(f"{r[k]:>10.3f}" for k in keys),
                flush=True,
            )
    for other in names[1:]:
        print(f"\nmedians (base -> {other}), and rounds in which {other} was lower:")
        for key in keys:
            a = statistics.median(r[key] for r in rows["base"])
            b = statistics.median(r[key] for r in rows[other])
            lower = sum(t[key] < b_[key] for b_, t in zip(rows["base"], rows[other], strict=True))
            print(f"  {key:<10} {a:8.3f} -> {b:8.3f}   lower in {lower} of {args.pairs}")


if __name__ == "__main__":
    main()
