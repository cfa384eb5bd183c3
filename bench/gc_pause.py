"""The garbage collector's pauses in the product's daphne and Celery worker (issue 25).

    .venv/bin/python bench/gc_pause.py --tables 100 --daphnes 1 --seconds 30 --no-flat-out
    .venv/bin/python bench/gc_pause.py --tree ../other-checkout --tables 100 ...   # "before"
    .venv/bin/python bench/gc_pause.py --threshold 7000,10,10 --tables 100 ...     # try one

Runs `bench/scale.py` (of `--tree`, default this checkout; every other argument is scale.py's)
unchanged, with its processes instrumented by `bench/gc_hook/sitecustomize.py` (put on their
`PYTHONPATH`, enabled by `CRISP_GC_STATS`: the product has no instrumenting of its own). After
each of scale.py's reports, which print as always, it adds for each daphne and the worker,
over the measured window only (between the two CPU readings scale.py takes), the collections
per generation with their CPU (`thread_time` of the collecting thread: a collection pauses
every socket of the process, and the machine is shared, so CPU, not wall) sum and max, the
longest wall time, and the objects the collector tracks (`len(gc.get_objects())`, what a full
collection walks; frozen ones apart) and the RSS at the window's start and end. Then one line
`GC-JSON {...}` per cell with the same figures, for scripts that compare runs.

Why a wrapper and not an option of scale.py: scale.py's output stays exactly as it is, and the
"before" tree of an A/B needs no copy of this file (`--tree`).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HOOK = Path(__file__).resolve().parent / "gc_hook"


def load(path: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """One instrumented process's collections and snapshots."""
    events, snaps = [], []
    if path.exists():
        for line in path.read_text().splitlines():
            try:
                record = json.loads(line)
            except ValueError:  # a line cut short by the process's end
                continue
            if "gen" in record:
                events.append(record)
            elif "snap" in record:
                snaps.append(record)
    return events, snaps


def nearest(snaps: list[dict[str, Any]], t: float) -> dict[str, Any]:
    return min(snaps, key=lambda s: abs(s["t"] - t)) if snaps else {}


def window_stats(path: Path, t0: float, t1: float) -> dict[str, Any]:
    """Collections ending in [t0, t1] per generation; the snapshots nearest t0 and t1."""
    events, snaps = load(path)
    out: dict[str, Any] = {}
    for gen in (0, 1, 2):
        mine = [e for e in events if e["gen"] == gen and t0 <= e["t"] <= t1]
        out[f"gen{gen}"] = {
            "n": len(mine),
            "cpu_sum": sum(e["cpu"] for e in mine),
            "cpu_max": max((e["cpu"] for e in mine), default=0.0),
            "wall_max": max((e["wall"] for e in mine), default=0.0),
        }
    a, b = nearest(snaps, t0), nearest(snaps, t1)
    for key in ("tracked", "frozen", "rss"):
        out[f"{key}_start"], out[f"{key}_end"] = a.get(key, 0), b.get(key, 0)
    return out


class Recorder:
    """The times and processes of every CPU reading scale.py takes (two per stack)."""

    def __init__(self) -> None:
        self.reads: dict[int, list[tuple[float, dict[str, int]]]] = {}
        self.order: list[int] = []
        self.reported = 0

    def wrap(self, meter_cls: Any) -> None:
        original = meter_cls.read
        recorder = self

        def read(meter: Any) -> dict[str, float]:
            out = original(meter)
            key = id(meter)
            if key not in recorder.reads:
                recorder.reads[key] = []
                recorder.order.append(key)
            recorder.reads[key].append((time.time(), dict(meter.procs)))
            return out

        meter_cls.read = read

    def new_windows(self) -> list[tuple[float, float, dict[str, int]]]:
        """The stacks measured since the previous call: (window start, end, name -> pid)."""
        keys, self.reported = self.order[self.reported :], len(self.order)
        return [
            (self.reads[k][0][0], self.reads[k][-1][0], self.reads[k][-1][1])
            for k in keys
            if len(self.reads[k]) >= 2
        ]


