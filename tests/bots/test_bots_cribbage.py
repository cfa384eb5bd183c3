"""Cribbage's bots: the determiniser never contradicts what the seat knows, the bots never
submit an illegal action, and they are fair by construction.

Property (random mid-game states of real bot games, with and without a time per move, with a
seat that sometimes lets its clock run out so that timeouts happen): for both seats, every
sampled state

* renders the same ``view(sample, seat, t)`` as the true state at ``now`` and just before the
  next deadline (not *at* it: a timeout plays a hidden card, so what follows it depends on
  that card -- which the seat learns only when it happens), so the same actions are legal;
* agrees with everything the knowledge claims, and that knowledge is true: the seat's own six
  and crib cards, the opponent's played cards, the starter, and the cards the opponent was
  proved not to hold (go, a count it could not continue, a timeout) are really not in its hand;
* holds the 52 cards exactly once, dealt as the rules deal (C4: pone first, alternately).

Checked for seats that saw the whole hand and for a seat that sat in mid-hand (views only).
"""

from __future__ import annotations

import inspect
import random
from collections.abc import Iterator
from itertools import combinations
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st_

from games.bots import LEVELS, Bot, Budget, Memory, ObservationError, bot_for
from games.bots.arena import play_game
from games.bots.cribbage import BOTS, Determiniser, MediumBot, discard_values, track
from games.engines import cribbage as engine
from games.engines.cribbage import (
    FULL_DECK,
    Action,
    GameState,
    Settings,
    advance,
    apply,
    event_view,
    legal_actions,
    new_game,
    pending_deadlines,
    view,
)
from tests.referee import referee_states

KIND = "cribbage"


class _Sleepy(Bot):
    """Plays like ``inner`` but, in some hands, never moves: its clock runs out (timeouts)."""

    kind = KIND
    level = "sleepy"

    def __init__(self, inner: Bot, salt: int) -> None:
        super().__init__()
        self.inner = inner
        self.salt = salt

    def choose(self, memory: Memory, now: int, rng: random.Random) -> dict[str, Any] | None:
        view = memory.view
        assert view is not None
        if view["settings"]["move_seconds"] is not None and (view["round"] + self.salt) % 3 == 0:
            return None
        return self.inner.decide(memory, now, rng)


def _states(
    bots: list[Bot], *, seed: str, cfg: Settings, think_ms: int = 300
) -> Iterator[tuple[GameState, list[Memory], int]]:
    """The tests' one referee (tests/referee.py, playing as ``games.bots.arena`` does): yields
    the true state, every memory and ``now`` after every change."""
    return referee_states(KIND, bots, seed=seed, settings=cfg, think_ms=think_ms, max_steps=5000)


