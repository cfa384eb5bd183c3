"""Cribbage's statistics from a game's stored events (docs/ENGINE.md, "Optional hooks for history").

Per seat, additive counters read from the engine's own events, never a second source of truth:

* from each ``show`` of a seat's own hand (``what`` ``pone``/``dealer``): hands shown, the sum of
  their scores and the best one; from each crib show: cribs shown and their sum.  A show's
  ``points`` is what the hand is worth in full (C20), not ``scored`` (which stops at 121, C22),
  so a 29 is a 29 even when it wins the game;
* from each ``hand_over`` whose play was finished (its show began; ``shows`` not empty): the
  points each seat pegged in that play.  A hand cut short by the end of the game, in the play or
  by his heels, would lower the average with a play that never finished, so it is left out.

``summary`` turns a player's summed counters into what the profile shows.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .actions import Event


def _(text: str) -> str:
    """Marks a label for translation (``makemessages`` finds it); the web layer translates."""
    return text


#: How two players' counters combine across games: sum, except the best hand (the highest).
COMBINE = {"best_hand": "max"}


def seat_counters(events: Sequence[Event], seats: int) -> list[dict[str, int]]:
    """Each seat's counters over one game's engine events, in order.

    >>> ev = [Event("show", {"round": 1, "seat": 1, "what": "pone", "points": 12, "at": 1}),
    ...       Event("show", {"round": 1, "seat": 0, "what": "dealer", "points": 7, "at": 1}),
    ...       Event("show", {"round": 1, "seat": 0, "what": "crib", "points": 4, "at": 1}),
    ...       Event("hand_over", {"round": 1, "pegged": [3, 5], "shows": [{}, {}, {}], "at": 1})]
    >>> seat_counters(ev, 2)[0]
    {'hands': 1, 'hand_points': 7, 'cribs': 1, 'crib_points': 4, 'plays': 1, 'pegged': 3, \
'best_hand': 7}
    """
    out: list[dict[str, int]] = [
        {"hands": 0, "hand_points": 0, "cribs": 0, "crib_points": 0, "plays": 0, "pegged": 0}
        for _s in range(seats)
    ]
    for e in events:
        d = e.data
        if e.type == "show":
            c = out[d["seat"]]
            if d["what"] == "crib":
                c["cribs"] += 1
                c["crib_points"] += d["points"]
            else:
                c["hands"] += 1
                c["hand_points"] += d["points"]
                c["best_hand"] = max(c.get("best_hand", d["points"]), d["points"])
        elif e.type == "hand_over" and d["shows"]:
            for seat, pegged in enumerate(d["pegged"]):
                out[seat]["plays"] += 1
                out[seat]["pegged"] += pegged
    return out


def _avg(total: int, n: int) -> float | None:
    return round(total / n, 2) if n else None


def summary(counters: dict[str, int]) -> list[dict[str, Any]]:
    """What a player's summed counters say: ``[{key, label, value, format}]``; ``value`` is None
    where there is nothing to average yet.

    >>> [(s["key"], s["value"]) for s in summary({"hands": 4, "hand_points": 30, "cribs": 2,
    ...     "crib_points": 9, "plays": 4, "pegged": 14, "best_hand": 12})]
    [('hands', 4), ('average_hand', 7.5), ('best_hand', 12), ('average_crib', 4.5), \
('average_pegging', 3.5)]
    >>> summary({})[1]["value"], summary({})[2]["value"]
    (None, None)
    """
    g = counters.get
    return [
        {"key": "hands", "label": _("Hands shown"), "value": g("hands", 0), "format": "int"},
        {
            "key": "average_hand",
            "label": _("Average hand (show)"),
            "value": _avg(g("hand_points", 0), g("hands", 0)),
            "format": "decimal",
        },
        {"key": "best_hand", "label": _("Best hand"), "value": g("best_hand"), "format": "int"},
        {
            "key": "average_crib",
            "label": _("Average crib"),
            "value": _avg(g("crib_points", 0), g("cribs", 0)),
            "format": "decimal",
        },
        {
            "key": "average_pegging",
            "label": _("Average pegging per hand"),
            "value": _avg(g("pegged", 0), g("plays", 0)),
            "format": "decimal",
        },
    ]
