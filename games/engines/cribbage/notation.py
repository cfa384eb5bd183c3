"""Cribbage's compact text notation of a game (docs/ENGINE.md, "Optional hooks for history").

One header, a legend, the cut for deal, then per hand who laid away, the starter, one line per
count of the play and the show::

    Cut for deal: P0 7H P1 KS, dealer P1
    Hand 1, dealer P1, pone P0
      laid away: P0, P1
      starter: 5H
      count: P0 5C=5 P1 TD=15+2 P0 4S=19 P1 go P0 2C=21 last P0+1
      count: P1 9H=9 P0 6D=15+2 last P1+1
      show: P0 2C 4S 5C 6D =8 | P1 9H TD JS QH =7 | crib 3C 3D 8H KC =4 (starter 5H)
      hand: P0 +12 P1 +10, scores 12 10
    Result: P1 won on 98 121 (win)

The events are the ones the export shows (the kind's full forms after the game, see
``replay``): every card that was played or shown is known; a seat's six dealt cards and its own
two crib cards are never known (C30c), and a card a form hides prints as ``??``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

LEGEND = (
    "=N the count after the card, +N points pegged, * played or laid away on timeout, "
    "go: cannot play, last: the last-card point, show: hands then crib with the starter"
)


def _c(card: Any) -> str:
    return card if isinstance(card, str) else "??"


def _pts(points: int) -> str:
    return f"+{points}" if points else ""


def notation(events: Sequence[dict[str, Any]], seats: int, names: Sequence[str]) -> str:
    """The game as text, from its engine events (``{"type", "data"}``, in order).

    >>> ev = [{"type": "cut_for_deal", "data": {"cuts": [["7H", "KS"]], "dealer": 1}},
    ...       {"type": "round_dealt", "data": {"round": 1, "dealer": 1, "pone": 0}},
    ...       {"type": "play", "data": {"seat": 0, "card": "5C", "count": 5, "points": 0,
    ...                                 "timeout": False}},
    ...       {"type": "play", "data": {"seat": 1, "card": "TD", "count": 15, "points": 2,
    ...                                 "timeout": True}}]
    >>> print(notation(ev, 2, ["ann", "bo"]).splitlines()[-1])
      (unfinished) count: P0 5C=5 P1 TD*=15+2
    """
    lines = [
        f"Cribbage, {seats} players: "
        + ", ".join(f"P{i} {names[i] if i < len(names) else '?'}" for i in range(seats)),
        f"Legend: {LEGEND}",
    ]
    laid: list[str] = []
    count: list[str] = []
    shows: list[str] = []

    def flush_count() -> None:
        if count:
            lines.append("  count: " + " ".join(count))
            count.clear()

    for e in events:
        t, d = e["type"], e["data"]
        seat = d.get("seat")
        if t == "cut_for_deal":
            cuts = ", ".join(f"P0 {_c(a)} P1 {_c(b)}" for a, b in d["cuts"])
            lines.append(f"Cut for deal: {cuts}, dealer P{d['dealer']}")
        elif t == "round_dealt":
            lines.append(f"Hand {d['round']}, dealer P{d['dealer']}, pone P{d['pone']}")
        elif t == "laid_away":
            laid.append(f"P{seat}" + ("*" if d.get("timeout") else ""))
        elif t == "starter_cut":
            lines.append("  laid away: " + ", ".join(laid))
            laid.clear()
            lines.append(f"  starter: {_c(d['card'])}")
        elif t == "his_heels":
            lines.append(f"  his heels: P{seat}{_pts(d['points'])}")
        elif t == "play":
            mark = "*" if d.get("timeout") else ""
            count.append(f"P{seat} {_c(d['card'])}{mark}={d['count']}{_pts(d['points'])}")
        elif t == "go":
            count.append(f"P{seat} go")
        elif t == "last_card":
            count.append(f"last P{seat}{_pts(d['points'])}")
        elif t == "count_over":
            flush_count()
        elif t == "show":
            who = "crib" if d["what"] == "crib" else f"P{seat}"
            shows.append(f"{who} {' '.join(_c(c) for c in d['cards'])} ={d['points']}")
        elif t == "hand_over":
            flush_count()
            if shows:
                lines.append("  show: " + " | ".join(shows) + f" (starter {_c(d['starter'])})")
                shows.clear()
            got = " ".join(f"P{i} +{p}" for i, p in enumerate(d["points"]))
            lines.append(f"  hand: {got}, scores " + " ".join(str(s) for s in d["scores"]))
        elif t == "game_over":
            won = ", ".join(f"P{w}" for w in d["winners"])
            on = " ".join(str(s) for s in d["scores"])
            lines.append(f"Result: {won} won on {on} ({d['result'].replace('_', ' ')})")
    if laid:
        lines.append("  (unfinished) laid away: " + ", ".join(laid))
    if count:
        lines.append("  (unfinished) count: " + " ".join(count))
    return "\n".join(lines) + "\n"


# -- one event in words (the replay's event list) ---------------------------------------------
def _(text: str) -> str:
    """Marks a message for translation (``makemessages`` finds it); the web layer translates
    it and fills in the parameters."""
    return text


_SUIT = {"S": "♠", "H": "♥", "D": "♦", "C": "♣"}
_WHAT = {"pone": _("the pone's hand"), "dealer": _("the dealer's hand"), "crib": _("the crib")}
_RESULT = {"win": _("a win"), "skunk": _("a skunk"), "double_skunk": _("a double skunk")}


def _card(card: Any) -> str:
    if not isinstance(card, str):
        return "?"
    rank = "10" if card[0] == "T" else card[0]
    return rank + _SUIT.get(card[1], card[1])


def describe(event: dict[str, Any], names: Sequence[str]) -> tuple[str, dict[str, Any]] | None:
    """One event in public language: a message (with ``%(name)s`` parameters, marked for
    translation) and its parameters; None for events not worth a line (a turn, a count's
    end).  The event is the form its receiver got, so a hidden card prints as ``?``; a
    lay-away never names its cards here (its own seat sees them in its hand).  Parameters
    whose names end in ``_word`` are messages too.

    >>> describe({"type": "play", "data": {"seat": 1, "card": "TH", "count": 15, "points": 2,
    ...                                    "timeout": False}}, ["a", "b"])
    ('%(player)s plays %(card)s, the count is %(count)s: %(points)s points', \
{'player': 'b', 'card': '10♥', 'count': 15, 'points': 2})
    """
    t, d = event["type"], event["data"]

    def who(seat: Any) -> str:
        return names[seat] if isinstance(seat, int) and 0 <= seat < len(names) else f"P{seat}"

    p = who(d.get("seat"))
    if t == "cut_for_deal":
        return _("%(player)s cuts the higher card and deals first"), {"player": who(d["dealer"])}
    if t == "round_dealt":
        return _("Hand %(round)s is dealt by %(player)s"), {
            "round": d["round"],
            "player": who(d["dealer"]),
        }
    if t == "laid_away":
        if d.get("timeout"):
            return _("%(player)s runs out of time; two cards go to the crib"), {"player": p}
        return _("%(player)s lays away two cards for the crib"), {"player": p}
    if t == "starter_cut":
        return _("The starter is %(card)s"), {"card": _card(d["card"])}
    if t == "his_heels":
        return _("His heels: %(player)s scores %(points)s"), {"player": p, "points": d["points"]}
    if t == "play":
        params = {"player": p, "card": _card(d["card"]), "count": d["count"]}
        if d["points"]:
            params["points"] = d["points"]
            if d.get("timeout"):
                return _(
                    "%(player)s runs out of time; %(card)s is played, the count is %(count)s: "
                    "%(points)s points"
                ), params
            return _("%(player)s plays %(card)s, the count is %(count)s: %(points)s points"), params
        if d.get("timeout"):
            return _("%(player)s runs out of time; %(card)s is played, the count is %(count)s"), (
                params
            )
        return _("%(player)s plays %(card)s, the count is %(count)s"), params
    if t == "go":
        return _("%(player)s cannot play: go"), {"player": p}
    if t == "last_card":
        return _("%(player)s scores %(points)s for the last card"), {
            "player": p,
            "points": d["points"],
        }
    if t == "show":
        return _("%(player)s shows %(what_word)s: %(cards)s with %(card)s, %(points)s points"), {
            "player": p,
            "what_word": _WHAT[d["what"]],
            "cards": " ".join(_card(c) for c in d["cards"]),
            "card": _card(d["starter"]),
            "points": d["points"],
        }
    if t == "hand_over":
        return _("Hand %(round)s is over: %(scores)s"), {
            "round": d["round"],
            "scores": ", ".join(f"{who(i)} {s}" for i, s in enumerate(d["scores"])),
        }
    if t == "game_over":
        return _("Game over: %(winners)s won, %(result_word)s"), {
            "winners": ", ".join(who(w) for w in d["winners"]),
            "result_word": _RESULT.get(d.get("result"), _("a win")),
        }
    return None
