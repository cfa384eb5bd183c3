"""CPU and context switches of what one committed change hands the live thread, as several
jobs (before) or as one (after), in one process, interleaved (issue 25, session 20).

    .venv/bin/python bench/handover_cpu.py [--database-url postgres://...] [--pairs 8]

A started 4-seat Crisp game is played for `--changes` changes through the service layer (draw,
then discard); what each change registers on commit (`commit._Announcement`: its broadcast
with what it committed, its timers, its "your move" wake-up) is recorded, not run. Then,
against a PRIVATE redis-server on a unix socket (the pub/sub layer, the settings' default;
the timers' sorted set on the same server), those announcements are replayed again and again,
`--per-batch` a batch, one batch each way per pair, alternately (which goes first alternates):

* `jobs`: the way before session 20 -- each part handed over by itself (`game_changed`,
  `schedule_deadlines`, `turns_changed`: one `Dispatcher.submit` each, each its own publish
  or `EVALSHA`);
* `one`: the announcement as the service layer now runs it, inside `broadcast.one_job()`: one
  job, one publish (frames + wake-ups), then the `EVALSHA`.

Each replay gets a version above every earlier one (so the timers' `replace` really replaces,
as a new change's would); `signals.your_move`'s receivers are disconnected (the notifications'
Celery task would cost the same both ways). After each change the driver waits for the live
thread (`dispatcher.drain()`, the same extra job both ways), or with `--pace-ms` sleeps that
long instead (the live thread idle between changes, as at human pace) and drains at the end.

Per change: the CPU (`pthread_getcpuclockid`) of the caller (the on-commit hook: what the
committing thread pays) and of the live thread, the process's (`time.process_time`), the
private Redis's, and the live thread's voluntary and involuntary context switches
(`/proc/self/task/<tid>/status`). The load average is printed beside each pair; the summary
gives medians and how many pairs went each way.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

BASE_DIR = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(BASE_DIR))
sys.path.insert(1, str(BASE_DIR / "bench"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--database-url", default="", help="default: SQLite in a temp dir")
    parser.add_argument("--changes", type=int, default=60, help="distinct changes recorded")
    parser.add_argument("--pairs", type=int, default=8)
    parser.add_argument("--per-batch", type=int, default=300)
    parser.add_argument("--pace-ms", type=float, default=0.0, help="0: drain after each change")
    args = parser.parse_args()

    from presence_cpu import start_redis

    with tempfile.TemporaryDirectory(prefix="crisp-handover-cpu-") as tmp:
        redis_proc, sock = start_redis(Path(tmp))
        try:
            os.environ.update(
                DJANGO_SETTINGS_MODULE="crisp_site.settings",
                DATABASE_URL=args.database_url or f"sqlite:///{tmp}/db.sqlite3",
                REDIS_URL=f"unix://{sock}",
                CHANNEL_LAYER="pubsub",
                CHANNEL_PREFIX=f"crisp-hcpu-{os.getpid()}",
                DEBUG="0",
                LOG_LEVEL="WARNING",
                ALLOWED_HOSTS="127.0.0.1",
                SECRET_KEY="bench-handover-cpu-not-secret",  # noqa: S106 - a throwaway key
            )
            subprocess.run(
                [sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"],
                cwd=BASE_DIR,
                check=True,
            )
            import django

            os.chdir(BASE_DIR)
            django.setup()
            announcements = record(args.changes)
            print(
                f"{len(announcements)} changes recorded, "
                f"{sum(bool(a.turns) for a in announcements)} with a 'your move' wake-up, "
                f"{sum(a.deadlines is not None for a in announcements)} with timers; "
                f"private redis-server on {sock}"
            )
            replay(announcements, args, sock)
        finally:
            redis_proc.kill()
            redis_proc.wait()


def record(count: int) -> list[Any]:
    """Play a started 4-seat Crisp game (draw, then discard -- a King played as one) and keep
    each change's on-commit announcement (not run)."""
    from django.contrib.auth import get_user_model

    from games import services
    from games.models import Game
    from games.services import commit

    users = [
        get_user_model().objects.create_user(username=f"hcpu-{time.monotonic_ns()}-{s}")
        for s in range(4)
    ]
    game = services.game_create(host=users[0], settings={"target_score": 150})
    for user in users[1:]:
        services.game_join(game=game.pk, user=user)
    seen: list[Any] = []
    real = commit._Announcement.__call__
    commit._Announcement.__call__ = lambda self: seen.append(self)  # type: ignore[method-assign]
    try:
        services.game_start(
            game=game.pk,
            user=users[0],
            timers={"memorise_ms": 0, "start_delay_ms": 0, "draw_seconds": 60},
        )
        by_seat = {s.number: s.user for s in Game.objects.get(pk=game.pk).seats.all()}
        while len([a for a in seen if a.change is not None]) < count:
            state = Game.objects.get(pk=game.pk).state
            turn = state["round"]["turn"]
            if turn is None:
                raise SystemExit("the round ended before enough changes were recorded")
            wait = (turn.get("start_at") or 0) - int(time.time() * 1000)
            if wait > 0:
                time.sleep(wait / 1000 + 0.002)
            user = by_seat[turn["seat"]]
            result = services.game_act(
                game=game.pk,
                user=user,
                action={"type": "draw", "source": "deck"},
                expected_version=None,
            )
            card = next((e.data.get("card") for e in result.events if e.type == "draw"), None)
            services.game_act(
                game=game.pk,
                user=user,
                action={"type": "king"} if card and card[0] == "K" else {"type": "discard"},
                expected_version=None,
            )
    finally:
        commit._Announcement.__call__ = real  # type: ignore[method-assign]
    return [a for a in seen if a.change is not None][:count]


