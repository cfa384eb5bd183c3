"""Actions (what a seat asks to do) with their wire forms.

Cribbage has exactly two moves (C26): laying away two cards, and playing one card in the play.
Everything else -- the cuts, go, the counts, the show -- the server does by itself (C6, C8,
C23), so it is not an action.

>>> Action.from_wire({"type": "lay_away", "cards": ["KS", "2H"]})
Action(type='lay_away', cards=('2H', 'KS'), card=None)
>>> Action.play("5H").to_wire()
{'type': 'play', 'card': '5H'}
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..base import Event
from .cards import is_card, sort_cards
from .errors import BAD_ACTION, IllegalAction

__all__ = ["ACTION_TYPES", "Action", "Event"]

ACTION_TYPES: tuple[str, ...] = ("lay_away", "play")


@dataclass(frozen=True, slots=True)
class Action:
    """One move.  ``cards`` (lay-away) is kept in hand order, so the same two cards sent in
    either order are the same action (and compare equal to ``legal_actions``' entries)."""

    type: str
    cards: tuple[str, ...] | None = None
    card: str | None = None

    @classmethod
    def lay_away(cls, a: str, b: str) -> Action:
        return cls("lay_away", cards=tuple(sort_cards([a, b])))

    @classmethod
    def play(cls, card: str) -> Action:
        return cls("play", card=card)

    def to_wire(self) -> dict[str, Any]:
        """The JSON form clients send (docs/ENGINE.md, "Cribbage's engine")."""
        if self.type == "lay_away":
            return {"type": "lay_away", "cards": list(self.cards or ())}
        return {"type": "play", "card": self.card}

    @classmethod
    def from_wire(cls, d: object) -> Action:
        """Parse and validate a wire action; anything malformed raises ``bad_action``.

        Shape only: whether the seat holds the cards, and whether it is their move, is for
        ``apply`` to decide.

        >>> Action.from_wire({"type": "lay_away", "cards": ["KS", "KS"]})
        Traceback (most recent call last):
        ...
        games.engines.base.IllegalAction: bad_action: lay_away needs "cards": two different cards
        """
        if not isinstance(d, dict):
            raise IllegalAction(BAD_ACTION, "an action must be a JSON object")
        t = d.get("type")
        if t == "lay_away":
            cards = d.get("cards")
            if (
                not isinstance(cards, list)
                or len(cards) != 2
                or not all(is_card(c) for c in cards)
                or cards[0] == cards[1]
            ):
                raise IllegalAction(BAD_ACTION, 'lay_away needs "cards": two different cards')
            act = cls.lay_away(cards[0], cards[1])
            expected = {"type", "cards"}
        elif t == "play":
            if not is_card(d.get("card")):
                raise IllegalAction(BAD_ACTION, 'play needs "card": a card code such as "5H"')
            act = cls.play(d["card"])
            expected = {"type", "card"}
        else:
            raise IllegalAction(BAD_ACTION, f"unknown action type {t!r} (lay_away or play)")
        extra = set(d) - expected
        if extra:
            raise IllegalAction(BAD_ACTION, f"unexpected fields for {t}: {sorted(extra)}")
        return act

    def __str__(self) -> str:
        """Compact notation for test ids and logs: ``lay_away:2H+KS``, ``play:5H``."""
        if self.type == "lay_away":
            return "lay_away:" + "+".join(self.cards or ())
        return f"play:{self.card}"
