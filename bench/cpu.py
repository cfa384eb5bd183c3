"""CPU per player action and PostgreSQL backends opened, for one code tree (issue 14's figure).

    .venv/bin/python bench/cpu.py --database-url postgres://postgres@127.0.0.1:5432/crisp_bench
    .venv/bin/python bench/cpu.py --tree /path/to/an/older/checkout --env CONN_MAX_AGE=60 ...

Runs the stack as `make run` does — one daphne, a Celery worker (prefork, 2 children) and beat —
from `--tree` (default: this checkout) on a private Redis, drives `--tables` tables of 3 bots
over real WebSockets for `--seconds` (bench/live.py's bots, human pace), and prints:

* CPU seconds (user + system, each process with all its children, from psutil) per process and
  in total, divided by the number of player actions acknowledged: **CPU ms per action**; and
  PostgreSQL's (every backend of the server, so other databases' work counts too);
* PostgreSQL backends started during the run (`pg_stat_database.sessions`), per second;
* the changes (versions) those actions, timers and starts made, and the CPU per change;
* action → every seat p50 / p99;
* the PostgreSQL CPU one new backend costs (measured after the run: 300 connect/close), and so
  what the backends opened cost per action;
* the transactions committed in the run's database per action, and the time its backends
  spent running statements (``pg_stat_database``: this database only, so other databases on
  the server do not count; wall time, so a busy machine's run queue counts in it);
* the private Redis server's CPU per action;
* with ``--fires``: the timers fired (entries the workers' loops popped) and the entries
  removed unfired as stale, per action -- counted by a Redis ``MONITOR`` in a process of its
  own (``[lua]`` commands: a pop's ``ZREM`` follows its ``ZRANGEBYSCORE``), which costs Redis
  some CPU (Redis is not among the processes measured) in either tree alike.

The tables are set up before the measurement starts, by this checkout's service layer (the
schema must be the same in both trees).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.util
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import psutil

BASE_DIR = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
sys.path.insert(0, str(BASE_DIR))


def _load_live() -> Any:
    spec = importlib.util.spec_from_file_location("bench_live", BASE_DIR / "bench" / "live.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a process and all its live descendants."""
    try:
        root = psutil.Process(pid)
        procs = [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return 0.0
    total = 0.0
    for proc in procs:
        try:
            times = proc.cpu_times()
        except psutil.NoSuchProcess:
            continue
        # children_* counts descendants that already exited (e.g. a recycled pool child).
        total += times.user + times.system + times.children_user + times.children_system
    return total


def sessions(database_url: str) -> int:
    import psycopg

    with psycopg.connect(database_url, autocommit=True) as conn:
        (count,) = conn.execute(
            "SELECT sessions FROM pg_stat_database WHERE datname = current_database()"
        ).fetchone()
    return int(count)


def transactions(database_url: str) -> tuple[int, float]:
    """Transactions committed or rolled back in the database so far, and the time its
    backends spent running statements (ms; ``pg_stat_database``: this database only)."""
    import psycopg

    with psycopg.connect(database_url, autocommit=True) as conn:
        count, active = conn.execute(
            "SELECT xact_commit + xact_rollback, active_time FROM pg_stat_database "
            "WHERE datname = current_database()"
        ).fetchone()
    return int(count), float(active)


def monitor_fires(url: str, out: Path) -> None:
    """Count, until SIGTERM, the timers' entries popped (fired) and removed unfired (stale),
    from Redis's ``MONITOR`` of the commands the timers' scripts run; write them to ``out``.

    A pop (``games.timers._POP_DUE``) removes the entries it pops with a ``ZREM`` right after
    its ``ZRANGEBYSCORE``; any other scripted ``ZREM`` of the set removes entries unfired.
    """
    import signal

    import redis as redis_py

    def stop(*_: Any) -> None:
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, stop)
    popped = removed = 0
    previous = ""
    try:
        with redis_py.Redis.from_url(url).monitor() as monitor:
            for entry in monitor.listen():
                if entry.get("client_type") != "lua":
                    continue
                words = entry["command"].split(" ")
                name = words[0].upper()
                if name == "ZREM" and len(words) > 1 and words[1].endswith(":timers"):
                    if previous == "ZRANGEBYSCORE":
                        popped += len(words) - 2
                    else:
                        removed += len(words) - 2
                previous = name
    finally:
        out.write_text(f"{popped} {removed}\n")


