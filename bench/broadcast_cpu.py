"""CPU of one broadcast of a change, in one process, one way against the other (issue 25,
session 19).

    .venv/bin/python bench/broadcast_cpu.py [--database-url postgres://...] [--pairs 8]

A started 4-seat Crisp game is played for `--changes` changes (draws and discards through the
service layer; what each change's author hands the live layer, `services.Committed`, is
recorded). Then, against a PRIVATE redis-server on a unix socket (started here; the pub/sub
layer, the settings' default), those changes are broadcast again and again through
`broadcast.game_changed(...)`, each waited for (`dispatcher.drain()`: no coalescing), in
batches of `--per-batch`, one batch each way per pair, alternately (which goes first alternates
too), `--pairs` pairs:

* `loop`: main's path: the live thread builds the frames and hands the sends to the
  "crisp-broadcast" thread's event loop (`_SenderLoop`, the layer's `group_send_many`) and
  blocks on the future;
* `sync`: the candidate: the live thread publishes the same bytes itself (the layer's
  `publish_many`: redis-py's blocking client, one pipeline per shard).

Per broadcast it prints the CPU (`pthread_getcpuclockid`: user + system) of each thread
involved -- the caller (`game_changed` itself), the live thread ("crisp-live") and the sender
loop's thread ("crisp-broadcast") -- their sum, the process's CPU (`time.process_time`: also the
driver's wait), the voluntary context switches of the live and sender threads (each a sleep on
a futex, a socket or the loop's selector: the hand-overs), and the private Redis's CPU. The
load average is printed beside each pair; the summary gives medians and how many pairs went
each way.

`--frames` measures the frame building instead (`broadcast.committed_messages` of one change on
this thread, `time.thread_time`): this tree's against `--frames-ref`'s (default `int`)
`games/broadcast.py` + `games/selectors.py`, loaded from git as separate modules, alternately.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import types
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
    parser.add_argument("--frames", action="store_true", help="the frame building instead")
    parser.add_argument("--frames-ref", default="int", help="git ref of the frames baseline")
    args = parser.parse_args()

    from presence_cpu import start_redis

    with tempfile.TemporaryDirectory(prefix="crisp-broadcast-cpu-") as tmp:
        redis_proc, sock = start_redis(Path(tmp))
        try:
            os.environ.update(
                DJANGO_SETTINGS_MODULE="crisp_site.settings",
                DATABASE_URL=args.database_url or f"sqlite:///{tmp}/db.sqlite3",
                REDIS_URL=f"unix://{sock}",
                CHANNEL_LAYER="pubsub",
                CHANNEL_PREFIX=f"crisp-bcpu-{os.getpid()}",
                DEBUG="0",
                LOG_LEVEL="WARNING",
                ALLOWED_HOSTS="127.0.0.1",
                SECRET_KEY="bench-broadcast-cpu-not-secret",  # noqa: S106 - a throwaway key
            )
            subprocess.run(
                [sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"],
                cwd=BASE_DIR,
                check=True,
            )
            import django

            os.chdir(BASE_DIR)
            django.setup()
            game_id, changes = record_changes(args.changes)
            print(
                f"{len(changes)} changes of game {game_id} (4 seats), "
                f"{sum(len(c.events) for c in changes)} events; private redis-server on {sock}"
            )
            if args.frames:
                frames(changes, args)
            else:
                sends(game_id, changes, args, sock)
        finally:
            redis_proc.kill()
            redis_proc.wait()


# --- the changes -------------------------------------------------------------------------------


def record_changes(count: int) -> tuple[int, list[Any]]:
    """Play a started 4-seat Crisp game (draw, then discard -- a King played as one) and keep
    what each change's author handed `broadcast.game_changed`."""
    from django.contrib.auth import get_user_model

    from games import broadcast, services
    from games.models import Game

    users = [
        get_user_model().objects.create_user(username=f"bcpu-{time.monotonic_ns()}-{s}")
        for s in range(4)
    ]
    game = services.game_create(host=users[0], settings={"target_score": 150})
    for user in users[1:]:
        services.game_join(game=game.pk, user=user)
    seen: list[Any] = []
    real = broadcast.dispatcher.changed
    broadcast.dispatcher.changed = lambda g, v, change=None: seen.append(change)  # type: ignore[method-assign]
    try:
        services.game_start(
            game=game.pk, user=users[0], timers={"memorise_ms": 0, "start_delay_ms": 0}
        )
        by_seat = {s.number: s.user for s in Game.objects.get(pk=game.pk).seats.all()}
        while len([c for c in seen if c is not None]) < count:
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
        broadcast.dispatcher.changed = real  # type: ignore[method-assign]
    return game.pk, [c for c in seen if c is not None][:count]


