"""cProfile of exactly what `bench/act_cpu.py` measures: the action's own thread (`consumers._act`).

    .venv/bin/python bench/act_profile.py --database-url postgres://postgres@127.0.0.1:5432/db \
        [act_cpu.py's options] [--top 40] [--sort tottime|cumulative]

Runs `bench/act_cpu.py` unchanged, with the profiler switched on around each `_act` call only
(not the driver's own reads between them), then prints the top functions. Deterministic
profiling inflates Python-heavy code against C, so read it for where the Python goes, and
measure the change itself with act_cpu (CPU time) or an interleaved A/B.
"""

from __future__ import annotations

import cProfile
import pstats
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))


def main() -> None:
    top, sort = 40, "tottime"
    argv = sys.argv[1:]
    for flag in ("--top", "--sort"):
        if flag in argv:
            i = argv.index(flag)
            value = argv[i + 1]
            del argv[i : i + 2]
            if flag == "--top":
                top = int(value)
            else:
                sort = value
    sys.argv = [sys.argv[0], *argv]

    import act_cpu
    import django

    profile = cProfile.Profile()
    setup = django.setup

    def patched_setup(*args: Any, **kwargs: Any) -> None:
        setup(*args, **kwargs)
        from games import consumers

        act = consumers._act

        def profiled(*a: Any, **k: Any) -> Any:
            profile.enable()
            try:
                return act(*a, **k)
            finally:
                profile.disable()

        consumers._act = profiled  # type: ignore[assignment]

    django.setup = patched_setup  # type: ignore[assignment]
    act_cpu.main()
    stats = pstats.Stats(profile)
    stats.sort_stats(sort).print_stats(top)


if __name__ == "__main__":
    main()