def print_gc(r: dict[str, Any], windows: list[Any], stats_dir: Path, label: str) -> None:
    acts = max(1, r["product"]["acts"])
    cell: dict[str, Any] = {
        "tables": r["n"],
        "daphnes": r["daphnes"],
        "label": label,
        "load": os.getloadavg()[0],
        "acts": r["product"]["acts"],
        "cpu": r["product"]["cpu"],
        "procs": {},
    }
    print(
        f"  garbage collector over the window ({label}): per generation n / CPU sum / CPU max "
        "(wall max); objects tracked (frozen) and RSS at the window's start -> end"
    )
    for n, (t0, t1, procs) in enumerate(windows):
        stack = "product" if n == 0 else "echo"
        for name, pid in sorted(procs.items()):
            if not (name.startswith("daphne") or name == "worker"):
                continue
            s = window_stats(stats_dir / f"gc-{pid}.jsonl", t0, t1)
            cell["procs"][f"{stack}-{name}"] = s
            gens = "  ".join(
                f"g{g} {s[f'gen{g}']['n']:4d} / {1000 * s[f'gen{g}']['cpu_sum']:6.1f} / "
                f"{1000 * s[f'gen{g}']['cpu_max']:5.1f} ({1000 * s[f'gen{g}']['wall_max']:5.1f})"
                for g in (0, 1, 2)
            )
            print(
                f"    {stack + ' ' + name:<16} {gens} ms;  tracked {s['tracked_start']:,} -> "
                f"{s['tracked_end']:,} ({s['frozen_end']:,}); RSS {s['rss_start'] / 2**20:.0f} -> "
                f"{s['rss_end'] / 2**20:.0f} MiB"
            )
            if stack == "product":
                total = sum(s[f"gen{g}"]["cpu_sum"] for g in (0, 1, 2))
                print(f"{'':21}collector CPU per action {1000 * total / acts:.2f} ms")
    print("GC-JSON " + json.dumps(cell, separators=(",", ":")))
    sys.stdout.flush()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n")[0], epilog="Every other argument is bench/scale.py's."
    )
    parser.add_argument("--tree", type=Path, default=HOOK.parent.parent, help="checkout to run")
    parser.add_argument("--threshold", default="", help="gc.set_threshold in each process: a,b,c")
    parser.add_argument("--label", default="", help="a name for this run in the GC-JSON lines")
    parser.add_argument("--modules", action="store_true", help="log modules imported late")
    args, rest = parser.parse_known_args()
    tree = args.tree.resolve()
    stats_dir = Path(tempfile.mkdtemp(prefix="crisp-gc-"))
    os.environ["CRISP_GC_STATS"] = str(stats_dir)
    os.environ["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(HOOK), os.environ.get("PYTHONPATH", "")) if p
    )
    if args.threshold:
        os.environ["CRISP_GC_THRESHOLD"] = args.threshold
    if args.modules:
        os.environ["CRISP_GC_STATS_MODULES"] = "1"
    sys.path[:0] = [str(tree / "bench"), str(tree)]
    import scale  # the tree's own: it runs the product of the checkout it lives in

    assert Path(scale.__file__).resolve().parent == tree / "bench", scale.__file__
    recorder = Recorder()
    recorder.wrap(scale.CpuMeter)
    original_report = scale.report

    def report(r: dict[str, Any], flat: bool) -> None:
        original_report(r, flat)
        print_gc(r, recorder.new_windows(), stats_dir, args.label or str(tree.name))

    scale.report = report
    print(f"gc_pause: tree {tree.name}, per-process collections in {stats_dir}")
    sys.argv = [str(tree / "bench" / "scale.py"), *rest]
    scale.main()


if __name__ == "__main__":
    main()