# --- the sends ---------------------------------------------------------------------------------


def _thread_cpu(ident: int | None) -> float:
    if ident is None:
        return 0.0
    return time.clock_gettime(time.pthread_getcpuclockid(ident))


def _switches(native_id: int | None) -> int:
    if native_id is None:
        return 0
    with open(f"/proc/self/task/{native_id}/status") as f:
        for row in f:
            if row.startswith("voluntary_ctxt_switches"):
                return int(row.split()[1])
    return 0


def _thread(name: str) -> threading.Thread | None:
    return next((t for t in threading.enumerate() if t.name == name), None)


def sends(game_id: int, changes: list[Any], args: argparse.Namespace, sock: Path) -> None:
    import redis

    from games import broadcast

    real_publish = broadcast._publish
    modes = {"loop": lambda messages: False, "sync": real_publish}
    info = redis.Redis(unix_socket_path=str(sock))

    def redis_cpu() -> float:
        cpu = info.info("cpu")
        return float(cpu["used_cpu_user"]) + float(cpu["used_cpu_sys"])

    def batch(mode: str) -> dict[str, float]:
        broadcast._publish = modes[mode]  # type: ignore[assignment]
        broadcast.dispatcher.drain()
        _sender_thread_started()
        live, sender = _thread("crisp-live"), _thread("crisp-broadcast")
        assert live is not None and sender is not None
        me = threading.get_ident()
        c0 = [_thread_cpu(t) for t in (me, live.ident, sender.ident)]
        s0 = [_switches(t.native_id) for t in (live, sender)]
        p0, r0 = time.process_time(), redis_cpu()
        caller = 0.0
        for i in range(args.per_batch):
            change = changes[i % len(changes)]
            t0 = time.thread_time()
            broadcast.game_changed(game_id, change.game.version, change)
            caller += time.thread_time() - t0
            broadcast.dispatcher.drain()
        p1, r1 = time.process_time(), redis_cpu()
        c1 = [_thread_cpu(t) for t in (me, live.ident, sender.ident)]
        s1 = [_switches(t.native_id) for t in (live, sender)]
        n = args.per_batch
        out = {
            "caller": caller / n * 1e3,
            "live": (c1[1] - c0[1]) / n * 1e3,
            "sender": (c1[2] - c0[2]) / n * 1e3,
            "process": (p1 - p0) / n * 1e3,
            "redis": (r1 - r0) / n * 1e3,
            "live_sw": (s1[0] - s0[0]) / n,
            "sender_sw": (s1[1] - s0[1]) / n,
        }
        out["threads"] = out["caller"] + out["live"] + out["sender"]
        return out

    # Warm both ways (connections, the sender loop's thread, caches).
    for mode in ("loop", "sync", "loop", "sync"):
        batch(mode)
    rows: dict[str, list[dict[str, float]]] = {"loop": [], "sync": []}
    print(
        "\nper broadcast, ms of CPU (switches: voluntary context switches per broadcast)\n"
        f"{'pair':>4} {'load':>5} {'way':>5} {'caller':>7} {'live':>7} {'sender':>7} "
        f"{'threads':>8} {'process':>8} {'redis':>6} {'live sw':>8} {'sender sw':>9}"
    )
    for pair in range(args.pairs):
        order = ("loop", "sync") if pair % 2 == 0 else ("sync", "loop")
        load = os.getloadavg()[0]
        for mode in order:
            r = batch(mode)
            rows[mode].append(r)
            print(
                f"{pair + 1:>4} {load:>5.1f} {mode:>5} {r['caller']:>7.3f} {r['live']:>7.3f} "
                f"{r['sender']:>7.3f} {r['threads']:>8.3f} {r['process']:>8.3f} "
                f"{r['redis']:>6.3f} {r['live_sw']:>8.2f} {r['sender_sw']:>9.2f}"
            )
    broadcast._publish = real_publish  # type: ignore[assignment]
    print("\nmedians (loop -> sync), and pairs in which sync was lower:")
    for key in ("caller", "live", "sender", "threads", "process", "redis", "live_sw", "sender_sw"):
        a = statistics.median(r[key] for r in rows["loop"])
        b = statistics.median(r[key] for r in rows["sync"])
        lower = sum(s[key] < l_[key] for l_, s in zip(rows["loop"], rows["sync"], strict=True))
        print(f"  {key:<10} {a:8.3f} -> {b:8.3f}   sync lower in {lower} of {args.pairs}")


