"""Helpers for the Triple Crown engine tests: stacked deals, a table driver, and the tests' OWN
models of the rules -- a trick evaluator, a legality check and a knowledge tracker -- written
here from rules/triple-crown.md without importing the engine's implementation of them, so the
engine is checked against something it did not write itself.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from games.engines.triple_crown import (
    FULL_DECK,
    Action,
    Event,
    GameState,
    Settings,
    apply,
    event_view,
    legal_actions,
    new_game,
    view,
)
from games.engines.triple_crown.rules import first_dealer_for

RANK_ORDER = "23456789TJQKA"  # §4, written out again here on purpose
ROLE_WORDS = frozenset({"high", "low", "team", "double", "opponent"})


def seed_for_dealer(dealer: int) -> str:
    """A seed whose first dealer (T2) is ``dealer``."""
    for i in itertools.count():
        seed = f"tc-seed-{i}"
        if first_dealer_for(seed) == dealer:
            return seed
    raise AssertionError  # pragma: no cover


def stack(hands: Sequence[Sequence[str]], dealer: int) -> list[str]:
    """The deck order (top first) that T3's deal turns into ``hands`` (by seat).

    Card *i* of the deck goes to seat ``dealer + 1 + i`` (mod 4), so deck position ``4k + j``
    holds card *k* of seat ``dealer + 1 + j``.
    """
    assert sorted(c for h in hands for c in h) == sorted(FULL_DECK)
    deck = []
    for k in range(13):
        for j in range(4):
            deck.append(hands[(dealer + 1 + j) % 4][k])
    return deck


def hands_from(spec: dict[int, Iterable[str]]) -> list[list[str]]:
    """Complete a partial deal: the named cards go to the named seats, the rest of the deck
    fills the other places in FULL_DECK order."""
    hands: list[list[str]] = [list(spec.get(s, [])) for s in range(4)]
    used = {c for h in hands for c in h}
    rest = [c for c in FULL_DECK if c not in used]
    for s in range(4):
        while len(hands[s]) < 13:
            hands[s].append(rest.pop(0))
    return hands


def start(
    hands: Sequence[Sequence[str]],
    dealer: int = 3,
    settings: Settings | None = None,
    now: int = 0,
    more_decks: Sequence[Sequence[str]] = (),
) -> tuple[GameState, list[Event]]:
    """A new game whose first hand deals exactly ``hands`` with ``dealer`` dealing."""
    return new_game(
        seats=4,
        settings=settings or Settings(),
        seed=seed_for_dealer(dealer),
        now=now,
        decks=[stack(hands, dealer), *more_decks],
    )


def beats(card: str, best: str, led: str, trumps: str | None) -> bool:
    """Does ``card`` beat the trick's current ``best``?  T13, independently of the engine."""
    trump = trumps if trumps in ("S", "H", "D", "C") else None
    c_trump, b_trump = card[1] == trump, best[1] == trump
    if c_trump != b_trump:
        return c_trump
    if card[1] != best[1]:
        return False  # neither trumps nor the same suit: an off-suit card never wins
    return RANK_ORDER.index(card[0]) > RANK_ORDER.index(best[0])


def winner_of(cards: Sequence[Sequence[Any]], trumps: str | None) -> int:
    """The seat that takes ``[[seat, card], ...]`` (led first), walked card by card."""
    led = cards[0][1][1]
    best_seat, best = cards[0][0], cards[0][1]
    for seat, card in cards[1:]:
        if beats(card, best, led, trumps):
            best_seat, best = seat, card
    return best_seat


def may_play(hand: Sequence[str], trick: Sequence[Sequence[Any]], card: str) -> bool:
    """T12 from first principles: in hand, and on suit if the hand holds the suit led."""
    if card not in hand:
        return False
    if not trick:
        return True
    led = trick[0][1][1]
    return card[1] == led or not any(c[1] == led for c in hand)


def role_of(hand: Iterable[str]) -> str | None:
    """A seat's own knowledge of its role (§6, §7): from its own 13 cards alone.  ``None``
    for Team Crown or Double Stakes opponent, which need the announcement to tell apart."""
    h = set(hand)
    if {"AS", "2D"} <= h:
        return "double"
    if "AS" in h:
        return "high"
    if "2D" in h:
        return "low"
    return None


def play_random(
    state: GameState, rng: random.Random, now: int = 0, step_ms: int = 0
) -> tuple[GameState, list[Event], int]:
    """One random legal move by whoever is to act; returns the state, events and new time."""
    seat = state.round.turn
    assert seat is not None
    acts = legal_actions(state, seat, now)
    assert acts, "the seat on turn always has a legal move"
    st, ev = apply(state, seat, rng.choice(acts), now)
    return st, ev, now + step_ms


