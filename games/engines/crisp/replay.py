"""What a finished game of Crisp may show in its full replay (docs/ENGINE.md, "Optional hooks
for history"; rules/crisp.md).

Once the game is over nothing about play is secret any more: every hand at every moment, the
card a player held, each look's cards, each drawn card (as its drawer saw it at the draw).  Two
things stay hidden for good, as during the game: the **deck** -- its order and the cards still in
it (rules/crisp.md R21, E20: "the deck is never shown, not even after a turnover") -- and the
**seed** (it would give every round's deck).  A card leaves the deck's secret only by being
drawn, exactly as in play.  So the full view is the spectator view with the hands and the held
card filled in (the deck still only its size), and the full form of an event is the stored event
with only ``round_dealt.deck`` nulled.  Like ``views``, both build new JSON-safe dicts.

These speak for a round that reached its end (``ROUND_END_EVENT``).  A round the game stopped in
-- abandoned, or ended by an admin -- never had its cards turned face up; the platform shows it
as a spectator saw it instead (``history/replay.py``: ``full_state`` / ``full_event``).
"""

from __future__ import annotations

from typing import Any

from .actions import Event
from .state import GameState
from .views import view


def full_view(state: GameState, now: int) -> dict[str, Any]:
    """The table with every card face up except the deck: a finished game's full replay frame.

    >>> from games.engines.crisp import Settings, new_game
    >>> st, _ = new_game(seats=2, settings=Settings(), seed="doc", now=0)
    >>> v = full_view(st, 0)
    >>> all(c is not None for hand in v["hands"] for c in hand), v["deck_size"], "deck" in v
    (True, 46, False)
    """
    out = view(state, None, now)
    out["hands"] = [list(h) for h in state.round.hands]
    t = state.round.turn
    if t is not None and t.held is not None:
        out["held"] = {"seat": t.seat, "source": t.held_from, "card": t.held}
    return out


def full_event_view(event: Event) -> dict[str, Any]:
    """The event as a finished game's full replay shows it: everything but the deck order.

    >>> full_event_view(Event("swap", {"seat": 0, "card_in": "7H", "card_out": "2C", "at": 1}))
    {'type': 'swap', 'data': {'seat': 0, 'card_in': '7H', 'card_out': '2C', 'at': 1}}
    >>> full_event_view(Event("round_dealt", {"round": 1, "deck": ["AS"], "at": 0}))["data"]
    {'round': 1, 'deck': None, 'at': 0}
    """
    d = {k: (list(v) if isinstance(v, list) else v) for k, v in event.data.items()}
    if event.type == "round_dealt":
        d["deck"] = None
    return {"type": event.type, "data": d}
