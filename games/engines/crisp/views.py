"""Redaction: the ONLY place where hidden information is removed (R4, R5, R8, R21).

``view`` renders the state for one seat (or a spectator, ``None``); ``event_view`` renders one
event.  Both build new JSON-safe dicts from an explicit allow-list of fields, so a field added
to the state or to an event later stays private until someone decides here that it is public.

What anyone may see:

* the discard pile, whole (everyone saw each card land, R21), the deck's *size* only;
* a drawn card: its drawer only -- everyone if it was taken from the pile (R5, R21);
* hand cards: nobody, the owner included, until the reveal (R4).  A look (opening, Jack,
  Queen) shows its cards once, in the event of that look, to the seat entitled to it;
* never the deck order (not even after a turnover) or the seed.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from ..base import NOTHING, Awaiting
from ..base import awaiting as _awaiting
from .actions import Event
from .deadlines import pending_deadlines
from .rules import _TIMERS, can
from .state import GameState, Settings

_HIDDEN_HAND = (None, None, None)


@lru_cache(maxsize=64)
def _settings_json_cached(settings: Settings) -> tuple[tuple[str, Any], ...]:
    return tuple(settings.to_json().items())


def _settings_json(settings: Settings) -> dict[str, Any]:
    return dict(_settings_json_cached(settings))


def view(state: GameState, seat: int | None, now: int) -> dict[str, Any]:
    """The table as ``seat`` may see it (``None``: a spectator).  JSON-safe.

    It renders ``state`` as given; ``now`` only decides ``you.can`` (what this seat could do if
    it acted at ``now``, deadlines included) and is echoed so clients can sync countdowns.

    >>> from games.engines.crisp import Settings, new_game
    >>> st, _ = new_game(seats=2, settings=Settings(), seed="doc", now=0)
    >>> v = view(st, 0, 0)
    >>> v["hands"], v["deck_size"], v["you"]["can"]
    ([[None, None, None], [None, None, None]], 46, ['look'])
    """
    r = state.round
    n = state.seats
    revealed = r.reveal is not None
    hands = [list(h) for h in r.hands] if revealed else [list(_HIDDEN_HAND) for _ in range(n)]
    t = r.turn
    held = None
    turn = None
    ms = state.settings.move_ms
    if t is not None:
        if t.held is not None:
            shown = t.held_from == "pile" or seat == t.seat
            held = {"seat": t.seat, "source": t.held_from, "card": t.held if shown else None}
        turn = {
            "no": t.no,
            "seat": t.seat,
            "phase": t.phase,
            "start_at": t.start_at,
            "begun": t.begun,
            "final": t.final,
            "draw_no": t.draw_no,
            "extra_draws_left": t.extra_draws,
            "kings_in_play": [k[0] for k in t.kings],  # played face up, not yet discarded
            # The last on-time ms of the move under way: a draw with its play, or R28's
            # "Call crisp?" (phase "call") in a turn-based game.
            "draw_deadline": (
                t.clock_from + ms if ms is not None and t.clock_from is not None else None
            ),
        }
    deadlines = pending_deadlines(state)
    final_left = None
    if r.caller is not None and not revealed:
        final_left = n - 1 - len(r.finals_done)
    out: dict[str, Any] = {
        "seat": seat,
        "seats": n,
        "status": state.status,
        "winners": state.winners[:],
        "round": r.number,
        "dealer": r.dealer,
        "settings": _settings_json(state.settings),
        "scores": state.scores[:],
        "history": [h[:] for h in state.history],
        "hands": hands,
        "looked": r.looked[:],
        "pile": r.pile[:],
        "deck_size": len(r.deck),
        "turnovers": r.turnovers,
        "turn": turn,
        "held": held,
        "awaiting": _awaited(state),
        "windows": [
            {"seat": w.seat, "opened_at": w.opened_at, "closes_at": w.closes_at} for w in r.windows
        ],
        "caller": r.caller,
        "called_at": r.called_at,
        "finals_done": r.finals_done[:],
        "final_turns_left": final_left,
        "reveal": (
            {
                "at": r.reveal["at"],
                "totals": r.reveal["totals"][:],
                "round_scores": r.reveal["round_scores"][:],
                "caller_strictly_lowest": r.reveal["caller_strictly_lowest"],
            }
            if r.reveal is not None
            else None
        ),
        "next_round_at": r.next_round_at,
        "deadlines": [{"key": d.key, "kind": d.kind, "at": d.at} for d in deadlines],
        "now": now,
    }
    if seat is not None:
        out["you"] = {"can": can(state, seat, now, deadlines)}
    return out


def awaiting(state: GameState, now: int) -> Awaiting:
    """What the table waits for at ``now`` (the shared turn model, docs/ENGINE.md "Awaiting"),
    due deadlines applied first, as ``legal_actions`` does.

    ``kind``: ``"start"`` (the turn's seat, waiting for the memorise period or the start delay
    to end at ``deadline``), ``"draw"`` / ``"play"`` (the turn's seat must draw / holds a card;
    ``deadline`` its draw's timeout, ``None`` without a time per draw), ``"call_or_pass"``
    (turn-based, R28: the turn's seat must answer "Call crisp?" by ``deadline``), ``"next_round"``
    (nobody: the next deal comes at ``deadline``) or ``"nothing"`` (the game is over).  A
    look or a crisp call is never awaited: both are a seat's option, not the table's wait.

    >>> from games.engines.crisp import Settings, new_game
    >>> st, _ = new_game(seats=2, settings=Settings(draw_seconds=30), seed="doc", now=0)
    >>> awaiting(st, 0)
    {'kind': 'start', 'seats': [1], 'deadline': 5000}
    >>> awaiting(st, 5000)
    {'kind': 'draw', 'seats': [1], 'deadline': 35001}
    """
    return _awaited(_TIMERS.advanced(state, max(now, state.clock)))


def _awaited(state: GameState) -> Awaiting:
    """``awaiting`` of the state as it is (the view renders the state as given)."""
    r = state.round
    t = r.turn
    if state.status == "finished":
        return _awaiting(NOTHING)
    if r.reveal is not None:
        return _awaiting("next_round", (), r.next_round_at)
    assert t is not None
    if t.phase == "start":
        return _awaiting("start", [t.seat], t.start_at)
    ms = state.settings.move_ms
    timeout = None if ms is None or t.clock_from is None else t.clock_from + ms + 1
    return _awaiting(_AWAITED_KIND.get(t.phase, t.phase), [t.seat], timeout)


#: The turn's phase as the shared turn model names it: R28's step is "call_or_pass".
_AWAITED_KIND = {"call": "call_or_pass"}


# Event redaction --------------------------------------------------------------------------------
# Per event type, the fields that carry hidden card values, and who may see each:
#   "drawer" -- data["seat"];  "nobody" -- dropped for everyone.
# Any field not listed is public.  Looks and queen receipts need a rule of their own below.


def event_view(event: Event, seat: int | None) -> dict[str, Any]:
    """The form of ``event`` that ``seat`` (``None``: a spectator) may receive.

    >>> from games.engines.crisp import Event
    >>> e = Event("draw", {"seat": 1, "source": "deck", "card": "7H", "at": 5})
    >>> event_view(e, 1)["data"]["card"], event_view(e, 0)["data"]["card"]
    ('7H', None)
    """
    typ, data = event.type, event.data
    d = dict(data)
    actor = data.get("seat")
    if typ == "round_dealt":
        d["deck"] = None  # R21: never, to anyone; nulled, not dropped, like every hidden value
    elif typ == "draw":
        if not (data["source"] == "pile" or seat == actor):
            d["card"] = None
    elif typ == "look":
        if seat != actor:
            d["left"] = d["right"] = None
    elif typ == "swap":
        # The drawer saw the card at the draw (R5); swapped in, it is hidden again (R4) --
        # even a pile card, public while held, is a hand card now (R21).
        d["card_in"] = None
    elif typ == "jack":
        if seat != actor:
            d["centre"] = None
    elif typ == "queen":
        # R8: the places are public, the values are not; each receiver may look once at a
        # card landing in their left or right (section 5, R26).
        if not (seat == actor and data["place"] != "centre"):
            d["received"] = None
        if not (seat == data["target_seat"] and data["target_place"] != "centre"):
            d["given"] = None
    elif typ not in _PUBLIC_EVENTS:
        raise ValueError(f"no redaction rule for event type {typ!r}")
    for k, v in d.items():
        if isinstance(v, list):
            d[k] = [x[:] if isinstance(x, list) else x for x in v]
    return {"type": typ, "data": d}


#: Events whose values ``event_view`` hides from some receivers.
_REDACTED_EVENTS = frozenset({"round_dealt", "draw", "look", "swap", "jack", "queen"})

#: Events with no hidden value in them.  ``discard``, ``king``, ``timeout`` name cards that
#: land face up on the pile; ``reveal`` comes when every card is turned face up.
_PUBLIC_EVENTS = frozenset(
    {
        "draw_ready",
        "discard",
        "king",
        "king_discarded",
        "timeout",
        "turn_ended",
        "window_closed",
        "call",
        "call_ready",
        "pass",
        "pile_turned",
        "reveal",
        "game_over",
    }
)

#: Every event type the engine emits (``event_view`` refuses any other).
EVENT_TYPES = _REDACTED_EVENTS | _PUBLIC_EVENTS