def _check_seat(state: GameState, memory: Memory, now: int, rng: random.Random) -> None:
    me = memory.seat
    opp = 1 - me
    r = state.round
    k = track(memory)
    # The knowledge is true.
    assert sorted(k.six) == sorted([*r.hands[me], *r.played[me], *(r.discards[me] or [])]), (
        "own six"
    )
    assert k.opp_played == r.played[opp]
    assert k.starter == r.starter
    assert not (set(r.hands[opp]) & k.opp_excluded), "proved absent, yet held"
    if k.opp_discards is not None:
        assert sorted(k.opp_discards) == sorted(r.discards[opp] or [])
    det = Determiniser(memory, k)
    dl = pending_deadlines(state)
    instants = [now] + ([max(now, dl[0].at - 1)] if dl else [])
    truth = [view(state, me, t) for t in instants]
    truth_legal = [str(a) for a in legal_actions(state, me, now)]
    for _ in range(3):
        sample = det.sample(rng)
        assert sample.seed != state.seed
        sr = sample.round
        assert sorted(sr.deck) == sorted(FULL_DECK)
        pone = 1 - sr.dealer
        six = {
            pone: sorted(sr.deck[0:12:2]),
            sr.dealer: sorted(sr.deck[1:12:2]),
        }
        for s in (0, 1):
            assert six[s] == sorted([*sr.hands[s], *sr.played[s], *(sr.discards[s] or [])])
        if sr.starter is not None:
            assert sr.deck[12] == sr.starter
        assert not (set(sr.hands[opp]) & k.opp_excluded)
        if k.opp_lay_timeout and sr.discards[opp] is not None and sr.kept[opp] is not None:
            order = {c: i for i, c in enumerate(FULL_DECK)}
            assert min(order[c] for c in sr.discards[opp]) > max(order[c] for c in sr.kept[opp])
        for t, tv in zip(instants, truth, strict=True):
            assert view(sample, me, t) == tv
        assert [str(a) for a in legal_actions(sample, me, now)] == truth_legal


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st_.integers(0, 10**6),
    move_seconds=st_.sampled_from([None, 30]),
    levels=st_.lists(st_.sampled_from(["random", "easy", "medium"]), min_size=2, max_size=2),
)
def test_every_sample_shows_the_seat_the_table_it_saw(
    seed: int, move_seconds: int | None, levels: list[str]
) -> None:
    cfg = Settings(move_seconds=move_seconds, target_score=61)
    bots: list[Bot] = [bot_for(KIND, levels[0]), _Sleepy(bot_for(KIND, levels[1]), seed)]
    rng = random.Random(seed)
    sit_seat = seed % 2
    sitter: Memory | None = None
    checked = 0
    for step, (state, memories, now) in enumerate(_states(bots, seed=f"det{seed}", cfg=cfg)):
        if state.status != "playing":
            break
        if sitter is not None:
            sitter.observe(view=memories[sit_seat].view)
        if step == 9:
            sitter = Memory(KIND, sit_seat)  # sits in here: knows only what views show
            sitter.observe(view=memories[sit_seat].view)
        if step % 3:
            continue
        for m in memories:
            _check_seat(state, m, now, rng)
        if sitter is not None:
            det = Determiniser(sitter)
            tv = view(state, sit_seat, now)
            for _ in range(2):
                assert view(det.sample(rng), sit_seat, now) == tv
        checked += 1
        if checked >= 25:
            break
    assert checked >= 5


def test_a_go_proves_what_the_opponent_does_not_hold() -> None:
    """C8: a "go" at count c means no card worth 31 - c or less; the determiniser deals none."""
    rng = random.Random(3)
    for g in range(40):
        for state, memories, _now in _states(
            [MediumBot(), MediumBot()], seed=f"go{g}", cfg=Settings(target_score=31)
        ):
            r = state.round
            for m in memories:
                opp = 1 - m.seat
                k = track(m)
                if state.status == "playing" and r.phase == "play" and r.go[opp] and r.hands[opp]:
                    assert k.opp_excluded
                    sample = Determiniser(m, k).sample(rng)
                    assert all(r.count + engine.value(c) > 31 for c in sample.round.hands[opp])
                    return
    raise AssertionError("no go with cards left in 40 games")


# -- legal play over many games -------------------------------------------------------------
@pytest.mark.parametrize(
    ("pair", "games"),
    [(("random", "easy"), 80), (("easy", "medium"), 80), (("medium", "medium"), 40)],
)
def test_bots_never_submit_an_illegal_action(pair: tuple[str, str], games: int) -> None:
    """play_game raises on any refused action; 80 short games per pairing, 40 of medium
    against itself (200 here, plus the hard ones below: medium plays 120 of them, and its
    lay-away, a valuation of every discard, is most of their CPU), seats swapped every
    game, half of them with a clock."""
    for g in range(games):
        a, b = (bot_for(KIND, pair[0]), bot_for(KIND, pair[1]))
        bots = [a, b] if g % 2 else [b, a]
        cfg = Settings(move_seconds=30 if g % 4 < 2 else None, target_score=31)
        rec = play_game(KIND, bots, seed=f"legal-{pair}-{g}", settings=cfg)
        assert rec.winners and max(rec.scores) == 31


