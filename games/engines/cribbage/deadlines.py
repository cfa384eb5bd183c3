"""Pending deadlines: the engine's only link to time (C27, C29).

The engine never reads a clock.  It reports, from the state alone, every instant at which
something happens unless a move comes first; the web layer schedules a timer per deadline and
calls ``fire(state, key, now)`` (or the periodic ``advance``).

Cribbage has only *closing* deadlines -- a move's time running out -- and only when the host
chose a time per move (C25).  Following Crisp's convention, ``Deadline.at`` is the **first
instant at which the deadline has taken effect**: the boundary + 1 ms, because the boundary
instant still belongs to the player (C27: "an action at exactly the deadline is on time").
So ``apply``, ``fire`` and ``advance`` share one rule, ``at <= now``, and a timer firing exactly
on time can never beat an on-time move.  There is no wait between hands (C28), so there is no
opening deadline such as Crisp's ``next_round``.

Kinds and keys (``n`` the hand, ``s`` the seat, ``m`` the play-move number of the hand):

* ``lay_away_timeout`` -- ``r{n}:lay:{s}``, one per seat that has not laid away yet;
* ``play_timeout`` -- ``r{n}:m{m}:play``, for the seat on turn in the play.
"""

from __future__ import annotations

from ..base import Deadline
from .state import GameState

__all__ = ["Deadline", "lay_away_deadline", "pending_deadlines", "play_deadline"]


def lay_away_deadline(state: GameState) -> int | None:
    """The last on-time instant of this hand's lay-aways, or ``None`` (no limit)."""
    ms = state.settings.move_ms
    return None if ms is None else state.round.dealt_at + ms


def play_deadline(state: GameState) -> int | None:
    """The last on-time instant of the current play move, or ``None``."""
    ms = state.settings.move_ms
    r = state.round
    if ms is None or r.turn is None or r.turn_since is None:
        return None
    return r.turn_since + ms


def pending_deadlines(state: GameState) -> list[Deadline]:
    """Every deadline the web layer must schedule, ordered by ``at`` (then key: seat 0's
    lay-away timeout before seat 1's, CE12).  None when finished or without a time limit."""
    ms = state.settings.move_ms
    if state.status != "playing" or ms is None:
        return []
    r = state.round
    n = r.number
    if r.phase == "lay_away":
        end = r.dealt_at + ms
        return [
            Deadline(f"r{n}:lay:{s}", "lay_away_timeout", end + 1)
            for s in (0, 1)
            if r.discards[s] is None
        ]
    if r.phase == "play" and r.turn is not None:
        assert r.turn_since is not None
        return [Deadline(f"r{n}:m{r.move_no}:play", "play_timeout", r.turn_since + ms + 1)]
    return []
