"""Triple Crown's bots: the determiniser never contradicts what the seat knows (nor knows more
about the others' roles than the seat), the bots never submit an illegal action, and they are
fair by construction.

Property (random mid-game states of real bot games, with and without a time per move, with a
seat that sometimes lets its clock run out so that timeouts happen): for every seat, every
sampled state

* renders the same ``view(sample, seat, t)`` as the true state at ``now`` and just before the
  next deadline (not *at* it: a timeout plays a hidden card), so the same actions are legal;
* agrees with the knowledge, and that knowledge is true: no seat holds a card of a suit it
  showed void in, nor one a timeout proved it does not hold; in a Crown hand A♠ and 2♦ lie in
  different hands, in a Double Stakes hand both lie with the announced seat until played;
* holds the 52 cards exactly once (hands and played cards), and its roles follow from its deal.

Checked for seats that saw the whole hand and for a seat that sat in mid-hand (views only).
"""

from __future__ import annotations

import inspect
import random
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st_

from games.bots import LEVELS, Bot, Budget, Memory, ObservationError, bot_for
from games.bots.arena import play_game
from games.bots.triple_crown import BOTS, Determiniser, crown_beliefs, track
from games.engines import triple_crown as engine
from games.engines.triple_crown import (
    FULL_DECK,
    Action,
    GameState,
    Settings,
    apply,
    event_view,
    legal_actions,
    new_game,
    pending_deadlines,
    roles_for,
    view,
)
from tests.referee import referee_states

KIND = "triple_crown"


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
        if view["settings"]["move_seconds"] is not None and (view["round"] + self.salt) % 2 == 0:
            return None
        return self.inner.decide(memory, now, rng)


def _states(
    bots: list[Bot], *, seed: str, cfg: Settings, think_ms: int = 300
) -> Iterator[tuple[GameState, list[Memory], int]]:
    """The tests' one referee (tests/referee.py, playing as ``games.bots.arena`` does): yields
    the true state, every memory and ``now`` after every change."""
    return referee_states(KIND, bots, seed=seed, settings=cfg, think_ms=think_ms, max_steps=5000)


def _played(h: Any) -> list[list[str]]:
    out: list[list[str]] = [[] for _ in range(4)]
    for t in [*(t["cards"] for t in h.tricks), h.trick]:
        for s, c in t:
            out[s].append(c)
    return out


def _check_seat(state: GameState, memory: Memory, now: int, rng: random.Random) -> None:
    me = memory.seat
    h = state.round
    k = track(memory)
    # The knowledge is true.
    assert k.hand == h.hands[me]
    assert k.role == h.roles[me]
    for j in range(4):
        held = set(h.hands[j])
        assert not any(c[1] in k.voids[j] for c in held), ("void", j)
        if j != me:
            assert not (held & k.excluded[j]), ("excluded", j)
    det = Determiniser(memory, k)
    dl = pending_deadlines(state)
    instants = [now] + ([max(now, dl[0].at - 1)] if dl else [])
    truth = [view(state, me, t) for t in instants]
    truth_legal = [str(a) for a in legal_actions(state, me, now)]
    played = _played(h)
    for _ in range(3):
        sample = det.sample(rng)
        assert sample.seed != state.seed
        sr = sample.round
        every = [c for hh in sr.hands for c in hh] + [c for p in played for c in p]
        assert sorted(every) == sorted(FULL_DECK)
        assert sorted(sr.deck_order) == sorted(FULL_DECK)
        dealt = [[*sr.hands[j], *played[j]] for j in range(4)]
        assert sr.roles == roles_for(dealt)
        assert sr.roles[me] == h.roles[me]
        if h.ds_seat is None:
            assert "double" not in sr.roles
        else:
            assert sr.roles[h.ds_seat] == "double"
        for j in range(4):
            if j != me:
                assert not (set(sr.hands[j]) & k.excluded[j])
        for t, tv in zip(instants, truth, strict=True):
            assert view(sample, me, t) == tv
        assert [str(a) for a in legal_actions(sample, me, now)] == truth_legal


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st_.integers(0, 10**6),
    move_seconds=st_.sampled_from([None, 30]),
    levels=st_.lists(st_.sampled_from(["random", "easy", "medium"]), min_size=4, max_size=4),
)
def test_every_sample_shows_the_seat_the_table_it_saw(
    seed: int, move_seconds: int | None, levels: list[str]
) -> None:
    cfg = Settings(move_seconds=move_seconds, target_score=6)
    bots: list[Bot] = [bot_for(KIND, lv) for lv in levels]
    bots[seed % 4] = _Sleepy(bots[seed % 4], seed)
    rng = random.Random(seed)
    sit_seat = (seed + 1) % 4
    sitter: Memory | None = None
    checked = 0
    for step, (state, memories, now) in enumerate(_states(bots, seed=f"det{seed}", cfg=cfg)):
        if state.status != "playing":
            break
        if sitter is not None:
            sitter.observe(view=memories[sit_seat].view)
        if step == 23:
            sitter = Memory(KIND, sit_seat)  # sits in here: knows only what views show
            sitter.observe(view=memories[sit_seat].view)
        if step % 7:
            continue
        for m in memories:
            _check_seat(state, m, now, rng)
        if sitter is not None:
            det = Determiniser(sitter)
            tv = view(state, sit_seat, now)
            for _ in range(2):
                assert view(det.sample(rng), sit_seat, now) == tv
        checked += 1
        if checked >= 20:
            break
    assert checked >= 5


