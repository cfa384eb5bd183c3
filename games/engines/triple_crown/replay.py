"""What a finished game of Triple Crown may show in its full replay (docs/ENGINE.md, "Optional
hooks for history"; rules/triple-crown.md T20, T27, TE14).

Every hand ends in the reveal, when "everything of that hand becomes public" (T20, T27f): all
four roles, the Double Stakes memo, every card.  So once the game is over a replay may show every
hand at every moment, every seat's role from the deal on, and the memo from the declaration on.
Two things stay hidden for good, as during the game (views.py): the **deck order** (the hands
are kept sorted, TE3, precisely so that nothing keeps it) and the **seed** (it would give every
deck).

The full view is the spectator view (``view(state, None, now)``, every key kept, no ``you``)
with ``hands`` filled in and two keys added:

* ``hands`` -- per seat, that seat's unplayed cards (sorted, TE3), never ``null``;
* ``roles`` -- per seat, its role this hand: ``"high"``, ``"low"``, ``"team"`` (a Crown hand)
  or ``"double"``, ``"opponent"`` (a Double Stakes hand) -- the values of ``you.role`` and of
  ``hand_over.roles``;
* ``memo`` -- the Double Stakes memo, ``"high"``/``"low"``, once declared; ``null`` before the
  declaration and in a Crown hand (the value of ``you.memo`` for the Double Stakes seat).

The full form of an event is the stored event with only ``round_dealt.deck`` nulled (the dealt
``hands`` and ``declared.memo`` are kept).  Both build new JSON-safe dicts.

These speak for a round that reached its end (``ROUND_END_EVENT``).  A round the game stopped in
-- abandoned, or ended by an admin -- never had its cards turned face up; the platform shows it
as a spectator saw it instead (``history/replay.py``: ``full_state`` / ``full_event``).
"""

from __future__ import annotations

import copy
from typing import Any

from .actions import Event
from .state import GameState
from .views import view


def full_view(state: GameState, now: int) -> dict[str, Any]:
    """The table with every hand face up, every role and the memo: a full replay frame.

    >>> from games.engines.triple_crown import Settings, new_game
    >>> st, _ = new_game(seats=4, settings=Settings(), seed="doc", now=0)
    >>> v = full_view(st, 0)
    >>> [len(h) for h in v["hands"]], v["roles"].count("double"), v["memo"], "deck" in v
    ([13, 13, 13, 13], 1, None, False)
    """
    out = view(state, None, now)
    h = state.round
    out["hands"] = [x[:] for x in h.hands]
    out["roles"] = h.roles[:]
    out["memo"] = h.memo
    return out


def full_event_view(event: Event) -> dict[str, Any]:
    """The event as a finished game's full replay shows it: everything but the deck order.

    >>> e = Event("round_dealt", {"round": 1, "dealer": 0, "at": 0, "leader": 1,
    ...     "double_stakes": None, "hands": [["AS"], ["2D"], ["3C"], ["4C"]], "deck": ["AS"],
    ...     "deadline": None})
    >>> full_event_view(e)["data"]["deck"], full_event_view(e)["data"]["hands"][1]
    (None, ['2D'])
    >>> full_event_view(Event("declared", {"seat": 2, "at": 5, "trumps": "S", "memo": "high",
    ...     "timeout": False, "next_seat": 1, "deadline": None}))["data"]["memo"]
    'high'
    """
    d = copy.deepcopy(dict(event.data))
    if event.type == "round_dealt":
        d["deck"] = None
    return {"type": event.type, "data": d}
