"""Cards, their two-character wire notation, and cribbage's rank and hand orders.

The notation is Crisp's (``games/engines/crisp/cards.py``): rank then suit, ``"AS"``, ``"TD"``,
``"QH"``, ``"7C"`` -- one convention for every game on the site, so the front end draws a card
from the same code whatever the table.  Cribbage adds what its rules need (rules/cribbage.md
C2): the rank order A < 2 < ... < 10 < J < Q < K (cuts, pairs, runs), the counting values
(count, fifteens) and the fixed *hand order* -- rank, then suit clubs, diamonds, hearts,
spades -- used to sort hands and to pick a timeout's cards (C29).

>>> value("AS"), value("7C"), value("TD"), value("KH")
(1, 7, 10, 10)
>>> sort_cards(["KS", "2H", "KC", "AS"])
['AS', '2H', 'KC', 'KS']
>>> len(FULL_DECK), FULL_DECK[:3]
(52, ('AC', 'AD', 'AH'))
"""

from __future__ import annotations

from collections.abc import Iterable

from ..base import is_card  # noqa: F401  (re-exported: every game reads cards here)

#: Ranks low to high (C2); ``T`` is the ten.
RANKS = "A23456789TJQK"
#: Suits in the fixed order of C2/C29: clubs, diamonds, hearts, spades.
SUITS = "CDHS"

#: Every card once, in hand order (a convention only: decks are always explicit).
FULL_DECK: tuple[str, ...] = tuple(r + s for r in RANKS for s in SUITS)
_RANK = {r: i + 1 for i, r in enumerate(RANKS)}  # A=1 ... K=13
_SUIT = {s: i for i, s in enumerate(SUITS)}
_VALUE = {r: min(i + 1, 10) for i, r in enumerate(RANKS)}
_ORDER = {c: i for i, c in enumerate(FULL_DECK)}


def rank(code: str) -> int:
    """The rank number, Ace 1 to King 13 (C2: cuts, pairs and runs)."""
    return _RANK[code[0]]


def suit(code: str) -> str:
    """The suit character."""
    return code[1]


def value(code: str) -> int:
    """The counting value: Ace 1, two to nine face value, ten and picture cards 10 (section 1)."""
    return _VALUE[code[0]]


def hand_order(code: str) -> int:
    """The position of a card in hand order (rank, then suit clubs < diamonds < hearts <
    spades, C29): a total order, so sorting and "highest"/"lowest" are never ambiguous."""
    return _ORDER[code]


def sort_cards(cards: Iterable[str]) -> list[str]:
    """The cards in hand order (how hands, the crib and breakdowns are always listed)."""
    return sorted(cards, key=_ORDER.__getitem__)