def test_samples_do_not_know_the_other_seats_roles() -> None:
    """At the deal of a Crown hand a Team Crown seat knows only that A♠ and 2♦ lie in two
    different other hands: over many samples each other seat is High Crown about a third of
    the time, whatever the truth -- the determiniser invents roles, it does not leak them."""
    for g in range(50):
        st, ev = new_game(seats=4, settings=Settings(), seed=f"roles{g}", now=0)
        h = st.round
        if h.ds_seat is not None:
            continue
        me = h.roles.index("team")
        m = Memory(KIND, me)
        m.observe(view=view(st, me, 0), events=[event_view(e, me) for e in ev])
        det = Determiniser(m)
        rng = random.Random(g)
        high = [0] * 4
        low = [0] * 4
        n = 300
        for _ in range(n):
            roles = det.sample(rng).round.roles
            assert roles[me] == "team"
            high[roles.index("high")] += 1
            low[roles.index("low")] += 1
        true_high, true_low = h.roles.index("high"), h.roles.index("low")
        assert high[me] == low[me] == 0
        for j in range(4):
            if j != me:
                assert 0.2 < high[j] / n < 0.47, (high, true_high)
                assert 0.2 < low[j] / n < 0.47, (low, true_low)
        p_high, p_low = crown_beliefs(track(m))
        assert p_high[me] == p_low[me] == 0
        assert max(p_high) < 0.5 and max(p_low) < 0.5
        return
    raise AssertionError("no Crown hand dealt")


def test_a_played_crown_card_is_known_and_the_other_is_elsewhere() -> None:
    """Once A♠ is played its holder is High Crown for everybody; in a Crown hand 2♦ is then in
    no sample in that seat's hand (T6)."""
    rng = random.Random(5)
    bots = [bot_for(KIND, "medium") for _ in range(4)]
    for state, memories, _now in _states(bots, seed="crown", cfg=Settings(target_score=30)):
        h = state.round
        if state.status != "playing" or h.ds_seat is not None:
            continue
        played = _played(h)
        who = next((j for j in range(4) if "AS" in played[j]), None)
        if who is None or "2D" in [c for p in played for c in p]:
            continue
        for m in memories:
            if "2D" in h.hands[m.seat]:
                continue
            k = track(m)
            p_high, _ = crown_beliefs(k)
            assert p_high[who] == 1.0
            for _ in range(5):
                sample = Determiniser(m, k).sample(rng)
                assert "2D" not in sample.round.hands[who]
        return
    raise AssertionError("A♠ was never played before 2♦")


# -- legal play over many games -------------------------------------------------------------
@pytest.mark.parametrize(
    ("mix", "games"),
    [(("random", "easy"), 60), (("easy", "medium"), 60), (("medium", "medium"), 30)],
)
def test_bots_never_submit_an_illegal_action(mix: tuple[str, str], games: int) -> None:
    """play_game raises on any refused action: 60 short games per mix, 30 of medium alone (150
    here, plus the hard ones below; medium sits at every table but the first 60), seats
    rotated, half of them with a clock."""
    for g in range(games):
        pattern = [mix[(g + i) % 2] for i in range(4)]
        bots = [bot_for(KIND, lv) for lv in pattern]
        cfg = Settings(move_seconds=30 if g % 4 < 2 else None, target_score=4)
        rec = play_game(KIND, bots, seed=f"legal-{mix}-{g}", settings=cfg)
        assert rec.winners and max(rec.scores) >= 4


