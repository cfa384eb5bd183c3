"""The action's own thread, this tree's code against a git ref's, turn by turn in one process.

    .venv/bin/python bench/engine_ab.py --database-url postgres://postgres@127.0.0.1:5432/crisp_x \
        [--base int] [--tables 10] [--pairs 8] [--actions 200] [--timers]

What `bench/act_cpu.py` measures (CPU of the thread that runs `games.consumers._act`, with
`time.thread_time`; the PostgreSQL backends' CPU beside it), as an A/B in one process (session
19): every function of the service layer, `_act` and the engines' shared base whose source
differs between `--base` and this checkout is compiled again from `--base`'s source, bound to
the same module (so it calls whatever the module holds then), and swapped in on every other
turn (a draw and its discard). `main` is `--base`'s code, `tree` this checkout's; the rest of
the process -- Django, the pooled connection, the prepared statements, the live thread -- is the
same for both.

`--pairs` pairs of `--actions` actions each way, alternating turn by turn within a pair; each
pair prints both medians and the load average, then the median of the pairs' medians and how
many pairs went each way. `--timers`: the same for timers (`services.game_fire_deadline`, a
worker's cost per timer), as `act_cpu.py --timers` drives them.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import statistics
import subprocess
import sys
import time
import types
from pathlib import Path
from typing import Any

BASE_DIR = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(BASE_DIR))
sys.path.insert(1, str(BASE_DIR / "bench"))

#: The modules whose changed functions are swapped (their files, relative to the tree).
MODULES = (
    "games.services.commit",
    "games.services.play",
    "games.consumers",
    "games.engines.base",
    "games.engines.crisp.state",
)


def _defs(source: str) -> dict[str, ast.AST]:
    """Top-level functions and classes' methods of a module's source, by qualified name."""
    out: dict[str, ast.AST] = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            out[node.name] = node
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef):
                    out[f"{node.name}.{item.name}"] = item
    return out


def _old_function(module: types.ModuleType, node: ast.AST) -> Any:
    """``node`` (a def from the base's source, decorators and all) compiled and bound to
    ``module``'s globals, as it would be had the module been the base's."""
    import __future__

    tree = ast.Module(body=[node], type_ignores=[])
    code = compile(
        tree, f"<{module.__name__} at base>", "exec", flags=__future__.annotations.compiler_flag
    )
    scratch = dict(module.__dict__)
    exec(code, scratch)  # noqa: S102 - the project's own source, from git
    made = scratch[node.name]  # type: ignore[attr-defined]
    inner = made.__func__ if isinstance(made, classmethod | staticmethod) else made
    if isinstance(inner, types.FunctionType) and not hasattr(inner, "__wrapped__"):
        bound = types.FunctionType(
            inner.__code__, module.__dict__, inner.__name__, inner.__defaults__, inner.__closure__
        )
        bound.__kwdefaults__ = inner.__kwdefaults__
        inner = bound
        if isinstance(made, classmethod):
            return classmethod(inner)
        if isinstance(made, staticmethod):
            return staticmethod(inner)
        return inner
    return None  # a wrapped function (``transaction.atomic``): not swapped (said so)


class Switch:
    """Swaps every function that changed since ``base``: ``use(old=True)`` the base's."""

    def __init__(self, base: str) -> None:
        import importlib

        self.swaps: list[tuple[Any, str, Any, Any]] = []  # (owner, name, new, old)
        for name in MODULES:
            module = importlib.import_module(name)
            path = Path(module.__file__ or "").relative_to(BASE_DIR)
            old_source = subprocess.run(  # noqa: S603 - git, with the ref given
                ["git", "show", f"{base}:{path}"],  # noqa: S607
                cwd=BASE_DIR,
                capture_output=True,
                text=True,
                check=True,
            ).stdout
            new_defs, old_defs = _defs(path.read_text()), _defs(old_source)
            for qualname, node in old_defs.items():
                new_node = new_defs.get(qualname)
                if new_node is not None and ast.dump(new_node) == ast.dump(node):
                    continue
                owner: Any = module
                attr = qualname
                if "." in qualname:
                    cls, attr = qualname.split(".")
                    owner = getattr(module, cls)
                current = owner.__dict__.get(attr) if "." in qualname else getattr(owner, attr)
                old = _old_function(module, node)
                if old is None:
                    print(f"NOT swapped (decorated; measure it some other way): {name}.{qualname}")
                    continue
                self.swaps.append((owner, attr, current, old))
                # Other modules' names for it (``from commit import _engine_change``).
                if owner is module:
                    for other in MODULES:
                        mod = importlib.import_module(other)
                        if mod is not module and mod.__dict__.get(attr) is current:
                            self.swaps.append((mod, attr, current, old))
        print("swapped:", ", ".join(f"{getattr(o, '__name__', o)}.{a}" for o, a, *_ in self.swaps))

    def use(self, old: bool) -> None:
        for owner, attr, new, was in self.swaps:
            setattr(owner, attr, was if old else new)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/9")
    parser.add_argument("--base", default="int", help="the git ref measured against")
    parser.add_argument("--tables", type=int, default=10)
    parser.add_argument("--pairs", type=int, default=8)
    parser.add_argument("--actions", type=int, default=200, help="per pair, each way")
    parser.add_argument("--warmup", type=int, default=100, help="actions each way, not counted")
    parser.add_argument("--timers", action="store_true", help="measure timers, not actions")
    args = parser.parse_args()
    from act_cpu import setup_django

    setup_django(args.database_url, args.redis_url, "engine-ab")
    from act_cpu import _backends, _backends_ns, alternate_turns
    from live import make_tables, move_after_draw

    from games import clock, consumers, services
    from games.models import Game

    switch = Switch(args.base)
    skew = [0]
    wall_ms = clock.now_ms
    clock.now_ms = lambda: wall_ms() + skew[0]  # type: ignore[assignment]

    tables = make_tables(args.tables)
    for game_id, _ in tables:
        game = Game.objects.get(pk=game_id)
        services.game_start(
            game=game_id,
            user=game.host,
            timers={
                "memorise_ms": 0,
                "start_delay_ms": 0,
                **({"draw_seconds": 8} if args.timers else {}),
            },
        )
    time.sleep(0.05)
    by_game = {g: {s.number: s.user for s in Game.objects.get(pk=g).seats.all()} for g, _ in tables}
    pids: list[int] = []
    refused: list[str] = []  # a few are refusals of the rules (a window); more, a bug

    def one_turn(game_id: int, old: bool) -> list[tuple[float, float]]:
        """One turn of ``game_id`` with the base's code (``old``) or the tree's: the CPU of
        each measured call (thread ms, backends ms)."""
        out: list[tuple[float, float]] = []
        game = Game.objects.only("state", "status").get(pk=game_id)
        if game.status != Game.Status.PLAYING:
            return out
        turn = game.state["round"]["turn"]
        user = by_game[game_id][turn["seat"]]
        wait = (turn.get("start_at") or 0) - clock.now_ms()
        if wait > 0 and args.timers:
            skew[0] += int(wait) + 2
        elif wait > 0:
            time.sleep(wait / 1000 + 0.002)
        switch.use(old)
        try:
            ack: dict[str, Any] = {"events": []}
            for action in ({"type": "draw", "source": "deck"}, None):
                if action is None:
                    action = move_after_draw(ack["events"])
                b0, t0 = _backends_ns(pids), time.thread_time()
                try:
                    _, ack = consumers._act(game_id, user, {"action": action})
                except Exception as exc:  # a refused action (a window): next table
                    refused.append(f"{'main' if old else 'tree'}: {type(exc).__name__}: {exc}")
                    if len(refused) > (5000 if args.timers else 50):
                        raise SystemExit("refused 50 times:\n" + "\n".join(refused)) from exc
                    return out
                if not args.timers:
                    out.append(((time.thread_time() - t0) * 1000, (_backends_ns(pids) - b0) / 1e6))
            if args.timers:
                deadlines = Game.objects.only("deadlines").get(pk=game_id).deadlines
                due = [d for d in deadlines if d["key"].endswith(":timeout")]
                if due:
                    skew[0] += max(0, due[0]["at"] - clock.now_ms())
                    b0, t0 = _backends_ns(pids), time.thread_time()
                    if services.game_fire_deadline(game_id=game_id, key=due[0]["key"]):
                        out.append(
                            ((time.thread_time() - t0) * 1000, (_backends_ns(pids) - b0) / 1e6)
                        )
        finally:
            switch.use(False)
        return out

    def run(count: int) -> dict[bool, list[tuple[float, float]]]:
        return alternate_turns(tables, one_turn, count)

    run(args.warmup)
    pids = _backends()
    what = "timer" if args.timers else "action"
    print(f"CPU per {what}, ms (thread: median of the pair; backends: median); base {args.base}")
    pairs: list[tuple[float, float, float, float]] = []
    for i in range(args.pairs):
        got = run(args.actions)
        main_t = statistics.median(t for t, _ in got[True])
        tree_t = statistics.median(t for t, _ in got[False])
        main_b = statistics.median(b for _, b in got[True])
        tree_b = statistics.median(b for _, b in got[False])
        pairs.append((main_t, tree_t, main_b, tree_b))
        load = Path("/proc/loadavg").read_text().split()[:3]
        print(
            f"  pair {i + 1}: thread main {main_t:.3f} tree {tree_t:.3f} "
            f"({100 * (tree_t / main_t - 1):+.1f} %); backends main {main_b:.3f} "
            f"tree {tree_b:.3f}; n {len(got[True])}/{len(got[False])}; load {' '.join(load)}"
        )
    lower = sum(1 for m, t, *_ in pairs if t < m)
    main_med = statistics.median(p[0] for p in pairs)
    tree_med = statistics.median(p[1] for p in pairs)
    print(
        f"median of pairs: thread main {main_med:.3f} ms, tree {tree_med:.3f} ms "
        f"({100 * (tree_med / main_med - 1):+.1f} %); tree lower in {lower} of {len(pairs)} pairs; "
        f"backends main {statistics.median(p[2] for p in pairs):.3f}, "
        f"tree {statistics.median(p[3] for p in pairs):.3f} ms"
    )
    print(f"refused: {len(refused)}", *refused[:5], sep="\n  ")
    for game_id, _ in tables:
        with contextlib.suppress(Exception):
            Game.objects.filter(pk=game_id).update(
                status=Game.Status.ABANDONED, deadlines=[], next_deadline_at=None
            )


if __name__ == "__main__":
    main()
