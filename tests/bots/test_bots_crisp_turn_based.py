"""Computer players in turn-based Crisp (R28): they answer "Call crisp?" from their fair
knowledge (the same rule as in a live window), every level, never illegally, never by the
clock; the determiniser's samples still show the seat exactly its own view."""

from __future__ import annotations

import json
import random

import pytest

from games.bots import Budget, Memory, ask, bot_for
from games.bots.arena import play_game
from games.bots.crisp import Determiniser, HardBot, MediumBot, track
from games.engines.crisp import (
    Action,
    Settings,
    advance,
    apply,
    event_view,
    new_game,
    pending_deadlines,
    view,
)


def tb(**kw) -> Settings:
    return Settings(pace="turn_based", turn_seconds=86400, **kw)


def play(bots, seed: str, cfg: Settings, think_ms: int = 500, check_samples: bool = False):
    """A whole game through the seats' redacted payloads only; returns every event."""
    n = len(bots)
    state, events = new_game(seats=n, settings=cfg, seed=seed, now=0)
    memories = [Memory("crisp", i, salt=f"{seed}:{i}") for i in range(n)]
    log = list(events)
    now = 0
    rng = random.Random(seed)

    def feed(evs):
        for i, m in enumerate(memories):
            m.observe(view=view(state, i, now), events=[event_view(e, i) for e in evs])

    feed(events)
    for _ in range(20_000):
        if state.status != "playing":
            break
        for i in range(n):
            if check_samples and state.round.turn is not None and state.round.turn.seat == i:
                det = Determiniser(memories[i], track(memories[i]))
                mine = json.dumps(view(state, i, now)["you"])
                for _ in range(3):
                    sample = det.sample(rng)
                    assert json.dumps(view(sample, i, now)["you"]) == mine
            wire = ask(bots[i], memories[i], now, rng)
            if wire is not None:
                state, events = apply(state, i, Action.from_wire(wire), now)
                break
        else:
            now = max(now, pending_deadlines(state)[0].at)
            state, events = advance(state, now)
            log += events
            feed(events)
            continue
        now += think_ms
        log += events
        feed(events)
    assert state.status == "finished"
    return state, log


@pytest.mark.parametrize("level", ["random", "easy", "medium"])
def test_bots_play_turn_based_games_and_answer_every_call_step(level):
    rng = random.Random(level)
    asked = answered_yes = 0
    for g in range(12):
        seats = rng.choice((2, 3, 4))
        cfg = tb(target_score=30, pile_draw=g % 2 == 0)
        _, log = play([bot_for("crisp", level) for _ in range(seats)], f"tb-{level}-{g}", cfg)
        types = [e.type for e in log]
        assert "window_closed" not in types
        # The bots answer: the clock never does (a timed-out pass would say so).
        assert not [e for e in log if e.type == "pass" and e.data["timeout"]]
        assert not [e for e in log if e.type == "timeout"]
        asked += types.count("call_ready")
        answered_yes += types.count("call")
        assert types.count("call_ready") == types.count("call") + types.count("pass")
    assert asked > 30 and answered_yes > 3


def test_medium_calls_in_the_step_as_it_would_in_a_window():
    """Medium's answer is ``medium_call`` on its knowledge: it both calls and passes."""
    called = passed = 0
    for g in range(8):
        cfg = tb(target_score=40)
        _, log = play([MediumBot(), MediumBot()], f"med-{g}", cfg)
        called += sum(e.type == "call" for e in log)
        passed += sum(e.type == "pass" for e in log)
    assert called and passed


def test_hard_plays_turn_based_games_and_its_samples_fit_its_view():
    # An iteration cap with CPU to spare: the same games, and count of searches, on every run.
    hard = HardBot(budget=Budget(10_000, max_iterations=8))
    for g in range(2):
        _, log = play(
            [hard, bot_for("crisp", "medium")],
            f"hard-tb-{g}",
            tb(target_score=30, pile_draw=g == 1),
            check_samples=True,
        )
        assert "call_ready" in [e.type for e in log]
    assert hard.stats.searches > 10
    # What one decision costs over whole games (its CPU, mean and max) is measured in
    # bench/bots_search.py, not asserted here: a thread's CPU over a whole game includes a
    # garbage collection or a warm-up now and then, and under a CPU hog the bound failed
    # (0.38 s against 0.25). That the search stops at its budget is proven on the search's
    # own toy game (tests/bots/test_bots_budget.py).


def test_the_arena_plays_turn_based_games_of_every_level():
    rng = random.Random(5)
    for g in range(10):
        levels = [rng.choice(("random", "easy", "medium")) for _ in range(rng.choice((2, 3, 5)))]
        rec = play_game(
            "crisp",
            [bot_for("crisp", lv) for lv in levels],
            seed=f"arena-tb{g}",
            settings=tb(target_score=30),
        )
        assert rec.winners
