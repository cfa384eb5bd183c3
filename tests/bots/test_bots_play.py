"""Bots play whole games: never an illegal move, within their CPU budget, levels ordered.

The referee (``games.bots.arena``) submits every bot move through ``Action.from_wire`` and the
engine's ``apply``; an illegal one raises ``IllegalAction`` and fails the test.
"""

from __future__ import annotations

import random
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import pytest

from games.bots import Budget, Memory, ask, bot_for, ismcts
from games.bots.arena import play_game
from games.bots.crisp import HardBot
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


def _settings(rng: random.Random) -> Settings:
    return Settings(
        target_score=rng.choice((30, 50)),
        pile_draw=rng.random() < 0.5,
        draw_seconds=rng.choice((None, 30)),
    )


def test_hundreds_of_games_at_random_easy_and_medium_never_submit_an_illegal_action() -> None:
    rng = random.Random(2024)
    actions = 0
    for g in range(200):
        seats = rng.choice((2, 2, 2, 3, 4, 5))
        levels = [rng.choice(("random", "easy", "medium")) for _ in range(seats)]
        rec = play_game(
            "crisp",
            [bot_for("crisp", lv) for lv in levels],
            seed=f"play{g}",
            settings=_settings(rng),
            think_ms=rng.choice((0, 300, 2500)),
        )
        assert rec.winners and len(rec.scores) == seats
        actions += rec.actions
    assert actions > 8_000


def test_hard_games_are_legal_and_hard_searches_its_choices() -> None:
    rng = random.Random(7)
    searched = 0
    for g in range(5):
        seats = (2, 2, 3, 2, 4)[g]
        # An iteration cap with CPU to spare: the games, and so the count of searches, are
        # the same on every run (a CPU budget lets the machine's speed choose the moves).
        hard = HardBot(budget=Budget(10_000, max_iterations=8))
        others = [bot_for("crisp", rng.choice(("easy", "medium"))) for _ in range(seats - 1)]
        bots = [*others[: g % seats], hard, *others[g % seats :]]
        rec = play_game(
            "crisp", bots, seed=f"hard{g}", settings=Settings(target_score=30, pile_draw=g % 2 == 1)
        )
        assert rec.winners
        # Hard searches its calls and its moves with more than one option.
        searched += hard.stats.searches
        # What one decision costs over whole games (its CPU, mean and max) is measured in
        # bench/bots_search.py, not asserted here: a thread's CPU over a whole game includes a
        # garbage collection or a warm-up now and then, and under a CPU hog the bound failed
        # (0.38 s against 0.25). That the search stops at its budget is proven on the search's
        # own toy game (tests/bots/test_bots_budget.py); hard on a small real budget plays
        # legally in test_a_bot_sitting_in_mid_round_plays_on_from_the_public_view.
    assert searched > 20


def test_the_levels_are_ordered_in_a_short_match() -> None:
    """A quick check of the benchmark's ordering (bench/RESULTS.md has the real numbers):
    medium beats easy and easy beats random over 100 heads-up games each, played to 50 (the
    shortest end score a table may choose; to 100 the match cost 2.4 times the CPU). Won by
    the better level: 0.76 and 0.825 of the games to 50 (0.83 and 0.93 to 100), both well
    over the 0.6 asked."""
    for a, b in (("easy", "random"), ("medium", "easy")):
        wins = 0.0
        for g in range(100):
            bots = [bot_for("crisp", a), bot_for("crisp", b)]
            sa = g % 2
            if sa:
                bots.reverse()
            rec = play_game(
                "crisp", bots, seed=f"order:{a}:{g}", settings=Settings(target_score=50)
            )
            wins += (sa in rec.winners) / len(rec.winners)
        assert wins / 100 > 0.6, (a, b, wins)


def test_a_bot_can_live_in_storage_between_decisions() -> None:
    """A Celery task keeps the memory as JSON between decisions: same moves as keeping it live."""
    moves = []
    for stored in (False, True):
        st, ev = new_game(seats=2, settings=Settings(), seed="store", now=0)
        mems = [Memory("crisp", i) for i in range(2)]
        bot = bot_for("crisp", "medium")
        rng = random.Random(3)
        trace = []
        now = 0
        for _ in range(200):
            if st.status != "playing":
                break
            for i, m in enumerate(mems):
                m.observe(view=view(st, i, now), events=[event_view(e, i) for e in ev])
            if stored:
                mems = [Memory.from_json(m.to_json()) for m in mems]
            for i in (0, 1):
                wire = ask(bot, mems[i], now, rng)
                if wire is not None:
                    trace.append((i, wire))
                    st, ev = apply(st, i, Action.from_wire(wire), now)
                    now += 300
                    break
            else:
                now = max(now, pending_deadlines(st)[0].at)
                st, ev = advance(st, now)
        moves.append(trace)
    assert moves[0] == moves[1]
    assert len(moves[0]) > 20


def test_a_bot_sitting_in_mid_round_plays_on_from_the_public_view() -> None:
    """A seat taken over mid-round: the bot's memory starts at the view it is handed (no looks,
    no earlier events), and it plays the rest of the game legally."""
    st, ev = new_game(seats=3, settings=Settings(target_score=30), seed="sitin", now=0)
    bots = [bot_for("crisp", "medium") for _ in range(3)]
    mems = [Memory("crisp", i) for i in range(3)]
    rng = random.Random(5)
    now = 0
    for step in range(20_000):
        if st.status != "playing":
            break
        if step == 40:
            mems[1] = Memory("crisp", 1)  # the human left; the bot knows only what it sees now
            bots[1] = bot_for("crisp", "hard", budget=Budget(5))
        for i, m in enumerate(mems):
            m.observe(view=view(st, i, now), events=[event_view(e, i) for e in ev])
        for i in range(3):
            wire = ask(bots[i], mems[i], now, rng)
            if wire is not None:
                st, ev = apply(st, i, Action.from_wire(wire), now)
                now += 300
                break
        else:
            now = max(now, pending_deadlines(st)[0].at)
            st, ev = advance(st, now)
    assert st.status == "finished"


# -- the search is game-agnostic -------------------------------------------------------------
@dataclass
class _Guess:
    """A toy game with nothing Crisp about it: seat 0 has seen a card 0..9 and says "high"
    or "low"; it scores 1 when the word fits the card (>= 5 is high).  If the search finds that
    through ``SearchGame`` alone, it depends on no game."""

    card: int
    said: str | None = None


class _GuessGame:
    def __init__(self, card: int) -> None:
        self.card = card

    def sample(self, rng: random.Random) -> _Guess:
        return _Guess(self.card)  # seat 0 knows its card: every determinisation agrees

    def to_move(self, s: _Guess) -> int | None:
        return 0 if s.said is None else None

    def actions(self, s: _Guess) -> Sequence[Hashable]:
        return ("high", "low")

    def apply_action(self, s: _Guess, action: Hashable) -> Hashable:
        s.said = str(action)
        return None

    def rollout_action(self, s: _Guess, rng: random.Random) -> Hashable:
        return rng.choice(("high", "low"))

    def rewards(self, s: _Guess) -> Sequence[float]:
        right = (s.said == "high") == (s.card >= 5)
        return (1.0 if right else 0.0, 0.0 if right else 1.0)


@pytest.mark.parametrize("paired", [True, False])
def test_the_search_runs_on_any_game_through_the_protocol(paired: bool) -> None:
    for card, want in ((8, "high"), (2, "low")):
        res = ismcts.search(
            _GuessGame(card), 0, Budget(50, max_iterations=40), random.Random(1), paired_root=paired
        )
        assert res.action == want
        assert res.iterations == 40
