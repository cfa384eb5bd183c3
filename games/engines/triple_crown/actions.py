"""Actions (what a seat asks to do) and their wire forms.

Two moves exist (T23): the Double Stakes declaration and the play of one card.

>>> Action.from_wire({"type": "play", "card": "QH"})
Action(type='play', card='QH', trumps=None, memo=None)
>>> Action.declare("NT", "low").to_wire()
{'type': 'declare', 'trumps': 'NT', 'memo': 'low'}
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..base import Event
from .cards import is_card
from .errors import BAD_ACTION, IllegalAction

__all__ = ["ACTION_TYPES", "MEMOS", "TRUMPS", "Action", "Event"]

ACTION_TYPES: tuple[str, ...] = ("declare", "play")
#: The trump choices of T9: a suit letter or ``"NT"`` for no-trump.
TRUMPS = ("S", "H", "D", "C", "NT")
#: The secret memo of T9: which crown the Double Stakes player wrote down.
MEMOS = ("high", "low")


@dataclass(frozen=True, slots=True)
class Action:
    """One move.  Build with ``Action.play(card)`` / ``Action.declare(trumps, memo)``."""

    type: str
    card: str | None = None
    trumps: str | None = None
    memo: str | None = None

    @classmethod
    def play(cls, card: str) -> Action:
        return cls("play", card=card)

    @classmethod
    def declare(cls, trumps: str, memo: str) -> Action:
        return cls("declare", trumps=trumps, memo=memo)

    def to_wire(self) -> dict[str, Any]:
        """The JSON form clients send (docs/ENGINE.md, Triple Crown section)."""
        if self.type == "play":
            return {"type": "play", "card": self.card}
        return {"type": "declare", "trumps": self.trumps, "memo": self.memo}

    @classmethod
    def from_wire(cls, d: object) -> Action:
        """Parse a wire action; anything malformed raises ``bad_action``.

        Shape only: whether the move is legal *now* is ``apply``'s question.

        >>> Action.from_wire({"type": "declare", "trumps": "X", "memo": "low"})
        Traceback (most recent call last):
        ...
        games.engines.base.IllegalAction: bad_action: declare needs "trumps": S, H, D, C or NT
        """
        if not isinstance(d, dict):
            raise IllegalAction(BAD_ACTION, "an action must be a JSON object")
        t = d.get("type")
        if t not in ACTION_TYPES:
            raise IllegalAction(BAD_ACTION, f"unknown action type {t!r}")
        if t == "play":
            expected = {"type", "card"}
            if not is_card(d.get("card")):
                raise IllegalAction(BAD_ACTION, 'play needs "card": a card code such as "TD"')
            act = cls("play", card=d["card"])
        else:
            expected = {"type", "trumps", "memo"}
            if d.get("trumps") not in TRUMPS:
                raise IllegalAction(BAD_ACTION, 'declare needs "trumps": S, H, D, C or NT')
            if d.get("memo") not in MEMOS:
                raise IllegalAction(BAD_ACTION, 'declare needs "memo": "high" or "low"')
            act = cls("declare", trumps=d["trumps"], memo=d["memo"])
        extra = set(d) - expected
        if extra:
            raise IllegalAction(BAD_ACTION, f"unexpected fields for {t}: {sorted(extra)}")
        return act

    def __str__(self) -> str:
        """Short notation for test ids and logs: ``play:QH``, ``declare:NT:low``."""
        if self.type == "play":
            return f"play:{self.card}"
        return f"declare:{self.trumps}:{self.memo}"
