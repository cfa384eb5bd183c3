"""The write side's model instances built by Django against directly (``crisp_site.rows``'s
``loaded`` and ``unsaved``, issue 25, session 21): interleaved A/B in one process, CPU of this
thread (`time.thread_time`).

    .venv/bin/python bench/rows2_cpu.py --database-url postgres://postgres@127.0.0.1:5432/crisp_rows2

Three measures, each in `--pairs` pairs (one block each way, the order alternating from pair to
pair; the 1-minute load average printed beside each pair; the levers flipped by `_flip`:
`crisp_site.rows.WRITES`, and with `--all` also `commit._timers` against the loop as it was
(every silent deadline advanced from the change's state: `_from_scratch`) and `engine_for`
against `importlib.import_module` on every call, in the modules an action uses it from):

- `build`: each builder of one action alone, under the game's lock (rolled back): an event
  row (`commit._event_row`), the engine call row (`_call_row`), the round of the lock
  (`_round`), the broadcast's copy of the game (`_committed_game`), the ack's game
  (`consumers._act`'s) -- and `engine_for` against `importlib.import_module` of its package
  (the registry's old path); median per call of `--calls` calls each way per pair.
- `action`: whole actions (`games.consumers._act`, as bench/act_cpu.py plays them: a draw and
  its discard on `--tables` tables in turn), the switch flipped per turn; median per action of
  `--turns` turns each way per pair. Without `--all`, `engine_for`'s cache and the chained
  `_timers` are on both ways.
- `fire`: timers (`services.game_fire_deadline`, a worker thread's cost per timer), as
  bench/act_cpu.py's `--timers` plays them (on `--tables` tables of their own with a draw
  clock: a player's draw and discard, unmeasured, then the next player's draw clock fired at
  once, the process's clock moved on to its instant), the levers flipped per timer; median
  per timer of `--turns` timers each way per pair.
- `timers`: `commit._timers` against `_from_scratch` on the arguments of `--calls` real
  actions' calls (captured), each call once each way per pair; median per call.
"""

from __future__ import annotations

import argparse
import importlib
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

BASE_DIR = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(BASE_DIR))
sys.path.insert(1, str(BASE_DIR / "bench"))

import rows_cpu  # noqa: E402 - a sibling bench (its A/B loop), found through the path above
from act_cpu import abandon  # noqa: E402
from rows_cpu import _load, _summary  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--database-url", required=True)
    parser.add_argument(
        "--redis-url", default=os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/9")
    )
    parser.add_argument("--pairs", type=int, default=8)
    parser.add_argument("--calls", type=int, default=2000, help="per pair and way (build)")
    parser.add_argument("--tables", type=int, default=6)
    parser.add_argument("--turns", type=int, default=60, help="per pair and way (action)")
    parser.add_argument("--only", choices=["build", "action", "timers", "fire"], action="append")
    parser.add_argument("--all", action="store_true", help="action, fire: every lever flipped")
    args = parser.parse_args()
    from act_cpu import setup_django

    setup_django(args.database_url, args.redis_url, "rows2-cpu")
    from django.db import transaction
    from live import make_tables

    from crisp_site import rows
    from games import clock, engines, services
    from games.models import Event, Game
    from games.services import commit

    tables = make_tables(args.tables)
    for game_id, _ in tables:
        services.game_start(
            game=game_id,
            user=Game.objects.get(pk=game_id).host,
            timers={"memorise_ms": 0, "start_delay_ms": 0},
        )
    game_id = tables[0][0]
    print(f"{args.pairs} pairs; per pair and way: median CPU per call (ms)")
    todo = args.only or ["build", "timers", "action"]

    if "build" in todo:
        with transaction.atomic():
            locked = commit._lock(game_id)
            number = locked.lock_round_number
            rnd = commit._round(locked, number)
            at = clock.now_ms()
            call = {"call": "apply", "seat": 1, "action": {"type": "draw", "source": "deck"}}
            ack = rows.loaded(Game, ("id", "kind", "version"))
            builds = {
                "event row": lambda: commit._event_row(
                    locked,
                    origin=Event.Origin.ENGINE,
                    type="drawn",
                    data={"seat": 1},
                    version=7,
                    round=rnd,
                    at_ms=at,
                ),
                "engine call row": lambda: commit._call_row(locked, 7, at, call),
                "round of the lock": lambda: commit._round(locked, number),
                "broadcast's game": lambda: commit._committed_game(locked, 7, {"round": {}}),
                "ack's game": lambda: (
                    ack("default", (game_id, "crisp", 7))
                    if rows.WRITES
                    else Game.from_db("default", ("id", "kind", "version"), (game_id, "crisp", 7))
                ),
                "engine_for": lambda: (
                    engines.engine_for("crisp")
                    if rows.WRITES
                    else importlib.import_module(engines.KINDS["crisp"])
                ),
            }
            _pairs("build", args.pairs, builds, args.calls)
            transaction.set_rollback(True)

    if "timers" in todo:
        _timers(tables, args.pairs, args.calls)
    if "action" in todo:
        _actions(tables, args.pairs, args.turns, args.all)
    if "fire" in todo:
        _fires(args.tables, args.pairs, args.turns, args.all)
    _flip(True, True)
    abandon(tables)  # whatever ran: no timer of theirs fires into the next run


