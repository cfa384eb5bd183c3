"""Cards and their two-character wire notation (rules/crisp.md section 3).

A card is represented everywhere -- in the state, in events, on the wire -- by its two-character
code: rank then suit, ``"AS"``, ``"TD"``, ``"QH"``, ``"7C"``.  Plain strings keep the state
trivially JSON-safe and make views cheap to build; this module is the one place that knows what
the characters mean.

>>> card_value("AS"), card_value("7C"), card_value("TD"), card_value("KH")
(1, 7, 10, 10)
>>> is_special("QH"), is_special("TD")
(True, False)
>>> len(FULL_DECK), FULL_DECK[:3]
(52, ('AS', '2S', '3S'))
"""

from __future__ import annotations

from collections.abc import Iterable

from ..base import is_card  # noqa: F401  (re-exported: every game reads cards here)

#: Ranks in order; ``T`` is the ten.
RANKS = "A23456789TJQK"
#: Suits: spades, hearts, diamonds, clubs.
SUITS = "SHDC"
#: The three court cards with an effect when drawn from the deck (section 5).
SPECIAL_RANKS = "JQK"

#: Every card once, suit by suit (the order is only a convention; decks are always explicit).
FULL_DECK: tuple[str, ...] = tuple(r + s for s in SUITS for r in RANKS)

_VALUES = {r: (i + 1 if i < 9 else 10) for i, r in enumerate(RANKS)}


def rank(code: str) -> str:
    """The rank character of a card (``"T"`` for ten)."""
    return code[0]


def card_value(code: str) -> int:
    """Points a card is worth in a hand: Ace 1, 2-9 face value, T/J/Q/K 10 (section 3)."""
    return _VALUES[code[0]]


def is_special(code: str) -> bool:
    """Jack, Queen or King: cards that have an effect when drawn from the deck (section 5)."""
    return code[0] in SPECIAL_RANKS


def hand_total(cards: Iterable[str]) -> int:
    """Total of a seat's three cards at the reveal (section 8).

    >>> hand_total(["AS", "AH", "2C"])
    4
    """
    return sum(_VALUES[c[0]] for c in cards)
