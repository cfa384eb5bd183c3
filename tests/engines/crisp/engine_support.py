"""Helpers for the engine tests: stacked decks and a small table driver.

Scenarios speak in the wire vocabulary's short form (``"draw"``, ``"draw:pile"``,
``"swap:left"``, ``"queen:centre>2:left"``...), like python-chess tests speak UCI.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterable, Sequence
from typing import Any

import pytest

from games.engines.crisp import (
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
    new_game,
    pending_deadlines,
    view,
)
from games.engines.crisp.rules import first_dealer_for
from games.engines.crisp.state import Round, Turn


def act(s: str | dict[str, Any] | Action) -> Action:
    """Parse the short notation (or a wire dict) into an Action."""
    if isinstance(s, Action):
        return s
    if isinstance(s, dict):
        return Action.from_wire(s)
    head, _, rest = s.partition(":")
    if head == "draw":
        return Action.draw(rest or "deck")
    if head == "swap":
        return Action.swap(rest)
    if head == "queen":
        mine, theirs = rest.split(">")
        seat, place = theirs.split(":")
        return Action.queen(mine, int(seat), place)
    return Action.from_wire({"type": head})


def seed_for_dealer(seats: int, dealer: int) -> str:
    """A seed whose first dealer (R2) is ``dealer``."""
    for i in itertools.count():
        seed = f"seed-{i}"
        if first_dealer_for(seed, seats) == dealer:
            return seed
    raise AssertionError  # pragma: no cover


def stack_deck(
    seats: int, dealer: int, hands: dict[int, Sequence[str]], top: Iterable[str] = ()
) -> list[str]:
    """A 52-card deck that deals ``hands`` (seat -> [left, centre, right]) under R1 and then
    has ``top`` as the first cards of the deck.  Unnamed places and the rest of the deck are
    filled from the unused cards, plain cards (A-T) first."""
    top = list(top)
    named = [c for h in hands.values() for c in h] + top
    assert len(set(named)) == len(named), "a card named twice"
    unused = [c for c in FULL_DECK if c not in set(named)]
    # Plain cards first, so that unnamed draws never surprise a scenario with a special.
    filler = iter(sorted(unused, key=lambda c: c[0] in "JQK"))
    deck = []
    for i in range(3 * seats):
        seat = (dealer + 1 + i) % seats
        h = hands.get(seat)
        deck.append(h[i // seats] if h is not None else next(filler))
    deck += top
    deck += list(filler)
    assert sorted(deck) == sorted(FULL_DECK)
    return deck


class Table:
    """A game under test: the current state, a clock, every event so far."""

    def __init__(
        self,
        seats: int = 3,
        hands: dict[int, Sequence[str]] | None = None,
        top: Iterable[str] = (),
        *,
        dealer: int = 0,
        now: int = 0,
        more_decks: Sequence[Sequence[str]] = (),
        **settings: Any,
    ) -> None:
        self.settings = Settings(**settings)
        self.seats = seats
        self.seed = seed_for_dealer(seats, dealer)
        self.deck = stack_deck(seats, dealer, hands or {}, top)
        self.state, ev = new_game(
            seats=seats,
            settings=self.settings,
            seed=self.seed,
            now=now,
            decks=[self.deck, *more_decks],
        )
        self.now = now
        self.events: list[Event] = list(ev)
        self.log: list[tuple[str, Any, Any, int]] = []

    # -- shortcuts into the state ------------------------------------------------------------
    @property
    def r(self) -> Round:
        return self.state.round

    @property
    def t(self) -> Turn:
        return self.state.round.turn

    def hand(self, seat: int) -> list[str]:
        return list(self.state.round.hands[seat])

    @property
    def pile(self) -> list[str]:
        return list(self.state.round.pile)

    @property
    def deck_left(self) -> list[str]:
        return list(self.state.round.deck)

    # -- driving ----------------------------------------------------------------------------
    def do(self, seat: int, *actions: str | dict | Action, at: int | None = None) -> list[Event]:
        """Apply actions in order at ``at`` (default: now; a draw in a turn that has not
        started yet waits for its start).  Returns the events of all of them."""
        if at is not None:
            self.now = at
        out: list[Event] = []
        for a in actions:
            a = act(a)
            if at is None and a.type == "draw":
                t = self.state.round.turn
                if t is not None and t.phase == "start" and t.seat == seat:
                    self.now = max(self.now, t.start_at)
            self.log.append(("apply", seat, a, self.now))
            self.state, ev = apply(self.state, seat, a, self.now)
            self.events += ev
            out += ev
        return out

    def refuse(self, seat: int, action: str | dict | Action, code: str, at: int | None = None):
        """Assert that the action is refused with ``code`` and changes nothing."""
        when = self.now if at is None else at
        before = self.state.to_json()
        with pytest.raises(IllegalAction) as info:
            apply(self.state, seat, act(action), when)
        assert info.value.code == code, info.value
        assert self.state.to_json() == before
        return info.value

    def advance(self, to: int) -> list[Event]:
        self.now = to
        self.log.append(("advance", None, None, to))
        self.state, ev = advance(self.state, to)
        self.events += ev
        return ev

    def fire(self, key: str, now: int) -> list[Event]:
        self.now = now
        self.log.append(("fire", None, key, now))
        self.state, ev = fire(self.state, key, now)
        self.events += ev
        return ev

    def deadlines(self) -> dict[str, int]:
        return {d.kind: d.at for d in pending_deadlines(self.state)}

    def view(self, seat: int | None) -> dict[str, Any]:
        return view(self.state, seat, self.now)

    def seen(self, seat: int | None, events: Iterable[Event] | None = None) -> list[dict]:
        return [event_view(e, seat) for e in (self.events if events is None else events)]

    def replay(self) -> GameState:
        """Replay the log from the same deck and seed; must reproduce the state."""
        st, _ = new_game(
            seats=self.seats,
            settings=self.settings,
            seed=self.seed,
            now=self.events[0].data["at"],
            decks=[self.deck],
        )
        for kind, seat, x, now in self.log:
            if kind == "apply":
                st, _ = apply(st, seat, x, now)
            elif kind == "advance":
                st, _ = advance(st, now)
            else:
                st, _ = fire(st, x, now)
        return st


def types(events: Iterable[Event]) -> list[str]:
    return [e.type for e in events]


def of_type(events: Iterable[Event], typ: str) -> list[Event]:
    return [e for e in events if e.type == typ]


_CARD_TOKEN = re.compile(r'"([A2-9TJQK][SHDC])"')


def cards_in(obj: Any) -> set[str]:
    """Every card code anywhere inside a JSON-like value (as a whole JSON string, key or
    value), or inside a plain string such as an error reason."""
    if isinstance(obj, str):
        return {c for c in re.findall(r"\b([A2-9TJQK][SHDC])\b", obj)}
    return cards_in_json(json.dumps(obj))


def cards_in_json(raw: str) -> set[str]:
    """Every card code appearing as a whole JSON string in serialised JSON ``raw``."""
    return set(_CARD_TOKEN.findall(raw))
