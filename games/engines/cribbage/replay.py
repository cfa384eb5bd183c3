"""What a finished game of Cribbage may show in its full replay (docs/ENGINE.md, "Optional hooks
for history"; rules/cribbage.md C30, CE10, CE21).

After the game every card that was ever *in play* is public: the kept hands (all played or
shown anyway, C30f), the crib (shown, C30f-g), the starter, every played card.  Three things stay
hidden for good, exactly as during the game:

* the **stock** and the **deck order** (C30d: "never shown, in any state, event, log or replay,
  during or after the game") -- so the starter is only known from its cut, as live;
* the **seed** (it would give every deck);
* **which seat laid away which crib card** (C30c, h; CE10: "never revealed").  That is why a
  seat's six dealt cards are never shown: six dealt minus the four kept (public at the show) is
  exactly its two crib cards.  So a seat's hand is filled in from the moment *it* has laid
  away, and the crib (in hand order, which says nothing of who gave what, CE4) once *both*
  have -- never the two cards of one seat alone.

The full view is the spectator view (``view(state, None, now)``, every key kept, no ``you``)
with two keys filled in:

* ``hands`` -- per seat, that seat's unplayed cards (hand order) once it has laid away, else
  ``null`` (it still holds its six dealt cards; a finished game shows them as the live view
  does);
* ``crib`` -- the four crib cards in hand order once both seats have laid away, else ``null``.

The full form of an event is the stored event with ``round_dealt.deck`` and
``round_dealt.hands`` (the six-card deals) and ``laid_away.cards`` nulled: that is the
spectator's form, by the rule above, and is built here rather than borrowed so that a change
to live redaction cannot silently change what history reveals.  Both build new JSON-safe dicts.

These speak for a round that reached its end (``ROUND_END_EVENT``).  A round the game stopped in
-- abandoned, or ended by an admin -- never had its cards turned face up; the platform shows it
as a spectator saw it instead (``history/replay.py``: ``full_state`` / ``full_event``).
"""

from __future__ import annotations

from typing import Any

from .actions import Event
from .state import GameState, _copy
from .views import sorted_crib, view


def full_view(state: GameState, now: int) -> dict[str, Any]:
    """The table as a finished game's full replay shows it at ``state``.

    >>> from games.engines.cribbage import Action, Settings, apply, new_game
    >>> st, _ = new_game(seats=2, settings=Settings(), seed="doc", now=0)
    >>> v = full_view(st, 0)
    >>> v["hands"], v["crib"], "you" in v, "deck" in v
    ([None, None], None, False, False)
    >>> keep = st.round.hands[0][:4]
    >>> st, _ = apply(st, 0, Action.lay_away(*st.round.hands[0][4:]), 1)
    >>> v = full_view(st, 1)
    >>> v["hands"][0] == keep, v["hands"][1], v["crib"]
    (True, None, None)
    >>> st, _ = apply(st, 1, Action.lay_away(*st.round.hands[1][:2]), 2)
    >>> v = full_view(st, 2)
    >>> [len(h) for h in v["hands"]], len(v["crib"])
    ([4, 4], 4)
    """
    out = view(state, None, now)
    r = state.round
    finished = state.status == "finished"
    out["hands"] = [
        r.hands[s][:] if (finished or r.discards[s] is not None) else None for s in (0, 1)
    ]
    if r.discards[0] is not None and r.discards[1] is not None:
        out["crib"] = sorted_crib(r.discards)
    return out


def full_event_view(event: Event) -> dict[str, Any]:
    """The event as a finished game's full replay shows it: every key kept, ``null`` for the
    deck order, the six-card deals and one seat's crib cards (hidden for good).

    >>> full_event_view(Event("laid_away", {"round": 1, "seat": 0, "at": 4,
    ...                                     "cards": ["2H", "KS"], "timeout": False}))["data"]
    {'round': 1, 'seat': 0, 'at': 4, 'cards': None, 'timeout': False}
    >>> full_event_view(Event("round_dealt", {"round": 1, "dealer": 0, "pone": 1, "at": 0,
    ...     "deck": ["AS"], "hands": [["2C"], ["3C"]], "deadline": None}))["data"]["hands"]
    [None, None]
    >>> full_event_view(Event("starter_cut", {"round": 1, "at": 5, "card": "5H", "dealer": 0}))
    {'type': 'starter_cut', 'data': {'round': 1, 'at': 5, 'card': '5H', 'dealer': 0}}
    """
    d = _copy(dict(event.data))
    if event.type == "round_dealt":
        d["deck"] = None
        d["hands"] = [None for _h in d["hands"]]
    elif event.type == "laid_away":
        d["cards"] = None
    return {"type": event.type, "data": d}
