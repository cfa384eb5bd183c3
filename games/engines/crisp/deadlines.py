"""Pending deadlines: the engine's only link to time.

The engine never reads a clock.  Instead it reports, from the state alone, every instant at
which something will happen unless an action comes first; the web layer schedules a timer per
deadline and calls ``fire(state, key, now)`` (or the periodic ``advance``).

``Deadline.at`` is the **first instant at which the deadline has taken effect**.  For deadlines
that *open* something (``memorise_over``, ``may_start``, ``next_round``) that is the boundary
itself: the next player may draw at exactly t + 2 s.  For deadlines that *close* something
(``window_closed``, ``draw_timeout``, ``call_timeout``) it is the boundary plus 1 ms, because
the boundary instant still belongs to the player: a call at exactly t + 3 s counts and an action
at exactly a draw's deadline is on time (R18).  With integer milliseconds this makes every
boundary exact and lets ``apply``, ``fire`` and ``advance`` all use the same rule: a deadline
with ``at <= now`` has happened before anything done at ``now``.
"""

from __future__ import annotations

from ..base import Deadline
from .state import GameState

__all__ = ["Deadline", "pending_deadlines"]

#: Same-instant tie-break: closings before openings (they cannot coincide with the default
#: timers; the order only has to be fixed so that replays are exact).
_KIND_ORDER = {
    "window_closed": 0,
    "draw_timeout": 1,
    "call_timeout": 1,
    "memorise_over": 2,
    "may_start": 2,
    "next_round": 3,
}


def pending_deadlines(state: GameState) -> list[Deadline]:
    """Every deadline the web layer must schedule, ordered by ``at`` (then a fixed tie-break).

    A finished game has none.  Between rounds only ``next_round`` is pending.
    """
    if state.status != "playing":
        return []
    r = state.round
    n = r.number
    if r.reveal is not None:
        assert r.next_round_at is not None
        return [Deadline(f"r{n}:next", "next_round", r.next_round_at)]
    out = [
        Deadline(f"r{n}:t{w.turn_no}:window", "window_closed", w.closes_at + 1) for w in r.windows
    ]
    t = r.turn
    if t is not None:
        if t.phase == "start":
            if t.no == 1:
                out.append(Deadline(f"r{n}:memorise", "memorise_over", t.start_at))
            else:
                out.append(Deadline(f"r{n}:t{t.no}:start", "may_start", t.start_at))
        elif state.settings.move_ms is not None:
            assert t.clock_from is not None
            at = t.clock_from + state.settings.move_ms + 1
            if t.phase == "call":  # R28: "Call crisp?" unanswered in time is a "no"
                out.append(Deadline(f"r{n}:t{t.no}:call", "call_timeout", at))
            else:
                out.append(Deadline(f"r{n}:t{t.no}:d{t.draw_no}:timeout", "draw_timeout", at))
    if len(out) > 1:
        out.sort(key=lambda d: (d.at, _KIND_ORDER[d.kind], d.key))
    return out
