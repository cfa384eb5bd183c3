"""Bench only: time every garbage collection of this process, for `bench/gc_pause.py`.

Python imports `sitecustomize` at start-up from the first directory of `sys.path` that holds
one; `bench/gc_pause.py` puts this directory on `PYTHONPATH` for the processes the benchmark
starts (daphne, the Celery worker, beat). The product never imports it, and it does nothing
unless `CRISP_GC_STATS` names a directory, so instrumenting is never on by default.

Why a hook rather than a setting: a collection pauses every socket of the process, so its CPU
is what matters, and only the process itself can time it (`gc.callbacks`, `time.thread_time`
of the collecting thread: CPU, not wall, because the machine is shared).

Writes `<CRISP_GC_STATS>/gc-<pid>.jsonl`, one JSON object a line:
  {"pid", "argv", "t"}                                        first, who this is
  {"t", "gen", "cpu", "wall", "collected", "uncollectable"}   one per collection (`t` at its end)
  {"t", "snap": 1, "tracked", "frozen", "rss", "modules"}     every CRISP_GC_STATS_EVERY s (5)
`tracked` is `len(gc.get_objects())`: what a full collection walks (frozen objects excluded).
`CRISP_GC_THRESHOLD=a,b,c` sets `gc.set_threshold` first (to try thresholds without a change).
`CRISP_GC_STATS_MODULES=1` adds the names of modules imported since the previous snapshot.
"""

from __future__ import annotations

import gc
import json
import os
import sys
import threading
import time


def _install(directory: str) -> None:
    if threshold := os.environ.get("CRISP_GC_THRESHOLD"):
        gc.set_threshold(*(int(x) for x in threshold.split(",")))
    out = open(  # noqa: SIM115 - held for the process's life, line-buffered
        os.path.join(directory, f"gc-{os.getpid()}.jsonl"), "a", buffering=1
    )
    lock = threading.Lock()

    def write(record: dict) -> None:
        line = json.dumps(record, separators=(",", ":")) + "\n"
        with lock:
            out.write(line)

    write({"pid": os.getpid(), "argv": sys.argv, "t": time.time()})
    started = [0.0, 0.0]

    def on_gc(phase: str, info: dict) -> None:
        if phase == "start":
            started[0], started[1] = time.thread_time(), time.perf_counter()
            return
        cpu, wall = time.thread_time() - started[0], time.perf_counter() - started[1]
        write(
            {
                "t": time.time(),
                "gen": info["generation"],
                "cpu": round(cpu, 6),
                "wall": round(wall, 6),
                "collected": info["collected"],
                "uncollectable": info["uncollectable"],
            }
        )

    gc.callbacks.append(on_gc)
    every = float(os.environ.get("CRISP_GC_STATS_EVERY", "5"))
    list_modules = os.environ.get("CRISP_GC_STATS_MODULES") == "1"
    page = os.sysconf("SC_PAGE_SIZE")

    def snapshots() -> None:
        seen: set[str] = set()
        while True:
            tracked = len(gc.get_objects())
            with open("/proc/self/statm") as statm:
                rss = int(statm.read().split()[1]) * page
            record = {
                "t": time.time(),
                "snap": 1,
                "tracked": tracked,
                "frozen": gc.get_freeze_count(),
                "rss": rss,
                "modules": len(sys.modules),
            }
            if list_modules:
                names = set(sys.modules)
                record["new_modules"] = sorted(names - seen)
                seen = names
            write(record)
            time.sleep(every)

    threading.Thread(target=snapshots, name="gc-stats", daemon=True).start()


if os.environ.get("CRISP_GC_STATS"):
    _install(os.environ["CRISP_GC_STATS"])