def test_hard_plays_whole_games_legally_on_a_small_budget() -> None:
    budget = Budget(cpu_ms=15.0)
    for g in range(4):
        bots = [bot_for(KIND, "hard", budget=budget), bot_for(KIND, "medium")]
        if g % 2:
            bots.reverse()
        rec = play_game(KIND, bots, seed=f"hard-{g}", settings=Settings(target_score=31))
        assert rec.winners
        hard = rec.seats[0 if g % 2 == 0 else 1]
        assert hard.actions > 0
        # What one decision costs over whole games (its CPU, mean and max) is measured in
        # bench/bots_search.py, not asserted here: a thread's CPU over a whole game includes a
        # garbage collection or a warm-up now and then, and under a CPU hog the bound failed
        # (0.38 s against 0.25). That the search stops at its budget is proven on the search's
        # own toy game (tests/bots/test_bots_budget.py).


def test_hard_search_respects_the_iteration_cap_and_returns_a_legal_move() -> None:
    st, ev = new_game(seats=2, settings=Settings(), seed="cap", now=0)
    m = Memory(KIND, 0)
    m.observe(view=view(st, 0, 0), events=[event_view(e, 0) for e in ev])
    bot = bot_for(KIND, "hard", budget=Budget(10_000, max_iterations=20))
    wire = bot.decide(m.observation(), 0, random.Random(1))
    assert Action.from_wire(wire) in legal_actions(st, 0, 0)
    # The lay-away's pegging estimate samples at most that many opponent hands.
    assert bot.stats.iterations == 20  # type: ignore[attr-defined]


# -- fairness: the shape of the inputs --------------------------------------------------------
def test_memory_refuses_what_the_seat_was_not_sent() -> None:
    st, ev = new_game(seats=2, settings=Settings(), seed="fair", now=0)
    m = Memory(KIND, 0)
    m.observe(view=view(st, 0, 0), events=[event_view(e, 0) for e in ev])
    before = m.to_json()
    st1, lay = apply(st, 1, legal_actions(st, 1, 0)[0], 0)
    for bad in (
        {"view": st1},
        {"view": st1.to_json()},
        {"view": view(st1, 1, 0)},  # the other seat's view: its hand
        {"view": view(st1, None, 0)},  # a spectator's: no 'you'
        {"events": lay},
        {"events": [lay[0].to_json()]},  # the full lay-away: the opponent's crib cards
        {"events": [event_view(lay[0], 1)]},  # the opponent's own copy of it
        {"events": [e.to_json() for e in ev]},  # round_dealt with the deck and both hands
    ):
        with pytest.raises(ObservationError):
            m.observe(**bad)  # type: ignore[arg-type]
        assert m.to_json() == before
    m.observe(view=view(st1, 0, 0), events=[event_view(e, 0) for e in lay])
    assert m.events[-1]["data"]["cards"] is None
    assert Memory.from_json(m.to_json()).to_json() == m.to_json()


@pytest.mark.parametrize("level", LEVELS)
def test_every_level_decides_through_the_checked_entry_point(level: str) -> None:
    cls = BOTS[level]
    assert cls.decide is Bot.decide
    assert list(inspect.signature(cls.choose).parameters) == ["self", "memory", "now", "rng"]
    st, ev = new_game(seats=2, settings=Settings(), seed="shape", now=0)
    bot = bot_for(KIND, level, budget=Budget(5))
    good = Memory(KIND, 0)
    good.observe(view=view(st, 0, 0), events=[event_view(e, 0) for e in ev])
    for wrong in (st, st.to_json(), view(st, 0, 0), good.to_json(), good):
        with pytest.raises(ObservationError):
            bot.decide(wrong, 0, random.Random(1))  # type: ignore[arg-type]
    wire = bot.decide(good.observation(), 0, random.Random(1))
    assert Action.from_wire(wire) in legal_actions(st, 0, 0)


