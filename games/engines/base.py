"""Value types every game engine shares: ``Event``, ``Deadline`` and ``IllegalAction``.

Standard library only, like the engines themselves.  They live here, once, because the web
layer stores, schedules and reports them without knowing which game produced them: an
``Event`` row, a Celery deadline and a ``{code, detail}`` refusal look the same for every kind.
Everything game-specific (the event types, the deadline kinds, the refusal codes) stays in the
game's own package.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# Refusal codes every engine uses with the same meaning.  Games add their own.
BAD_ACTION = "bad_action"  # malformed wire action
BAD_SEAT = "bad_seat"  # seat number out of range
BAD_SETTINGS = "bad_settings"  # new_game / Settings arguments out of range
GAME_FINISHED = "game_finished"
NOT_YOUR_TURN = "not_your_turn"


class IllegalAction(ValueError):
    """An action the rules do not allow now; the state it was tried on is unchanged.

    ``code`` is stable and machine-readable (clients switch on it); ``reason`` is for people
    and never contains a card value or a role the actor may not see.

    >>> e = IllegalAction("pile_empty", "the discard pile is empty")
    >>> e.code, str(e)
    ('pile_empty', 'pile_empty: the discard pile is empty')
    """

    def __init__(self, code: str, reason: str) -> None:
        super().__init__(f"{code}: {reason}")
        self.code = code
        self.reason = reason

    def to_json(self) -> dict[str, str]:
        """The wire form of a refusal."""
        return {"code": self.code, "reason": self.reason}


@dataclass(frozen=True, slots=True)
class Event:
    """Something that happened.  ``data`` is full and unredacted (admins, storage, replay);
    clients only ever receive the game's ``event_view(event, seat)``.  Every ``data`` has
    ``"at"``, the instant (ms) it happened."""

    type: str
    data: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "data": self.data}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Event:
        return cls(d["type"], d["data"])


@dataclass(frozen=True, slots=True)
class Deadline:
    """A scheduled consequence.  ``key`` is unique over the game and names the round, turn and
    move it belongs to, so a stale timer (its turn already over) is recognisably stale; ``at``
    is the first instant (ms) at which it has taken effect (docs/ENGINE.md, "Time")."""

    key: str
    kind: str
    at: int

    def to_json(self) -> dict[str, object]:
        return {"key": self.key, "kind": self.kind, "at": self.at}


class Timers:
    """The half of ``fire`` / ``advance`` every engine shares: due deadlines take effect one by
    one, earliest first, each at its own instant, on a clone (the given state never changes).

    Each game supplies only its own two rules: ``pending(state)`` (its deadlines, earliest
    first) and ``apply_one(state, deadline, events)`` (what one deadline does).  Applying one may
    create another already due (a timeout lets the next move's clock start at that instant), so
    the loop asks again after each; a late sweep therefore gives the punctual result.  The
    state's ``clock`` moves to each deadline's instant before it applies, so nothing it does can
    be dated earlier.  The state type needs ``clone()`` and an int ``clock``.

    >>> from types import SimpleNamespace as NS
    >>> class S(NS):
    ...     def clone(self): return S(clock=self.clock, due=list(self.due), done=list(self.done))
    >>> def pending(s): return [Deadline(f"d{at}", "tick", at) for at in s.due]
    >>> def apply_one(s, d, events):
    ...     s.due.remove(d.at); s.done.append(d.at); events.append(Event("tick", {"at": d.at}))
    >>> timers = Timers(pending, apply_one)
    >>> s = S(clock=0, due=[5, 9], done=[])
    >>> t, ev = timers.fire(s, "d9", 10)
    >>> t.done, [e.data["at"] for e in ev], s.done, t.clock
    ([5, 9], [5, 9], [], 9)
    >>> timers.fire(s, "d9", 8) == (s, []), timers.fire(s, "gone", 99) == (s, [])
    (True, True)
    >>> timers.advance(s, 6)[0].done, timers.advanced(s, 4) is s
    ([5], True)
    """

    __slots__ = ("_apply_one", "_pending")

    def __init__(self, pending: Any, apply_one: Any) -> None:
        self._pending = pending
        self._apply_one = apply_one

    def fire(self, state: Any, key: str, now: int) -> tuple[Any, list[Event]]:
        """Deliver the timer for deadline ``key`` at ``now``: if it is pending and due, every
        deadline up to its instant takes effect; a stale or early key changes nothing (the same
        state and ``[]``)."""
        for d in self._pending(state):
            if d.key == key:
                if d.at > now:
                    return state, []
                return self._run_on_clone(state, d.at)
        return state, []

    def advance(self, state: Any, now: int) -> tuple[Any, list[Event]]:
        """Every pending deadline with ``at <= now``, in order (the sweep); the same object and
        ``[]`` when nothing was due."""
        ds = self._pending(state)
        if not ds or ds[0].at > now:
            return state, []
        return self._run_on_clone(state, now)

    def advanced(self, state: Any, now: int) -> Any:
        """The state as of ``now`` with its due deadlines applied (events dropped): what
        ``legal_actions`` and the views reason about.  The same object when nothing is due."""
        return self.advance(state, now)[0]

    def run(self, st: Any, upto: int, events: list[Event]) -> None:
        """Apply, in place on ``st``, every deadline due by ``upto`` (for ``apply``, which has
        cloned already)."""
        while True:
            ds = self._pending(st)
            if not ds or ds[0].at > upto:
                return
            d = ds[0]
            st.clock = max(st.clock, d.at)
            self._apply_one(st, d, events)

    def _run_on_clone(self, state: Any, upto: int) -> tuple[Any, list[Event]]:
        st = state.clone()
        events: list[Event] = []
        self.run(st, upto, events)
        return st, events