def _fires(count: int, pairs: int, turns: int, every: bool) -> None:
    """Timers fired (``services.game_fire_deadline``), the levers flipped per timer."""
    from live import make_tables

    from games import clock, services
    from games.models import Game

    skew = [0]  # ms the process's clock runs ahead of the wall
    wall_ms = clock.now_ms
    clock.now_ms = lambda: wall_ms() + skew[0]  # type: ignore[assignment]
    tables = make_tables(count)
    for game_id, _ in tables:
        services.game_start(
            game=game_id,
            user=Game.objects.get(pk=game_id).host,
            timers={"memorise_ms": 0, "start_delay_ms": 0, "draw_seconds": 8},
        )
    print(f"fire (services.game_fire_deadline; {'every lever' if every else 'WRITES'}):")
    print(f"  {'pair':>4} {'load':>5} {'before':>9} {'after':>9} {'saved':>8}")
    saved = []
    side = False
    for pair in range(pairs + 1):  # the first: warm-up
        times: dict[bool, list[float]] = {False: [], True: []}
        while min(len(times[False]), len(times[True])) < turns:
            for game_id, _ in tables:
                # One pass: a turn played (its clock may have run out meanwhile: then the
                # timer below serves it too).
                passes: list[int] = []
                _play(
                    [(game_id, [])],
                    lambda: bool(passes.append(1)) or len(passes) > 1,  # noqa: B023
                    lambda: None,
                    lambda ms: None,
                )
                deadlines = Game.objects.only("deadlines").get(pk=game_id).deadlines
                due = [d for d in deadlines if d["key"].endswith(":timeout")]
                if not due:
                    continue
                skew[0] += max(0, due[0]["at"] - clock.now_ms())
                side = not side
                _flip(side, every)
                t0 = time.thread_time()
                fired = services.game_fire_deadline(game_id=game_id, key=due[0]["key"])
                spent = (time.thread_time() - t0) * 1000
                _flip(True, True)
                if fired:
                    times[side].append(spent)
        if pair == 0:
            continue
        before, after = statistics.median(times[False]), statistics.median(times[True])
        saved.append(before - after)
        print(f"  {pair:>4} {_load():>5} {before:9.4f} {after:9.4f} {before - after:8.4f} ms")
    _summary(saved, "ms")
    clock.now_ms = wall_ms  # type: ignore[assignment]
    abandon(tables)


def _from_scratch(engine: Any, state: Any, pending: Any) -> list[Any]:
    """``commit._timers`` before session 21: each silent deadline from ``state`` anew."""
    silent = engine.SILENT_DEADLINES
    timers = [d for d in pending if d.kind not in silent]
    keys = {d.key for d in timers}
    for d in pending:
        if d.kind in silent:
            ahead, _ = engine.advance(state, d.at)
            for later in engine.pending_deadlines(ahead):
                if later.kind not in silent and later.key not in keys:
                    timers.append(later)
                    keys.add(later.key)
    timers.sort(key=lambda d: d.at)
    return timers


def _imported_anew(kind: str) -> Any:
    """``engine_for`` before session 21."""
    from games import engines

    return importlib.import_module(engines.KINDS[kind])


_NEW: dict[str, Any] = {}


def _flip(new: bool, every: bool) -> None:
    """The levers on (``new``) or off: ``rows.WRITES``; with ``every`` also ``_timers`` and
    ``engine_for`` where an action calls it (``commit``, ``selectors``)."""
    from crisp_site import rows
    from games import selectors
    from games.services import commit

    if not _NEW:
        _NEW.update(timers=commit._timers, engine_for=commit.engine_for)
    rows.WRITES = new
    every = every or new
    commit._timers = _NEW["timers"] if new or not every else _from_scratch
    engine_for = _NEW["engine_for"] if new or not every else _imported_anew
    commit.engine_for = selectors.engine_for = engine_for


