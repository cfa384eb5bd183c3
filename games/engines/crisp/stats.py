"""Crisp's statistics from a game's stored events (docs/ENGINE.md, "Optional hooks for history").

Per seat, additive counters from the ``reveal`` events (the round's result, §8): rounds played,
the sum of round scores, crisp calls and how many were strictly lowest (the call succeeded), and
the best (lowest, §9) round score.  ``summary`` turns a player's summed counters into what the
profile shows.  Nothing here is a second source of truth: it reads the events the game stored.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .actions import Event


def _(text: str) -> str:
    """Marks a label for translation (``makemessages`` finds it); the web layer translates."""
    return text


#: How two players' counters combine across games: sum, except the best round (the lowest).
COMBINE = {"best_round": "min"}


def seat_counters(events: Sequence[Event], seats: int) -> list[dict[str, int]]:
    """Each seat's counters over one game's engine events, in order.

    >>> ev = [Event("reveal", {"caller": 0, "caller_strictly_lowest": True,
    ...                         "round_scores": [-1, 12], "at": 9})]
    >>> seat_counters(ev, 2)[0]
    {'rounds': 1, 'round_points': -1, 'calls': 1, 'calls_won': 1, 'best_round': -1}
    """
    out: list[dict[str, int]] = [
        {"rounds": 0, "round_points": 0, "calls": 0, "calls_won": 0} for _s in range(seats)
    ]
    for e in events:
        if e.type != "reveal":
            continue
        d = e.data
        for seat, score in enumerate(d["round_scores"]):
            c = out[seat]
            c["rounds"] += 1
            c["round_points"] += score
            c["best_round"] = min(c.get("best_round", score), score)
        if d.get("caller") is not None:
            out[d["caller"]]["calls"] += 1
            out[d["caller"]]["calls_won"] += 1 if d["caller_strictly_lowest"] else 0
    return out


def summary(counters: dict[str, int]) -> list[dict[str, Any]]:
    """What a player's summed counters say: ``[{key, label, value, format}]``; ``value`` is None
    where there is nothing to average yet.  ``format``: ``int``, ``decimal`` or ``percent``.

    >>> [(s["key"], s["value"]) for s in summary({"rounds": 4, "round_points": 30, "calls": 2,
    ...                                           "calls_won": 1, "best_round": -1})]
    [('rounds', 4), ('average_round', 7.5), ('calls', 2), ('call_success', 0.5), ('best_round', -1)]
    """
    rounds = counters.get("rounds", 0)
    calls = counters.get("calls", 0)
    return [
        {"key": "rounds", "label": _("Rounds played"), "value": rounds, "format": "int"},
        {
            "key": "average_round",
            "label": _("Average round score"),
            "value": round(counters.get("round_points", 0) / rounds, 2) if rounds else None,
            "format": "decimal",
        },
        {"key": "calls", "label": _("Crisp calls"), "value": calls, "format": "int"},
        {
            "key": "call_success",
            "label": _("Calls strictly lowest"),
            "value": round(counters.get("calls_won", 0) / calls, 4) if calls else None,
            "format": "percent",
        },
        {
            "key": "best_round",
            "label": _("Best round (lowest)"),
            "value": counters.get("best_round"),
            "format": "int",
        },
    ]


def placements(scores: Sequence[int], winners: Sequence[int]) -> list[int]:
    """Finishing places by seat, 0 best: the lowest total wins (§9); equal totals share a place.

    >>> placements([30, 12, 30, 51], [1])
    [1, 0, 1, 3]
    """
    return [sum(1 for other in scores if other < s) for s in scores]
