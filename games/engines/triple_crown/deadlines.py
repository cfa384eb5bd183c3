"""Pending deadlines: the engine's only link to time (T23, T24).

With a time limit per move there is exactly one pending deadline while a hand is under way: the
awaited move's timeout.  ``at`` follows Crisp's convention (docs/ENGINE.md, "Time"): the first
instant at which the deadline has taken effect.  A timeout *closes* a move, so ``at`` is the
move's last on-time instant + 1 ms -- an action at exactly the deadline is on time (T23), and
``apply``/``fire``/``advance`` all use the one rule ``at <= now``.

There is no deadline between hands: T26 deals the next hand at the instant one ends.
"""

from __future__ import annotations

from ..base import Deadline
from .state import GameState

__all__ = ["DEADLINE_KINDS", "Deadline", "move_deadline", "pending_deadlines"]

#: ``declare_timeout`` (the Double Stakes declaration) and ``play_timeout`` (one card).
DEADLINE_KINDS = ("declare_timeout", "play_timeout")


def move_deadline(state: GameState) -> int | None:
    """The last on-time instant (ms, inclusive) of the awaited move, or ``None`` (no limit)."""
    h = state.round
    ms = state.settings.move_ms  # turn_seconds in a turn-based game (issue 26)
    if state.status != "playing" or ms is None or h.phase == "over":
        return None
    return h.clock_from + ms


def pending_deadlines(state: GameState) -> list[Deadline]:
    """What the web layer must schedule, ordered by ``at``: at most one move timeout.

    Keys name the hand and the move (``r3:declare``, ``r3:k7:p2`` = hand 3, trick 7, third
    card), so they are unique over the game and a stale timer is recognisably stale.
    """
    last = move_deadline(state)
    if last is None:
        return []
    h = state.round
    if h.phase == "declare":
        return [Deadline(f"r{h.number}:declare", "declare_timeout", last + 1)]
    return [Deadline(f"r{h.number}:k{len(h.tricks) + 1}:p{len(h.trick)}", "play_timeout", last + 1)]