def _thread_cpu(ident: int | None) -> float:
    return 0.0 if ident is None else time.clock_gettime(time.pthread_getcpuclockid(ident))


def _switches(native_id: int | None) -> tuple[int, int]:
    """(voluntary, involuntary) context switches of one thread of this process so far."""
    if native_id is None:
        return 0, 0
    out = {}
    with open(f"/proc/self/task/{native_id}/status") as f:
        for row in f:
            if row.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")):
                name, value = row.split(":")
                out[name] = int(value)
    return out["voluntary_ctxt_switches"], out["nonvoluntary_ctxt_switches"]


def replay(announcements: list[Any], args: argparse.Namespace, sock: Path) -> None:
    import redis

    from games import broadcast, signals

    signals.your_move.receivers.clear()  # the same Celery task both ways: not measured
    signals.your_move.sender_receivers_cache.clear()
    info = redis.Redis(unix_socket_path=str(sock))

    def redis_cpu() -> float:
        cpu = info.info("cpu")
        return float(cpu["used_cpu_user"]) + float(cpu["used_cpu_sys"])

    offset = [0]

    def run(mode: str, announcement: Any) -> None:
        offset[0] += 1000
        a = dataclasses.replace(announcement, version=announcement.version + offset[0])
        if mode == "one":
            a()
        else:
            a._hand_over(broadcast)  # each part handed over by itself, as before

    def batch(mode: str) -> dict[str, float]:
        broadcast.dispatcher.drain()
        live = next(t for t in threading.enumerate() if t.name == "crisp-live")
        me = threading.get_ident()
        c0 = [_thread_cpu(me), _thread_cpu(live.ident)]
        s0 = _switches(live.native_id)
        p0, r0 = time.process_time(), redis_cpu()
        caller = 0.0
        for i in range(args.per_batch):
            t0 = time.thread_time()
            run(mode, announcements[i % len(announcements)])
            caller += time.thread_time() - t0
            if args.pace_ms:
                time.sleep(args.pace_ms / 1000)
            else:
                broadcast.dispatcher.drain()
        broadcast.dispatcher.drain()
        p1, r1 = time.process_time(), redis_cpu()
        c1 = [_thread_cpu(me), _thread_cpu(live.ident)]
        s1 = _switches(live.native_id)
        n = args.per_batch
        return {
            "caller": caller / n * 1e3,
            "live": (c1[1] - c0[1]) / n * 1e3,
            "process": (p1 - p0) / n * 1e3,
            "redis": (r1 - r0) / n * 1e3,
            "vol_sw": (s1[0] - s0[0]) / n,
            "invol_sw": (s1[1] - s0[1]) / n,
        }

    for mode in ("jobs", "one", "jobs", "one"):  # warm both ways
        batch(mode)
    rows: dict[str, list[dict[str, float]]] = {"jobs": [], "one": []}
    keys = ("caller", "live", "process", "redis", "vol_sw", "invol_sw")
    print(
        "\nper change, ms of CPU; live thread's context switches per change "
        f"({'drained after each' if not args.pace_ms else f'paced {args.pace_ms} ms'})\n"
        f"{'pair':>4} {'load':>5} {'way':>5} " + " ".join(f"{k:>8}" for k in keys)
    )
    for pair in range(args.pairs):
        order = ("jobs", "one") if pair % 2 == 0 else ("one", "jobs")
        load = os.getloadavg()[0]
        for mode in order:
            r = batch(mode)
            rows[mode].append(r)
            print(
                f"{pair + 1:>4} {load:>5.1f} {mode:>5} " + " ".join(f"{r[k]:>8.3f}" for k in keys)
            )
    print("\nmedians (jobs -> one), and pairs in which one was lower:")
    for key in keys:
        a = statistics.median(r[key] for r in rows["jobs"])
        b = statistics.median(r[key] for r in rows["one"])
        lower = sum(o[key] < j[key] for j, o in zip(rows["jobs"], rows["one"], strict=True))
        print(f"  {key:<9} {a:8.3f} -> {b:8.3f}   one lower in {lower} of {args.pairs}")


if __name__ == "__main__":
    main()
