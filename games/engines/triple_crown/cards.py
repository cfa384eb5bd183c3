"""Cards, ranks and suits (rules/triple-crown.md §4, T4), in Crisp's wire notation.

A card is its two-character code everywhere -- state, events, wire: rank then suit, ``"AS"``,
``"TD"``, ``"2D"`` (the same notation as ``games.engines.crisp.cards``, so clients share one card
renderer).  Ranks run A high ... 2 low in every suit (§4).

>>> rank_index("AS") > rank_index("KS") > rank_index("2S")
True
>>> suit("TD"), sort_hand(["2D", "AS", "TC", "KH"])
('D', ['AS', 'KH', '2D', 'TC'])
>>> len(FULL_DECK), HIGH_CARD, LOW_CARD
(52, 'AS', '2D')
"""

from __future__ import annotations

from collections.abc import Iterable

from ..base import is_card  # noqa: F401  (re-exported: every game reads cards here)

#: Ranks from lowest to highest (§4); ``T`` is the ten.
RANKS = "23456789TJQKA"
#: Suits, in Crisp's order: spades, hearts, diamonds, clubs.
SUITS = "SHDC"
#: The card that makes its holder High Crown, and the one that makes Low Crown (§6).
HIGH_CARD = "AS"
LOW_CARD = "2D"
#: The tie-break among equal ranks for a timeout's "lowest legal card" (T24): clubs first.
TIMEOUT_SUIT_ORDER = "CDHS"

FULL_DECK: tuple[str, ...] = tuple(r + s for s in SUITS for r in reversed(RANKS))
_RANK = {r: i for i, r in enumerate(RANKS)}
_SUIT = {s: i for i, s in enumerate(SUITS)}


def suit(code: str) -> str:
    """The suit letter of a card."""
    return code[1]


def rank_index(code: str) -> int:
    """0 for a two ... 12 for an ace: higher wins (§4)."""
    return _RANK[code[0]]


def sort_hand(cards: Iterable[str]) -> list[str]:
    """A hand in display order: by suit (S H D C), high to low.

    Hands are always stored sorted, so nothing a seat receives keeps the shuffled deck's order.
    """
    return sorted(cards, key=lambda c: (_SUIT[c[1]], -_RANK[c[0]]))


def timeout_key(code: str) -> tuple[int, int]:
    """Sort key of T24: lowest rank first, then clubs, diamonds, hearts, spades."""
    return (_RANK[code[0]], TIMEOUT_SUIT_ORDER.index(code[1]))
