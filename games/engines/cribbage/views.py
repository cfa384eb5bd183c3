"""Redaction: the ONLY place where hidden information is removed (C30).

``view`` renders the state for one seat (or a spectator, ``None``); ``event_view`` renders one
event.  Both build new JSON-safe dicts from explicit field lists, so a field added to the state
or to an event later stays private until someone decides here that it is public.

Who may see what (C30):

* a seat: its own unplayed cards and its own two crib cards;
* everyone: the cut for deal, the starter, every played card, every count, go and score with its
  reason, how many cards each seat holds and *that* a seat has laid away; the crib when it is
  counted; at the end of the game every card of the last hand;
* nobody, ever: the stock or the deck order (not even after the game), the seed, and which crib
  card came from which seat (the crib is always listed in hand order).
"""

from __future__ import annotations

from typing import Any

from ..base import NOTHING, Awaiting
from ..base import awaiting as _awaiting
from .actions import Event
from .cards import sort_cards, value
from .deadlines import lay_away_deadline, pending_deadlines, play_deadline
from .errors import BAD_SEAT, IllegalAction
from .rules import _TIMERS, can, result_label
from .state import GameState, _copy

#: Events whose values ``event_view`` hides from some receivers.
_REDACTED_EVENTS = frozenset({"round_dealt", "laid_away"})

#: Events with nothing hidden from anyone.
_PUBLIC_EVENTS = frozenset(
    {
        "cut_for_deal",
        "starter_cut",
        "his_heels",
        "turn",
        "play",
        "go",
        "last_card",
        "count_over",
        "show",
        "hand_over",
        "game_over",
    }
)


def view(state: GameState, seat: int | None, now: int) -> dict[str, Any]:
    """The table as ``seat`` may see it (``None``: a spectator).  JSON-safe.

    It renders ``state`` as given; ``now`` only decides ``you.can`` (what the seat could do at
    ``now``, due deadlines taken into account) and is echoed as ``now``.

    >>> from games.engines.cribbage import Settings, new_game
    >>> st, _ = new_game(seats=2, settings=Settings(), seed="doc", now=0)
    >>> v0, spectator = view(st, 0, 0), view(st, None, 0)
    >>> len(v0["hands"][0]), v0["hands"][1], spectator["hands"], v0["hand_sizes"]
    (6, None, [None, None], [6, 6])
    """
    me = _receiver(seat)
    r = state.round
    finished = state.status == "finished"
    both_laid = r.discards[0] is not None and r.discards[1] is not None
    crib_public = both_laid and (finished or any(s["what"] == "crib" for s in r.shows))
    hands = [r.hands[s][:] if (finished or s == me) else None for s in (0, 1)]
    turn = None
    if r.turn is not None:
        turn = {
            "seat": r.turn,
            "since": r.turn_since,
            "move": r.move_no,
            "deadline": play_deadline(state),
        }
    ds = pending_deadlines(state)
    out: dict[str, Any] = {
        "seat": seat,
        "seats": state.seats,
        "status": state.status,
        "winners": list(state.winners),
        "scores": list(state.scores),
        "round": r.number,
        "settings": state.settings.to_json(),
        "deadlines": [d.to_json() for d in ds],
        "now": now,
        "target_score": state.settings.target_score,
        "cut_for_deal": {"cuts": _copy(state.cuts), "dealer": state.first_dealer},
        "dealer": r.dealer,
        "pone": r.pone,
        "crib_owner": r.dealer,
        "phase": r.phase,
        "hands": hands,
        "hand_sizes": [len(r.hands[0]), len(r.hands[1])],
        "laid_away": [r.discards[0] is not None, r.discards[1] is not None],
        "lay_away_deadline": lay_away_deadline(state) if r.phase == "lay_away" else None,
        "crib_size": sum(len(d) for d in r.discards if d is not None),
        "crib": (sorted_crib(r.discards) if crib_public else None),
        "starter": r.starter,
        "his_heels": r.his_heels,
        "played": [r.played[0][:], r.played[1][:]],
        "count": r.count,
        "sequence": [{"seat": s, "card": c} for s, c in r.sequence],
        "go": list(r.go),
        "turn": turn,
        "pegged": list(r.pegged),
        "hand_points": list(r.points),
        "pegs": [{"front": state.scores[s], "back": state.back_pegs[s]} for s in (0, 1)],
        "shows": _copy(r.shows),
        "last_hand": _copy(state.last_hand),
        "history": _copy(state.history),
        "result": _result(state),
        "awaiting": _awaited(state, ds),
    }
    if me is not None:
        discards = r.discards[me]
        out["you"] = {
            "can": can(state, me, now),
            "hand": r.hands[me][:],
            "discards": None if discards is None else discards[:],
            "playable": (
                [c for c in r.hands[me] if r.count + value(c) <= 31]
                if (not finished and r.phase == "play" and r.turn == me)
                else []
            ),
        }
    return out


