"""Triple Crown's statistics from a game's stored events (docs/ENGINE.md, "Optional hooks for
history").

Per seat, additive counters from the ``hand_over`` events (the reveal, T20: every role and
result of the hand is public there), never a second source of truth.  For each role, the hands
played in it and the successes (rules/triple-crown.md §9, T16-T19), read from the scorer's own
reason codes:

* High Crown (``high``): ``high_made`` (5 tricks or more);
* Low Crown (``low``): ``low_made`` (no trick);
* Team Crown (``team``): the hand scored -- at least one Crown failed (``team_low_failed`` or
  ``team_high_failed``); ``team_no_failure`` (both Crowns made it, 0 points) is the failure;
* Double Stakes (``double``): ``double_made`` (also when assured early, X1); ``double_failed``
  is a Double Stakes hand lost.

A Double Stakes opponent's hand counts in ``hands`` and the points only.  ``summary`` turns a
player's summed counters into what the profile shows; ``placements`` ranks by total (T21).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .actions import Event


def _(text: str) -> str:
    """Marks a label for translation (``makemessages`` finds it); the web layer translates."""
    return text


#: The roles whose success is counted, and the reason code that makes a hand a success.
_SUCCESS = {"high": "high_made", "low": "low_made", "double": "double_made"}
_TEAM_SCORED = frozenset({"team_low_failed", "team_high_failed"})


def seat_counters(events: Sequence[Event], seats: int) -> list[dict[str, int]]:
    """Each seat's counters over one game's engine events, in order.

    >>> ev = [Event("hand_over", {"roles": ["high", "low", "team", "team"],
    ...     "points": [0, 0, 3, 3], "reasons": [[{"code": "high_failed"}],
    ...     [{"code": "low_made"}], [{"code": "team_high_failed"}], [{"code": "team_high_failed"}]],
    ...     "at": 9})]
    >>> c = seat_counters(ev, 4)
    >>> c[0]["high"], c[0]["high_made"], c[1]["low_made"], c[2]["team_made"], c[2]["points"]
    (1, 0, 1, 1, 3)
    """
    keys = ("hands", "points", "high", "high_made", "low", "low_made", "team", "team_made")
    out: list[dict[str, int]] = [
        {**dict.fromkeys(keys, 0), "double": 0, "double_made": 0} for _s in range(seats)
    ]
    for e in events:
        if e.type != "hand_over":
            continue
        d = e.data
        for seat, role in enumerate(d["roles"]):
            c = out[seat]
            c["hands"] += 1
            c["points"] += d["points"][seat]
            codes = {r["code"] for r in d["reasons"][seat]}
            if role == "team":
                c["team"] += 1
                c["team_made"] += 1 if codes & _TEAM_SCORED else 0
            elif role in _SUCCESS:
                c[role] += 1
                c[f"{role}_made"] += 1 if _SUCCESS[role] in codes else 0
    return out


def _rate(made: int, n: int) -> float | None:
    return round(made / n, 4) if n else None


def summary(counters: dict[str, int]) -> list[dict[str, Any]]:
    """What a player's summed counters say: ``[{key, label, value, format}]``; a rate is None
    for a role never held.

    >>> [(s["key"], s["value"]) for s in summary({"hands": 8, "points": 20, "high": 2,
    ...     "high_made": 1, "low": 1, "low_made": 0, "team": 4, "team_made": 3, "double": 1,
    ...     "double_made": 1})]
    [('hands', 8), ('average_points', 2.5), ('high_success', 0.5), ('low_success', 0.0), \
('team_success', 0.75), ('double_success', 1.0), ('double_won', 1), ('double_lost', 0)]
    """
    g = counters.get
    hands = g("hands", 0)
    return [
        {"key": "hands", "label": _("Hands played"), "value": hands, "format": "int"},
        {
            "key": "average_points",
            "label": _("Average points per hand"),
            "value": round(g("points", 0) / hands, 2) if hands else None,
            "format": "decimal",
        },
        {
            "key": "high_success",
            "label": _("High Crown success"),
            "value": _rate(g("high_made", 0), g("high", 0)),
            "format": "percent",
        },
        {
            "key": "low_success",
            "label": _("Low Crown success"),
            "value": _rate(g("low_made", 0), g("low", 0)),
            "format": "percent",
        },
        {
            "key": "team_success",
            "label": _("Team Crown success (a Crown failed)"),
            "value": _rate(g("team_made", 0), g("team", 0)),
            "format": "percent",
        },
        {
            "key": "double_success",
            "label": _("Double Stakes success"),
            "value": _rate(g("double_made", 0), g("double", 0)),
            "format": "percent",
        },
        {
            "key": "double_won",
            "label": _("Double Stakes won"),
            "value": g("double_made", 0),
            "format": "int",
        },
        {
            "key": "double_lost",
            "label": _("Double Stakes lost"),
            "value": g("double", 0) - g("double_made", 0),
            "format": "int",
        },
    ]


def placements(scores: Sequence[int], winners: Sequence[int]) -> list[int]:
    """Finishing places by seat, 0 best: the highest total wins (T21); equal totals share.

    >>> placements([15, 9, 15, 4], [0, 2])
    [0, 2, 0, 3]
    """
    return [sum(1 for other in scores if other > s) for s in scores]
