"""Triple Crown's compact text notation of a game (docs/ENGINE.md, "Optional hooks for history").

One header, a legend, then per hand its deal, the declaration, one line per trick and the
reveal::

    Hand 1, dealer P0, Crown hand
      hands: P0 AS KS 9H ... | P1 ... | P2 ... | P3 ...
      1 P1: 4C 9C AC* 2C > P3
      ...
      reveal: P0 high 6 +1 | P1 low 1 +0 | P2 team 3 +1 | P3 team 3 +1
      scores: 1 0 1 1

``*`` marks a card played on timeout.  The events are the ones the export shows (the kind's full
forms after the game, see ``replay``: every hand and the memo, not the deck order); a card a
form hides prints as ``??``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

LEGEND = (
    "N Px: trick N led by Px, cards in play order > its winner; * played on timeout; "
    "DS Double Stakes; reveal: role, tricks, points"
)


def _c(card: Any) -> str:
    return card if isinstance(card, str) else "??"


def notation(events: Sequence[dict[str, Any]], seats: int, names: Sequence[str]) -> str:
    """The game as text, from its engine events (``{"type", "data"}``, in order).

    >>> ev = [{"type": "round_dealt", "data": {"round": 1, "dealer": 0, "double_stakes": 2,
    ...        "hands": [["AS"], ["KD"], ["2D"], ["3C"]]}},
    ...       {"type": "declared", "data": {"seat": 2, "trumps": "NT", "memo": "low",
    ...        "timeout": True}},
    ...       {"type": "card_played", "data": {"seat": 1, "trick": 1, "card": "KD",
    ...        "timeout": False}}]
    >>> print(notation(ev, 4, ["a", "b", "c", "d"]))  # doctest: +NORMALIZE_WHITESPACE
    Triple Crown, 4 players: P0 a, P1 b, P2 c, P3 d
    Legend: N Px: trick N led by Px, cards in play order > its winner; * played on timeout; DS
    Double Stakes; reveal: role, tricks, points
    Hand 1, dealer P0, DS P2
      hands: P0 AS | P1 KD | P2 2D | P3 3C
      declared: P2 NT memo low*
      (unfinished) 1 P1: KD
    """
    lines = [
        f"Triple Crown, {seats} players: "
        + ", ".join(f"P{i} {names[i] if i < len(names) else '?'}" for i in range(seats)),
        f"Legend: {LEGEND}",
    ]
    trick: list[str] = []
    leader: int | None = None
    trick_no = 0
    for e in events:
        t, d = e["type"], e["data"]
        if t == "round_dealt":
            ds = d.get("double_stakes")
            kind = "Crown hand" if ds is None else f"DS P{ds}"
            lines.append(f"Hand {d['round']}, dealer P{d['dealer']}, {kind}")
            hands = d.get("hands") or []
            shown = [
                f"P{i} " + (" ".join(_c(c) for c in h) if isinstance(h, list) else "??")
                for i, h in enumerate(hands)
            ]
            if shown:
                lines.append("  hands: " + " | ".join(shown))
        elif t == "declared":
            memo = d.get("memo") if isinstance(d.get("memo"), str) else "??"
            mark = "*" if d.get("timeout") else ""
            lines.append(f"  declared: P{d['seat']} {d['trumps']} memo {memo}{mark}")
        elif t == "card_played":
            if not trick:
                leader, trick_no = d["seat"], d["trick"]
            trick.append(_c(d["card"]) + ("*" if d.get("timeout") else ""))
        elif t == "trick_won":
            lines.append(f"  {d['trick']} P{leader}: {' '.join(trick)} > P{d['winner']}")
            trick.clear()
        elif t == "hand_over":
            parts = [
                f"P{i} {role} {d['tricks'][i]} +{d['points'][i]}"
                for i, role in enumerate(d["roles"])
            ]
            early = f" (ended early: {d['early_end'].replace('_', ' ')})" if d["early_end"] else ""
            lines.append("  reveal: " + " | ".join(parts) + early)
            lines.append("  scores: " + " ".join(str(s) for s in d["scores"]))
        elif t == "game_over":
            won = ", ".join(f"P{w}" for w in d["winners"])
            lines.append(f"Result: {won} won on " + " ".join(str(s) for s in d["scores"]))
    if trick:
        lines.append(f"  (unfinished) {trick_no} P{leader}: " + " ".join(trick))
    return "\n".join(lines) + "\n"


# -- one event in words (the replay's event list) ---------------------------------------------
def _(text: str) -> str:
    """Marks a message for translation (``makemessages`` finds it); the web layer translates
    it and fills in the parameters."""
    return text


_SUIT = {"S": "♠", "H": "♥", "D": "♦", "C": "♣"}
_MEMO = {"high": _("High Crown"), "low": _("Low Crown")}


def _card(card: Any) -> str:
    if not isinstance(card, str):
        return "?"
    rank = "10" if card[0] == "T" else card[0]
    return rank + _SUIT.get(card[1], card[1])


def describe(event: dict[str, Any], names: Sequence[str]) -> tuple[str, dict[str, Any]] | None:
    """One event in public language: a message (with ``%(name)s`` parameters, marked for
    translation) and its parameters; None for events not worth a line.  The event is the form
    its receiver got: a memo it may not see is not named.  Parameters whose names end in
    ``_word`` are messages too.

    >>> describe({"type": "declared", "data": {"seat": 0, "trumps": "H", "memo": None,
    ...           "timeout": False}}, ["a"])
    ('%(player)s declares %(trumps)s trumps; the memo is secret', {'player': 'a', 'trumps': '♥'})
    """
    t, d = event["type"], event["data"]

    def who(seat: Any) -> str:
        return names[seat] if isinstance(seat, int) and 0 <= seat < len(names) else f"P{seat}"

    p = who(d.get("seat"))
    if t == "round_dealt":
        ds = d.get("double_stakes")
        if ds is None:
            return _("Hand %(round)s is dealt by %(player)s"), {
                "round": d["round"],
                "player": who(d["dealer"]),
            }
        return _("Hand %(round)s is dealt by %(player)s; %(other)s plays Double Stakes"), {
            "round": d["round"],
            "player": who(d["dealer"]),
            "other": who(ds),
        }
    if t == "declared":
        if d["trumps"] == "NT":
            trumps = {"trumps_word": _("no-trump")}
            if isinstance(d.get("memo"), str):
                return _("%(player)s declares %(trumps_word)s; the memo says %(memo_word)s"), {
                    "player": p,
                    **trumps,
                    "memo_word": _MEMO[d["memo"]],
                }
            return _("%(player)s declares %(trumps_word)s; the memo is secret"), {
                "player": p,
                **trumps,
            }
        suit = _SUIT.get(d["trumps"], d["trumps"])
        if isinstance(d.get("memo"), str):
            return _("%(player)s declares %(trumps)s trumps; the memo says %(memo_word)s"), {
                "player": p,
                "trumps": suit,
                "memo_word": _MEMO[d["memo"]],
            }
        return _("%(player)s declares %(trumps)s trumps; the memo is secret"), {
            "player": p,
            "trumps": suit,
        }
    if t == "card_played":
        if d.get("timeout"):
            return _("%(player)s runs out of time; %(card)s is played"), {
                "player": p,
                "card": _card(d["card"]),
            }
        return _("%(player)s plays %(card)s"), {"player": p, "card": _card(d["card"])}
    if t == "trick_won":
        return _("%(player)s wins trick %(trick)s"), {
            "player": who(d["winner"]),
            "trick": d["trick"],
        }
    if t == "hand_over":
        return _("Hand %(round)s is revealed and scored: %(points)s"), {
            "round": d["round"],
            "points": ", ".join(f"{who(i)} +{x}" for i, x in enumerate(d["points"])),
        }
    if t == "game_over":
        return _("Game over: %(winners)s won"), {"winners": ", ".join(who(w) for w in d["winners"])}
    return None
