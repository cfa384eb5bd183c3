"""Helpers shared by the cribbage engine tests: stacked decks, seeds with a known first
dealer, state surgery through the JSON form, and a driver that plays a hand out."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import cache
from typing import Any

from games.engines.cribbage import (
    FULL_DECK,
    Action,
    Event,
    GameState,
    Settings,
    apply,
    cut_for_deal,
    legal_actions,
    new_game,
)

T0 = 1_700_000_000_000  # an arbitrary epoch instant (ms)


def cards(s: str) -> list[str]:
    """``cards("5C 5D JS")`` -> ``["5C", "5D", "JS"]``."""
    return s.split()


def stacked(pone: Iterable[str], dealer: Iterable[str], starter: str) -> list[str]:
    """A full deck dealing ``pone``'s and ``dealer``'s six cards (alternately, pone first, C4)
    with ``starter`` at position 12 (CE3); the stock is the rest in a fixed order."""
    p, d = list(pone), list(dealer)
    assert len(p) == len(d) == 6
    top = [c for pair in zip(p, d, strict=True) for c in pair] + [starter]
    assert len(set(top)) == 13, top
    return top + [c for c in FULL_DECK if c not in top]


@cache
def seed_with_dealer(dealer: int, n: int = 0) -> str:
    """The ``n``-th seed (in a fixed search) whose cut for deal makes ``dealer`` deal first."""
    found = -1
    i = 0
    while True:
        seed = f"dealer-search-{i}"
        if cut_for_deal(seed)[1] == dealer:
            found += 1
            if found == n:
                return seed
        i += 1


def game(
    decks: Sequence[Sequence[str]] | None = None,
    *,
    dealer: int = 0,
    settings: Settings | None = None,
    now: int = T0,
) -> tuple[GameState, list[Event]]:
    """A new game whose first dealer is ``dealer``."""
    return new_game(
        seats=2,
        settings=settings or Settings(),
        seed=seed_with_dealer(dealer),
        now=now,
        decks=decks,
    )


def with_scores(st: GameState, scores: Sequence[int]) -> GameState:
    """The same table with other running totals (how the end-of-game tests start at 115)."""
    d = st.to_json()
    d["scores"] = list(scores)
    d["back_pegs"] = list(scores)
    return GameState.from_json(d)


def lay(st: GameState, seat: int, a: str, b: str, now: int = T0) -> tuple[GameState, list[Event]]:
    return apply(st, seat, Action.lay_away(a, b), now)


def play(st: GameState, seat: int, card: str, now: int = T0) -> tuple[GameState, list[Event]]:
    return apply(st, seat, Action.play(card), now)


def run_plays(
    st: GameState, moves: Iterable[tuple[int, str]], now: int = T0
) -> tuple[GameState, list[Event]]:
    """Play ``(seat, card)`` moves in order, collecting every event."""
    out: list[Event] = []
    for seat, card in moves:
        st, ev = play(st, seat, card, now)
        out += ev
    return st, out


def lowest_first(st: GameState, now: int = T0) -> tuple[GameState, list[Event]]:
    """Play the current hand out, each seat always playing its lowest playable card, until
    the hand is over (the next hand dealt) or the game is finished."""
    out: list[Event] = []
    n = st.round_number
    while st.status == "playing" and st.round_number == n:
        seat = st.round.turn
        assert seat is not None, "the play awaits a lay-away"
        acts = legal_actions(st, seat, now)
        st, ev = apply(st, seat, acts[0], now)
        out += ev
    return st, out


def types(events: Iterable[Event]) -> list[str]:
    return [e.type for e in events]


def of_type(events: Iterable[Event], typ: str) -> list[dict[str, Any]]:
    return [e.data for e in events if e.type == typ]


def scoring(events: Iterable[Event]) -> list[tuple[str, int, int]]:
    """``(type, seat, scored)`` of every scoring event with points, in order."""
    return [
        (e.type, e.data["seat"], e.data["scored"])
        for e in events
        if "scored" in e.data and e.data["points"]
    ]