def test_hard_plays_whole_games_legally_on_a_small_budget() -> None:
    budget = Budget(cpu_ms=15.0)
    for g in range(2):
        levels = ["hard", "medium", "easy", "medium"]
        levels = levels[g:] + levels[:g]
        bots = [bot_for(KIND, lv, budget=budget) for lv in levels]
        rec = play_game(KIND, bots, seed=f"hard-{g}", settings=Settings(target_score=4))
        assert rec.winners
        hard = rec.seats[levels.index("hard")]
        assert hard.actions > 0
        # What one decision costs over whole games (its CPU, mean and max) is measured in
        # bench/bots_search.py, not asserted here: a thread's CPU over a whole game includes a
        # garbage collection or a warm-up now and then, and under a CPU hog the bound failed
        # (0.38 s against 0.25). That the search stops at its budget is proven on the search's
        # own toy game (tests/bots/test_bots_budget.py).


def test_hard_declares_and_searches_with_an_iteration_cap() -> None:
    for g in range(300):
        st, ev = new_game(seats=4, settings=Settings(), seed=f"ds{g}", now=0)
        if st.round.ds_seat is not None:
            break
    else:
        raise AssertionError("no Double Stakes deal")
    ds = st.round.ds_seat
    m = Memory(KIND, ds)
    m.observe(view=view(st, ds, 0), events=[event_view(e, ds) for e in ev])
    bot = bot_for(KIND, "hard", budget=Budget(10_000, max_iterations=4))
    wire = bot.decide(m.observation(), 0, random.Random(1))
    assert wire is not None and wire["type"] == "declare"
    assert Action.from_wire(wire) in legal_actions(st, ds, 0)
    assert bot.last is not None and bot.last.iterations == 4  # type: ignore[attr-defined]
    # Nobody else has anything to do before the declaration.
    for j in range(4):
        if j != ds:
            mj = Memory(KIND, j)
            mj.observe(view=view(st, j, 0), events=[event_view(e, j) for e in ev])
            assert bot_for(KIND, "medium").decide(mj.observation(), 0, random.Random(1)) is None


# -- fairness: the shape of the inputs --------------------------------------------------------
def test_memory_refuses_what_the_seat_was_not_sent() -> None:
    for g in range(300):
        st, ev = new_game(seats=4, settings=Settings(), seed=f"fair{g}", now=0)
        if st.round.ds_seat is not None:
            break
    ds = st.round.ds_seat
    assert ds is not None
    me = (ds + 1) % 4
    m = Memory(KIND, me)
    m.observe(view=view(st, me, 0), events=[event_view(e, me) for e in ev])
    before = m.to_json()
    st1, dec = apply(st, ds, Action.declare("NT", "high"), 0)
    for bad in (
        {"view": st1},
        {"view": st1.to_json()},
        {"view": view(st1, ds, 0)},  # the declarer's view: its hand and memo
        {"view": view(st1, None, 0)},  # a spectator's: no 'you'
        {"events": dec},
        {"events": [dec[0].to_json()]},  # the full declaration: the secret memo
        {"events": [event_view(dec[0], ds)]},  # the declarer's own copy of it
        {"events": [e.to_json() for e in ev]},  # round_dealt with the deck and all hands
        {"events": [event_view(ev[0], ds)]},  # another seat's deal
    ):
        with pytest.raises(ObservationError):
            m.observe(**bad)  # type: ignore[arg-type]
        assert m.to_json() == before
    m.observe(view=view(st1, me, 0), events=[event_view(e, me) for e in dec])
    assert m.events[-1]["data"]["memo"] is None
    assert m.view is not None and m.view["you"]["memo"] is None
    assert Memory.from_json(m.to_json()).to_json() == m.to_json()