def _twin_decks(seed: str) -> tuple[list[str], list[str]]:
    """Two decks that deal seat 0 the same six and the same starter, but differ in seat 1's six
    and in the stock."""
    deck = engine.rules.deck_for(seed, 1)  # tests may use internals; bots may not
    st, _ = new_game(seats=2, settings=Settings(), seed=seed, now=0, decks=[deck])
    theirs = [i for i in range(12) if (i % 2 == 0) == (st.round.dealer == 0)]
    twin = deck[:]
    for n, i in enumerate(theirs):
        twin[i], twin[20 + n] = twin[20 + n], twin[i]
    return deck, twin


@pytest.mark.parametrize("level", LEVELS)
def test_a_bot_cannot_tell_apart_worlds_its_seat_saw_the_same(level: str) -> None:
    """The opponent never moves (its clock runs out; a lay-away timeout and play timeouts reveal
    different cards in the two worlds only once they happen); until then seat 0's decisions are
    the same in both worlds."""
    seed = "twins"
    traces = []
    for deck in _twin_decks(seed):
        cfg = Settings(move_seconds=30)
        st, ev = new_game(seats=2, settings=cfg, seed=seed, now=0, decks=[deck])
        m = Memory(KIND, 0, salt="s")
        m.observe(view=view(st, 0, 0), events=[event_view(e, 0) for e in ev])
        bot = bot_for(KIND, level, budget=Budget(10_000, max_iterations=30))
        wire = bot.decide(m.observation(), 0, random.Random(7))
        traces.append(wire)
    assert traces[0] == traces[1]
    assert traces[0] is not None and traces[0]["type"] == "lay_away"


def _random_plays(seed: int) -> Iterator[tuple[GameState, str, GameState]]:
    """(state before, card played, state after) for every card of the play of a few random
    hands, both seats choosing uniformly among their legal cards."""
    rng = random.Random(seed)
    state, _ = engine.new_game(seats=2, settings=Settings(), seed=f"peg-{seed}", now=0)
    for _ in range(400):
        if state.status != "playing":
            return
        r = state.round
        if r.phase == "lay_away":
            for seat in (0, 1):
                if r.discards[seat] is None:
                    state, _ = apply(state, seat, rng.choice(legal_actions(state, seat, 0)), 0)
                    r = state.round
            continue
        if r.phase != "play" or r.turn is None:
            state, _ = advance(state, 10**9)
            continue
        action = rng.choice(legal_actions(state, r.turn, 0))
        before = state
        state, _ = apply(state, r.turn, action, 0)
        yield before, action.card, state


@pytest.mark.parametrize("seed", range(12))
def test_the_exact_play_solver_steps_as_the_engine_does(seed: int) -> None:
    """``peg_step`` (hard's copy of the play's order, for speed) pegs the same points and
    hands the turn to the same seat as the engine, card by card, over random hands; a hand
    the game ended in (121 reached mid-play) is not compared after the end."""
    from games.bots.cribbage import peg_position, peg_step

    steps = 0
    for state, card, after in _random_plays(seed):
        if after.status != "playing":
            break
        before = state.round
        pos = peg_position(before)
        nxt, pts = peg_step(pos, engine.rank(card))
        a = after.round
        same_hand = a.number == before.number
        pegged = [a.pegged[i] - before.pegged[i] for i in (0, 1)] if same_hand else None
        if same_hand and a.phase == "play":
            assert nxt == peg_position(a), (pos, card)
            assert list(pts) == pegged
        else:  # the play is over: the show (or the next hand) follows
            assert nxt is None
        steps += 1
    assert steps > 40