def postgres_children_cpu(database_url: str) -> float:
    """CPU of every PostgreSQL backend, ended (reaped by the postmaster) and live, in seconds.

    Server-wide: other databases' work on the same server counts too (keep it quiet).
    """
    import psycopg

    with psycopg.connect(database_url, autocommit=True) as conn:
        (data_dir,) = conn.execute("SHOW data_directory").fetchone()
    pid = int((Path(data_dir) / "postmaster.pid").read_text().split()[0])
    postmaster = psutil.Process(pid)
    times = postmaster.cpu_times()
    total = times.children_user + times.children_system
    for child in postmaster.children():
        with contextlib.suppress(psutil.NoSuchProcess):
            child_times = child.cpu_times()
            total += child_times.user + child_times.system
    return total


def backend_cost_ms(database_url: str, n: int = 300) -> float:
    """PostgreSQL CPU (ms) to start and end one backend: connect, one query, close; n times."""
    import psycopg

    before = postgres_children_cpu(database_url)
    for _ in range(n):
        with psycopg.connect(database_url, autocommit=True) as conn:
            conn.execute("SELECT 1")
    time.sleep(0.5)  # let the postmaster reap the last ones
    return (postgres_children_cpu(database_url) - before) / n * 1000


def main() -> None:
    if sys.argv[1:2] == ["--monitor-fires"]:  # the counting process of ``--fires``
        monitor_fires(sys.argv[2], Path(sys.argv[3]))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--database-url", required=True, help="PostgreSQL (the figure's point)")
    parser.add_argument("--tree", default=str(BASE_DIR), help="code tree the servers run from")
    parser.add_argument("--tables", type=int, default=30)
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument(
        "--draw-seconds",
        type=int,
        default=8,
        help="the draw clock (as bench/live.py: a quarter of first draws time out)",
    )
    parser.add_argument("--env", action="append", default=[], help="KEY=VALUE for the servers")
    parser.add_argument(
        "--fires",
        action="store_true",
        help="count the timers fired and removed unfired (a Redis MONITOR; module docstring)",
    )
    args = parser.parse_args()
    tree = Path(args.tree).resolve()
    live = _load_live()

    tmp = Path(tempfile.mkdtemp(prefix="crisp-cpu-"))
    logs = tmp / "logs"
    logs.mkdir()
    from crisp_site.embedded_redis import EmbeddedRedis

    redis = EmbeddedRedis(
        Path(tempfile.gettempdir()) / f"crisp-cpu-{os.getpid()}.sock", tmp / "redis"
    ).start()
    base = dict(os.environ)
    base.update(
        DJANGO_SETTINGS_MODULE="crisp_site.settings",
        CRISP_VAR_DIR=str(tmp),
        REDIS_URL=redis.url,
        DATABASE_URL=args.database_url,
        LOG_LEVEL="WARNING",
        PYTHONUNBUFFERED="1",
        CONN_MAX_AGE="0",
        # As production runs (and bench/scale.py): DEBUG on logs every query.
        DEBUG="0",
        ALLOWED_HOSTS="127.0.0.1,localhost",
        SECRET_KEY="bench-cpu-not-secret",  # noqa: S106 - a throwaway bench key
    )
    os.environ.update(base)  # this driver: this checkout's settings
    servers = dict(base, PYTHONPATH=str(tree))
    servers.update(item.split("=", 1) for item in args.env)
    Proc = live.Proc  # the benches' one child-process wrapper (its own session, careful stop)
    procs: list[Any] = []
    try:
        import django

        django.setup()
        subprocess.run(  # noqa: S603
            [str(BIN / "python"), "manage.py", "migrate", "--noinput", "-v", "0"],
            env=servers,
            cwd=tree,
            check=True,
        )
        port = live.free_port()
        serve = (
            ["-m", "crisp_site.serve"]
            if (tree / "crisp_site" / "serve.py").exists()
            else ["-m", "daphne"]
        )
        procs = [
            Proc(
                "daphne",
                [
                    str(BIN / "python"),
                    *serve,
                    "-b",
                    "127.0.0.1",
                    "-p",
                    str(port),
                    "crisp_site.asgi:application",
                ],
                servers,
                logs,
                cwd=tree,
            ),
            Proc(
                "worker",
                [
                    str(BIN / "celery"),
                    "-A",
                    "crisp_site",
                    "worker",
                    "--loglevel",
                    "WARNING",
                    "--concurrency",
                    "2",
                    "--without-mingle",
                    "--without-gossip",
                ],
                servers,
                logs,
                cwd=tree,
            ),
            Proc(
                "beat",
                [
                    str(BIN / "celery"),
                    "-A",
                    "crisp_site",
                    "beat",
                    "--loglevel",
                    "WARNING",
                    "--schedule",
                    str(logs / "beat-schedule"),
                ],
                servers,
                logs,
                cwd=tree,
            ),
        ]
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.2)
        time.sleep(3)  # the worker
        tables = live.make_tables(args.tables)
        ids = [g for g, _ in tables]

        from games import services
        from games.models import Game

        def start_games() -> None:
            for g in ids:
                services.game_start(
                    game=g,
                    user=Game.objects.get(pk=g).host,
                    timers={"draw_seconds": args.draw_seconds},
                )

        def versions() -> int:
            return sum(Game.objects.filter(pk__in=ids).values_list("version", flat=True))

        versions0 = versions()
        fires_file = logs / "fires"
        monitor = None
        if args.fires:
            monitor = Proc(
                "monitor",
                [str(BIN / "python"), __file__, "--monitor-fires", redis.url, str(fires_file)],
                base,
                logs,
            )
            time.sleep(1)
        xacts0, active0 = transactions(args.database_url)
        cpu0 = {p.name: cpu_seconds(p.p.pid) for p in procs}
        redis0 = cpu_seconds(redis.process.pid)
        pg0 = postgres_children_cpu(args.database_url)
        sessions0, t0 = sessions(args.database_url), time.monotonic()
        result = asyncio.run(live.run_tables([port], tables, args.seconds, start_games, (0.5, 2.0)))
        elapsed = time.monotonic() - t0
        opened = sessions(args.database_url) - sessions0 - 1  # less our own probe
        cpu = {p.name: cpu_seconds(p.p.pid) - cpu0[p.name] for p in procs}
        pg = postgres_children_cpu(args.database_url) - pg0
        redis_cpu = cpu_seconds(redis.process.pid) - redis0
        if monitor is not None:
            monitor.stop()
        acts = max(1, result["acts"])
        # Every committed change (an action, a timer, the start) bumps its game's version once.
        changes = max(1, versions() - versions0)
        from games.models import Event

        timeouts = Event.objects.filter(game_id__in=ids, type="timeout").count()
        print(
            f"tree {tree.name}, env {' '.join(args.env) or '-'}: {args.tables} tables x 3 "
            f"bots, {elapsed:.0f} s, {result['acts']} actions ({result['acts'] / elapsed:.1f}"
            f"/s), {opened} PostgreSQL backends opened ({opened / elapsed:.1f}/s)"
        )
        for name, seconds in cpu.items():
            print(f"  {name:<8} {seconds:7.2f} s CPU  {seconds / acts * 1000:7.1f} ms/action")
        total = sum(cpu.values())
        print(f"  {'total':<8} {total:7.2f} s CPU  {total / acts * 1000:7.1f} ms/action")
        print(
            f"  changes  {changes} ({changes / acts:.2f} per action; {timeouts} draw clocks ran "
            f"out), {total / changes * 1000:.1f} ms CPU per change"
        )
        # Every backend of the server, not only this run's: keep other databases quiet.
        print(
            f"  {'postgres':<8} {pg:7.2f} s CPU  {pg / acts * 1000:7.1f} ms/action "
            f"(server-wide) -> with it {(total + pg) / acts * 1000:.1f} ms/action"
        )
        time.sleep(1.5)  # backends report their statistics within a second
        xacts, active = transactions(args.database_url)
        xacts, active = xacts - xacts0 - 1, active - active0  # less our own probe
        print(
            f"  {'xacts':<8} {xacts} in this database ({xacts / acts:.2f} per action), "
            f"statements {active / acts:.1f} ms/action (wall)"
        )
        print(
            f"  {'redis':<8} {redis_cpu:7.2f} s CPU  {redis_cpu / acts * 1000:7.1f} ms/action"
            + (" (with the MONITOR of --fires)" if monitor is not None else "")
        )
        if monitor is not None:
            popped, removed = (int(n) for n in fires_file.read_text().split())
            print(
                f"  {'timers':<8} {popped} fired ({popped / acts:.2f} per action), "
                f"{removed} removed unfired ({removed / acts:.2f} per action)"
            )
        print(live.line("action -> every seat's socket", result["every_seat"]))
        cost = backend_cost_ms(args.database_url)
        print(
            f"  PostgreSQL CPU to start one backend: {cost:.1f} ms -> the backends opened "
            f"cost {opened * cost / acts:.1f} ms/action of server CPU"
        )
        for g in ids:
            Game.objects.filter(pk=g).update(
                status=Game.Status.ABANDONED, deadlines=[], next_deadline_at=None
            )
    finally:
        for proc in reversed(procs):
            proc.stop()
        redis.stop()


if __name__ == "__main__":
    main()
