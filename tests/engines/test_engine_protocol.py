"""Every registered engine implements ``games.engines.protocol.Engine`` (issue 23).

Checked at run time, member by member: each data member present with the declared type, each
function with exactly the Protocol's parameters (names, kinds, which have defaults), each
class with the methods the web layer calls.  Then the shared turn model, ``awaiting``, and the
final standing, ``returns``, are held to their documented meaning on played-out games of
every kind: the view carries ``awaiting`` for every viewer alike, its ``deadline`` is one of
the pending deadlines' instants, and a finished game's best return is exactly its winners'.
"""

from __future__ import annotations

import inspect
import os
import random
import subprocess
import sys
import typing
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from games.engines import KINDS, base, engine_for
from games.engines.protocol import Engine

#: The declared type of every data member: annotated attributes, and the read-only ones
#: (``@property``: the game's own classes).
HINTS = typing.get_type_hints(Engine) | {
    n: typing.get_type_hints(v.fget)["return"]
    for n, v in vars(Engine).items()
    if isinstance(v, property)
}
FUNCTIONS = sorted(
    n for n, v in vars(Engine).items() if inspect.isfunction(v) and not n.startswith("_")
)
DATA = sorted(HINTS)


def test_the_protocol_names_the_whole_contract() -> None:
    """The Protocol is what docs/ENGINE.md lists (a name added to one is added to the other)."""
    assert {"new_game", "apply", "view", "awaiting", "is_over", "returns"} <= set(FUNCTIONS)
    assert {"VERSION_EXEMPT_ACTIONS", "TIMEOUT_EVENTS", "EVENT_TYPES", "GameState"} <= set(DATA)
    doc = (Path(__file__).parents[2] / "docs" / "ENGINE.md").read_text()
    for name in [*FUNCTIONS, *DATA]:
        assert f"`{name}" in doc, name


def _conforms(value: Any, hint: Any) -> bool:
    origin = typing.get_origin(hint) or hint
    args = typing.get_args(hint)
    if origin is type:
        return value is args[0]
    if origin in (frozenset, tuple, dict, str, int):
        if not isinstance(value, origin):
            return False
        if origin in (frozenset, tuple) and args and args[0] is str:
            return all(isinstance(x, str) for x in value)
        return True
    if origin is Sequence:
        return isinstance(value, Sequence) and all(isinstance(x, str) for x in value)
    # A class protocol (``_FromJson``, ``_FromWire``): its methods, with their parameters.
    for name, member in vars(hint).items():
        if inspect.isfunction(member) and not name.startswith("_"):
            if not callable(getattr(value, name, None)):
                return False
            want = list(inspect.signature(member).parameters)[1:]
            if list(inspect.signature(getattr(value, name)).parameters) != want:
                return False
    return True


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("name", DATA)
def test_each_engine_declares_the_data_member(kind: str, name: str) -> None:
    engine = engine_for(kind)
    assert hasattr(engine, name), (kind, name)
    assert _conforms(getattr(engine, name), HINTS[name]), (kind, name, getattr(engine, name))


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("name", FUNCTIONS)
def test_each_engine_function_has_the_protocol_signature(kind: str, name: str) -> None:
    engine = engine_for(kind)
    want = list(inspect.signature(getattr(Engine, name)).parameters.values())[1:]  # no self
    got = list(inspect.signature(getattr(engine, name)).parameters.values())
    shape = [(p.name, p.kind, p.default is inspect.Parameter.empty) for p in want]
    assert [(p.name, p.kind, p.default is inspect.Parameter.empty) for p in got] == shape


def test_the_check_can_fail() -> None:
    """A module missing a function, or taking other parameters, does not conform."""
    fake = ModuleType("fake")
    fake.view = lambda state, now: {}  # type: ignore[attr-defined]
    want = list(inspect.signature(Engine.view).parameters)[1:]
    assert list(inspect.signature(fake.view).parameters) != want  # type: ignore[attr-defined]
    assert not _conforms(frozenset({1}), HINTS["EVENT_TYPES"])
    assert not _conforms(object(), HINTS["GameState"])


