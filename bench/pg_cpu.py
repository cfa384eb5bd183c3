"""PostgreSQL's cost per action, before against after, turn by turn in one process (issue 25,
session 19).

    .venv/bin/python bench/pg_cpu.py --database-url postgres://postgres@127.0.0.1:5432/crisp_pg_ab \
        --ab both --tables 10 --actions 800 [--stats] [--explain]

An action over the socket (`games.consumers._act`, as `bench/act_cpu.py` plays it: 3 seats a
table, each player draws and discards in turn) is measured two ways, alternating turn by turn
(a draw and its discard), each side at its own tables, which side goes first swapped every round:

- `--ab begin`: one database; before = `crisp_site.prepared.BEGIN_WITH_FIRST` off (psycopg sends
  the transaction's `BEGIN` as a round trip of its own), after = on (`BEGIN` in the lock + seats'
  message);
- `--ab schema`: two databases, the given one (`before`: migrated to the latest migration, then
  back to `--before-migration`, i.e. without this session's schema changes) and the same name
  with `_b` (`after`: the latest); the process holds a connection to each and swaps Django's
  `default` connection between them per turn (so no pool: `DB_POOL=0`, one connection each);
- `--ab both`: before = the old schema and `BEGIN` alone, after = the new schema and `BEGIN`
  with the lock.

Per action and side: the action's thread CPU (`time.thread_time`), the side's PostgreSQL
backend's CPU (`/proc/PID/schedstat` run time) and its read and write system calls
(`/proc/PID/io` `syscr`/`syscw`: file I/O only, the WAL's writes mostly -- the socket's
`recv`/`send` are not counted there, so these are not the round trips: libpq's trace counts those,
tests/games/test_begin_with_first.py). Means and medians of each, then per block of `--block`
actions per side (the interleaved pairs: how many went each way, with the load average).

`--phases`: per action, the thread's and the backend's CPU in each of psycopg's waits (one per
`execute` or `commit`: the lock + seats with psycopg's own `BEGIN` before it when that is sent
alone, the write, `COMMIT`; the first and last are Django switching autocommit, no I/O).
`--draw-seconds N`: the games get a draw clock, so the row's `next_deadline_at` (indexed) moves
as in production; without it it stays empty. `--after-sql`: an experiment's SQL on the after
database (e.g. dropping an index the product keeps).

`--stats`: after the run, per database, `pg_stat_user_tables`' updates and HOT updates of the game
and seat tables during the measured part, the stored size of a game's state (`pg_column_size`,
against its text's length: compressed or not), and the tables' indexes. `--explain`: before the
measured part, a few actions per side with `auto_explain` (analyze, buffers, nested statements)
sent to this client as notices, and printed.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

BASE_DIR = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(BASE_DIR))
sys.path.insert(1, str(BASE_DIR / "bench"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/13")
    parser.add_argument("--ab", choices=("begin", "schema", "both"), default="both")
    parser.add_argument("--before-migration", default="0009_seat_turn")
    parser.add_argument("--tables", type=int, default=10, help="per side")
    parser.add_argument("--actions", type=int, default=800, help="measured, per side")
    parser.add_argument("--warmup", type=int, default=60, help="actions per side, unmeasured")
    parser.add_argument("--block", type=int, default=100, help="actions per side in a pair")
    parser.add_argument(
        "--draw-seconds", type=int, default=0, help="a draw clock (the row's next deadline moves)"
    )
    parser.add_argument(
        "--after-sql", default="", help="an experiment: SQL run on the after side's database"
    )
    parser.add_argument("--stats", action="store_true")
    parser.add_argument("--explain", action="store_true")
    parser.add_argument(
        "--phases", action="store_true", help="the backend's CPU per round trip of an action"
    )
    args = parser.parse_args()
    url_a = args.database_url
    url_b = url_a + "_b" if args.ab != "begin" else url_a
    os.environ.update(
        DJANGO_SETTINGS_MODULE="crisp_site.settings",
        DATABASE_URL=url_a,
        REDIS_URL=args.redis_url,
        DEBUG="0",
        LOG_LEVEL="WARNING",
        DB_POOL="0",  # a connection per database wrapper (Django keys its pools by alias)
        CONN_MAX_AGE="600",
        ALLOWED_HOSTS="127.0.0.1",
        SECRET_KEY="bench-pg-cpu-not-secret",  # noqa: S106 - a throwaway bench key
    )
    for url in dict.fromkeys((url_a, url_b)):
        _create_database(url)
        env = {**os.environ, "DATABASE_URL": url}
        manage = [sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"]
        subprocess.run(manage, cwd=BASE_DIR, check=True, env=env)  # noqa: S603 - our own argv
        if url == url_a and args.ab != "begin":
            subprocess.run(  # noqa: S603 - our own argv
                [*manage, "games", args.before_migration], cwd=BASE_DIR, check=True, env=env
            )

    if args.after_sql:
        import psycopg

        with psycopg.connect(url_b, autocommit=True) as conn:
            conn.execute(args.after_sql)
    import django

    os.chdir(BASE_DIR)
    django.setup()
    from django.db import connections
    from live import make_tables, move_after_draw

    from crisp_site import prepared
    from games import clock, consumers, services
    from games.models import Game

    wrapper_a = connections["default"]
    if url_b != url_a:
        import dj_database_url
        from django.conf import settings

        settings_b = {**settings.DATABASES["default"], **dj_database_url.parse(url_b)}
        settings_b["OPTIONS"] = dict(settings.DATABASES["default"].get("OPTIONS", {}))
        wrapper_b = connections.create_connection("default")
        wrapper_b.settings_dict = settings_b
    else:
        wrapper_b = wrapper_a
    sides = {"before": (wrapper_a, False), "after": (wrapper_b, True)}
    if args.ab == "schema":
        sides = {"before": (wrapper_a, True), "after": (wrapper_b, True)}

    def use(side: str) -> None:
        wrapper, begin_first = sides[side]
        connections._connections.default = wrapper  # type: ignore[attr-defined]
        prepared.BEGIN_WITH_FIRST = begin_first

    tables: dict[str, list[int]] = {}
    by_game: dict[int, dict[int, Any]] = {}
    pid: dict[str, int] = {}
    for side in sides:
        use(side)
        made = [g for g, _ in make_tables(args.tables)]
        for game_id in made:
            game = Game.objects.get(pk=game_id)
            clock_ = {"draw_seconds": args.draw_seconds} if args.draw_seconds else {}
            services.game_start(
                game=game_id,
                user=game.host,
                timers={"memorise_ms": 0, "start_delay_ms": 0, **clock_},
            )
            by_game[game_id] = {s.number: s.user for s in Game.objects.get(pk=game_id).seats.all()}
        tables[side] = made
        with connections["default"].cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            pid[side] = cursor.fetchone()[0]
    time.sleep(0.05)

    #: --phases: (thread ms, backend ns) of each of psycopg's waits (a round trip, or psycopg's
    #: BEGIN and the statement after it) of the action being measured, per side.
    waits: list[tuple[float, int]] = []
    phases: dict[str, list[list[tuple[float, int]]]] = {side: [] for side in sides}
    instrumented: set[int] = set()

    def instrument(side: str) -> None:
        from django.db import connection

        connection.ensure_connection()
        raw = connection.connection
        if id(raw) in instrumented:
            return
        instrumented.add(id(raw))
        original, backend = raw.wait, pid[side]

        def wait(gen: Any, *a: Any, **k: Any) -> Any:
            n0, t0 = _schedstat(backend), time.thread_time()
            try:
                return original(gen, *a, **k)
            finally:
                waits.append(((time.thread_time() - t0) * 1000, _schedstat(backend) - n0))

        raw.wait = wait

    def turn(side: str, game_id: int) -> list[tuple[float, int, int, int]]:
        """One turn (a draw and its discard) at ``game_id``: per action, (thread ms, backend ns,
        backend reads, backend writes)."""
        use(side)
        game = Game.objects.only("state", "status").get(pk=game_id)
        if game.status != Game.Status.PLAYING:
            return []
        state_turn = game.state["round"]["turn"]
        user = by_game[game_id][state_turn["seat"]]
        wait = (state_turn.get("start_at") or 0) - clock.now_ms()
        if wait > 0:
            time.sleep(wait / 1000 + 0.002)
        out = []
        ack: dict[str, Any] = {"events": []}
        for action in ({"type": "draw", "source": "deck"}, None):
            if action is None:
                action = move_after_draw(ack["events"])
            ns0, io0 = _schedstat(pid[side]), _io(pid[side])
            waits.clear()
            t0 = time.thread_time()
            try:
                _, ack = consumers._act(game_id, user, {"action": action})
            except Exception:  # a refused action (a window): next table
                break
            if args.phases:
                phases[side].append(list(waits))
            t = (time.thread_time() - t0) * 1000
            io1 = _io(pid[side])
            out.append((t, _schedstat(pid[side]) - ns0, io1[0] - io0[0], io1[1] - io0[1]))
        return out

    def play(actions: int, measured: dict[str, list[Any]] | None) -> None:
        counts = dict.fromkeys(sides, 0)
        rnd = 0
        while min(counts.values()) < actions:
            order = list(sides) if rnd % 2 == 0 else list(sides)[::-1]
            for i in range(args.tables):
                for side in order:
                    done = turn(side, tables[side][i])
                    counts[side] += len(done)
                    if measured is not None:
                        measured[side] += [(*d, os.getloadavg()[0]) for d in done]
            rnd += 1

    if args.phases:
        for side in sides:
            use(side)
            instrument(side)
    if args.explain:
        for side in sides:
            use(side)
            _explain(side, tables[side][0], turn)
    play(args.warmup, None)
    before_stats = {}
    for side in sides:
        use(side)
        before_stats[side] = _table_stats()
    measured: dict[str, list[Any]] = {side: [] for side in sides}
    play(args.actions, measured)
    time.sleep(1.2)  # PostgreSQL flushes a backend's table counters at most once a second

    print(
        f"--ab {args.ab}: {len(measured['before'])} / {len(measured['after'])} actions "
        f"(before / after), {args.tables} tables a side, load {os.getloadavg()[0]:.1f}"
    )
    names = ("thread ms", "backend ms", "backend reads", "backend writes")
    for side in sides:
        rows = measured[side]
        parts = []
        for k, name in enumerate(names):
            values = [r[k] / 1e6 if k == 1 else r[k] for r in rows]
            parts.append(
                f"{name} mean {statistics.fmean(values):.3f} median {statistics.median(values):.3f}"
            )
        print(f"  {side:6}: " + "; ".join(parts))
    n = min(len(measured["before"]), len(measured["after"]))
    lower = {name: 0 for name in names[:2]}
    diffs: dict[str, list[float]] = {name: [] for name in names[:2]}
    print("  pairs (blocks of", args.block, "actions a side): thread / backend means, ms")
    for start in range(0, n - args.block + 1, args.block):
        b = measured["before"][start : start + args.block]
        a = measured["after"][start : start + args.block]
        line = []
        for k, name in enumerate(names[:2]):
            scale = 1e6 if k == 1 else 1
            mb = statistics.fmean(r[k] / scale for r in b)
            ma = statistics.fmean(r[k] / scale for r in a)
            diffs[name].append(mb - ma)
            lower[name] += ma < mb
            line.append(f"{name[:-3]} {mb:.3f} -> {ma:.3f}")
        load = statistics.fmean(r[-1] for r in b + a)
        print(f"    load {load:4.1f}: " + "; ".join(line))
    pairs = len(diffs["thread ms"])
    for name in names[:2]:
        print(
            f"  {name}: after lower in {lower[name]} of {pairs} pairs, "
            f"median saving {statistics.median(diffs[name]):.3f} ms"
        )
    if args.phases:
        for side in sides:
            shapes: dict[int, list[list[tuple[float, int]]]] = {}
            for p in phases[side][-args.actions :]:
                shapes.setdefault(len(p), []).append(p)
            for count, calls in sorted(shapes.items()):
                thread = [statistics.median(c[k][0] for c in calls) for k in range(count)]
                backend = [statistics.median(c[k][1] for c in calls) / 1e6 for k in range(count)]
                print(
                    f"  {side}: {len(calls)} actions of {count} waits; per wait, medians: thread "
                    + " / ".join(f"{t:.3f}" for t in thread)
                    + " ms; backend "
                    + " / ".join(f"{b:.3f}" for b in backend)
                    + " ms"
                )
    if args.stats:
        for side in sides:
            use(side)
            _print_stats(side, before_stats[side], _table_stats())
    for side in sides:
        use(side)
        Game.objects.filter(pk__in=tables[side]).update(
            status=Game.Status.ABANDONED, deadlines=[], next_deadline_at=None
        )
        connections["default"].close()


def _create_database(url: str) -> None:
    """Create the database of ``url`` if it is not there (the bench's own, ``crisp_pg*``)."""
    import psycopg

    name = url.rsplit("/", 1)[1]
    with psycopg.connect(url.rsplit("/", 1)[0] + "/postgres", autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            conn.execute(f'CREATE DATABASE "{name}"')


def _schedstat(pid: int) -> int:
    with open(f"/proc/{pid}/schedstat") as f:
        return int(f.read().split()[0])


def _io(pid: int) -> tuple[int, int]:
    """The backend's read and write system calls so far."""
    with open(f"/proc/{pid}/io") as f:
        fields = dict(line.split(": ") for line in f.read().splitlines())
    return int(fields["syscr"]), int(fields["syscw"])


_TABLES = ("games_game", "games_seat", "games_event", "games_enginecall")


def _table_stats() -> dict[str, tuple[int, ...]]:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT relname, n_tup_upd, n_tup_hot_upd, n_tup_ins FROM pg_stat_user_tables"
            " WHERE relname = ANY(%s)",
            [list(_TABLES)],
        )
        return {row[0]: tuple(row[1:]) for row in cursor.fetchall()}


def _print_stats(side: str, start: dict[str, Any], end: dict[str, Any]) -> None:
    from django.db import connection

    print(f"  {side}: table        updates  HOT     inserts  (during the measured part)")
    for name in _TABLES:
        upd, hot, ins = (e - s for e, s in zip(end[name], start[name], strict=True))
        print(f"    {name:18} {upd:7} {hot:7} ({hot / upd if upd else 0:4.0%}) {ins:7}")
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT avg(pg_column_size(state)), avg(octet_length(state::text)),"
            " avg(pg_column_size(g.*)), pg_relation_size(reltoastrelid),"
            " max(pg_column_compression(state))"
            " FROM games_game g, pg_class c WHERE c.relname = 'games_game'"
            " AND g.status = 'playing' GROUP BY reltoastrelid"
        )
        stored, text, row, toast, method = cursor.fetchone()
        print(
            f"    a playing game's state: {stored:.0f} bytes stored ({method or 'not compressed'})"
            f" for {text:.0f} bytes of text; whole row {row:.0f} bytes; toast table {toast} bytes"
        )
        cursor.execute(
            "SELECT c.relname, c.reloptions, (SELECT string_agg(indexrelid::regclass::text, ', ')"
            " FROM pg_index WHERE indrelid = c.oid) FROM pg_class c WHERE c.relname = ANY(%s)"
            " ORDER BY c.relname",
            [list(_TABLES)],
        )
        for name, options, indexes in cursor.fetchall():
            print(f"    {name}: options {options}; indexes: {indexes}")
        cursor.execute(
            "SELECT generic_plans, custom_plans, left(statement, 60) FROM pg_prepared_statements"
            " ORDER BY generic_plans + custom_plans DESC"
        )
        for generic, custom, statement in cursor.fetchall():
            print(f"    prepared: {generic} generic, {custom} custom plans: {statement}")


def _explain(side: str, game_id: int, turn: Any) -> None:
    """A turn at ``game_id`` with ``auto_explain`` on (its plans as notices, printed)."""
    from django.db import connection

    connection.ensure_connection()
    raw = connection.connection
    notices: list[str] = []

    def keep(diag: Any) -> None:
        notices.append(diag.message_primary or "")

    raw.add_notice_handler(keep)
    with connection.cursor() as cursor:
        cursor.execute(
            "LOAD 'auto_explain'; SET auto_explain.log_min_duration = 0;"
            " SET auto_explain.log_analyze = on; SET auto_explain.log_buffers = on;"
            " SET auto_explain.log_nested_statements = on; SET auto_explain.log_level = notice;"
            " SET client_min_messages = notice"
        )
    for _ in range(3):
        turn(side, game_id)
    with connection.cursor() as cursor:
        cursor.execute("SET auto_explain.log_min_duration = -1; RESET client_min_messages")
    raw.remove_notice_handler(keep)
    print(f"===== {side}: auto_explain of 3 turns (the last turn's plans)")
    for message in notices[-len(notices) // 3 :]:
        print(message)
        print("-----")


if __name__ == "__main__":
    main()
