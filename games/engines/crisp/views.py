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

from .actions import Event
from .deadlines import pending_deadlines
from .rules import can
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
    ds = state.settings.draw_seconds
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
            "draw_deadline": (
                t.clock_from + ds * 1000 if ds is not None and t.clock_from is not None else None
            ),
        }
    if state.status == "finished":
        awaiting: dict[str, Any] = {"kind": "nothing", "seat": None, "at": None}
    elif revealed:
        awaiting = {"kind": "next_round", "seat": None, "at": r.next_round_at}
    else:
        assert t is not None
        awaiting = {
            "kind": t.phase,  # "start" (a time), "draw" or "play" (a seat)
            "seat": t.seat,
            "at": t.start_at if t.phase == "start" else (turn or {}).get("draw_deadline"),
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
        "awaiting": awaiting,
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
        "pile_turned",
        "reveal",
        "game_over",
    }
)
