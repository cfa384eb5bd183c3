"""Redaction: the ONLY place where hidden information is removed (T27).

``view`` renders the state for one seat (or a spectator, ``None``); ``event_view`` one event.
Both build new dicts from explicit allow-lists, so a field added to the state or to an event
later stays private until someone decides here that it is public.

Who may see what (T27):

* a hand: its seat only, until the hand is over; then every unplayed card is public (T20);
* a role: its own seat only (``you.role``), until the reveal -- no other field anywhere says or
  implies one: no role-shaped field exists for other seats, and nothing else here depends on
  roles (the early end of a Double Stakes hand is decided on public facts, TE6);
* the Double Stakes seat and its trumps: everyone (T8, T9); the memo: that seat only, until the
  reveal (``hand_over`` carries it);
* played cards, tricks, trick counts, scores: everyone (T27d, e);
* the deck order and the seed: nobody, ever.
"""

from __future__ import annotations

import copy
from typing import Any

from ..base import NOTHING, Awaiting
from ..base import awaiting as _awaiting
from .actions import Event
from .deadlines import move_deadline, pending_deadlines
from .rules import _TIMERS, legal_actions
from .state import GameState


def view(state: GameState, seat: int | None, now: int) -> dict[str, Any]:
    """The table as ``seat`` may see it (``None``: a spectator).  JSON-safe.

    It renders ``state`` as given; ``now`` only decides ``you.can``/``you.legal`` (what the seat
    could do at ``now``, deadlines included) and is echoed for countdowns.

    >>> from games.engines.triple_crown import Settings, new_game
    >>> st, _ = new_game(seats=4, settings=Settings(), seed="doc", now=0)
    >>> v = view(st, 0, 0)
    >>> len(v["hands"][0]), v["hands"][1:], v["hand_sizes"]
    (13, [None, None, None], [13, 13, 13, 13])
    >>> "you" in view(st, None, 0), view(st, None, 0)["hands"]
    (False, [None, None, None, None])
    """
    h = state.round
    over = h.phase == "over"
    hands: list[list[str] | None] = [
        h.hands[s][:] if over or s == seat else None for s in range(state.seats)
    ]
    out: dict[str, Any] = {
        "seat": seat,
        "seats": state.seats,
        "status": state.status,
        "winners": state.winners[:],
        "scores": state.scores[:],
        "round": h.number,
        "settings": state.settings.to_json(),
        "dealer": h.dealer,
        "kind": "double_stakes" if h.ds_seat is not None else "crown",
        "double_stakes": h.ds_seat,
        "trumps": h.trumps,
        "phase": h.phase,
        "leader": h.leader,
        "turn": h.turn,
        "move_deadline": move_deadline(state),
        "hands": hands,
        "hand_sizes": [len(x) for x in h.hands],
        "trick": [{"seat": s, "card": c} for s, c in h.trick],
        "tricks": [
            {
                "no": t["no"],
                "leader": t["leader"],
                "cards": [{"seat": s, "card": c} for s, c in t["cards"]],
                "winner": t["winner"],
            }
            for t in h.tricks
        ],
        "taken": h.taken[:],
        "history": [x[:] for x in state.history],
        "reveal": copy.deepcopy(h.result),
        "last_hand": copy.deepcopy(state.last_hand),
        "deadlines": [d.to_json() for d in pending_deadlines(state)],
        "now": now,
        "awaiting": _awaited(state),
    }
    if seat is not None:
        mine = isinstance(seat, int) and 0 <= seat < state.seats
        acts = legal_actions(state, seat, now) if mine else []
        out["you"] = {
            "can": sorted({a.type for a in acts}),
            "legal": [a.card for a in acts if a.type == "play"],
            "role": h.roles[seat] if mine else None,
            "memo": h.memo if mine and seat == h.ds_seat else None,
        }
    return out


def awaiting(state: GameState, now: int) -> Awaiting:
    """What the table waits for at ``now`` (docs/ENGINE.md "Awaiting"), due deadlines applied
    first: ``"declare"`` (the Double Stakes seat names trumps, T9), ``"play"`` (the seat on
    turn) or ``"nothing"`` (the game is over).  ``deadline`` is the move's timeout, the ``at``
    of its ``declare_timeout`` / ``play_timeout``, or ``None`` without a time per move.

    >>> from games.engines.triple_crown import Settings, new_game
    >>> st, _ = new_game(seats=4, settings=Settings(move_seconds=30), seed="doc", now=0)
    >>> awaiting(st, 0)
    {'kind': 'declare', 'seats': [0], 'deadline': 30001}
    """
    return _awaited(_TIMERS.advanced(state, max(now, state.clock)))


def _awaited(state: GameState) -> Awaiting:
    """``awaiting`` of the state as it is (the view renders the state as given)."""
    h = state.round
    if state.status == "finished" or h.turn is None:
        return _awaiting(NOTHING)
    last = move_deadline(state)
    return _awaiting(h.phase, [h.turn], None if last is None else last + 1)


def event_view(event: Event, seat: int | None) -> dict[str, Any]:
    """The form of ``event`` that ``seat`` (``None``: a spectator) may receive; hidden values
    become ``null`` and every key stays.

    >>> e = Event("declared", {"seat": 2, "at": 5, "trumps": "S", "memo": "high",
    ...                        "timeout": False, "next_seat": 1, "deadline": None})
    >>> event_view(e, 2)["data"]["memo"], event_view(e, 0)["data"]["memo"]
    ('high', None)
    """
    typ = event.type
    d = copy.deepcopy(event.data)
    if typ == "round_dealt":
        d["deck"] = None
        d["hands"] = [h if s == seat else None for s, h in enumerate(d["hands"])]
    elif typ == "declared":
        if seat != d["seat"]:
            d["memo"] = None
    elif typ not in PUBLIC_EVENTS:
        raise ValueError(f"no redaction rule for event type {typ!r}")
    return {"type": typ, "data": d}


#: Events with nothing hidden: played cards and tricks are public the moment they happen
#: (T27d); ``hand_over`` comes at the reveal, when everything of the hand is public (T20).
PUBLIC_EVENTS = frozenset({"card_played", "trick_won", "hand_over", "game_over"})

#: Every event type the engine emits (``event_view`` refuses any other): the two with hidden
#: values above, and the public ones.
EVENT_TYPES = frozenset({"round_dealt", "declared"}) | PUBLIC_EVENTS
