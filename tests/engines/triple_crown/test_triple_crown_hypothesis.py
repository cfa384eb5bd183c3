"""Property tests over random deals (stacked Double Stakes deals included), each checked
against the tests' own models in ``triple_crown_support`` -- never against engine code.

* T3, T12, T13, T14, T15: random hands to the end: the 52 cards conserved, suit always followed,
  every trick's winner right, 13 tricks or a sound early end, roles and points right.
* T27: a knowledge tracker per seat and for a spectator, over whole random games: no view or
  event carries a card, a role or the memo its receiver may not know at that moment.
* A RuleBasedStateMachine driven by ``legal_actions``, with illegal tries and the clock.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule
from triple_crown_support import (
    Knowledge,
    drive,
    may_play,
    seed_for_dealer,
    winner_of,
)

from games.engines.triple_crown import (
    FULL_DECK,
    Action,
    GameState,
    IllegalAction,
    Settings,
    advance,
    apply,
    legal_actions,
    new_game,
    pending_deadlines,
    view,
)

Policy = Callable[[GameState, list[Action], random.Random], Action]

SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def stack_double(deck: list[str], dealer: int, seat_shift: int) -> list[str]:
    """Make the deck a Double Stakes deal: move 2♦ into A♠'s hand (T3: position i goes to
    seat dealer + 1 + i, so positions congruent mod 4 share a hand)."""
    deck = deck[:]
    i, j = deck.index("AS"), deck.index("2D")
    if (i - j) % 4:
        k = next(p for p in range((i + 4 * (seat_shift % 13)) % 4, 52, 4) if p != i)
        deck[j], deck[k] = deck[k], deck[j]
    return deck


@st.composite
def deals(draw: st.DrawFn, double: bool | None = None) -> tuple[list[str], int]:
    deck = draw(st.permutations(FULL_DECK))
    dealer = draw(st.integers(0, 3))
    if double is None:
        double = draw(st.booleans())
    if double:
        deck = stack_double(list(deck), dealer, draw(st.integers(0, 12)))
    return list(deck), dealer


def independent_score(
    roles: list[str], tricks: list[int], memo: str | None, assured: bool
) -> list[int]:
    """§9/T17/T18 written out once more, in the plainest form."""
    if "double" in roles:
        t = tricks[roles.index("double")]
        if t == 0 or t >= 5 or assured:
            return [5 if r == "double" else 0 for r in roles]
        each = 2 * t if memo == "low" else 2 * (5 - t)
        return [0 if r == "double" else each for r in roles]
    h, low = tricks[roles.index("high")], tricks[roles.index("low")]
    team = (low if low > 0 else 0) + (5 - h if h < 5 else 0)
    return [
        (2 if h >= 5 else 0) if r == "high" else (3 if low == 0 else 0) if r == "low" else team
        for r in roles
    ]


def check_early_end(d: dict[str, Any]) -> None:
    """An early end (T15, X1, TE6) must be sound on the TRUE remaining hands."""
    ds = d["double_stakes"]
    assert ds is not None, "only a Double Stakes hand ends early"
    t, left, trumps = d["tricks"][ds], d["unplayed"], d["trumps"]
    order = "23456789TJQKA"
    if d["early_end"] == "five_tricks":
        assert t == 5
    elif d["early_end"] == "sure_tricks":
        assert trumps in ("S", "H", "D", "C")
        opp_top = max(
            (order.index(c[0]) for s in range(4) if s != ds for c in left[s] if c[1] == trumps),
            default=-1,
        )
        sure = [c for c in left[ds] if c[1] == trumps and order.index(c[0]) > opp_top]
        assert t + len(sure) >= 5
    elif d["early_end"] == "cannot_win":
        assert t == 0
        for c in left[ds]:
            assert c[1] != trumps
            for s in range(4):
                if s != ds:
                    assert all(
                        order.index(o[0]) > order.index(c[0]) for o in left[s] if o[1] == c[1]
                    )
    else:  # pragma: no cover
        raise AssertionError(d["early_end"])


def play_one_hand(deck: list[str], dealer: int, rng: random.Random) -> dict[str, Any]:
    """Play hand 1 of a game at random; check every rule on the way; return its hand_over."""
    st0, ev = new_game(
        seats=4, settings=Settings(), seed=seed_for_dealer(dealer), now=0, decks=[deck]
    )
    state = st0
    # T3, from the deck alone
    mine = [sorted(deck[i] for i in range(52) if (dealer + 1 + i) % 4 == s) for s in range(4)]
    assert [sorted(h) for h in ev[0].data["hands"]] == mine
    hands = [set(h) for h in mine]
    holder = {c: s for s in range(4) for c in mine[s]}
    both = holder["AS"] == holder["2D"]
    roles = (
        ["double" if s == holder["AS"] else "opponent" for s in range(4)]
        if both
        else [
            "high" if s == holder["AS"] else "low" if s == holder["2D"] else "team"
            for s in range(4)
        ]
    )
    assert ev[0].data["double_stakes"] == (holder["AS"] if both else None)  # T8
    trumps = None
    if both:
        acts = legal_actions(state, holder["AS"], 0)
        state, ev = apply(state, holder["AS"], rng.choice(acts), 0)
        trumps = ev[0].data["trumps"]
    leader = (dealer + 1) % 4
    trick: list[list[Any]] = []
    played: list[str] = []
    taken = [0, 0, 0, 0]
    must_end = False
    for _ in range(60):
        seat = state.round.turn
        assert seat == (leader + len(trick)) % 4  # T1, T11: clockwise from the leader
        for other in range(4):
            if other != seat:
                assert legal_actions(state, other, 0) == []
        acts = legal_actions(state, seat, 0)
        assert sorted(a.card for a in acts) == sorted(
            c for c in hands[seat] if may_play(list(hands[seat]), trick, c)
        )
        state, ev = apply(state, seat, rng.choice(acts), 0)
        for e in ev:
            if e.type == "card_played":
                assert not must_end, "T15: the 5th trick ends the hand at once"
                c = e.data["card"]
                assert e.data["seat"] == seat
                assert may_play(list(hands[seat]), trick, c), "T12: suit not followed"
                hands[seat].discard(c)
                trick.append([seat, c])
                played.append(c)
            elif e.type == "trick_won":
                w = winner_of(trick, trumps)
                assert e.data["winner"] == w and e.data["cards"] == trick  # T13
                taken[w] += 1
                assert e.data["taken"] == taken
                must_end = both and taken[holder["AS"]] == 5
                leader, trick = w, []
            elif e.type == "hand_over":
                d = e.data
                assert d["roles"] == roles and d["tricks"] == taken
                assert [sorted(x) for x in d["unplayed"]] == [sorted(h) for h in hands]  # T20
                if d["tricks_played"] < 13:
                    check_early_end(d)
                else:
                    assert d["early_end"] is None and sum(taken) == 13  # T14
                assert d["points"] == independent_score(
                    roles, taken, d["memo"], d["early_end"] == "sure_tricks"
                )
                return d
        # 52 cards conserved, every moment
        if state.round.number == 1:
            held = [c for h in state.round.hands for c in h]
            on_table = [c for _, c in state.round.trick]
            done = [c for t in state.round.tricks for _, c in t["cards"]]
            assert sorted(held + on_table + done) == sorted(FULL_DECK)
    raise AssertionError("hand did not end")  # pragma: no cover


@SETTINGS
@given(deal=deals(), seed=st.integers(0, 2**32))
def test_t3_t12_t13_t14_t15_random_deals_play_to_the_end(
    deal: tuple[list[str], int], seed: int
) -> None:
    deck, dealer = deal
    play_one_hand(deck, dealer, random.Random(seed))


def _high_policy(state: GameState, acts: list[Action], rng: random.Random) -> Action:
    """A greedy Double Stakes player (highest card, spades trumps) so early ends happen often."""
    h = state.round
    if h.phase == "declare":
        return Action.declare("S", "high")
    if h.turn == h.ds_seat:
        return max(acts, key=lambda a: "23456789TJQKA".index(a.card[0]))
    return rng.choice(acts)


def _low_policy(state: GameState, acts: list[Action], rng: random.Random) -> Action:
    """A Double Stakes player going for no trick (no-trump, follows low, sheds high cards but
    keeps A♠ and 2♦), so the ``cannot_win`` end happens too."""
    h = state.round
    if h.phase == "declare":
        return Action.declare("NT", "low")
    if h.turn == h.ds_seat:
        order = "23456789TJQKA"
        if h.trick and acts[0].card[1] != h.trick[0][1][1]:
            rest = [a for a in acts if a.card not in ("AS", "2D")] or acts
            return max(rest, key=lambda a: order.index(a.card[0]))
        return min(acts, key=lambda a: order.index(a.card[0]))
    return rng.choice(acts)


def _play_double_hand(
    deck: list[str], dealer: int, rng: random.Random, policy: Policy
) -> dict[str, Any]:
    state, ev = new_game(
        seats=4, settings=Settings(), seed=seed_for_dealer(dealer), now=0, decks=[deck]
    )
    for _ in range(60):
        if state.round.number > 1:
            break
        seat = state.round.turn
        state, evs = apply(state, seat, policy(state, legal_actions(state, seat, 0), rng), 0)
        ev += evs
    (d,) = [e.data for e in ev if e.type == "hand_over"]
    if d["tricks_played"] < 13:
        check_early_end(d)
    return d


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(deal=deals(double=True), seed=st.integers(0, 2**32), high=st.booleans())
def test_t15_x1_stacked_double_stakes_deals_early_ends_are_sound(
    deal: tuple[list[str], int], seed: int, high: bool
) -> None:
    deck, dealer = deal
    _play_double_hand(deck, dealer, random.Random(seed), _high_policy if high else _low_policy)


def test_t15_x1_te6_every_early_end_occurs_and_is_sound_over_600_seeded_deals() -> None:
    """Not vacuous: over a fixed sample every kind of early end happens, each one checked."""
    rng = random.Random(2026)
    seen: dict[object, int] = {}
    for i in range(600):
        deck = list(FULL_DECK)
        rng.shuffle(deck)
        dealer = rng.randrange(4)
        deck = stack_double(deck, dealer, rng.randrange(13))
        d = _play_double_hand(deck, dealer, rng, _high_policy if i % 2 else _low_policy)
        seen[d["early_end"]] = seen.get(d["early_end"], 0) + 1
    assert {"five_tricks", "sure_tricks", "cannot_win", None} <= set(seen), seen


# -- T27: the knowledge tracker ---------------------------------------------------------------
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    first=deals(),
    more=st.lists(deals(), min_size=0, max_size=3),
    seed=st.integers(0, 2**32),
)
def test_t27_no_receiver_ever_gets_a_card_role_or_memo_it_may_not_know(
    first: tuple[list[str], int], more: list[tuple[list[str], int]], seed: int
) -> None:
    deck, dealer = first
    game_seed = seed_for_dealer(dealer)
    state, ev = new_game(
        seats=4,
        settings=Settings(target_score=8),
        seed=game_seed,
        now=0,
        decks=[deck, *[d for d, _ in more]],
    )
    trackers = [Knowledge(r, game_seed) for r in (0, 1, 2, 3, None)]
    final = drive(state, ev, trackers, random.Random(seed))
    assert final.status == "finished" and max(final.scores) >= 8


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(deal=deals(double=True), seed=st.integers(0, 2**32))
def test_t27_double_stakes_memo_stays_with_its_seat_until_the_reveal(
    deal: tuple[list[str], int], seed: int
) -> None:
    deck, dealer = deal
    game_seed = seed_for_dealer(dealer)
    state, ev = new_game(
        seats=4, settings=Settings(target_score=5), seed=game_seed, now=0, decks=[deck] * 6
    )
    trackers = [Knowledge(r, game_seed) for r in (0, 1, 2, 3, None)]
    drive(state, ev, trackers, random.Random(seed), choose=_high_policy)


# -- The state machine ------------------------------------------------------------------------
class TripleCrownMachine(RuleBasedStateMachine):
    """Random legal moves, refused illegal tries, and the clock (30 s per move)."""

    @initialize(deal=deals())
    def setup(self, deal: tuple[list[str], int]) -> None:
        deck, dealer = deal
        self.state, ev = new_game(
            seats=4,
            settings=Settings(move_seconds=30, target_score=6),
            seed=seed_for_dealer(dealer),
            now=0,
            decks=[deck],
        )
        self.now = 0
        self.trackers = [Knowledge(r, seed_for_dealer(dealer)) for r in (0, 1, 2, 3, None)]
        self._feed(ev)

    def _feed(self, events: list) -> None:
        """T27 with the clock running: timeouts' events are checked like any other."""
        for e in events:
            for k in self.trackers:
                k.learn(e)
                k.check_event(e)

    @rule(pick=st.integers(0, 51), dt=st.integers(0, 30_000))
    def play_legal(self, pick: int, dt: int) -> None:
        if self.state.status != "playing":
            return
        self.now += dt
        st2 = advance(self.state, self.now)[0]
        seat = st2.round.turn
        if st2.status != "playing" or seat is None:
            self.state, ev = advance(self.state, self.now)
            self._feed(ev)
            return
        acts = legal_actions(st2, seat, self.now)
        self.state, ev = apply(self.state, seat, acts[pick % len(acts)], self.now)
        self._feed(ev)

    @rule(seat=st.integers(0, 3), card=st.sampled_from(FULL_DECK))
    def try_any_card(self, seat: int, card: str) -> None:
        before = json.dumps(self.state.to_json(), sort_keys=True)
        now_state = advance(self.state, self.now)[0]  # apply() lets due timeouts act first
        h = now_state.round
        if now_state.status != "playing":
            expected = "game_finished"
        elif h.phase == "declare":
            expected = "awaiting_declaration"
        elif seat != h.turn:
            expected = "not_your_turn"
        elif card not in h.hands[seat]:
            expected = "not_in_hand"
        elif not may_play(h.hands[seat], h.trick, card):
            expected = "must_follow"
        else:
            expected = None
        try:
            new, ev = apply(self.state, seat, Action.play(card), self.now)
        except IllegalAction as exc:
            assert exc.code == expected, (exc.code, expected)
            assert json.dumps(self.state.to_json(), sort_keys=True) == before
            # T25, T27h: a reason names no card but the one asked about or the actor's own
            named = {c for c in FULL_DECK if c in exc.reason.split()}
            assert named <= {card, *h.hands[seat]}, exc.reason
            return
        assert expected is None
        self.state = new
        self._feed(ev)

    @rule(dt=st.integers(0, 200_000))
    def wait(self, dt: int) -> None:
        self.now += dt
        ds = pending_deadlines(self.state)
        new, ev = advance(self.state, self.now)
        if not ds or ds[0].at > self.now:
            assert new is self.state and ev == []
        self.state = new
        self._feed(ev)

    @invariant()
    def round_trips_and_offers_only_legal_moves(self) -> None:
        if not hasattr(self, "state"):
            return
        s = self.state
        for k in self.trackers:
            k.check_view(s, s.clock)
        assert GameState.from_json(json.loads(json.dumps(s.to_json()))).to_json() == s.to_json()
        assert len(pending_deadlines(s)) <= (1 if s.status == "playing" else 0)
        h = s.round
        for seat in range(4):
            v = view(s, seat, s.clock)
            legal = legal_actions(s, seat, s.clock)
            assert v["you"]["legal"] == [a.card for a in legal if a.type == "play"]
            if seat != h.turn or s.status != "playing":
                assert legal == []
            elif h.phase == "play":
                assert sorted(a.card for a in legal) == sorted(
                    c for c in h.hands[seat] if may_play(h.hands[seat], h.trick, c)
                )