@pytest.mark.parametrize("level", LEVELS)
def test_every_level_decides_through_the_checked_entry_point(level: str) -> None:
    cls = BOTS[level]
    assert cls.decide is Bot.decide
    assert list(inspect.signature(cls.choose).parameters) == ["self", "memory", "now", "rng"]
    st, ev = new_game(seats=4, settings=Settings(), seed="shape2", now=0)
    seat = st.round.turn
    assert seat is not None
    bot = bot_for(KIND, level, budget=Budget(5))
    good = Memory(KIND, seat)
    good.observe(view=view(st, seat, 0), events=[event_view(e, seat) for e in ev])
    for wrong in (st, st.to_json(), view(st, seat, 0), good.to_json(), good):
        with pytest.raises(ObservationError):
            bot.decide(wrong, 0, random.Random(1))  # type: ignore[arg-type]
    wire = bot.decide(good.observation(), 0, random.Random(1))
    assert Action.from_wire(wire) in legal_actions(st, seat, 0)


def _twin_decks(seed: str) -> tuple[list[str], list[str], int]:
    """Two deals that give the leader the same thirteen cards but deal the other three hands
    differently (the crown cards staying where they were, so the hand's kind is the same)."""
    deck = engine.rules.deck_for(seed, 1)  # tests may use internals; bots may not
    st, _ = new_game(seats=4, settings=Settings(), seed=seed, now=0, decks=[deck])
    dealer = st.round.dealer
    leader = (dealer + 1) % 4
    others = [
        i for i in range(52) if (dealer + 1 + i) % 4 != leader and deck[i] not in ("AS", "2D")
    ]
    twin = deck[:]
    # Rotate the other seats' cards among their positions: different hands for each of them.
    for a, b in zip(others, others[1:] + others[:1], strict=True):
        twin[b] = deck[a]
    return deck, twin, leader


@pytest.mark.parametrize("level", LEVELS)
def test_a_bot_cannot_tell_apart_worlds_its_seat_saw_the_same(level: str) -> None:
    decisions = []
    for g in range(40):
        deck, twin, leader = _twin_decks(f"twins{g}")
        st, _ = new_game(seats=4, settings=Settings(), seed=f"twins{g}", now=0, decks=[deck])
        if st.round.ds_seat is None:
            break
    for d in (deck, twin):
        st, ev = new_game(seats=4, settings=Settings(), seed=f"twins{g}", now=0, decks=[d])
        m = Memory(KIND, leader, salt="s")
        m.observe(view=view(st, leader, 0), events=[event_view(e, leader) for e in ev])
        bot = bot_for(KIND, level, budget=Budget(10_000, max_iterations=6))
        decisions.append(bot.decide(m.observation(), 0, random.Random(7)))
    assert decisions[0] == decisions[1]
    assert decisions[0] is not None and decisions[0]["type"] == "play"


def test_search_knowledge_folded_trick_by_trick_equals_a_fresh_replay() -> None:
    """The search folds completed tricks into its play-out once (played cards, voids, the
    ``behaviour`` evidence) instead of replaying the hand for every card: at every step of
    play-outs from real mid-hand positions, for every seat, that knowledge equals the one
    built from scratch -- and the cached evidence equals ``behaviour`` recomputed."""
    from dataclasses import replace

    from games.bots.triple_crown import TripleCrownSearch, behaviour

    bots = [bot_for(KIND, "medium") for _ in range(4)]
    checked = 0
    for n, (st, mems, now) in enumerate(_states(bots, seed="fold", cfg=Settings(target_score=3))):
        if n % 7 or st.status != "playing" or st.round.phase != "play":
            continue
        seat = st.round.turn
        if seat is None or not mems[seat].view["you"]["can"]:
            continue
        game = TripleCrownSearch(mems[seat], track(mems[seat]), now)
        rng = random.Random(n)
        s = game.sample(rng)
        while game.to_move(s) is not None:
            fresh = type(s)(s.state, s.now)
            for j in range(4):
                got, want = game._knowledge(s, j), game._knowledge(fresh, j)
                assert (got.played, got.voids, got.tricks, got.trick) == (
                    want.played,
                    want.voids,
                    want.tricks,
                    want.trick,
                )
                assert got.played == _played(s.state.round)
                assert got.evidence == pytest.approx(behaviour(replace(got, evidence=None)))
                checked += 1
            game.apply_action(s, game.rollout_action(s, rng))
        if checked > 400:
            break
    assert checked > 400
