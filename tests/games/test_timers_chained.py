"""``commit._timers`` advances each silent deadline's state on from the previous one's (issue 25,
session 21) and finds exactly the timers it found advancing ``state`` anew for each.

The reference is the loop as it was, kept here; both run on every state of whole Crisp games
played with random legal moves and the odd timeout (the only engine with silent deadlines), and
on their deadlines out of order.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator, Sequence
from types import SimpleNamespace
from typing import Any

from games.engines import engine_for
from games.engines.base import Deadline, Timers
from games.services import commit

CRISP = engine_for("crisp")


def _from_scratch(engine: Any, state: Any, pending: Sequence[Any]) -> list[Any]:
    """``_timers`` before: every silent deadline advanced from ``state`` itself."""
    silent = engine.SILENT_DEADLINES
    timers = [d for d in pending if d.kind not in silent]
    keys = {d.key for d in timers}
    for d in pending:
        if d.kind in silent:
            ahead, _ = engine.advance(state, d.at)
            for later in engine.pending_deadlines(ahead):
                if later.kind not in silent and later.key not in keys:
                    timers.append(later)
                    keys.add(later.key)
    timers.sort(key=lambda d: d.at)
    return timers


def _states(seed: str, limit: int = 3000) -> Iterator[Any]:
    """Every state of a Crisp game (a time per draw, so timeouts come up; moves close together,
    so several windows are open at once)."""
    rng = random.Random(seed)
    settings = CRISP.Settings.from_json({"draw_seconds": 30})
    state, _ = CRISP.new_game(seats=3, settings=settings, seed=seed, now=1_000)
    now = 1_000
    for _ in range(limit):
        yield state
        if CRISP.is_over(state):
            return
        moves = [(s, a) for s in range(3) for a in CRISP.legal_actions(state, s, now)]
        ds = CRISP.pending_deadlines(state)
        if moves and rng.random() < 0.9:
            seat, action = rng.choice(moves)
            state, _ = CRISP.apply(state, seat, action, now)
        elif ds:
            now = max(now, ds[0].at)
            state, _ = CRISP.fire(state, ds[0].key, now)
        else:
            now += 500
            continue
        now += rng.choice((0, 1, 5, 50, 200))


def test_the_timers_are_those_found_from_scratch() -> None:
    several = found_later = 0
    for seed in [f"chained-{n}" for n in range(12)]:
        for state in _states(seed):
            pending = CRISP.pending_deadlines(state)
            want = _from_scratch(CRISP, state, pending)
            assert commit._timers(CRISP, state, pending) == want
            backwards = list(reversed(pending))  # out of order: each from ``state`` again
            assert commit._timers(CRISP, state, backwards) == _from_scratch(CRISP, state, backwards)
            silent = [d for d in pending if d.kind in CRISP.SILENT_DEADLINES]
            several += len(silent) >= 2
            found_later += len(want) > len(pending) - len(silent)
    assert several > 20 and found_later > 50  # the cases that matter came up


def test_each_silent_deadline_is_advanced_from_the_one_before() -> None:
    """Not from the change's state again: with windows pending, each ``advance`` starts from
    the state the previous one gave."""
    calls: list[tuple[Any, int, Any]] = []

    def advance(state: Any, now: int) -> tuple[Any, list[Any]]:
        ahead, events = CRISP.advance(state, now)
        calls.append((state, now, ahead))
        return ahead, events

    spy = SimpleNamespace(
        SILENT_DEADLINES=CRISP.SILENT_DEADLINES,
        pending_deadlines=CRISP.pending_deadlines,
        advance=advance,
    )
    for state in (s for n in range(12) for s in _states(f"spy-{n}")):
        pending = CRISP.pending_deadlines(state)
        ats = [d.at for d in pending if d.kind in CRISP.SILENT_DEADLINES]
        if len(ats) < 2 or ats != sorted(ats):
            continue
        calls.clear()
        commit._timers(spy, state, pending)
        assert [now for _, now, _ in calls] == ats
        assert calls[0][0] is state
        for (_, _, before), (start, _, _) in itertools.pairwise(calls):
            assert start is before
        assert calls[1][0] is not state  # the first window's closing was applied once
        return
    raise AssertionError("no state with two windows pending")


class _Toy(SimpleNamespace):
    """A state of ``_TOY``: its clock, the deadlines still due (instant -> kind), those done."""

    def clone(self) -> _Toy:
        return _Toy(clock=self.clock, due=dict(self.due), done=list(self.done))


def _toy_pending(state: _Toy) -> list[Deadline]:
    return sorted((Deadline(f"d{at}", kind, at) for at, kind in state.due.items()), key=_at)


def _at(d: Deadline) -> int:
    return d.at


def _toy_apply(state: _Toy, d: Deadline, events: list[Any]) -> None:
    del state.due[d.at]
    state.done.append(d.at)
    if d.kind == "opens":  # a silent deadline that makes a timer's deadline pending
        state.due[d.at + 5] = "timeout"


_TOY_TIMERS = Timers(_toy_pending, _toy_apply)
#: An engine whose silent deadline at 10 opens a timeout at 15, before another at 20.
_TOY = SimpleNamespace(
    SILENT_DEADLINES=frozenset({"opens", "quiet"}),
    pending_deadlines=_toy_pending,
    advance=_TOY_TIMERS.advance,
)


def test_deadlines_out_of_order_start_from_the_state_again() -> None:
    state = _Toy(clock=0, due={10: "opens", 20: "quiet"}, done=[])
    pending = _toy_pending(state)
    want = [Deadline("d15", "timeout", 15)]
    assert _from_scratch(_TOY, state, pending) == want
    assert commit._timers(_TOY, state, pending) == want
    backwards = list(reversed(pending))  # 20 first: its state has the timeout applied already
    assert _from_scratch(_TOY, state, backwards) == want
    assert commit._timers(_TOY, state, backwards) == want