def _sender_thread_started() -> None:
    """Both ways measure the sender loop's thread (idle in `sync`): start it if not yet."""
    from games import broadcast

    broadcast._sender.loop()


# --- the frames --------------------------------------------------------------------------------


def _module_from_git(ref: str, path: str, name: str) -> types.ModuleType:
    git = shutil.which("git") or "git"
    source = subprocess.run(  # noqa: S603 - our own arguments
        [git, "show", f"{ref}:{path}"], cwd=BASE_DIR, check=True, capture_output=True, text=True
    ).stdout
    module = types.ModuleType(name)
    module.__file__ = f"<{ref}:{path}>"
    sys.modules[name] = module
    exec(compile(source, module.__file__, "exec"), module.__dict__)  # noqa: S102 - our own code
    return module


def frames(changes: list[Any], args: argparse.Namespace) -> None:
    """`committed_messages` of one change: this tree's against `--frames-ref`'s (its broadcast
    and selectors modules, the latter patched into the former's `from games import selectors`
    by name), alternately per batch."""
    from games import broadcast

    old_selectors = _module_from_git(args.frames_ref, "games/selectors.py", "bench_old_selectors")
    old = _module_from_git(args.frames_ref, "games/broadcast.py", "bench_old_broadcast")
    import games

    def built(module: types.ModuleType, change: Any, selectors: types.ModuleType) -> Any:
        real = games.selectors
        games.selectors = selectors  # `from games import selectors` inside the functions
        try:
            return module.committed_messages([change])
        finally:
            games.selectors = real

    from games import clock

    real_now = clock.now_ms
    clock.now_ms = lambda: 1_700_000_000_000  # type: ignore[assignment] # the same frames
    try:
        for change in changes:
            # Every group's message, its frame's text included: the same bytes.
            ref = built(old, change, old_selectors)
            assert built(broadcast, change, games.selectors) == ref, "the frames differ"
    finally:
        clock.now_ms = real_now  # type: ignore[assignment]
    print(f"frames identical (bytes) for all {len(changes)} changes, {args.frames_ref} vs tree")
    ways = {"ref": (old, old_selectors), "tree": (broadcast, games.selectors)}

    def batch(way: str) -> float:
        module, selectors = ways[way]
        t0 = time.thread_time()
        for i in range(args.per_batch):
            built(module, changes[i % len(changes)], selectors)
        return (time.thread_time() - t0) / args.per_batch * 1e3

    for way in ("ref", "tree", "ref", "tree"):
        batch(way)
    rows: dict[str, list[float]] = {"ref": [], "tree": []}
    print(f"\nper change, ms of CPU of this thread\n{'pair':>4} {'load':>5} {'ref':>8} {'tree':>8}")
    for pair in range(args.pairs):
        load = os.getloadavg()[0]
        order = ("ref", "tree") if pair % 2 == 0 else ("tree", "ref")
        got = {way: batch(way) for way in order}
        for way in got:
            rows[way].append(got[way])
        print(f"{pair + 1:>4} {load:>5.1f} {got['ref']:>8.3f} {got['tree']:>8.3f}")
    lower = sum(t < r for r, t in zip(rows["ref"], rows["tree"], strict=True))
    print(
        f"\nmedian {statistics.median(rows['ref']):.3f} -> {statistics.median(rows['tree']):.3f}"
        f" ms; tree lower in {lower} of {args.pairs}"
    )


if __name__ == "__main__":
    main()