TripleCrownMachine.TestCase.settings = settings(
    max_examples=25,
    stateful_step_count=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
test_t12_t23_t25_state_machine = TripleCrownMachine.TestCase


# -- The tracker itself can fail: fed a leaky view or event, it must object ---------------------
def _leaky_game() -> tuple[GameState, list, list[Knowledge]]:
    game_seed = seed_for_dealer(0)
    state, ev = new_game(seats=4, settings=Settings(), seed=game_seed, now=0)
    trackers = [Knowledge(r, game_seed) for r in (0, None)]
    for e in ev:
        for k in trackers:
            k.learn(e)
    return state, ev, trackers


@pytest.mark.parametrize(
    "leak",
    [
        lambda v, st: {**v, "hands": [list(h) for h in st.round.hands]},
        lambda v, st: {**v, "seats_info": [{"role": r} for r in st.round.roles]},
        lambda v, st: {**v, "you": {**v.get("you", {}), "role": st.round.roles[1]}},
    ],
)
def test_t27_the_tracker_catches_a_leaky_view(monkeypatch: pytest.MonkeyPatch, leak) -> None:
    import triple_crown_support as support

    state, _, trackers = _leaky_game()
    real = support.view
    monkeypatch.setattr(support, "view", lambda st, seat, now: leak(real(st, seat, now), st))
    caught = 0
    for k in trackers:
        try:
            k.check_view(state, 0)
        except AssertionError:
            caught += 1
    assert caught >= 1


def test_t27_the_tracker_catches_a_leaky_event(monkeypatch: pytest.MonkeyPatch) -> None:
    import triple_crown_support as support

    _, ev, (seat0, spectator) = _leaky_game()
    monkeypatch.setattr(support, "event_view", lambda e, seat: {"type": e.type, "data": e.data})
    for k in (seat0, spectator):
        with pytest.raises(AssertionError):
            k.check_event(ev[0])  # the full deck and every hand
