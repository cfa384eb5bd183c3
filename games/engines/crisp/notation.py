"""Crisp's compact text notation of a game (docs/ENGINE.md, "Optional hooks for history").

One header, a legend, then per round the opening looks, one line per turn and the reveal::

    Round 1, dealer P1
      looks: P0 L5C R7H, P1 L2S RKD
      1 P0: D7H >L(5C)
      2 P1: DKS K+2 | D4C x | DJH J(C=9D) x
      * P0 calls crisp
      reveal: P0 7H 3C 2S = 12 -5 | P1 ... = 20 +20
      scores: 7 20

The events are the ones the export shows (the kind's full forms after the game, so every card
but the deck order is known); a card a form hides prints as ``??``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

LEGEND = (
    "D deck draw, P pile draw, >L/>C/>R swap into left/centre/right (card put out), "
    "x discard, J(C=..) Jack look at own centre, Q(L>P2R) Queen swap, K+2 King extra draws, "
    "T timeout, * crisp call"
)

_PLACE = {"left": "L", "centre": "C", "right": "R"}


def _c(card: Any) -> str:
    return card if isinstance(card, str) else "??"


def notation(events: Sequence[dict[str, Any]], seats: int, names: Sequence[str]) -> str:
    """The game as text, from its engine events (``{"type", "data"}``, in order).

    >>> ev = [{"type": "round_dealt", "data": {"round": 1, "dealer": 1, "at": 0}},
    ...       {"type": "draw", "data": {"seat": 0, "turn": 1, "source": "deck", "card": "7H"}},
    ...       {"type": "discard", "data": {"seat": 0, "turn": 1, "card": "7H"}},
    ...       {"type": "turn_ended", "data": {"seat": 0, "turn": 1, "timeout": False}}]
    >>> print(notation(ev, 2, ["ann", "bo"]).splitlines()[-1])
      1 P0: D7H x
    """
    lines = [
        f"Crisp, {seats} players: "
        + ", ".join(f"P{i} {names[i] if i < len(names) else '?'}" for i in range(seats)),
        f"Legend: {LEGEND}",
    ]
    looks: list[str] = []
    draws: list[str] = []  # tokens of the draw under way, joined by spaces
    turn: list[str] = []  # the turn's draws, joined by " | "

    def flush_looks() -> None:
        if looks:
            lines.append("  looks: " + ", ".join(looks))
            looks.clear()

    for e in events:
        t, d = e["type"], e["data"]
        seat = d.get("seat")
        if t == "round_dealt":
            lines.append(f"Round {d['round']}, dealer P{d['dealer']}")
        elif t == "look":
            looks.append(f"P{seat} L{_c(d['left'])} R{_c(d['right'])}")
        elif t == "draw":
            flush_looks()
            if draws:
                turn.append(" ".join(draws))
                draws.clear()
            draws.append(("P" if d["source"] == "pile" else "D") + _c(d["card"]))
        elif t == "pile_turned":
            draws.append("(pile turned over)")
        elif t == "swap":
            draws.append(f">{_PLACE[d['place']]}({_c(d['card_out'])})")
        elif t == "discard":
            draws.append("x")
        elif t == "jack":
            draws.append(f"J(C={_c(d['centre'])})")
        elif t == "queen":
            draws.append(f"Q({_PLACE[d['place']]}>P{d['target_seat']}{_PLACE[d['target_place']]})")
        elif t == "king":
            draws.append(f"K+{d['extra_draws']}")
        elif t == "timeout":
            flush_looks()
            if d.get("stage") == "before_draw":
                if draws:
                    turn.append(" ".join(draws))
                    draws.clear()
                draws.append(f"T(D{_c(d.get('card'))} x)")
            else:
                draws.append("T x")
        elif t == "turn_ended":
            if draws:
                turn.append(" ".join(draws))
                draws.clear()
            lines.append(f"  {d['turn']} P{seat}: " + " | ".join(turn))
            turn.clear()
        elif t == "call":
            lines.append(f"  * P{seat} calls crisp")
        elif t == "reveal":
            flush_looks()
            hands = []
            for i, hand in enumerate(d["hands"]):
                bonus = ""
                if d.get("caller") == i:
                    bonus = " -5" if d["caller_strictly_lowest"] else " +5"
                hands.append(f"P{i} {' '.join(_c(c) for c in hand)} = {d['totals'][i]}{bonus}")
            lines.append("  reveal: " + " | ".join(hands))
            lines.append("  scores: " + " ".join(str(s) for s in d["scores"]))
        elif t == "game_over":
            won = ", ".join(f"P{w}" for w in d["winners"])
            lines.append(f"Result: {won} won on " + " ".join(str(s) for s in d["scores"]))
    flush_looks()
    if draws or turn:
        lines.append("  (unfinished) " + " | ".join([*turn, " ".join(draws)]).strip(" |"))
    return "\n".join(lines) + "\n"


# -- one event in words (the replay's event list) ---------------------------------------------
def _(text: str) -> str:
    """Marks a message for translation (``makemessages`` finds it); the web layer translates
    it and fills in the parameters."""
    return text


_SUIT = {"S": "♠", "H": "♥", "D": "♦", "C": "♣"}
_PLACE_WORD = {"left": _("left"), "centre": _("centre"), "right": _("right")}


def _card(card: Any) -> str:
    if not isinstance(card, str):
        return "?"
    rank = "10" if card[0] == "T" else card[0]
    return rank + _SUIT.get(card[1], card[1])


def describe(event: dict[str, Any], names: Sequence[str]) -> tuple[str, dict[str, Any]] | None:
    """One event in public language: a message (with ``%(name)s`` parameters, marked for
    translation) and its parameters; None for events not worth a line.  The event is the form
    its receiver got, so a hidden card prints as ``?``.  Parameters whose names end in
    ``_word`` are messages too (marked here, translated by the caller).

    >>> describe({"type": "draw", "data": {"seat": 1, "source": "deck", "card": "TH"}}, ["a", "b"])
    ('%(player)s draws %(card)s from the deck', {'player': 'b', 'card': '10♥'})
    """
    t, d = event["type"], event["data"]

    def who(seat: Any) -> str:
        return names[seat] if isinstance(seat, int) and 0 <= seat < len(names) else f"P{seat}"

    p = who(d.get("seat"))
    if t == "round_dealt":
        return _("Round %(round)s is dealt by %(player)s"), {
            "round": d["round"],
            "player": who(d["dealer"]),
        }
    if t == "look":
        return _("%(player)s looks at left and right: %(left)s, %(right)s"), {
            "player": p,
            "left": _card(d["left"]),
            "right": _card(d["right"]),
        }
    if t == "draw":
        if d["source"] == "pile":
            return _("%(player)s takes %(card)s from the pile"), {
                "player": p,
                "card": _card(d["card"]),
            }
        return _("%(player)s draws %(card)s from the deck"), {"player": p, "card": _card(d["card"])}
    if t == "pile_turned":
        return _("The pile is turned over to be the deck"), {}
    if t == "swap":
        return _("%(player)s swaps it into their %(place_word)s; %(card)s goes on the pile"), {
            "player": p,
            "place_word": _PLACE_WORD[d["place"]],
            "card": _card(d["card_out"]),
        }
    if t == "discard":
        return _("%(player)s discards %(card)s"), {"player": p, "card": _card(d["card"])}
    if t == "jack":
        return _("%(player)s plays a Jack and looks at their centre: %(card)s"), {
            "player": p,
            "card": _card(d["centre"]),
        }
    if t == "queen":
        return _("%(player)s plays a Queen: their %(from_word)s for %(other)s's %(to_word)s"), {
            "player": p,
            "from_word": _PLACE_WORD[d["place"]],
            "other": who(d["target_seat"]),
            "to_word": _PLACE_WORD[d["target_place"]],
        }
    if t == "king":
        return _("%(player)s plays a King: %(n)s extra draws"), {"player": p, "n": d["extra_draws"]}
    if t == "timeout":
        return _("%(player)s runs out of time; %(card)s is discarded"), {
            "player": p,
            "card": _card(d.get("card")),
        }
    if t == "call":
        return _("%(player)s calls crisp!"), {"player": p}
    if t == "reveal":
        caller = d.get("caller")
        if caller is None:
            return _("Cards are revealed"), {}
        won = _("strictly lowest, -5") if d["caller_strictly_lowest"] else _("not lowest, +5")
        return _("Cards are revealed; %(player)s's call: %(outcome_word)s"), {
            "player": who(caller),
            "outcome_word": won,
        }
    if t == "game_over":
        return _("Game over: %(winners)s won"), {"winners": ", ".join(who(w) for w in d["winners"])}
    return None
