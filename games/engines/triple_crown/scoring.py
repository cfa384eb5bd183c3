"""Roles and scoring: pure functions of a hand's facts (rules/triple-crown.md §6, §7, §9,
T5, T10, T16-T19).

Nothing here knows about time, turns or redaction; the rules module calls ``roles_for`` at the
deal and ``score_hand`` at the end of a hand, and the result is published whole at the reveal
(T20).  Keeping scoring a pure function of ``(roles, tricks, memo)`` makes every worked example
of the rulings a one-line doctest or test.

Roles, per seat: ``"high"`` (holds A♠), ``"low"`` (holds 2♦), ``"team"`` (neither) in a Crown
hand; ``"double"`` (holds both) and three ``"opponent"`` in a Double Stakes hand.

Reasons are data for a UI to translate: each is a dict with a ``code`` and the numbers it uses,
``points`` always included, so a seat's points are the sum of its reasons' points.

| code | role | fields |
|---|---|---|
| ``high_made`` / ``high_failed`` | high | ``tricks, needed`` (5) |
| ``low_made`` / ``low_failed`` | low | ``tricks`` |
| ``team_low_failed`` | team | ``low_tricks`` (points = L) |
| ``team_high_failed`` | team | ``high_tricks, needed`` (points = 5 - H) |
| ``team_no_failure`` | team | -- (both crowns made it: 0) |
| ``double_made`` | double | ``tricks, achieved`` (``"high"``/``"low"``), ``memo``, and |
| | | ``assured: true`` when the 5th trick was certain but not yet taken (X1) |
| ``double_failed`` | double | ``tricks, memo`` |
| ``opponents_low_memo`` | opponent | ``tricks`` (points = 2 t) |
| ``opponents_high_memo`` | opponent | ``tricks, needed`` (points = (5 - t) x 2) |
| ``double_made_against`` | opponent | ``tricks`` (0 points) |
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .cards import HIGH_CARD, LOW_CARD

#: Tricks High Crown (or a Double Stakes player going high) needs (§6, T10, T17).
HIGH_NEEDED = 5
HIGH_POINTS = 2
LOW_POINTS = 3
DOUBLE_POINTS = 5

CROWN_ROLES = ("high", "low", "team")
DOUBLE_ROLES = ("double", "opponent")
ROLES = (*CROWN_ROLES, *DOUBLE_ROLES)


def roles_for(hands: Sequence[Sequence[str]]) -> list[str]:
    """Every seat's role from the dealt hands alone (§6, §7, T5).

    >>> roles_for([["AS"], ["2D"], ["3C"], ["KH"]])
    ['high', 'low', 'team', 'team']
    >>> roles_for([["5S"], ["AS", "2D"], ["3C"], ["KH"]])
    ['opponent', 'double', 'opponent', 'opponent']
    """
    high = next(i for i, h in enumerate(hands) if HIGH_CARD in h)
    low = next(i for i, h in enumerate(hands) if LOW_CARD in h)
    if high == low:
        return ["double" if i == high else "opponent" for i in range(len(hands))]
    return ["high" if i == high else "low" if i == low else "team" for i in range(len(hands))]


@dataclass(frozen=True, slots=True)
class HandScore:
    """What one hand scores: ``points[seat]`` and ``reasons[seat]`` (list of reason dicts)."""

    points: tuple[int, ...]
    reasons: tuple[tuple[dict[str, Any], ...], ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "points": list(self.points),
            "reasons": [[dict(r) for r in rs] for rs in self.reasons],
        }


def score_hand(
    roles: Sequence[str],
    tricks: Sequence[int],
    memo: str | None = None,
    *,
    assured: bool = False,
) -> HandScore:
    """Points and reasons of one hand (§9, T10, T16-T19).

    ``roles`` and ``tricks`` are by seat; ``memo`` (``"high"``/``"low"``) is the Double Stakes
    player's secret note and must be given in a Double Stakes hand (it is ignored otherwise).
    ``tricks`` may total fewer than 13 after a Double Stakes early end (T15).  ``assured``
    says the hand stopped because the Double Stakes player's 5th trick was certain though not
    yet taken (X1: sure trumps still in hand); it scores as the success it is.

    >>> s = score_hand(["double", "opponent", "opponent", "opponent"], [3, 0, 0, 0], "low",
    ...                assured=True)
    >>> s.points, s.reasons[0][0]["achieved"], s.reasons[0][0]["assured"]
    ((5, 0, 0, 0), 'high', True)

    Crown hand, T17's examples (High / Low / each Team):

    >>> score_hand(["high", "low", "team", "team"], [7, 0, 3, 3]).points
    (2, 3, 0, 0)
    >>> score_hand(["high", "low", "team", "team"], [5, 1, 4, 3]).points
    (2, 0, 1, 1)
    >>> s = score_hand(["team", "high", "low", "team"], [4, 3, 2, 4])
    >>> s.points, s.reasons[0]
    ((4, 0, 0, 4), ({'code': 'team_low_failed', 'low_tricks': 2, 'points': 2}, \
{'code': 'team_high_failed', 'high_tricks': 3, 'needed': 5, 'points': 2}))
    >>> score_hand(["high", "low", "team", "team"], [0, 4, 5, 4]).points
    (0, 0, 9, 9)

    Double Stakes, T18 (each opponent scores the full amount, T19):

    >>> score_hand(["double", "opponent", "opponent", "opponent"], [5, 3, 3, 2], "low").points
    (5, 0, 0, 0)
    >>> score_hand(["opponent", "double", "opponent", "opponent"], [3, 4, 3, 3], "high").points
    (2, 0, 2, 2)
    >>> score_hand(["opponent", "double", "opponent", "opponent"], [3, 4, 3, 3], "low").points
    (8, 0, 8, 8)
    """
    n = len(roles)
    if len(tricks) != n:
        raise ValueError("roles and tricks must have one entry per seat")
    if any(r not in ROLES for r in roles):
        raise ValueError(f"unknown role in {list(roles)}")
    if "double" in roles:
        return _score_double(roles, tricks, memo, assured)
    return _score_crown(roles, tricks)


def _score_crown(roles: Sequence[str], tricks: Sequence[int]) -> HandScore:
    if sorted(roles) != ["high", "low", "team", "team"]:
        raise ValueError("a Crown hand has one high, one low and two team roles (T5)")
    h = tricks[roles.index("high")]
    low = tricks[roles.index("low")]
    points: list[int] = []
    reasons: list[tuple[dict[str, Any], ...]] = []
    for role, t in zip(roles, tricks, strict=True):
        if role == "high":
            made = t >= HIGH_NEEDED
            rs: tuple[dict[str, Any], ...] = (
                {
                    "code": "high_made" if made else "high_failed",
                    "tricks": t,
                    "needed": HIGH_NEEDED,
                    "points": HIGH_POINTS if made else 0,
                },
            )
        elif role == "low":
            made = t == 0
            rs = (
                {
                    "code": "low_made" if made else "low_failed",
                    "tricks": t,
                    "points": LOW_POINTS if made else 0,
                },
            )
        else:
            parts: list[dict[str, Any]] = []
            if low > 0:
                parts.append({"code": "team_low_failed", "low_tricks": low, "points": low})
            if h < HIGH_NEEDED:
                parts.append(
                    {
                        "code": "team_high_failed",
                        "high_tricks": h,
                        "needed": HIGH_NEEDED,
                        "points": HIGH_NEEDED - h,
                    }
                )
            if not parts:
                parts.append({"code": "team_no_failure", "points": 0})
            rs = tuple(parts)
        points.append(sum(r["points"] for r in rs))
        reasons.append(rs)
    return HandScore(tuple(points), tuple(reasons))


def _score_double(
    roles: Sequence[str], tricks: Sequence[int], memo: str | None, assured: bool
) -> HandScore:
    if roles.count("double") != 1 or roles.count("opponent") != len(roles) - 1:
        raise ValueError("a Double Stakes hand has one double and only opponents besides (T5)")
    if memo not in ("high", "low"):
        raise ValueError('a Double Stakes hand needs the memo, "high" or "low" (T9)')
    t = tricks[roles.index("double")]
    made = t == 0 or t >= HIGH_NEEDED or assured  # T10: whatever the memo says
    if made:
        ds: dict[str, Any] = {
            "code": "double_made",
            "tricks": t,
            "achieved": "low" if t == 0 and not assured else "high",
            "memo": memo,
            "points": DOUBLE_POINTS,
        }
        if assured:
            ds["assured"] = True
        opp: dict[str, Any] = {"code": "double_made_against", "tricks": t, "points": 0}
    else:
        ds = {"code": "double_failed", "tricks": t, "memo": memo, "points": 0}
        if memo == "low":
            opp = {"code": "opponents_low_memo", "tricks": t, "points": 2 * t}
        else:  # T18: (5 - t) x 2, never negative (T16)
            opp = {
                "code": "opponents_high_memo",
                "tricks": t,
                "needed": HIGH_NEEDED,
                "points": (HIGH_NEEDED - t) * 2,
            }
    points = tuple(ds["points"] if r == "double" else opp["points"] for r in roles)
    reasons = tuple((dict(ds),) if r == "double" else (dict(opp),) for r in roles)
    return HandScore(points, reasons)