def leaves(obj: Any, path: tuple[Any, ...] = ()) -> Iterable[tuple[tuple[Any, ...], Any]]:
    """Every (path, leaf) of a JSON-like value."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from leaves(v, (*path, k))
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            yield from leaves(v, (*path, i))
    else:
        yield path, obj


class Knowledge:
    """What one receiver (a seat, or ``None`` for a spectator) is entitled to know, by T27.

    Fed the FULL events in order (the truth), it keeps: the cards of the current hand the
    receiver may know (its own deal, then every card as it is played), its own role, whether it
    may know the memo, and which hands have been revealed.  ``check_view`` / ``check_event``
    then walk every leaf of a payload sent to that receiver and fail on any card code, role word
    or memo it is not entitled to at that moment.  It never calls engine view code.
    """

    def __init__(self, receiver: int | None, seed: str) -> None:
        self.r = receiver
        self.seed = seed
        self.hand_no = 0
        self.cards: set[str] = set()
        self.own_role: str | None = None
        self.memo: str | None = None  # the memo, once this receiver may know it
        self.ds_seat: int | None = None
        self.revealed: set[int] = set()

    # -- the truth ---------------------------------------------------------------------------
    def learn(self, e: Event) -> None:
        d = e.data
        if e.type == "round_dealt":
            self.hand_no = d["round"]
            hands = d["hands"]
            self.ds_seat = next((s for s in range(4) if {"AS", "2D"} <= set(hands[s])), None)
            self.cards = set(hands[self.r]) if self.r is not None else set()
            self.memo = None
            if self.r is None:
                self.own_role = None
            else:
                mine = role_of(hands[self.r])
                if self.ds_seat is not None:
                    self.own_role = "double" if self.r == self.ds_seat else "opponent"
                else:
                    self.own_role = mine or "team"
        elif e.type == "declared":
            if self.r is not None and self.r == self.ds_seat:
                self.memo = d["memo"]
        elif e.type == "card_played":
            self.cards.add(d["card"])
        elif e.type == "hand_over":
            self.revealed.add(d["round"])

    # -- the checks --------------------------------------------------------------------------
    def _current_open(self) -> bool:
        return self.hand_no not in self.revealed

    def _check(self, payload: dict[str, Any], where: str, revealed_roots: set[str]) -> None:
        for path, leaf in leaves(payload):
            if not isinstance(leaf, str):
                continue
            root = path[0] if path else None
            about_revealed = root in revealed_roots
            if about_revealed or not self._current_open():
                continue
            if leaf in FULL_DECK:
                assert leaf in self.cards, f"{where}: card {leaf} at {path} leaked to {self.r}"
            elif leaf in ROLE_WORDS:
                ok = (path == ("you", "role") and leaf == self.own_role) or (
                    path[-1] == "memo" and self.memo is not None and leaf == self.memo
                )
                assert ok, f"{where}: role/memo word {leaf!r} at {path} leaked to {self.r}"
            assert leaf != self.seed, f"{where}: the seed leaked"

    def check_view(self, state: GameState, now: int) -> None:
        v = view(state, self.r, now)
        roots = set()
        for key in ("last_hand", "reveal"):
            if v.get(key) is not None:
                assert v[key]["round"] in self.revealed, f"{key} of an unrevealed hand"
                roots.add(key)
        if self.r is None:
            assert "you" not in v
        self._check(v, "view", roots)

    def check_event(self, e: Event) -> None:
        ev = event_view(e, self.r)
        assert set(ev["data"]) == set(e.data), "a redacted event keeps every key"
        if e.type == "hand_over":
            assert ev["data"]["round"] in self.revealed
            return
        if e.type == "round_dealt":
            assert ev["data"]["deck"] is None
            # the new hand: judged against its own entitlement (learn() ran first)
        self._check(ev["data"], f"event {e.type}", set())


def drive(
    state: GameState,
    events: list[Event],
    trackers: list[Knowledge],
    rng: random.Random,
    choose: Callable[[GameState, list[Action], random.Random], Action] | None = None,
    max_moves: int = 2000,
    now: int = 0,
) -> GameState:
    """Play random legal moves to the end, feeding every tracker every event and checking every
    receiver's view after each change."""
    for e in events:
        for k in trackers:
            k.learn(e)
            k.check_event(e)
    for _ in range(max_moves):
        if state.status != "playing":
            return state
        seat = state.round.turn
        assert seat is not None
        acts = legal_actions(state, seat, now)
        a = choose(state, acts, rng) if choose else rng.choice(acts)
        state, evs = apply(state, seat, a, now)
        for e in evs:
            for k in trackers:
                k.learn(e)
                k.check_event(e)
        for k in trackers:
            k.check_view(state, now)
    raise AssertionError("the game did not end")  # pragma: no cover
