"""What distinguishes the levels, checked directly (the benchmark measures the strength)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from support import crisp_states

import games.bots
from games.bots import GAMES, LEVELS, Budget, bot_for, game_for
from games.bots.base import EasyLevel, HardLevel, MediumLevel, RandomLevel
from games.bots.crisp import (
    CALL,
    PASS,
    CrispSearch,
    EasyBot,
    MediumBot,
    medium_call,
    medium_pick,
    track,
)
from games.bots.ismcts import EngineSearch
from games.engines import KINDS
from games.engines.crisp import Settings


def test_every_level_of_every_game_is_registered() -> None:
    for kind in GAMES:
        for level in LEVELS:
            bot = bot_for(kind, level)
            assert bot.kind == kind and bot.level == level
        assert set(game_for(kind).BOTS) == set(LEVELS)
    with pytest.raises(ValueError, match="unknown level"):
        bot_for("crisp", "grandmaster")
    with pytest.raises(KeyError):
        bot_for("chess", "easy")
    with pytest.raises(ValueError):
        Budget(0)


def test_the_bots_registry_is_the_engine_registry() -> None:
    """Issue 23: no second list of kinds -- every kind of the engine registry that has a bot
    module (``games/bots/<kind>.py``) is registered, and nothing else."""
    here = Path(games.bots.__file__).parent
    assert list(GAMES) == [k for k in KINDS if (here / f"{k}.py").exists()]
    assert len(GAMES) == 3  # every game has bots today


def test_every_game_uses_the_one_frame_and_the_one_search() -> None:
    """Issue 23: a game's levels are the shared level classes plus its knowledge (none of them
    takes a decision in its own ``choose``/``decide``), and its hard level searches through the
    engine adapter (its ``SearchGame`` is an ``ismcts.EngineSearch``)."""
    shared = {"random": RandomLevel, "easy": EasyLevel, "medium": MediumLevel, "hard": HardLevel}
    for kind in GAMES:
        module = game_for(kind)
        for level, cls in module.BOTS.items():
            assert issubclass(cls, shared[level]), (kind, level)
            for klass in cls.__mro__:
                if klass.__module__ == module.__name__:
                    assert "choose" not in vars(klass) and "decide" not in vars(klass), klass
        searches = [
            v
            for v in vars(module).values()
            if isinstance(v, type) and v.__module__ == module.__name__ and hasattr(v, "mover")
        ]
        assert searches and all(issubclass(v, EngineSearch) for v in searches), (kind, searches)
    with pytest.raises(ValueError):
        Budget(10, max_iterations=0)


def test_easy_forgets_some_looks_and_medium_none() -> None:
    """Easy keeps each private sight with probability 1/2, stably; medium keeps them all."""
    bots = [MediumBot(), MediumBot(), MediumBot()]
    forgotten = kept = 0
    for state, memories, _now in crisp_states(bots, seed="forget", settings=Settings()):
        if state.round.number > 3 or state.status != "playing":
            break
        for m in memories:
            easy = track(m, EasyBot.recall)
            assert track(m, EasyBot.recall) == easy  # the same things, every time
            full = track(m)
            assert full.forgotten == 0
            known_easy = sum(c is not None for c in easy.slots[m.seat])
            known_full = sum(c is not None for c in full.slots[m.seat])
            assert known_easy <= known_full
            forgotten += known_full - known_easy
            kept += known_easy
    assert forgotten > 0 and kept > 0


def test_medium_calls_on_a_clearly_low_hand_and_not_on_a_high_one() -> None:
    seen = {True: 0, False: 0}
    bots = [MediumBot(), MediumBot()]
    for state, memories, _now in crisp_states(bots, seed="calls", settings=Settings()):
        if state.status != "playing" or state.round.number > 6:
            break
        for m in memories:
            if "call" not in m.view["you"]["can"]:
                continue
            k = track(m)
            mine = state.round.hands[m.seat]
            if all(c is not None for c in k.slots[m.seat]):
                total = sum(min(10, "A23456789TJQK".index(c[0]) + 1) for c in mine)
                if total <= 4:
                    assert medium_call(k)
                    seen[True] += 1
                if total >= 20:
                    assert not medium_call(k)
                    seen[False] += 1
    assert seen[False] > 0


def test_hard_respects_a_fixed_iteration_budget_and_explains_itself() -> None:
    bot = bot_for("crisp", "hard", budget=Budget(10_000, max_iterations=30))
    others = bot_for("crisp", "medium")
    rng = random.Random(1)
    for state, memories, now in crisp_states([bot, others], seed="explain", settings=Settings()):
        if bot.stats.searches >= 3 or state.status != "playing":
            break
        bot.decide(memories[0].observation(), now, rng)
        if bot.last is not None:
            assert bot.last.iterations <= 30
            assert set(bot.last.values) == set(bot.last.visits)
    assert bot.stats.searches >= 1


def test_hards_default_policy_is_the_medium_level_at_the_root() -> None:
    """Hard's play-outs model every seat as the medium level (``CrispSearch.rollout_action``
    re-implements ``medium_call``/``medium_pick`` on the search's per-seat flags, for speed).
    Where the search's state is the seat's own knowledge -- the root, when the seat knows no
    other seat's card -- the two must agree on every decision."""
    bots = [MediumBot(), MediumBot(), MediumBot()]
    rng = random.Random(5)
    compared = {"call": 0, "pick": 0}
    for state, memories, now in crisp_states(
        bots, seed="policy", settings=Settings(pile_draw=True)
    ):
        if state.status != "playing" or state.round.number > 8:
            break
        for m in memories:
            can = m.view["you"]["can"]
            if not can or "look" in can:
                continue
            k = track(m)
            if any(c is not None for j, h in enumerate(k.slots) if j != m.seat for c in h):
                continue
            game = CrispSearch(m, k, now)
            s = game.sample(rng)
            if game.to_move(s) != m.seat:
                continue
            got = game.rollout_action(s, rng)
            if s.window is not None:
                assert got == (CALL if medium_call(k) else PASS), (m.seat, k)
                compared["call"] += 1
            else:
                legal = [a for a in game.actions(s)]
                if len(legal) > 1:
                    assert got == medium_pick(k, m.view, legal), (m.seat, k, legal)
                    compared["pick"] += 1
    assert compared["call"] > 20 and compared["pick"] > 20, compared