@pytest.mark.parametrize("kind", list(KINDS))
def test_the_declared_vocabulary_is_the_one_the_engine_speaks(kind: str) -> None:
    """``ACTION_TYPES``: what ``Action.from_wire`` reads; ``EVENT_TYPES``: what
    ``event_view`` redacts (it refuses any other type); the declared subsets inside them."""
    engine = engine_for(kind)
    for t in engine.EVENT_TYPES:
        engine.event_view(engine.Event(t, _sample_data(engine, t)), None)
    with pytest.raises(ValueError, match="no redaction rule"):
        engine.event_view(engine.Event("no_such_event", {"at": 0}), None)
    with pytest.raises(engine.IllegalAction):
        engine.Action.from_wire({"type": "no_such_action"})
    assert set(engine.ACTION_TYPES) >= engine.VERSION_EXEMPT_ACTIONS
    assert engine.TIMEOUT_EVENTS <= engine.EVENT_TYPES
    assert {"round_dealt", "game_over", engine.ROUND_END_EVENT} <= engine.EVENT_TYPES


def _sample_data(engine: ModuleType, typ: str) -> dict[str, Any]:
    """Enough ``data`` for ``event_view`` to redact an event of ``typ`` for a spectator: the
    keys it reads, taken from a real event of a played game when there is one."""
    if engine.KIND not in _EVENT_SAMPLES:
        _EVENT_SAMPLES[engine.KIND] = _play_events(engine)
    return _EVENT_SAMPLES[engine.KIND].get(typ, _ANY_DATA)


#: The keys the redaction rules read, for a type no sample game happened to produce.
_ANY_DATA = {"at": 0, "seat": 0, "source": "deck", "place": "left", "target_seat": 1,
             "target_place": "left", "hands": [[], [], [], []]}  # fmt: skip


_EVENT_SAMPLES: dict[str, dict[str, dict[str, Any]]] = {}


def _play_events(engine: ModuleType) -> dict[str, dict[str, Any]]:
    seen: dict[str, dict[str, Any]] = {}
    for state, events in _playthrough(engine, seed="vocabulary"):
        del state
        for e in events:
            seen.setdefault(e.type, e.data)
    return seen


# ---------------------------------------------------------------------------------------------
# Played-out games: awaiting and returns on every state a real game goes through.
# ---------------------------------------------------------------------------------------------
#: Short games with a time per move, so every kind of wait and every timeout comes up; a kind
#: not listed plays its defaults.
_QUICK = {
    "crisp": {"target_score": 20, "draw_seconds": 30},
    "cribbage": {"target_score": 31, "move_seconds": 30},
    "triple_crown": {"target_score": 3, "move_seconds": 30},
}


def _settings(engine: ModuleType) -> Any:
    return engine.Settings.from_json(_QUICK.get(engine.KIND, {}))


def _playthrough(engine: ModuleType, seed: str, limit: int = 4000):
    """A whole game with random legal moves and the odd timeout; yields each state with the
    events that led to it."""
    rng = random.Random(seed)
    seats = engine.MIN_SEATS if engine.MIN_SEATS == engine.MAX_SEATS else 3
    state, events = engine.new_game(seats=seats, settings=_settings(engine), seed=seed, now=1_000)
    yield state, events
    now = 1_000
    for _ in range(limit):
        if engine.is_over(state):
            return
        moves = [(s, a) for s in range(seats) for a in engine.legal_actions(state, s, now)]
        ds = engine.pending_deadlines(state)
        if moves and rng.random() < 0.9:
            seat, action = rng.choice(moves)
            state, events = engine.apply(state, seat, action, now)
        elif ds:
            now = max(now, ds[0].at)
            state, events = engine.fire(state, ds[0].key, now)
        else:
            now += 500
            continue
        now += rng.choice((0, 1, 200, 1500))
        yield state, events
    raise AssertionError(f"{engine.KIND}: no end after {limit} steps")