def awaiting(state: GameState, now: int) -> Awaiting:
    """What the table waits for at ``now`` (docs/ENGINE.md "Awaiting"), due deadlines applied
    first: ``"lay_away"`` (the seats that have not laid away yet, together), ``"play"`` (the
    seat on turn) or ``"nothing"`` (the game is over).  ``deadline`` is the move's timeout, the
    ``at`` of its ``lay_away_timeout`` / ``play_timeout``, or ``None`` without a time per move.

    >>> from games.engines.cribbage import Settings, new_game
    >>> st, _ = new_game(seats=2, settings=Settings(move_seconds=30), seed="doc", now=0)
    >>> awaiting(st, 0)
    {'kind': 'lay_away', 'seats': [0, 1], 'deadline': 30001}
    """
    st = _TIMERS.advanced(state, max(now, state.clock))
    return _awaited(st, pending_deadlines(st))


def _awaited(state: GameState, deadlines: list[Any]) -> Awaiting:
    """``awaiting`` of the state as it is, given its pending deadlines (the view has them)."""
    r = state.round
    if state.status == "finished":
        return _awaiting(NOTHING)
    timeout = deadlines[0].at if deadlines else None  # every pending one ends this wait
    if r.phase == "lay_away":
        return _awaiting("lay_away", [s for s in (0, 1) if r.discards[s] is None], timeout)
    assert r.turn is not None
    return _awaiting("play", [r.turn], timeout)


def _receiver(seat: object) -> int | None:
    """``seat`` checked: 0, 1 or ``None`` (a spectator); anything else is a caller's bug and
    is refused rather than rendered as some other receiver."""
    if seat is None or (isinstance(seat, int) and not isinstance(seat, bool) and seat in (0, 1)):
        return seat  # type: ignore[return-value]
    raise IllegalAction(BAD_SEAT, "a view is for seat 0, seat 1 or a spectator (None)")


def sorted_crib(discards: list[list[str] | None]) -> list[str]:
    """The crib in hand order (C30i: its order never tells who laid away which card)."""
    return sort_cards([c for d in discards if d is not None for c in d])


def _result(state: GameState) -> str | None:
    if state.status != "finished" or not state.winners:
        return None
    return result_label(state.scores[1 - state.winners[0]])


def event_view(event: Event, seat: int | None) -> dict[str, Any]:
    """The form of ``event`` that ``seat`` (``None``: a spectator) may receive: every key kept,
    ``null`` where a value is hidden.

    >>> e = Event("laid_away", {"round": 1, "seat": 1, "at": 5, "cards": ["2H", "KS"],
    ...                         "timeout": False})
    >>> event_view(e, 1)["data"]["cards"], event_view(e, 0)["data"]["cards"]
    (['2H', 'KS'], None)
    """
    seat = _receiver(seat)
    typ, data = event.type, event.data
    d = _copy(dict(data))
    if typ == "round_dealt":
        d["deck"] = None  # C30d: never, to anyone
        d["hands"] = [h if s == seat else None for s, h in enumerate(d["hands"])]
    elif typ == "laid_away":
        if seat != data["seat"]:
            d["cards"] = None  # C30c: others learn only *that* it happened
    elif typ not in _PUBLIC_EVENTS:
        raise ValueError(f"no redaction rule for event type {typ!r}")
    return {"type": typ, "data": d}


#: Every event type the engine emits (``event_view`` refuses any other).
EVENT_TYPES = _REDACTED_EVENTS | _PUBLIC_EVENTS