def _timers(tables: list[tuple[int, list[str]]], pairs: int, calls: int) -> None:
    """``commit._timers`` against ``_from_scratch`` on captured real calls."""
    from games.services import commit

    captured: list[tuple[Any, Any, Any]] = []
    real = commit._timers

    def capture(engine: Any, state: Any, pending: Any) -> list[Any]:
        captured.append((engine, state, pending))
        return real(engine, state, pending)

    commit._timers = capture
    try:
        _play(tables, lambda: len(captured) >= min(calls, 400), lambda: None, lambda ms: None)
    finally:
        commit._timers = real
    for engine, state, pending in captured:
        assert real(engine, state, pending) == _from_scratch(engine, state, pending)
    print(f"timers ({len(captured)} calls captured from actions):")
    print(f"  {'pair':>4} {'load':>5} {'before':>9} {'chained':>9} {'saved':>8}")
    saved = []
    for pair in range(pairs):
        times: dict[bool, list[float]] = {False: [], True: []}
        order = (False, True) if pair % 2 == 0 else (True, False)
        for engine, state, pending in captured:
            for new in order:
                fn = real if new else _from_scratch
                t0 = time.thread_time()
                fn(engine, state, pending)
                times[new].append((time.thread_time() - t0) * 1e6)
        before, after = statistics.median(times[False]), statistics.median(times[True])
        saved.append(before - after)
        print(f"  {pair:>4} {_load():>5} {before:9.2f} {after:9.2f} {before - after:8.2f} us")
    _summary(saved, "us")


def _pairs(title: str, pairs: int, fns: dict[str, Callable[[], Any]], calls: int) -> None:
    """``rows_cpu``'s A/B loop with ``rows.WRITES`` as the switch, in microseconds."""
    rows_cpu._pairs(title, pairs, fns, calls, switch="WRITES", label="django", unit="us")


def _play(
    tables: list[tuple[int, list[str]]],
    enough: Callable[[], bool],
    before_turn: Callable[[], None],
    spent: Callable[[float], None],
) -> None:
    """Turns (a draw and its discard, ``consumers._act``) on each table in turn until
    ``enough()``; ``before_turn()`` before each, ``spent(ms)``: each action's thread CPU."""
    from live import move_after_draw

    from games import clock, consumers
    from games.models import Game

    for g, _ in tables:
        if g not in _PLAYERS:
            _PLAYERS[g] = {s.number: s.user for s in Game.objects.get(pk=g).seats.all()}
    by_game = _PLAYERS
    while not enough():
        for game_id, _ in tables:
            game = Game.objects.only("state", "status").get(pk=game_id)
            if game.status != Game.Status.PLAYING:
                continue
            turn = game.state["round"]["turn"]
            user = by_game[game_id][turn["seat"]]
            wait = (turn.get("start_at") or 0) - clock.now_ms()
            if wait > 0:
                time.sleep(wait / 1000 + 0.002)
            before_turn()
            ack: dict[str, Any] = {"events": []}
            for action in ({"type": "draw", "source": "deck"}, None):
                if action is None:
                    action = move_after_draw(ack["events"])
                t0 = time.thread_time()
                try:
                    _, ack = consumers._act(game_id, user, {"action": action})
                except Exception:  # a refused action (a window): next table
                    break
                spent((time.thread_time() - t0) * 1000)
        if len(tables) % 2 == 0:
            before_turn()  # each table each way in turn


_PLAYERS: dict[int, Any] = {}


def _actions(tables: list[tuple[int, list[str]]], pairs: int, turns: int, every: bool) -> None:
    """Whole actions (``consumers._act``), the levers flipped per turn (a draw and its
    discard); the per-action medians of each way per pair."""

    print(f"action (consumers._act, draw and discard; {'every lever' if every else 'WRITES'}):")
    print(f"  {'pair':>4} {'load':>5} {'before':>9} {'after':>9} {'saved':>8}")
    saved = []
    side = [False]
    for pair in range(pairs + 1):  # the first: warm-up
        times: dict[bool, list[float]] = {False: [], True: []}

        def flip() -> None:
            side[0] = not side[0]
            _flip(side[0], every)

        _play(
            tables,
            lambda: min(len(times[False]), len(times[True])) >= 2 * turns,  # noqa: B023
            flip,
            lambda ms: times[side[0]].append(ms),  # noqa: B023
        )
        _flip(True, True)
        if pair == 0:
            continue
        before, after = statistics.median(times[False]), statistics.median(times[True])
        saved.append(before - after)
        print(f"  {pair:>4} {_load():>5} {before:9.4f} {after:9.4f} {before - after:8.4f} ms")
    _summary(saved, "ms")


if __name__ == "__main__":
    main()