def _engine_peg_value(state: GameState) -> int:
    """Seat 0's pegging minus seat 1's from ``state`` to the end of the play, both seats
    perfect: minimax through the engine's own ``apply`` (slow, independent of ``peg_step``)."""
    r = state.round
    best = None
    for action in legal_actions(state, r.turn, 0):
        after, events = apply(state, r.turn, action, 0)
        a = after.round
        # The play's points are its "play" and "last_card" events (the show and the next deal
        # may follow in the same change once the last card is down).
        v = sum(
            (1 if e.data["seat"] == 0 else -1) * e.data["points"]
            for e in events
            if e.type in ("play", "last_card")
        )
        if a.number == r.number and a.phase == "play" and a.turn is not None:
            v += _engine_peg_value(after)
        if best is None or (v > best if r.turn == 0 else v < best):
            best = v
    assert best is not None
    return best


@pytest.mark.parametrize("seed", range(8))
def test_the_exact_play_solver_agrees_with_minimax_through_the_engine(seed: int) -> None:
    """``peg_value`` against the same minimax run through the engine, in positions of random
    hands with up to three cards left per seat (scores kept far from 121)."""
    from games.bots.cribbage import best_peg, peg_position, peg_value

    checked = 0
    for before, _, _ in _random_plays(seed):
        r = before.round
        if len(r.hands[0]) + len(r.hands[1]) > 6 or max(before.scores) > 80:
            continue
        pos = peg_position(r)
        assert peg_value(pos) == _engine_peg_value(before)
        card = best_peg(r.hands[r.turn], pos)
        apply(before, r.turn, Action.play(card), 0)  # the solver's card is legal: no raise
        checked += 1
    assert checked > 5


def test_the_solvers_pegging_in_ranks_scores_as_the_engine() -> None:
    """``peg_points`` (ranks only) equals the engine's ``score_pegging`` on random counts."""
    from games.bots.cribbage import peg_points

    rng = random.Random(7)
    checked = 0
    while checked < 3000:
        cards: list[str] = []
        for c in rng.sample(FULL_DECK, 8):
            if sum(engine.value(x) for x in cards) + engine.value(c) > 31:
                break
            cards.append(c)
            want = engine.score_pegging(cards).points
            assert peg_points(tuple(engine.rank(x) for x in cards)) == want, cards
            checked += 1


# -- hard's lay-away: exact hand and crib, pegging over sampled hands ------------------------
def _unseen(six: list[str]) -> list[str]:
    return [c for c in FULL_DECK if c not in six]


def test_the_lay_aways_rank_table_scores_as_the_engine() -> None:
    """``show_rank_points`` (fifteens, pairs, runs of five ranks) equals the engine's show
    without its suit items, on random fives and on the hands whose runs multiply."""
    from games.bots.cribbage import show_rank_points

    rng = random.Random(11)
    fives = [rng.sample(FULL_DECK, 5) for _ in range(3000)]
    fives += [
        ["3C", "3D", "4H", "5S", "5C"],  # a double double run
        ["3C", "3D", "3H", "4S", "5C"],  # a triple run
        ["5C", "5D", "5H", "JS", "5S"],  # 29 without its nobs
        ["9C", "TD", "JH", "QS", "KC"],  # a run of five
    ]
    for five in fives:
        sc = engine.score_hand(five[:4], five[4], is_crib=False)
        suits = sum(i.points for i in sc.items if i.kind in ("flush", "nobs"))
        ranks = tuple(sorted(engine.rank(c) for c in five))
        assert show_rank_points(ranks) == sc.total - suits, five


def test_the_exact_hand_is_the_engines_average_over_every_starter() -> None:
    from games.bots.cribbage import exact_hand, expected_hand

    rng = random.Random(12)
    keeps = [rng.sample(FULL_DECK, 4) for _ in range(40)]
    keeps += [["2H", "5H", "9H", "JH"], ["JC", "JD", "5S", "5C"]]  # a flush and Jacks
    for keep in keeps:
        seen = [*keep, *rng.sample([c for c in FULL_DECK if c not in keep], 2)]
        unseen = _unseen(seen)
        assert abs(exact_hand(keep, unseen) - expected_hand(keep, unseen)) < 1e-9, keep


