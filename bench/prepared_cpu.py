"""The ORM's way against the compiled-once way, call by call in one process (issue 25, item 2).

    .venv/bin/python bench/prepared_cpu.py --database-url postgres://postgres@127.0.0.1:5432/crisp_act

Each read (and the change's row update) of the commit's hot path, as the service layer did it
before (`before`: the queryset / `save(update_fields=...)`) and as it does now
(`games.services.prepared`), alternating one call of each, `--calls` times, inside a
transaction on one started 4-seat game: CPU of this thread per call (`time.thread_time`), median
and p90. Alternating in one process is the A/B least moved by a loaded machine (bench/
RESULTS.md, session 8).

Session 14 added the two round trips an action saved: the row lock and the seats' read in one
message (`commit._lock_with_seats`) against one after the other, and the change's writes --
the `EngineCall` row, three `Event` rows, the row's update and two seats' turns -- as the ORM
wrote them (`create`, `bulk_create`, the prepared update, the `CASE` update) against
`commit._WRITE_CHANGE` (one statement on PostgreSQL). The rows are made before each timed call.

`--binding` (session 18): the hot path's statements bound client-side (psycopg's `ClientCursor`,
every value quoted into fresh SQL text: `before`, `crisp_site.prepared.SERVER_BINDING` off) against
bound server-side and prepared once per connection (`after`), alternating call by call on one
connection: the action's lock + seats, the timer's lock + seats, the change's one write. Beside
this thread's CPU it reports the PostgreSQL backend's CPU per call (`SELECT pg_backend_pid()`'s
process: `/proc/PID/schedstat`'s run time, in ns; psutil's user+sys, in 10 ms ticks, is printed
for the whole run as a cross-check), and then what a transaction's `BEGIN` and `COMMIT` cost: a
`SELECT 1` in a transaction against in autocommit, and a whole action's database work (lock +
seats, then the write) in its own transaction.

`--converters` (session 16): instead, the action path's compiled reads with their row converters
looked up on every call (`before`: Django's `results_iter`, as `Prepared` did until then)
against worked out once per compiled read (`after`: `Prepared` now), alternating call by call.
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
    parser.add_argument(
        "--converters", action="store_true", help="instead: converters per call against once"
    )
    parser.add_argument(
        "--binding", action="store_true", help="instead: client-side against server-side binding"
    )
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

    from games import clock, services
    from games.models import EngineCall, Event, Game, Round, Seat
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
        (
            "lock + seats",
            lambda: commit._seats(commit._lock(game_id)),
            lambda: commit._lock_with_seats(game_id),
        ),
        (
            "timer lock + seats",  # game_fire_deadline's reads (issue 25, second round)
            lambda: commit._seats(commit._lock_playing(game_id)),  # type: ignore[arg-type]
            lambda: commit._lock_playing_with_seats(game_id),
        ),
    ]
    seat_ids = list(Seat.objects.filter(game=game).order_by("number").values_list("pk", flat=True))
    (rnd,) = commit._ROUND.fetch(game_id, number)

    def change() -> tuple[Any, list[Any], dict[int, Any]]:
        """A discard's rows: the engine call, three events, two seats' turns (made untimed)."""
        game.version += 1
        at = clock.now_ms()
        call = EngineCall(
            game=game, version=game.version, at=at, call="apply", seat=0, action={"type": "x"}
        )
        rows = [
            commit._event_row(
                game,
                origin=Event.Origin.ENGINE,
                type="bench",
                data={"seat": 0, "at": at, "i": i},
                version=game.version,
                round=rnd,
                at_ms=at,
            )
            for i in range(3)
        ]
        since = clock.to_datetime(at)
        return call, rows, {seat_ids[0]: (None, None), seat_ids[1]: (since, None)}

    def orm_writes(call: Any, rows: list[Any], turns: dict[int, Any]) -> None:
        call.save()
        Event.objects.bulk_create(rows)
        commit._SAVE_CHANGE.save(game)
        commit._write_turns(turns)

    def one_write(call: Any, rows: list[Any], turns: dict[int, Any]) -> None:
        # The seats' rows carry their missed count too since it rides in the one write
        # (None: left as it is), as ``commit._seat_writes`` makes them.
        seats = {pk: (*turn, None) for pk, turn in turns.items()}
        commit._WRITE_CHANGE.write(game, call, rows, seats)

    if args.converters:
        _converters(game_id, number, args.calls)
        return
    if args.binding:
        _binding(game, change, one_write, args.calls)
        return
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
        times = {"before": [], "after": []}
        for i in range(args.calls + 50):
            for key, fn in (("before", orm_writes), ("after", one_write)):
                rows = change()
                t0 = time.thread_time()
                fn(*rows)
                if i >= 50:  # the first 50 warm both
                    times[key].append((time.thread_time() - t0) * 1000)
        b, a = sorted(times["before"]), sorted(times["after"])
        p90 = int(0.9 * (len(b) - 1))
        saved = statistics.median(b) - statistics.median(a)
        print(
            f"  {'the writes':<18}{statistics.median(b):11.3f}{b[p90]:8.3f}"
            f"{statistics.median(a):11.3f}{a[p90]:8.3f}{saved:8.3f}"
        )
        transaction.set_rollback(True)
    print(f"  saved by the reads and the row update above (medians): {total:.3f} ms")


def _backend_ns(pid: int) -> int:
    """The PostgreSQL backend's CPU so far, ns (the scheduler's run time: exact, unlike the
    10 ms ticks of user+sys; accounted when the backend sleeps, i.e. once it has answered)."""
    with open(f"/proc/{pid}/schedstat") as f:
        return int(f.read().split()[0])


def _binding(
    game: Any,
    change: Callable[[], tuple[Any, list[Any], dict[int, Any]]],
    one_write: Callable[..., None],
    calls: int,
) -> None:
    """Client-side (before) against server-side binding (after), call by call on one connection:
    this thread's CPU and the PostgreSQL backend's per call."""
    import psutil
    from django.db import connection, transaction

    from crisp_site import prepared as binding
    from games.services import commit

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        (pid,) = cursor.fetchone()
    backend = psutil.Process(pid)
    cpu0 = backend.cpu_times()

    def switch(after: bool) -> None:
        """``before`` is main's path exactly: psycopg's own preparing off again (Django's
        ``prepare_threshold=None``); the statements already prepared stay prepared."""
        binding.SERVER_BINDING = after
        if not after and connection.connection is not None:
            connection.connection.prepare_threshold = None

    def measure(name: str, fn: Callable[[], Any], setup: Callable[[], Any] | None = None) -> None:
        times: dict[bool, tuple[list[float], list[float]]] = {False: ([], []), True: ([], [])}
        for i in range(calls + 50):  # the first 50 of each warm both (and prepare)
            for after in (False, True):
                switch(after)
                made = setup() if setup else ()
                b0, t0 = _backend_ns(pid), time.thread_time()
                fn(*made)
                t1, b1 = time.thread_time(), _backend_ns(pid)
                if i >= 50:
                    times[after][0].append((t1 - t0) * 1000)
                    times[after][1].append((b1 - b0) / 1e6)
        row = f"  {name:<26}"
        for k in (0, 1):
            b, a = sorted(times[False][k]), sorted(times[True][k])
            row += (
                f"{statistics.median(b):9.3f}{statistics.fmean(b):8.3f}"
                f"{statistics.median(a):9.3f}{statistics.fmean(a):8.3f}"
                f"{statistics.fmean(b) - statistics.fmean(a):8.3f}  "
            )
        print(row, flush=True)

    print(f"{calls} calls of each, alternating; client-side binding (before) / server-side")
    print("binding, prepared (after); ms per call: this thread's CPU | the backend's CPU")
    head = f"{'before p50':>9}{'mean':>8}{'after p50':>9}{'mean':>8}{'saved':>8}  "
    print(f"  {'':<26}{head}{head}")

    def seats_of(turns: dict[int, Any]) -> dict[int, Any]:
        return {pk: (*turn, None) for pk, turn in turns.items()}

    with transaction.atomic():
        measure("lock + seats", lambda: commit._lock_with_seats(game.pk))
        measure("timer lock + seats", lambda: commit._lock_playing_with_seats(game.pk))
        measure("the change's write", one_write, change)
        transaction.set_rollback(True)

    def action() -> None:
        with transaction.atomic():
            commit._lock_with_seats(game.pk)
            call, rows, turns = change()
            commit._WRITE_CHANGE.write(game, call, rows, seats_of(turns))

    def select_1() -> None:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")

    def in_transaction() -> None:
        with transaction.atomic():
            select_1()

    print("BEGIN and COMMIT (their own transactions, committed):")
    measure("SELECT 1, autocommit", select_1)
    measure("BEGIN; SELECT 1; COMMIT", in_transaction)
    measure("lock+seats, write, COMMIT", action)
    switch(True)
    cpu1 = backend.cpu_times()
    print(
        f"the backend's user+sys over the whole run (psutil): "
        f"{(cpu1.user - cpu0.user + cpu1.system - cpu0.system) * 1000:.0f} ms"
    )


def _converters(game_id: int, number: int, calls: int) -> None:
    """The action path's reads, converters looked up per call (before) and once (after)."""
    from django.db import transaction

    from games.services import commit
    from games.services.prepared import Prepared

    current = Prepared._instances

    def per_call(compiled: Any, rows: list[Any], using: str) -> list[Any]:
        """``Prepared._instances`` as it was: ``results_iter`` works the converters out."""
        out = []
        for row in compiled.compiler.results_iter(results=[rows]):
            obj = compiled.model.from_db(
                using, compiled.init_list, row[compiled.start : compiled.end]
            )
            for populator in compiled.populators:
                populator.populate(row, obj)
            for name, at in compiled.annotations:
                setattr(obj, name, row[at])
            out.append(obj)
        return out if rows else []

    reads: list[tuple[str, Callable[[], Any]]] = [
        ("lock + seats", lambda: commit._lock_with_seats(game_id)),
        ("timer lock + seats", lambda: commit._lock_playing_with_seats(game_id)),
        ("round's id", lambda: commit._ROUND.fetch(game_id, number)),
    ]
    print(f"{calls} calls of each, alternating, CPU of this thread per call (ms)")
    print(f"  {'':<20}{'per call p50':>13}{'p90':>8}{'once p50':>10}{'p90':>8}{'saved':>8}")
    total = 0.0
    with transaction.atomic():
        for name, fn in reads:
            times: dict[bool, list[float]] = {True: [], False: []}
            for i in range(calls + 50):  # the first 50 of each warm both
                for old in (True, False):
                    Prepared._instances = staticmethod(per_call if old else current)  # type: ignore[method-assign]
                    t0 = time.thread_time()
                    fn()
                    spent = (time.thread_time() - t0) * 1000
                    if i >= 50:
                        times[old].append(spent)
            Prepared._instances = staticmethod(current)  # type: ignore[method-assign]
            b, a = sorted(times[True]), sorted(times[False])
            p90 = int(0.9 * (len(b) - 1))
            saved = statistics.median(b) - statistics.median(a)
            total += saved if name != "timer lock + seats" else 0.0
            print(
                f"  {name:<20}{statistics.median(b):13.3f}{b[p90]:8.3f}"
                f"{statistics.median(a):10.3f}{a[p90]:8.3f}{saved:8.3f}"
            )
        transaction.set_rollback(True)
    print(f"  saved per action (its lock + seats and round's id, medians): {total:.3f} ms")


if __name__ == "__main__":
    main()
