"""The ORM's way against the compiled-once way, call by call in one process (issue 25, item 2).

    .venv/bin/python bench/prepared_cpu.py --database-url postgres://postgres@127.0.0.1:5432/crisp_act

Each read (and the change's row update) of the commit's hot path, as the service layer did it
before (`before`: the queryset / `save(update_fields=...)`) and as it does now
(`games.services.prepared`), alternating one call of each, `--calls` times, inside a
transaction on one started 4-seat game: CPU of this thread per call (`time.thread_time`), median
and p90. Alternating in one process is the A/B least moved by a loaded machine (bench/
RESULTS.md, session 8).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

BASE_DIR = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(BASE_DIR))
sys.path.insert(1, str(BASE_DIR / "bench"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args()
    os.environ.update(
        DJANGO_SETTINGS_MODULE="crisp_site.settings",
        DATABASE_URL=args.database_url,
        REDIS_URL=os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/9"),
        DEBUG="0",
        LOG_LEVEL="WARNING",
        CONN_MAX_AGE="0",
        ALLOWED_HOSTS="127.0.0.1",
        SECRET_KEY="bench-prepared-not-secret",  # noqa: S106 - a throwaway bench key
    )
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=BASE_DIR, check=True
    )
    import django

    django.setup()
    from django.db import transaction
    from live import make_tables

    from games import services
    from games.models import Game, Round, Seat
    from games.services import commit

    ((game_id, _),) = make_tables(1)
    services.game_start(
        game=game_id,
        user=Game.objects.get(pk=game_id).host,
        timers={"memorise_ms": 0, "start_delay_ms": 0},
    )
    game = Game.objects.get(pk=game_id)
    number = game.state["round"]["number"]

    def orm_round() -> Any:
        return (
            Round.objects.filter(game=game, number=number)
            .only("id", "game_id", "number")
            .order_by()
            .first()
        )

    pairs: list[tuple[str, Callable[[], Any], Callable[[], Any]]] = [
        (
            "row lock",
            lambda: Game.objects.select_for_update().get(pk=game_id),
            lambda: commit._lock(game_id),
        ),
        (
            "seats with users",
            lambda: list(
                Seat.objects.filter(game=game)
                .select_related("user")
                .only(*commit._SEAT_COLUMNS)
                .order_by("number")
            ),
            lambda: commit._seats(game),
        ),
        ("round's id", orm_round, lambda: commit._ROUND.fetch(game_id, number)),
        (
            "row update",
            lambda: game.save(update_fields=commit._CHANGE_COLUMNS),
            lambda: commit._SAVE_CHANGE.save(game),
        ),
    ]
    print(f"{args.calls} calls of each, alternating, CPU of this thread per call (ms)")
    print(f"  {'':<18}{'before p50':>11}{'p90':>8}{'after p50':>11}{'p90':>8}{'saved':>8}")
    total = 0.0
    with transaction.atomic():
        for name, before, after in pairs:
            times: dict[str, list[float]] = {"before": [], "after": []}
            for _ in range(50):  # warm both
                before()
                after()
            for _ in range(args.calls):
                for key, fn in (("before", before), ("after", after)):
                    t0 = time.thread_time()
                    fn()
                    times[key].append((time.thread_time() - t0) * 1000)
            b, a = sorted(times["before"]), sorted(times["after"])
            p90 = int(0.9 * (len(b) - 1))
            saved = statistics.median(b) - statistics.median(a)
            total += saved
            print(
                f"  {name:<18}{statistics.median(b):11.3f}{b[p90]:8.3f}"
                f"{statistics.median(a):11.3f}{a[p90]:8.3f}{saved:8.3f}"
            )
        transaction.set_rollback(True)
    print(f"  saved per action (the four, medians): {total:.3f} ms")


if __name__ == "__main__":
    main()
