"""The two pure scoring functions: the show (``score_hand``) and the play (``score_pegging``).

They are the whole of cribbage's arithmetic (rules/cribbage.md C11, C13-C18) and nothing else:
no state, no time, no seats.  The engine calls them for every card played and every hand shown,
and a table UI can call them (or read their JSON in the events) to *say* the count the way
players do -- every item carries the cards that make it, so "fifteen two, fifteen four, and a
pair is six" can be drawn card by card.

>>> h = score_hand(["5C", "5D", "5H", "JS"], "5S", is_crib=False)
>>> h.total, len(h.fifteens), len(h.pairs), h.nobs.cards
(29, 8, 6, ('JS',))
>>> score_pegging(["4C", "6D", "5H"]).to_json()["points"]
5
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations, product
from typing import Any

from .cards import is_card, rank, sort_cards, suit, value

__all__ = ["HandScore", "PegScore", "ScoreItem", "score_hand", "score_pegging"]

_UNITS = (
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen",
    "nineteen",
)  # fmt: skip
#: Spoken numbers up to 29, the best hand (C19).
_NUMBERS = (*_UNITS, "twenty", *(f"twenty-{u}" for u in _UNITS[1:10]))


@dataclass(frozen=True, slots=True)
class ScoreItem:
    """One scoring combination: what it is, what it is worth, and the cards that make it.

    ``kind`` is one of ``fifteen``, ``pair``, ``run``, ``flush``, ``nobs`` (the show) or
    ``fifteen``, ``thirty_one``, ``pair``, ``pair_royal``, ``double_pair_royal``, ``run`` (the
    play).  A run's length is ``len(cards)``.
    """

    kind: str
    points: int
    cards: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "points": self.points, "cards": list(self.cards)}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> ScoreItem:
        return cls(d["kind"], d["points"], tuple(d["cards"]))


@dataclass(frozen=True, slots=True)
class HandScore:
    """A hand's or the crib's score at the show (C13-C18), item by item.

    Every fifteen, every pair and every run combination is its own item, so the list *is* the
    traditional spoken count; ``total`` is their sum.
    """

    cards: tuple[str, ...]
    starter: str
    is_crib: bool
    fifteens: tuple[ScoreItem, ...]
    pairs: tuple[ScoreItem, ...]
    runs: tuple[ScoreItem, ...]
    flush: ScoreItem | None
    nobs: ScoreItem | None

    @property
    def items(self) -> tuple[ScoreItem, ...]:
        """Every item in the display order of C21: fifteens, pairs, runs, flush, nobs."""
        tail = tuple(i for i in (self.flush, self.nobs) if i is not None)
        return self.fifteens + self.pairs + self.runs + tail

    @property
    def total(self) -> int:
        return sum(i.points for i in self.items)

    def spoken(self) -> str:
        """The count as a player says it.

        >>> score_hand(["4H", "5H", "6H", "JH"], "5S", is_crib=False).spoken()
        'fifteen two, fifteen four, fifteen six, fifteen eight, a pair is ten, a run of three \
is thirteen, a run of three is sixteen, and a flush of four is twenty'
        >>> score_hand(["2C", "4D", "6H", "8S"], "KC", is_crib=False).spoken()
        'nineteen (nothing)'
        """
        items = self.items
        if not items:
            return "nineteen (nothing)"  # the players' traditional name for a zero hand
        parts = []
        running = 0
        for it in items:
            running += it.points
            n = _NUMBERS[running]
            if it.kind == "fifteen":
                parts.append(f"fifteen {n}")
            elif it.kind == "pair":
                parts.append(f"a pair is {n}")
            elif it.kind == "run":
                parts.append(f"a run of {_NUMBERS[len(it.cards)]} is {n}")
            elif it.kind == "flush":
                parts.append(f"a flush of {_NUMBERS[it.points]} is {n}")
            else:
                parts.append(f"one for his nob is {n}")
        if len(parts) > 1:
            parts[-1] = "and " + parts[-1]
        return ", ".join(parts)

    def to_json(self) -> dict[str, Any]:
        """The breakdown as the events and views carry it."""
        return {
            "cards": list(self.cards),
            "starter": self.starter,
            "is_crib": self.is_crib,
            "total": self.total,
            "fifteens": [i.to_json() for i in self.fifteens],
            "pairs": [i.to_json() for i in self.pairs],
            "runs": [i.to_json() for i in self.runs],
            "flush": self.flush.to_json() if self.flush else None,
            "nobs": self.nobs.to_json() if self.nobs else None,
            "spoken": self.spoken(),
        }


@dataclass(frozen=True, slots=True)
class PegScore:
    """What the last card of a count scores in the play (C11), and why."""

    count: int
    items: tuple[ScoreItem, ...]

    @property
    def points(self) -> int:
        return sum(i.points for i in self.items)

    def to_json(self) -> dict[str, Any]:
        return {
            "count": self.count,
            "points": self.points,
            "items": [i.to_json() for i in self.items],
        }


def _check_cards(cards: Sequence[str], what: str) -> None:
    if any(not is_card(c) for c in cards):
        raise ValueError(f"{what}: not card codes")
    if len(set(cards)) != len(cards):
        raise ValueError(f"{what}: a card appears twice")


def score_hand(hand4: Sequence[str], starter: str, *, is_crib: bool) -> HandScore:
    """Score four cards plus the starter at the show (C13-C18).

    ``is_crib`` changes only the flush (C17): a hand scores 4 for four cards of one suit (5
    with the starter), the crib only 5 for all five.

    >>> score_hand(["4H", "5H", "6H", "JH"], "5S", is_crib=False).total   # C19
    20
    >>> score_hand(["4H", "5H", "6H", "JH"], "5S", is_crib=True).total
    16
    >>> [len(r.cards) for r in score_hand(["3C", "3D", "3H", "4S"], "5C", is_crib=False).runs]
    [3, 3, 3]
    >>> score_hand(["2C", "4D", "6H", "8S"], "KC", is_crib=False).total   # a "19"
    0
    """
    hand = list(hand4)
    if len(hand) != 4:
        raise ValueError("a hand has exactly four cards")
    _check_cards([*hand, starter], "score_hand")
    hand = sort_cards(hand)
    five = sort_cards([*hand, starter])

    fifteens = tuple(
        ScoreItem("fifteen", 2, combo)
        for n in range(2, 6)
        for combo in combinations(five, n)
        if sum(value(c) for c in combo) == 15
    )
    pairs = tuple(
        ScoreItem("pair", 2, (a, b)) for a, b in combinations(five, 2) if rank(a) == rank(b)
    )

    by_rank: dict[int, list[str]] = {}
    for c in five:
        by_rank.setdefault(rank(c), []).append(c)
    runs: tuple[ScoreItem, ...] = ()
    present = sorted(by_rank)
    # The longest stretch of consecutive ranks; with five cards at most one is >= 3 long.
    best: list[int] = []
    stretch: list[int] = []
    for r in present:
        stretch = [*stretch, r] if stretch and r == stretch[-1] + 1 else [r]
        if len(stretch) > len(best):
            best = stretch
    if len(best) >= 3:
        runs = tuple(
            ScoreItem("run", len(best), tuple(combo))
            for combo in product(*(by_rank[r] for r in best))
        )

    flush = None
    hand_suits = {suit(c) for c in hand}
    if len(hand_suits) == 1:
        if suit(starter) in hand_suits:
            flush = ScoreItem("flush", 5, tuple(five))
        elif not is_crib:
            flush = ScoreItem("flush", 4, tuple(hand))
    nobs = next(
        (ScoreItem("nobs", 1, (c,)) for c in hand if c[0] == "J" and suit(c) == suit(starter)),
        None,
    )
    return HandScore(tuple(hand), starter, is_crib, fifteens, pairs, runs, flush, nobs)


_PAIR_KINDS = {2: ("pair", 2), 3: ("pair_royal", 6), 4: ("double_pair_royal", 12)}


def score_pegging(played_since_reset: Sequence[str]) -> PegScore:
    """What the **last** of the cards played since the count was last reset scores (C11).

    Only the unbroken tail of this count counts, whoever played it; nothing spans a reset
    (that is the caller's job: pass only the current count's cards).  The last-card point of
    C9 is not a property of a card and is not scored here.

    >>> [i.kind for i in score_pegging(["5C", "5D", "5H"]).items]
    ['fifteen', 'pair_royal']
    >>> score_pegging(["5C", "3D", "4H", "6S"]).items[0].cards   # C11d: a run in any order
    ('5C', '3D', '4H', '6S')
    >>> score_pegging(["3C", "4D", "4H", "5S"]).points           # a broken run scores nothing
    0
    >>> score_pegging(["KC", "QD", "TH"]).count
    30
    """
    cards = list(played_since_reset)
    if not cards:
        raise ValueError("score_pegging needs at least the card just played")
    _check_cards(cards, "score_pegging")
    count = sum(value(c) for c in cards)
    if count > 31:
        raise ValueError("a count never exceeds 31")
    items: list[ScoreItem] = []
    if count == 15:
        items.append(ScoreItem("fifteen", 2, tuple(cards)))
    if count == 31:
        items.append(ScoreItem("thirty_one", 2, tuple(cards)))
    last = rank(cards[-1])
    same = 1
    while same < len(cards) and same < 4 and rank(cards[-1 - same]) == last:
        same += 1
    if same >= 2:
        kind, pts = _PAIR_KINDS[same]
        items.append(ScoreItem(kind, pts, tuple(cards[-same:])))
    for k in range(len(cards), 2, -1):
        tail = cards[-k:]
        ranks = sorted(rank(c) for c in tail)
        if len(set(ranks)) == k and ranks[-1] - ranks[0] == k - 1:
            items.append(ScoreItem("run", k, tuple(tail)))
            break
    return PegScore(count, tuple(items))
