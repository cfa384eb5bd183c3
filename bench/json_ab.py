"""JSON on the hot path, the stdlib's against `crisp_site.fastjson`'s (orjson), A/B in one process.

    .venv/bin/python bench/json_ab.py --database-url postgres://postgres@127.0.0.1:5432/crisp_x \
        [--redis-url redis://127.0.0.1:6379/9] [--tables 10] [--pairs 8] [--actions 200]

Session 20. Three measurements, each in interleaved pairs (`stdlib` then `orjson` or the other
way round, alternating which goes first), CPU time of this thread (`time.thread_time`), the
1-minute load average printed beside each pair; the summary gives the median of the pairs and
how many pairs went each way:

* `frames`: encoding one change's frames (one per seat and the spectators':
  `broadcast.encode`), over the frames of every change the warm-up played;
* `snapshot`: the change's state snapshot as the write sends it (Django's
  `adapt_json_value` and psycopg's `jsonb` dumper: what `ChangeWrite.write` binds) and as the
  next action's lock reads it back (`JSONField.from_db_value` of PostgreSQL's text);
* `action`: a whole action: the client's frame decoded (`parsers.loads`), the action's database
  thread (`games.consumers._act`: lock, engine, write, commit; the PostgreSQL backends' CPU
  beside it) and the live layer's frames for it (`broadcast.committed_messages` of what the
  change's author committed, on this thread; not sent). Turn by turn (a draw and its discard),
  every other turn with the stdlib (`fastjson.install_django(False)`, the stdlib's `encode`
  and `parsers.loads`) and with this tree's.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

BASE_DIR = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(BASE_DIR))
sys.path.insert(1, str(BASE_DIR / "bench"))


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def stdlib_encode(frame: dict[str, Any]) -> str:
    """`broadcast.encode` before session 20."""
    return json.dumps(frame, separators=(",", ":"), ensure_ascii=False)


class Switch:
    """Every JSON call this session changed: the stdlib's (`use(stdlib=True)`) or the tree's."""

    def __init__(self) -> None:
        from crisp_site import parsers
        from games import broadcast

        self.broadcast, self.parsers = broadcast, parsers
        self.encode, self.loads = broadcast.encode, parsers.loads

        def stdlib_loads(text: Any) -> Any:  # parsers.loads before session 20
            try:
                value = parsers._strict(text)
            except RecursionError:
                raise parsers.TooDeep("too deep") from None
            if parsers.depth(value) > parsers.MAX_DEPTH:
                raise parsers.TooDeep("too deep")
            return value

        self.stdlib_loads = stdlib_loads

    def use(self, stdlib: bool) -> None:
        from crisp_site import fastjson

        fastjson.install_django(not stdlib)
        self.broadcast.encode = stdlib_encode if stdlib else self.encode
        self.parsers.loads = self.stdlib_loads if stdlib else self.loads


def pairs_of(
    name: str, pairs: int, one: Callable[[bool], float], unit: str = "µs"
) -> tuple[float, float]:
    """`pairs` pairs of `one(stdlib)` (CPU of one batch each way), printed; their medians."""
    got: list[tuple[float, float]] = []
    for i in range(pairs):
        first = i % 2 == 0
        a = one(first)
        b = one(not first)
        std, fast = (a, b) if first else (b, a)
        got.append((std, fast))
        print(
            f"  {name} pair {i + 1}: stdlib {std:.2f} orjson {fast:.2f} {unit} "
            f"({100 * (fast / std - 1):+.1f} %); load {load()}"
        )
    std_med = statistics.median(s for s, _ in got)
    fast_med = statistics.median(f for _, f in got)
    lower = sum(1 for s, f in got if f < s)
    print(
        f"{name}: median of pairs stdlib {std_med:.2f} {unit}, orjson {fast_med:.2f} {unit} "
        f"({100 * (fast_med / std_med - 1):+.1f} %, {std_med - fast_med:.2f} {unit} saved); "
        f"orjson lower in {lower} of {pairs} pairs"
    )
    return std_med, fast_med


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/9")
    parser.add_argument("--tables", type=int, default=10)
    parser.add_argument("--pairs", type=int, default=8)
    parser.add_argument("--actions", type=int, default=200, help="per pair, each way")
    parser.add_argument("--warmup", type=int, default=60, help="actions each way, not counted")
    parser.add_argument("--repeat", type=int, default=20, help="frames/snapshot: passes a batch")
    args = parser.parse_args()
    from act_cpu import _backends, _backends_ns, abandon, alternate_turns, setup_django

    setup_django(args.database_url, args.redis_url, "json-ab")
    from live import make_tables, move_after_draw

    from crisp_site import parsers
    from games import broadcast, clock, consumers, services
    from games.models import Game

    switch = Switch()
    committed: list[Any] = []
    broadcast.game_changed = lambda game_id, version, change=None: committed.append(change)

    tables = make_tables(args.tables)
    for game_id, _ in tables:
        game = Game.objects.get(pk=game_id)
        services.game_start(
            game=game_id, user=game.host, timers={"memorise_ms": 0, "start_delay_ms": 0}
        )
    time.sleep(0.05)
    by_game = {g: {s.number: s.user for s in Game.objects.get(pk=g).seats.all()} for g, _ in tables}
    pids: list[int] = []
    changes: list[Any] = []  # every change played, for `frames` and `snapshot`

    def one_turn(game_id: int, stdlib: bool) -> list[tuple[float, float]]:
        """One turn (a draw, a discard) of `game_id`: each action's CPU (this thread, ms:
        decode + `_act` + frames) and its backends' (ms)."""
        out: list[tuple[float, float]] = []
        game = Game.objects.only("state", "status").get(pk=game_id)
        if game.status != Game.Status.PLAYING:
            return out
        turn = game.state["round"]["turn"]
        user = by_game[game_id][turn["seat"]]
        wait = (turn.get("start_at") or 0) - clock.now_ms()
        if wait > 0:
            time.sleep(wait / 1000 + 0.002)
        switch.use(stdlib)
        try:
            ack: dict[str, Any] = {"events": []}
            for action in ({"type": "draw", "source": "deck"}, None):
                if action is None:
                    action = move_after_draw(ack["events"])
                frame = {"type": "act", "id": len(changes), "action": action}
                text = json.dumps(frame)
                committed.clear()
                b0, t0 = _backends_ns(pids), time.thread_time()
                content = parsers.loads(text)
                try:
                    _, ack = consumers._act(game_id, user, {"action": content["action"]})
                except Exception:  # a refused action (a window): next table
                    return out
                for change in committed:
                    if change is not None:
                        broadcast.committed_messages([change])
                out.append(((time.thread_time() - t0) * 1000, (_backends_ns(pids) - b0) / 1e6))
                changes.extend(c for c in committed if c is not None)
        finally:
            switch.use(False)
        return out

    def run(count: int) -> dict[bool, list[tuple[float, float]]]:
        return alternate_turns(tables, one_turn, count)

    run(args.warmup)
    pids = _backends()
    print(f"{len(changes)} changes recorded in the warm-up; {args.tables} tables; load {load()}")

    # --- frames: one change's frames encoded -----------------------------------------------
    frames_by_change: list[list[dict[str, Any]]] = []
    encode = broadcast.encode
    for change in changes[: 2 * args.warmup]:
        seen: list[dict[str, Any]] = []
        broadcast.encode = lambda frame, seen=seen: (seen.append(frame), encode(frame))[1]
        broadcast.committed_messages([change])
        frames_by_change.append(seen)
    broadcast.encode = encode
    sizes = [len(stdlib_encode(f).encode()) for fs in frames_by_change for f in fs]
    per_change = statistics.median(len(fs) for fs in frames_by_change)
    print(
        f"frames: {len(sizes)} from {len(frames_by_change)} changes ({per_change:.0f} per change),"
        f" median {statistics.median(sizes)} bytes"
    )
    from crisp_site import fastjson

    def frames_batch(stdlib: bool) -> float:
        code = stdlib_encode if stdlib else fastjson.compact
        t0 = time.thread_time()
        for _ in range(args.repeat):
            for frames in frames_by_change:
                for frame in frames:
                    code(frame)
        return (time.thread_time() - t0) * 1e6 / (args.repeat * len(frames_by_change))

    pairs_of("frames (one change's frames encoded)", args.pairs, frames_batch)

    # --- snapshot: the write's dump and the read's decode -----------------------------------
    from django.db import connection
    from django.db.models import JSONField
    from psycopg.adapt import PyFormat, Transformer

    states = [c.game.state for c in changes[: 2 * args.warmup]]
    state_field = Game._meta.get_field("state")
    connection.ensure_connection()
    transformer = Transformer(connection.connection)
    texts = [json.dumps(s) for s in states]  # jsonb's text has json.dumps' separators
    print(f"snapshot: {len(states)} states, median {statistics.median(map(len, texts))} bytes")

    def dump_batch(stdlib: bool) -> float:
        fastjson.install_django(not stdlib)
        t0 = time.thread_time()
        for _ in range(args.repeat):
            for state in states:
                value = state_field.get_db_prep_save(state, connection)
                transformer.get_dumper(value, PyFormat.AUTO).dump(value)
        spent = time.thread_time() - t0
        fastjson.install_django(True)
        return spent * 1e6 / (args.repeat * len(states))

    def load_batch(stdlib: bool) -> float:
        fastjson.install_django(not stdlib)
        from_db = JSONField.from_db_value
        t0 = time.thread_time()
        for _ in range(args.repeat):
            for text in texts:
                from_db(state_field, text, None, connection)
        spent = time.thread_time() - t0
        fastjson.install_django(True)
        return spent * 1e6 / (args.repeat * len(texts))

    pairs_of("snapshot write (adapt + psycopg dump)", args.pairs, dump_batch)
    pairs_of("snapshot read (from_db_value)", args.pairs, load_batch)

    # --- action: the whole action ----------------------------------------------------------
    print(f"action: decode + _act + frames, CPU ms, {args.actions} actions each way per pair")
    got_pairs: list[tuple[float, float, float, float]] = []
    for i in range(args.pairs):
        got = run(args.actions)
        std_t = statistics.median(t for t, _ in got[True])
        fast_t = statistics.median(t for t, _ in got[False])
        std_b = statistics.median(b for _, b in got[True])
        fast_b = statistics.median(b for _, b in got[False])
        got_pairs.append((std_t, fast_t, std_b, fast_b))
        print(
            f"  action pair {i + 1}: thread stdlib {std_t:.3f} orjson {fast_t:.3f} ms "
            f"({100 * (fast_t / std_t - 1):+.1f} %); backends stdlib {std_b:.3f} "
            f"orjson {fast_b:.3f}; n {len(got[True])}/{len(got[False])}; load {load()}"
        )
    std_med = statistics.median(p[0] for p in got_pairs)
    fast_med = statistics.median(p[1] for p in got_pairs)
    lower = sum(1 for p in got_pairs if p[1] < p[0])
    print(
        f"action: median of pairs thread stdlib {std_med:.3f} ms, orjson {fast_med:.3f} ms "
        f"({100 * (fast_med / std_med - 1):+.1f} %); orjson lower in {lower} of "
        f"{len(got_pairs)} pairs; backends stdlib "
        f"{statistics.median(p[2] for p in got_pairs):.3f}, orjson "
        f"{statistics.median(p[3] for p in got_pairs):.3f} ms"
    )
    abandon(tables)


if __name__ == "__main__":
    main()