@pytest.mark.parametrize("kind", list(KINDS))
def test_awaiting_is_the_shared_shape_in_every_view_and_names_a_pending_instant(
    kind: str,
) -> None:
    engine = engine_for(kind)
    kinds_seen = set()
    for state, events in _playthrough(engine, seed=f"awaiting-{kind}"):
        assert {e.type for e in events} <= engine.EVENT_TYPES
        seats = state.seats
        views = [engine.view(state, s, state.clock) for s in [None, *range(seats)]]
        aw = views[0]["awaiting"]
        assert all(v["awaiting"] == aw for v in views), "awaiting is public"
        assert set(aw) == {"kind", "seats", "deadline"}
        assert isinstance(aw["kind"], str) and aw["seats"] == sorted(set(aw["seats"]))
        assert all(isinstance(s, int) and 0 <= s < seats for s in aw["seats"])
        assert aw == engine.awaiting(state, state.clock), "the view renders the state as given"
        pending = {d.at for d in engine.pending_deadlines(state)}
        assert aw["deadline"] is None or aw["deadline"] in pending, (aw, pending)
        kinds_seen.add(aw["kind"])
        if engine.is_over(state):
            assert aw == {"kind": "nothing", "seats": [], "deadline": None}
            assert state.status == "finished"
            continue
        assert aw["kind"] != "nothing"
        # Every awaited seat may move now, or once the awaited time has come (Crisp's start).
        for s in aw["seats"]:
            assert engine.legal_actions(state, s, state.clock) or (
                aw["deadline"] is not None and engine.legal_actions(state, s, aw["deadline"])
            ), (aw, s)
        if kind != "crisp":  # Crisp's look and crisp call are options, never awaited
            movers = [s for s in range(seats) if engine.legal_actions(state, s, state.clock)]
            assert movers == aw["seats"], (aw, movers)
    assert "nothing" in kinds_seen and len(kinds_seen) >= 3, kinds_seen


@pytest.mark.parametrize("kind", list(KINDS))
def test_awaiting_at_a_later_instant_applies_the_due_deadlines_first(kind: str) -> None:
    engine = engine_for(kind)
    state, _ = engine.new_game(
        seats=engine.MIN_SEATS, settings=_settings(engine), seed="later", now=0
    )
    first = engine.awaiting(state, 0)
    assert first["deadline"] is not None
    later = engine.awaiting(state, first["deadline"])
    assert later == engine.view(engine.advance(state, first["deadline"])[0], None, 0)["awaiting"]
    assert later != first


@pytest.mark.parametrize("kind", list(KINDS))
def test_returns_rank_a_finished_game_with_its_winners_on_top(kind: str) -> None:
    engine = engine_for(kind)
    for n in range(3):
        *_, (state, _) = _playthrough(engine, seed=f"returns-{kind}-{n}")
        r = engine.returns(state)
        assert engine.is_over(state) and len(r) == state.seats
        assert all(0.0 <= x <= 1.0 for x in r)
        assert sum(r) == pytest.approx(state.seats / 2)
        best = max(r)
        assert [s for s, x in enumerate(r) if x == best] == state.winners
        assert engine.winners_on_scores(state.scores) == state.winners


@pytest.mark.parametrize(
    ("scores", "low_wins", "expected"),
    [
        ([10, 20], True, [1.0, 0.0]),
        ([10, 20], False, [0.0, 1.0]),
        ([5, 5], False, [0.5, 0.5]),
        ([3, 9, 1, 9], False, [1 / 3, 5 / 6, 0.0, 5 / 6]),
        ([40, 12, 12], True, [0.0, 0.75, 0.75]),
    ],
)
def test_placement_returns(scores: list[int], low_wins: bool, expected: list[float]) -> None:
    assert base.placement_returns(scores, low_wins=low_wins) == pytest.approx(expected)


# ---------------------------------------------------------------------------------------------
# The type checker's word: each engine module assigned to ``Engine`` (requirements-dev.txt).
# ---------------------------------------------------------------------------------------------
TYPECHECK = Path(__file__).parent / "typecheck"


def _mypy(path: Path) -> subprocess.CompletedProcess[str]:
    pytest.importorskip("mypy", reason="mypy is in requirements-dev.txt: make install")
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--python-version", "3.11", "--follow-imports=silent",
         "--no-incremental", "--cache-dir", os.devnull, "--no-error-summary", str(path)],
        cwd=TYPECHECK.parents[2], capture_output=True, text=True, check=False,
    )  # fmt: skip


def test_mypy_finds_every_engine_conforms() -> None:
    """tests/engines/typecheck/engines_conform.py assigns each registered engine to ``Engine``."""
    text = (TYPECHECK / "engines_conform.py").read_text()
    for kind in KINDS:
        assert f" {kind}" in text, kind  # a new game is added there too
    out = _mypy(TYPECHECK / "engines_conform.py")
    assert out.returncode == 0, out.stdout + out.stderr


def test_mypy_refuses_a_module_that_does_not_conform() -> None:
    out = _mypy(TYPECHECK / "engine_broken.py")
    errors = [line for line in out.stdout.splitlines() if ": error:" in line]
    assert out.returncode == 1 and len(errors) == 2, out.stdout + out.stderr
    assert all("has type Module" in line for line in errors)
