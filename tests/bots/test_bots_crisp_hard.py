"""Crisp hard searches its moves (issue 11): what keeps that search honest.

Hard searches every decision with more than one option, medium's choice as the prior, and a
move search must not learn to steer the simulated opponents (medium's rules, which read public
signals) instead of improving its own hand: the others' call rule reads this seat's record
frozen at the decision, and another seat's window still open at the decision counts as passed.
Each test here fails when the part it guards is taken out (checked by hand when written).
"""

from __future__ import annotations

import random
from collections.abc import Iterator

from support import crisp_states

from games.bots import Budget, Memory
from games.bots.crisp import (
    CrispSearch,
    HardBot,
    Knowledge,
    MediumBot,
    medium_pick,
    track,
)
from games.engines.crisp import Action, Settings


def _turn_decisions(seed: str, seat: int = 0) -> Iterator[tuple[Memory, Knowledge, int]]:
    """Decisions of ``seat`` on its own turn with more than one move (medium vs medium)."""
    for state, memories, now in crisp_states(
        [MediumBot(), MediumBot()], seed=seed, settings=Settings(pile_draw=True)
    ):
        if state.status != "playing":
            return
        m = memories[seat]
        can = m.view["you"]["can"]
        if not can or "look" in can or "call" in can:
            continue
        t = m.view.get("turn")
        if t is None or t["seat"] != seat:
            continue
        yield m, track(m), now


def _moves(game: CrispSearch, s: object) -> list[Action]:
    return [a for a in game.actions(s) if isinstance(a, Action)]  # type: ignore[arg-type]


def test_hard_searches_its_moves_by_default() -> None:
    """Every move decision with more than one option is a search over the moves themselves."""
    assert HardBot.search_picks
    bot = HardBot(budget=Budget(10_000, max_iterations=4))
    rng = random.Random(3)
    searched = 0
    for m, _k, now in _turn_decisions("moves"):
        if searched >= 12:
            break
        before = bot.stats.searches
        bot.decide(m.observation(), now, rng)
        if bot.stats.searches > before:
            assert bot.last is not None
            assert all(isinstance(a, Action) for a in bot.last.visits), bot.last
            searched += 1
    assert searched >= 12


def test_hard_overrides_medium_on_some_moves_and_only_with_legal_ones() -> None:
    """With a few dozen worlds per decision the search does replace medium's move somewhere
    (the point of searching them), always by one of the legal moves."""
    bot = HardBot(budget=Budget(10_000, max_iterations=40))
    rng = random.Random(4)
    decisions = 0
    for g in range(8):
        for m, _k, now in _turn_decisions(f"override{g}"):
            if decisions >= 200 or bot.stats.overrides >= 3:
                break
            wire = bot.decide(m.observation(), now, rng)
            assert wire is not None
            assert Action.from_wire(wire).type not in ("call", "look")
            decisions += 1
    assert bot.stats.overrides >= 3, (decisions, bot.stats)


def test_a_move_search_too_small_to_tell_moves_apart_plays_mediums_move() -> None:
    """One sampled world cannot show a move better by a standard error: medium's move stands
    (the prior), rather than whichever move that one world happened to favour."""
    bot = HardBot(budget=Budget(10_000, max_iterations=1))
    medium = MediumBot()
    rng = random.Random(5)
    compared = 0
    for g in range(6):
        for m, _k, now in _turn_decisions(f"prior{g}"):
            want = medium.decide(m.observation(), now, random.Random(0))
            got = bot.decide(m.observation(), now, rng)
            assert got == want, (m.view, got, want)
            compared += 1
    assert compared >= 40 and bot.stats.searches >= 20, (compared, bot.stats)


def test_the_opponents_call_reads_this_seats_record_frozen_at_the_decision() -> None:
    """In a move search the simulated opponent's call rule sees this seat's public swaps as
    they were at the decision: its call is what it would be with the record restored, whatever
    the searched move did to it -- and that differs from reading the live record in some
    worlds (else the test would prove nothing)."""
    checked = differs = 0
    for g in range(6):
        for m, k, now in _turn_decisions(f"frozen{g}"):
            if checked >= 100 and differs >= 3:
                break
            frozen = CrispSearch(m, k, now, frozen_record=True)
            live = CrispSearch(m, k, now)
            seed = random.Random(f"{g}:{now}").getrandbits(32)
            sf, sl = frozen.sample(random.Random(seed)), live.sample(random.Random(seed))
            if frozen.to_move(sf) != m.seat or live.to_move(sl) != m.seat:
                continue
            legal = _moves(frozen, sf)
            if len(legal) < 2:
                continue
            move = medium_pick(k, m.view, legal)
            at_decision = ([row[:] for row in sl.plain], [row[:] for row in sl.kept])
            frozen.apply_action(sf, move)
            live.apply_action(sl, move)
            r = random.Random(seed)
            r2 = random.Random(seed)
            while True:
                who, who2 = frozen.to_move(sf), live.to_move(sl)
                assert who == who2
                if who is None or (who != m.seat and sf.window is not None):
                    break
                a = frozen.rollout_action(sf, r)
                assert live.rollout_action(sl, r2) == a  # identical worlds up to here
                frozen.apply_action(sf, a)
                live.apply_action(sl, a)
            if who is None:
                continue
            got = frozen.rollout_action(sf, r)
            reads_live = live.rollout_action(sl, r2)
            sl.plain[m.seat], sl.kept[m.seat] = at_decision[0][m.seat], at_decision[1][m.seat]
            assert got == live.rollout_action(sl, r2)
            checked += 1
            differs += got != reads_live
    assert checked >= 100 and differs >= 3, (checked, differs)


def test_another_seats_open_window_counts_as_passed() -> None:
    """The other seat's window, still open while this seat starts its turn, was let pass when
    that turn ended: the search does not re-decide it after this seat's first move."""
    seen = 0
    for g in range(6):
        for m, k, now in _turn_decisions(f"window{g}"):
            open_ = [w for w in m.view["windows"] if w["seat"] != m.seat]
            if not open_:
                continue
            game = CrispSearch(m, k, now)
            rng = random.Random(now)
            s = game.sample(rng)
            assert game.to_move(s) == m.seat
            opened = {sw.turn_no for sw in s.state.round.windows if sw.seat != m.seat}
            if not opened:  # it closed at ``now`` (the referee had not advanced the table)
                continue
            game.apply_action(s, medium_pick(k, m.view, _moves(game, s)))
            while (who := game.to_move(s)) is not None:
                if who != m.seat and s.window is not None:
                    assert s.window not in opened, (s.window, opened)
                game.apply_action(s, game.rollout_action(s, rng))
            seen += 1
    assert seen >= 20, seen
