"""Fair by construction: a bot decides from its seat's redacted payloads and nothing else.

Three guards, each of which fails if the shape of the code changes so that a bot could see more:

1. the ``Memory`` refuses anything but this seat's redacted views and events;
2. ``Bot.decide`` takes exactly ``(observation, now, rng)`` and refuses anything but a frozen
   ``Observation`` (the caller's mutable ``Memory`` included);
3. the import surface of ``games/bots/`` (AST): only the engines' public packages, ``GameState``
   only in the determiniser and the referee, no engine internals, no ``.seed``/``.decks``/
   ``.deck_order`` read outside the referee.

And one behavioural proof: two true states that differ only in cards the seat never saw give
every level the same memory and the same decision.  The same guards at the service path, for
every game and level, with planted clairvoyants: tests/games/test_bot_fairness.py.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import random
import sys
from pathlib import Path

import pytest

import games.bots
from games.bots import LEVELS, Bot, Budget, Memory, ObservationError, ask, bot_for
from games.bots.crisp import BOTS
from games.engines import crisp as engine
from games.engines.crisp import Action, Event, Settings, apply, event_view, new_game, view

BOTS_DIR = Path(games.bots.__file__).parent


def _table(seats: int = 2, seed: str = "fair") -> tuple[engine.GameState, list[Event]]:
    return new_game(seats=seats, settings=Settings(), seed=seed, now=0)


# -- 1. the memory refuses what the seat was not sent ----------------------------------------
def test_memory_accepts_the_seats_own_payloads() -> None:
    st, ev = _table()
    st, ev2 = apply(st, 0, Action.look(), 0)
    m = Memory("crisp", 0)
    m.observe(view=view(st, 0, 0), events=[event_view(e, 0) for e in ev + ev2])
    assert [e["type"] for e in m.events] == ["round_dealt", "look"]
    assert m.events[1]["data"]["left"] is not None  # its own look, in its own form


@pytest.mark.parametrize(
    "bad",
    [
        "state object",
        "state json",
        "event object",
        "full event",
        "other seat's event",
        "other seat's view",
        "spectator view",
        "tuple",
        "set",
    ],
)
def test_memory_refuses_anything_else(bad: str) -> None:
    st, ev = _table()
    st1, look = apply(st, 1, Action.look(), 0)
    m = Memory("crisp", 0)
    m.observe(view=view(st, 0, 0), events=[event_view(e, 0) for e in ev])
    before = m.to_json()
    payload: dict[str, object] = {
        "state object": {"view": st1},
        "state json": {"view": st1.to_json()},
        "event object": {"events": look},
        "full event": {"events": [look[0].to_json()]},
        "other seat's event": {"events": [event_view(look[0], 1)]},
        "other seat's view": {"view": view(st1, 1, 0)},
        "spectator view": {"view": view(st1, None, 0)},
        "tuple": {"events": [{"type": "discard", "data": {"card": ("AS",), "at": 0}}]},
        "set": {"view": {**view(st1, 0, 0), "pile": {"AS"}}},
    }[bad]
    with pytest.raises(ObservationError):
        m.observe(**payload)  # type: ignore[arg-type]
    assert m.to_json() == before  # a refused frame changes nothing


def test_memory_refuses_a_deck_anywhere_and_round_trips_as_json() -> None:
    st, ev = _table()
    m = Memory("crisp", 0)
    leaked = [e.to_json() for e in ev]  # round_dealt with its deck
    with pytest.raises(ObservationError, match="deck"):
        m.observe(events=leaked)
    m.observe(view=view(st, 0, 0), events=[event_view(e, 0) for e in ev])
    again = Memory.from_json(m.to_json())
    assert again.to_json() == m.to_json()
    tampered = m.to_json()
    tampered["view"] = view(st, 1, 0)
    with pytest.raises(ObservationError):
        Memory.from_json(tampered)


# -- 2. the decision function's inputs -------------------------------------------------------
def test_decide_takes_memory_now_rng_and_nothing_else() -> None:
    params = list(inspect.signature(Bot.decide).parameters)
    assert params == ["self", "memory", "now", "rng"]
    assert list(inspect.signature(Bot.choose).parameters) == params
    for cls in BOTS.values():
        # No level may replace the checked entry point or widen what its policy receives.
        assert cls.decide is Bot.decide, cls
        assert list(inspect.signature(cls.choose).parameters) == params, cls


@pytest.mark.parametrize("level", LEVELS)
def test_decide_refuses_a_game_state_or_anything_but_a_memory(level: str) -> None:
    st, ev = _table()
    bot = bot_for("crisp", level, budget=Budget(5))
    good = Memory("crisp", 0)
    good.observe(view=view(st, 0, 0), events=[event_view(e, 0) for e in ev])
    for wrong in (st, st.to_json(), view(st, 0, 0), good.to_json(), good):
        with pytest.raises(ObservationError):
            bot.decide(wrong, 0, random.Random(1))  # type: ignore[arg-type]
    with pytest.raises(ObservationError):
        bot.decide(good.observation(), 0.5, random.Random(1))  # type: ignore[arg-type]
    assert bot.decide(good.observation(), 0, random.Random(1)) in (None, {"type": "look"})


# -- 3. the import surface (AST) -------------------------------------------------------------
#: Modules allowed to hold a GameState: the determiniser builds hypothetical ones from sampled
#: worlds; the referee (arena) holds the true one and never hands it to a bot.
STATE_HOLDERS = {"crisp.py", "cribbage.py", "triple_crown.py", "arena.py"}
#: Attributes that only the true state has secrets in.  Only the referee may read them.
SECRET_ATTRS = {"seed", "decks", "deck_order"}


def _bot_modules() -> list[Path]:
    return sorted(BOTS_DIR.glob("*.py"))


def test_bots_import_only_the_standard_library_and_public_engine_packages() -> None:
    stdlib = set(sys.stdlib_module_names) | {"__future__"}
    engine_packages = set(games.engines.KINDS.values())
    for path in _bot_modules():
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    assert a.name.split(".")[0] in stdlib, (path.name, a.name)
            elif isinstance(node, ast.ImportFrom):
                if node.level:  # games.bots itself
                    continue
                mod = node.module or ""
                if mod.split(".")[0] in stdlib:
                    continue
                if mod == "games.engines":
                    # The registry: an engine by kind, and the list of kinds (the bots' own
                    # registry is derived from it) -- names, no state.
                    allowed = {"engine_for", "kinds"}
                    assert {a.name for a in node.names} <= allowed, (path.name, mod)
                    continue
                # An engine: its public package only, names from its __all__ only -- never
                # games.engines.crisp.rules / .state / .views internals.
                assert mod in engine_packages, (path.name, mod)
                public = set(importlib.import_module(mod).__all__)
                names = {a.name for a in node.names}
                assert names <= public, (path.name, names - public)
                if "GameState" in names:
                    assert path.name in STATE_HOLDERS, path.name


def test_no_bot_module_reads_a_states_secrets() -> None:
    for path in _bot_modules():
        if path.name == "arena.py":
            continue
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute):
                assert node.attr not in SECRET_ATTRS, (path.name, node.lineno, node.attr)


def test_the_search_and_the_memory_know_no_game() -> None:
    """ismcts.py and base.py import no engine at all; observation.py only the registry (for
    the engine's own event_view, to check redaction)."""
    for name, allowed in (
        ("ismcts.py", set()),
        ("base.py", set()),
        ("observation.py", {"games.engines"}),
    ):
        tree = ast.parse((BOTS_DIR / name).read_text())
        mods = {
            n.module
            for n in ast.walk(tree)
            if isinstance(n, ast.ImportFrom)
            and not n.level
            and n.module
            and n.module.startswith("games")
        }
        assert mods <= allowed, (name, mods)


# -- 4. behaviour: what the seat never saw cannot change what it does -------------------------
def _twin_decks(seed: str) -> tuple[list[str], list[str]]:
    """Two decks that deal seat 0 the same cards and the same first draw, but differ in seat 1's
    hand and deep in the deck."""
    deck = engine.rules.deck_for(seed, 1)  # tests may use internals; bots may not
    twin = deck[:]
    # With 2 seats and dealer d, seat 1 gets cards at i with (d + 1 + i) % 2 == 1.
    st, _ = new_game(seats=2, settings=Settings(), seed=seed, now=0, decks=[deck])
    ones = [i for i in range(6) if (st.round.dealer + 1 + i) % 2 == 1]
    for k, i in enumerate(ones):
        twin[i], twin[40 + k] = twin[40 + k], twin[i]
    return deck, twin


@pytest.mark.parametrize("level", LEVELS)
def test_a_bot_cannot_tell_apart_worlds_its_seat_saw_the_same(level: str) -> None:
    seed = "twins"
    decisions = []
    memories = []
    for deck in _twin_decks(seed):
        # Seat 1 never acts: its turns time out (a timeout discards the deck's top card, which
        # is the same in both worlds).
        cfg = Settings(draw_seconds=30)
        st, ev = new_game(seats=2, settings=cfg, seed=seed, now=0, decks=[deck])
        m = Memory("crisp", 0, salt="s")
        m.observe(view=view(st, 0, 0), events=[event_view(e, 0) for e in ev])
        bot = bot_for("crisp", level, budget=Budget(10_000, max_iterations=120))
        rng = random.Random(7)
        now = 0
        trace = []
        for _ in range(80):  # the look, waiting, seat 0's turns and windows
            if st.round.reveal is not None:
                break
            wire = ask(bot, m, now, rng)
            trace.append(wire)
            if wire is None:
                now += 1000
                st, ev = engine.advance(st, now)
            else:
                st, ev = apply(st, 0, Action.from_wire(wire), now)
            m.observe(view=view(st, 0, now), events=[event_view(e, 0) for e in ev])
        decisions.append(trace)
        memories.append(m.to_json())
    assert decisions[0] == decisions[1]
    assert memories[0] == memories[1]
    assert any(
        d is not None and d["type"] in ("swap", "discard", "jack", "queen", "king")
        for d in decisions[0]
    ), decisions[0]
