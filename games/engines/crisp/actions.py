"""Actions (what a seat asks to do) and events (what happened), with their wire forms.

Both are small frozen value types, like python-chess's ``Move``: the wire dict is also the
vocabulary the tests speak.

>>> Action.from_wire({"type": "swap", "place": "left"})
Action(type='swap', source=None, place='left', target_seat=None, target_place=None)
>>> Action.queen("centre", 2, "left").to_wire()
{'type': 'queen', 'place': 'centre', 'target_seat': 2, 'target_place': 'left'}
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..base import Event
from .errors import BAD_ACTION, IllegalAction

__all__ = ["ACTION_TYPES", "PLACES", "PLACE_INDEX", "SOURCES", "Action", "Event"]

#: A seat's three places, in deal order (R1).
PLACES = ("left", "centre", "right")
PLACE_INDEX = {p: i for i, p in enumerate(PLACES)}
SOURCES = ("deck", "pile")
#: ``pass`` is R28's "no" to "Call crisp?" (turn-based games only); ``call`` is its "yes" there
#: and the call in the window of a live game.
ACTION_TYPES: tuple[str, ...] = (
    "look",
    "draw",
    "swap",
    "discard",
    "jack",
    "queen",
    "king",
    "call",
    "pass",
)


@dataclass(frozen=True, slots=True)
class Action:
    """One thing a seat asks to do.  Build with the class helpers or ``from_wire``."""

    type: str
    source: str | None = None
    place: str | None = None
    target_seat: int | None = None
    target_place: str | None = None

    # -- constructors -----------------------------------------------------------------------
    @classmethod
    def look(cls) -> Action:
        return cls("look")

    @classmethod
    def draw(cls, source: str = "deck") -> Action:
        return cls("draw", source=source)

    @classmethod
    def swap(cls, place: str) -> Action:
        return cls("swap", place=place)

    @classmethod
    def discard(cls) -> Action:
        return cls("discard")

    @classmethod
    def jack(cls) -> Action:
        return cls("jack")

    @classmethod
    def queen(cls, place: str, target_seat: int, target_place: str) -> Action:
        return cls("queen", place=place, target_seat=target_seat, target_place=target_place)

    @classmethod
    def king(cls) -> Action:
        return cls("king")

    @classmethod
    def call(cls) -> Action:
        return cls("call")

    @classmethod
    def pass_(cls) -> Action:
        """R28's "no" to "Call crisp?" (``pass`` is a Python keyword, hence the underscore)."""
        return cls("pass")

    # -- wire -------------------------------------------------------------------------------
    def to_wire(self) -> dict[str, Any]:
        """The JSON form sent by clients (see docs/ENGINE.md)."""
        d: dict[str, Any] = {"type": self.type}
        if self.type == "draw":
            d["source"] = self.source
        elif self.type == "swap":
            d["place"] = self.place
        elif self.type == "queen":
            d["place"] = self.place
            d["target_seat"] = self.target_seat
            d["target_place"] = self.target_place
        return d

    @classmethod
    def from_wire(cls, d: object) -> Action:
        """Parse and validate a wire action; anything malformed raises ``bad_action``.

        Shape only: whether the action is legal *now* is for ``apply`` to decide.

        >>> Action.from_wire({"type": "draw"})
        Traceback (most recent call last):
        ...
        games.engines.base.IllegalAction: bad_action: draw needs "source": "deck" or "pile"
        """
        if not isinstance(d, dict):
            raise IllegalAction(BAD_ACTION, "an action must be a JSON object")
        t = d.get("type")
        if t not in ACTION_TYPES:
            raise IllegalAction(BAD_ACTION, f"unknown action type {t!r}")
        expected = {"type"}
        if t == "draw":
            expected |= {"source"}
            if d.get("source") not in SOURCES:
                raise IllegalAction(BAD_ACTION, 'draw needs "source": "deck" or "pile"')
            act = cls("draw", source=d["source"])
        elif t == "swap":
            expected |= {"place"}
            if d.get("place") not in PLACES:
                raise IllegalAction(BAD_ACTION, 'swap needs "place": "left", "centre" or "right"')
            act = cls("swap", place=d["place"])
        elif t == "queen":
            expected |= {"place", "target_seat", "target_place"}
            ts = d.get("target_seat")
            if (
                d.get("place") not in PLACES
                or d.get("target_place") not in PLACES
                or not isinstance(ts, int)
                or isinstance(ts, bool)
            ):
                raise IllegalAction(
                    BAD_ACTION, 'queen needs "place", "target_seat" (int) and "target_place"'
                )
            act = cls("queen", place=d["place"], target_seat=ts, target_place=d["target_place"])
        else:
            act = cls(t)
        extra = set(d) - expected
        if extra:
            raise IllegalAction(BAD_ACTION, f"unexpected fields for {t}: {sorted(extra)}")
        return act

    def __str__(self) -> str:
        """Compact notation for test names and logs, e.g. ``queen:centre>2:left``."""
        if self.type == "draw":
            return f"draw:{self.source}"
        if self.type == "swap":
            return f"swap:{self.place}"
        if self.type == "queen":
            return f"queen:{self.place}>{self.target_seat}:{self.target_place}"
        return self.type
