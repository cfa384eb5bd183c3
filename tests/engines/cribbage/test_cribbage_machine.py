"""Random games driven by legal_actions: a Hypothesis state machine and a few hundred full
games, each checked against an independent model of the rules' invariants and of C30.

``Knowledge`` below is the test's own account of what each receiver may know at each moment,
built from the engine's *full* events and the rules' text -- not from the engine's view code.
Every card code in every ``view`` and ``event_view`` for seat 0, seat 1 and a spectator must be
one its receiver may know then.
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter, defaultdict
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from games.engines.cribbage import (
    FULL_DECK,
    Action,
    Event,
    GameState,
    IllegalAction,
    Settings,
    advance,
    apply,
    event_view,
    fire,
    legal_actions,
    new_game,
    pending_deadlines,
    view,
)
from games.engines.cribbage.errors import CODES
from tests.depth import depth

RECEIVERS = (0, 1, None)
SHOW_ORDER = ["pone", "dealer", "crib"]


_CARD = re.compile(r'"([A2-9TJQK][CDHS])"')


def card_codes(x: Any) -> set[str]:
    """Every card code anywhere in a JSON value (keys included): every JSON string that is
    exactly a card code."""
    return set(_CARD.findall(json.dumps(x)))


class Knowledge:
    """What each receiver may know (C30), learned event by event from the full events."""

    def __init__(self) -> None:
        self.cut: set[str] = set()  # C30a: the cut for deal (its own shuffle)
        self.public: dict[int, set[str]] = defaultdict(set)  # by hand
        self.own: dict[int, dict[int, set[str]]] = {0: defaultdict(set), 1: defaultdict(set)}

    def learn(self, e: Event) -> None:
        d = e.data
        if e.type == "cut_for_deal":
            self.cut |= {c for pair in d["cuts"] for c in pair}
        elif e.type == "round_dealt":  # C30b
            for s in (0, 1):
                self.own[s][d["round"]] |= set(d["hands"][s])
        elif e.type == "starter_cut" or e.type == "play":  # C30d
            self.public[d["round"]].add(d["card"])
        elif e.type == "show":  # C30f: the hands (played anyway) and the crib at its count
            self.public[d["round"]] |= set(d["cards"]) | {d["starter"]}
        elif e.type == "hand_over":  # C30g: at the end every card of the hand but the stock
            for h in d["hands"]:
                self.public[d["round"]] |= set(h or ())
            self.public[d["round"]] |= set(d["crib"] or ())

    def allowed(self, receiver: int | None, rnd: int) -> set[str]:
        mine = self.own[receiver][rnd] if receiver is not None else set()
        return self.public[rnd] | mine

    def check_event(self, e: Event, receiver: int | None) -> None:
        red = event_view(e, receiver)
        assert red["type"] == e.type and set(red["data"]) == set(e.data)  # every key kept
        if e.type == "cut_for_deal":
            ok = self.cut
        elif "round" in e.data:
            ok = self.allowed(receiver, e.data["round"])
        else:
            ok = set()
        leaked = set(card_codes(red["data"])) - ok
        assert not leaked, (e.type, receiver, leaked)
        if e.type == "round_dealt":
            assert red["data"]["deck"] is None

    def check_view(self, v: dict[str, Any], receiver: int | None) -> None:
        rest = {k: x for k, x in v.items() if k not in ("cut_for_deal", "last_hand")}
        leaked = card_codes(rest) - self.allowed(receiver, v["round"])
        assert not leaked, ("view", receiver, leaked)
        assert not card_codes(v["cut_for_deal"]) - self.cut
        last = v["last_hand"]
        if last is not None:
            leaked = card_codes(last) - self.allowed(receiver, last["round"])
            assert not leaked, ("last_hand", receiver, leaked)


class Referee:
    """Holds one game and checks every invariant after every step."""

    def __init__(self, seed: str, s: Settings, now: int, *, thorough: bool = True) -> None:
        #: thorough: check the JSON round trip after every step, not only at each hand's end
        self.thorough = thorough
        self.settings = s
        self.now = now
        self.know = Knowledge()
        self.points = [0, 0]
        self.events: list[Event] = []
        self.state, ev = new_game(seats=2, settings=s, seed=seed, now=now)
        self.prev_scores = [0, 0]
        self.dealers: list[int] = []
        self.take(ev)

    # -- steps ---------------------------------------------------------------------------
    def moves(self) -> list[tuple[int, Any]]:
        return [(s, a) for s in (0, 1) for a in legal_actions(self.state, s, self.now)]

    def move(self, choice: int) -> None:
        moves = self.moves()
        if not moves:
            return
        seat, a = moves[choice % len(moves)]
        before = self.state.to_json() if self.thorough else None
        old = self.state
        self.state, ev = apply(self.state, seat, a, self.now)
        if before is not None:
            assert old.to_json() == before  # apply never touches its input
        self.take(ev)

    def try_illegal(self, seat: int, a: Action) -> None:
        """Any move that legal_actions does not offer is refused, leaves the state unchanged,
        and its reason names no card the actor may not know (C23, C30i)."""
        if a in legal_actions(self.state, seat, self.now):
            return
        before = self.state.to_json()
        try:
            apply(self.state, seat, a, self.now)
        except IllegalAction as exc:
            assert exc.code in CODES
            rnd = self.state.round_number
            assert not set(_CARD.findall(json.dumps(exc.reason))) - self.know.allowed(seat, rnd)
        else:  # pragma: no cover - the assertion is the point
            raise AssertionError(f"{a} by {seat} was accepted but not offered")
        assert self.state.to_json() == before

    def wait(self, dt: int) -> None:
        self.now += dt
        new, ev = advance(self.state, self.now)
        if not ev:
            assert new is self.state
        self.state = new
        self.take(ev)

    def fire_next(self, late: int) -> None:
        ds = pending_deadlines(self.state)
        if not ds:
            return
        self.now = max(self.now, ds[0].at + late)
        self.state, ev = fire(self.state, ds[0].key, self.now)
        assert ev
        self.take(ev)

    # -- checks ---------------------------------------------------------------------------
    def take(self, ev: list[Event]) -> None:
        target = self.settings.target_score
        for e in ev:
            assert not self.events or self.events[-1].type != "game_over", "after game_over"
            assert isinstance(e.data["at"], int)
            if "scored" in e.data:
                seat = e.data["seat"]
                assert 0 <= e.data["scored"] <= e.data["points"]
                before = self.points[seat]
                assert before < target, "scored after the target was reached"
                self.points[seat] += e.data["scored"]
                assert e.data["scores"] == self.points
                if self.points[seat] < target:
                    assert e.data["scored"] == e.data["points"]
            if e.type == "round_dealt":
                self.dealers.append(e.data["dealer"])
            if e.type == "game_over":
                w = e.data["winners"]
                assert len(w) == 1 and self.points[w[0]] == target > self.points[1 - w[0]]
                assert self.events[-1].type == "hand_over"
                assert self.events[-2].data.get("seat") == w[0]  # the event that reached it
            self.events.append(e)
            self.know.learn(e)
            for r in RECEIVERS:
                self.know.check_event(e, r)
        self.check_state()

    def check_state(self) -> None:
        s = self.state
        if self.thorough or self.events[-1].type in ("hand_over", "game_over", "round_dealt"):
            d = s.to_json()
            assert GameState.from_json(d).to_json() == d
        assert s.scores == self.points  # every point accounted for in the events
        assert all(a >= b for a, b in zip(s.scores, self.prev_scores, strict=True))
        self.prev_scores = list(s.scores)
        target = self.settings.target_score
        if s.status == "playing":
            assert max(s.scores) < target and s.winners == []
        else:
            assert s.winners and s.scores[s.winners[0]] == target
            assert self.events[-1].type == "game_over" and pending_deadlines(s) == []
        assert all(b == (self.dealers[0] + i) % 2 for i, b in enumerate(self.dealers))
        # conservation: 52 distinct cards; the 12 dealt are in hands, played or the crib
        r = s.round
        assert len(r.deck) == 52 and len(set(r.deck)) == 52
        held = r.hands[0] + r.hands[1] + r.played[0] + r.played[1]
        held += [c for d in r.discards if d for c in d]
        assert Counter(held) == Counter(r.deck[:12])
        rest = [r.starter or r.deck[12], *r.deck[13:]]  # the starter (or the card to be) + stock
        assert Counter(held + rest) == Counter(FULL_DECK)  # all 52, each once
        assert (r.starter is None) == (r.phase == "lay_away") and r.starter in (None, r.deck[12])
        for seat in (0, 1):
            if r.kept[seat] is not None:
                assert sorted(r.kept[seat]) == sorted(r.hands[seat] + r.played[seat])
        assert sum(c for c in [r.count]) == sum(_val(c) for _, c in r.sequence) <= 31
        ds = pending_deadlines(s)
        assert ds == sorted(ds, key=lambda d: (d.at, d.key)) and all(d.at > s.clock for d in ds)
        for rcv in RECEIVERS:
            v = view(s, rcv, self.now)
            self.know.check_view(v, rcv)
            if rcv is not None:
                assert v["you"]["can"] == sorted({a.type for a in legal_actions(s, rcv, self.now)})

    def check_shows(self) -> None:
        by_round: dict[int, list[str]] = defaultdict(list)
        for e in self.events:
            if e.type == "show":
                by_round[e.data["round"]].append(e.data["what"])
        for whats in by_round.values():
            assert whats == SHOW_ORDER[: len(whats)]


def _val(c: str) -> int:
    return min("A23456789TJQK".index(c[0]) + 1, 10)


class CribbageMachine(RuleBasedStateMachine):
    ref: Referee

    @initialize(
        seed=st.text(min_size=1, max_size=8),
        move_seconds=st.sampled_from([None, 1, 30]),
        goal=st.sampled_from([121, 61, 31]),
    )
    def start(self, seed: str, move_seconds: int | None, goal: int) -> None:
        self.ref = Referee(seed, Settings(move_seconds=move_seconds, target_score=goal), 10**12)

    @precondition(lambda self: self.ref.state.status == "playing")
    @rule(choice=st.integers(0, 10_000), dt=st.integers(0, 3_000))
    def move(self, choice: int, dt: int) -> None:
        self.ref.now += dt
        self.ref.move(choice)

    @precondition(lambda self: self.ref.state.status == "playing")
    @rule(dt=st.integers(0, 70_000))
    def wait(self, dt: int) -> None:
        self.ref.wait(dt)

    @precondition(lambda self: bool(pending_deadlines(self.ref.state)))
    @rule(late=st.integers(0, 5_000))
    def timeout(self, late: int) -> None:
        self.ref.fire_next(late)

    @rule(
        seat=st.integers(0, 1),
        first=st.sampled_from(FULL_DECK),
        second=st.sampled_from(FULL_DECK),
        kind=st.sampled_from(["play", "lay_away"]),
    )
    def illegal(self, seat: int, first: str, second: str, kind: str) -> None:
        if kind == "play":
            self.ref.try_illegal(seat, Action.play(first))
        elif first != second:
            self.ref.try_illegal(seat, Action.lay_away(first, second))

    @rule(dt=st.integers(0, 10_000))
    def observe(self, dt: int) -> None:
        """Time passes (also once the game is over: nothing may change then)."""
        before = self.ref.state
        self.ref.wait(dt)
        if before.status == "finished":
            assert self.ref.state is before

    @invariant()
    def shows_in_order(self) -> None:
        if hasattr(self, "ref"):
            self.ref.check_shows()


CribbageMachine.TestCase.settings = settings(
    max_examples=depth(default=15, ci=40),
    stateful_step_count=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestC20C22C30CribbageMachine = CribbageMachine.TestCase


def test_c22_c30_ce8_random_full_games_to_the_end() -> None:
    """Whole games with random legal moves (and random waits, so timeouts happen too), every
    invariant and C30 checked after every step: 300 under the ``ci`` profile, 100 in a
    developer's run (tests/depth.py)."""
    games = depth(default=100, ci=300)
    finished = 0
    for g in range(games):
        rng = random.Random(g)
        s = Settings(move_seconds=rng.choice([None, None, 30]))
        ref = Referee(f"full-{g}", s, 10**12, thorough=False)
        steps = 0
        while ref.state.status == "playing":
            steps += 1
            assert steps < 2000
            if s.move_seconds is not None and rng.random() < 0.1:
                ref.wait(rng.randrange(0, 40_000))
            else:
                ref.now += rng.randrange(0, 2_000)
                ref.move(rng.randrange(10_000))
        ref.check_shows()
        finished += 1
        assert max(ref.state.scores) == 121
    assert finished == games


def test_c30_the_knowledge_tracker_catches_a_leak() -> None:
    """The tracker is not vacuous: the opponent's cards, the stock, or a crib card before the
    crib is counted are each flagged."""
    import pytest

    ref = Referee("tracker", Settings(), 10**12)
    r = ref.state.round
    good = view(ref.state, 0, ref.now)
    ref.know.check_view(good, 0)
    for leak in (r.hands[1][0], r.deck[20], r.deck[12]):
        bad = {**good, "hands": [good["hands"][0], [leak]]}
        with pytest.raises(AssertionError):
            ref.know.check_view(bad, 0)
    with pytest.raises(AssertionError):
        ref.know.check_view({**view(ref.state, None, ref.now), "crib": [r.hands[0][0]]}, None)
    dealt = next(e for e in ref.events if e.type == "round_dealt")
    with pytest.raises(AssertionError):
        ref.know.check_view({**good, "last_hand": {"round": 1, "stock": dealt.data["deck"]}}, 1)