def _brute_crib(discard: tuple[str, str], unseen: list[str]) -> float:
    """Every pair the opponent may lay away, every starter among the rest, by the engine."""
    total = n = 0
    for a, b in combinations(unseen, 2):
        for s in unseen:
            if s not in (a, b):
                total += engine.score_hand([*discard, a, b], s, is_crib=True).total
                n += 1
    return total / n


def test_the_exact_crib_is_the_average_over_every_opponent_discard_and_starter() -> None:
    """``exact_crib`` against brute force through ``score_hand``: small pools of unseen cards
    rich in one suit and in Jacks (flushes and nobs), and one real 46-card case."""
    from games.bots.cribbage import exact_crib

    rng = random.Random(13)
    cases: list[tuple[tuple[str, str], list[str]]] = []
    for _ in range(12):
        cards = rng.sample(FULL_DECK, 20)
        hearts = [c for c in FULL_DECK if c[1] == "H" and c not in cards]
        jacks = [c for c in FULL_DECK if c[0] == "J" and c not in cards]
        discard = (cards[0], cards[1])
        pool = sorted({*cards[2:], *hearts[:4], *jacks[:2]} - set(discard))
        cases.append((discard, pool))
    cases.append((("JH", "5H"), ["2H", "3H", "4H", "6H", "9H", "JC", "JS", "5C", "TD", "KS"]))
    six = ["JH", "5H", "5S", "TH", "2C", "KD"]
    cases.append((("JH", "5H"), _unseen(six)))
    for discard, pool in cases:
        assert abs(exact_crib(discard, pool) - _brute_crib(discard, pool)) < 1e-9, discard


def test_hard_keeps_the_four_that_peg_better_where_hand_and_crib_are_close() -> None:
    """Pone holding 2-2-2-6-6-9: by hand and crib alone (medium's rule, here exact) it lays
    away the sixes; the 2-2-6-6 it keeps by laying away 2-9 pegs about 1.6 points better,
    more than the 0.7 points of hand and crib it gives up -- hard lays away 2-9."""
    from games.bots.cribbage import HardBot, exact_discard_values

    six = ["2D", "2H", "2S", "6C", "6S", "9H"]
    unseen = _unseen(six)
    _, exact_best = max(exact_discard_values(six, unseen, dealer=False))
    assert exact_best == ("6C", "6S")
    medium = [max(discard_values(six, unseen, False, random.Random(s), 60))[1] for s in range(9)]
    assert medium.count(("6C", "6S")) > len(medium) / 2
    budget = Budget(10_000, max_iterations=200)
    for seed in range(3):
        hard = HardBot(budget)
        assert hard.best_lay_away(six, unseen, False, budget, random.Random(seed)) == (
            "2S",
            "9H",
        )
        assert hard.stats.overrides == 1


def test_every_lay_away_meets_the_same_sampled_opponent_hands() -> None:
    """Common random numbers: a lay-away's pegging estimate is the same whichever others are
    estimated beside it (the worlds do not depend on the candidates), and the cap holds."""
    from games.bots.cribbage import peg_estimates

    six = ["AS", "2H", "3H", "6H", "8S", "9S"]
    unseen = _unseen(six)
    budget = Budget(10_000, max_iterations=30)
    both, worlds = peg_estimates(
        six, [("2H", "3H"), ("6H", "8S")], unseen, True, budget, random.Random(5)
    )
    alone, _ = peg_estimates(six, [("6H", "8S")], unseen, True, budget, random.Random(5))
    assert worlds == 30
    assert both[("6H", "8S")] == alone[("6H", "8S")]
    assert both[("6H", "8S")] != both[("2H", "3H")]
