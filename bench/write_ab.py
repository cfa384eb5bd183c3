"""The change's write (`ChangeWrite.write`), main's against this tree's, A/B in one process.

    .venv/bin/python bench/write_ab.py --database-url postgres://postgres@127.0.0.1:5432/crisp_x \
        [--redis-url redis://127.0.0.1:6379/9] [--tables 10] [--pairs 8] [--actions 200]

Session 21. Main's write (before session 21: every value through its field's
`get_db_prep_save`, a new server-side binding cursor per call, closed after it) is copied here
(`main_write`) and swapped in turn by turn (a draw and its discard; `act_cpu.alternate_turns`)
for this tree's (`games.services.prepared.ChangeWrite.write`: converters worked out once, the
cursor kept with the connection). The same statement, the same values. Per action, CPU time of
this thread (`time.thread_time`): the whole action (`games.consumers._act`: lock, engine,
write, commit) and the write's own call; beside them the PostgreSQL backends' CPU (their
`/proc/PID/schedstat`, as `act_cpu.py`). Each pair: `--actions` actions each way, medians;
the summary gives the median of the pairs and in how many pairs this tree's was lower, with
the 1-minute load average beside each pair.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

BASE_DIR = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(BASE_DIR))
sys.path.insert(1, str(BASE_DIR / "bench"))


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def main_write(
    self: Any,
    game: Any,
    call: Any,
    events: list[Any],
    seats: dict[int, tuple[Any, ...]],
    using: str = "default",
) -> None:
    """`ChangeWrite.write` as main had it before session 21 (its own code, this tree's SQL)."""
    from django.db import DatabaseError, connections

    from crisp_site import prepared as _binding

    connection = connections[using]
    statements = self._statements(connection, call is not None, len(events), len(seats))

    def values(obj: Any, fields: list[Any]) -> list[Any]:
        return [f.get_db_prep_save(f.pre_save(obj, True), connection) for f in fields]

    params: list[list[Any]] = []
    if call is not None:
        params.append(values(call, self._call_fields))
    if events:
        params.append([v for ev in events for v in values(ev, self._event_fields)])
    if seats:
        seat_params: list[Any] = []
        for i, field in enumerate(self._seat_fields):
            for pk, columns in seats.items():
                seat_params += [pk, field.get_db_prep_save(columns[i], connection)]
        seat_params += list(seats)
        params.append(seat_params)
    row = [f.get_db_prep_save(getattr(game, f.attname), connection) for f in self._row._fields]
    row.append(game.pk)
    params.append(row)
    bound = connection.vendor == "postgresql" and _binding.server_binding()
    with _binding.binding_cursor(connection) if bound else connection.cursor() as cursor:
        if len(statements) == 1:
            cursor.execute(statements[0], [v for p in params for v in p])
            updated = cursor.rowcount
            ids = cursor.fetchone()[0] if events and updated == 1 else []
        else:
            ids, updated = [], 0
            for sql, values_ in zip(statements, params, strict=True):
                cursor.execute(sql, values_)
                if sql.startswith("INSERT") and "RETURNING" in sql:
                    ids = [r[0] for r in cursor.fetchall()]
                elif sql is statements[-1]:
                    updated = cursor.rowcount
    if updated != 1:
        raise DatabaseError("Save with update_fields did not affect any rows.")
    for ev, pk in zip(events, ids, strict=True):
        ev.pk = pk
        ev._state.adding, ev._state.db = False, using


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/9")
    parser.add_argument("--tables", type=int, default=10)
    parser.add_argument("--pairs", type=int, default=8)
    parser.add_argument("--actions", type=int, default=200, help="per pair, each way")
    parser.add_argument("--warmup", type=int, default=60, help="actions each way, not counted")
    args = parser.parse_args()
    from act_cpu import _backends, _backends_ns, abandon, alternate_turns, setup_django

    setup_django(args.database_url, args.redis_url, "write-ab")
    from live import make_tables, move_after_draw

    from games import clock, consumers, services
    from games.models import Game
    from games.services.prepared import ChangeWrite

    tree_write = ChangeWrite.write
    spent = [0.0]  # the write's own CPU in the current action

    def timed(write: Any) -> Any:
        def run(*args: Any, **kwargs: Any) -> None:
            t0 = time.thread_time()
            try:
                write(*args, **kwargs)
            finally:
                spent[0] += time.thread_time() - t0

        return run

    ways = {True: timed(main_write), False: timed(tree_write)}

    tables = make_tables(args.tables)
    for game_id, _ in tables:
        game = Game.objects.get(pk=game_id)
        services.game_start(
            game=game_id, user=game.host, timers={"memorise_ms": 0, "start_delay_ms": 0}
        )
    time.sleep(0.05)
    by_game = {g: {s.number: s.user for s in Game.objects.get(pk=g).seats.all()} for g, _ in tables}
    pids: list[int] = []

    def one_turn(game_id: int, main_side: bool) -> list[tuple[float, float, float]]:
        """One turn (a draw, a discard): per action its thread CPU, its write's, its backends'
        (ms)."""
        out: list[tuple[float, float, float]] = []
        game = Game.objects.only("state", "status").get(pk=game_id)
        if game.status != Game.Status.PLAYING:
            return out
        turn = game.state["round"]["turn"]
        user = by_game[game_id][turn["seat"]]
        wait = (turn.get("start_at") or 0) - clock.now_ms()
        if wait > 0:
            time.sleep(wait / 1000 + 0.002)
        ChangeWrite.write = ways[main_side]  # type: ignore[method-assign]
        try:
            ack: dict[str, Any] = {"events": []}
            for action in ({"type": "draw", "source": "deck"}, None):
                if action is None:
                    action = move_after_draw(ack["events"])
                spent[0] = 0.0
                b0, t0 = _backends_ns(pids), time.thread_time()
                try:
                    _, ack = consumers._act(game_id, user, {"action": action})
                except Exception:  # a refused action (a window): next table
                    return out
                thread = (time.thread_time() - t0) * 1000
                out.append((thread, spent[0] * 1000, (_backends_ns(pids) - b0) / 1e6))
        finally:
            ChangeWrite.write = tree_write  # type: ignore[method-assign]
        return out

    alternate_turns(tables, one_turn, args.warmup)
    pids = _backends()
    print(f"{args.tables} tables, {len(pids)} backends; load {load()}")
    rows = []
    for i in range(args.pairs):
        got = alternate_turns(tables, one_turn, args.actions)
        med = {
            side: [statistics.median(x[k] for x in got[side]) for k in range(3)]
            for side in (True, False)
        }
        rows.append((med[True], med[False]))
        m, t = med[True], med[False]
        print(
            f"  pair {i + 1}: action main {m[0]:.3f} tree {t[0]:.3f} ms "
            f"({100 * (t[0] / m[0] - 1):+.1f} %); write main {m[1] * 1000:.0f} tree "
            f"{t[1] * 1000:.0f} us; backends main {m[2]:.3f} tree {t[2]:.3f} ms; "
            f"n {len(got[True])}/{len(got[False])}; load {load()}"
        )
    names = ("action (thread, ms)", "write (thread, ms)", "backends (ms)")
    for k, name in enumerate(names):
        main_med = statistics.median(m[k] for m, _ in rows)
        tree_med = statistics.median(t[k] for _, t in rows)
        lower = sum(1 for m, t in rows if t[k] < m[k])
        print(
            f"{name}: median of pairs main {main_med:.4f}, tree {tree_med:.4f} "
            f"({100 * (tree_med / main_med - 1):+.1f} %); tree lower in {lower} of {len(rows)}"
        )
    abandon(tables)


if __name__ == "__main__":
    main()
