"""The CPU budget is the deciding thread's CPU (``time.thread_time``), not wall time and not
the process's CPU: a busy machine or another busy thread of the same process (a Celery worker
with threads, the benchmark's other work) must neither weaken a bot nor let it overrun.

Proven without measuring: ``ismcts.search`` reads its budget from one clock, ``time.thread_time``
by default; here a fake clock advances only when the toy game below plays a play-out, by a fixed
cost, so the iterations the budget buys and where the search stops are exact, whatever else the
machine does.  The real CPU (quiet, and beside another busy thread of the process) is measured
side by side in ``bench/bots_budget.py``.  The search runs over a small game of its own
(``ismcts`` knows no engine)."""

from __future__ import annotations

import gc
import inspect
import random
import threading
import time
import weakref
from collections.abc import Hashable, Sequence

from games.bots import Budget, ismcts
from games.bots.base import freeze_long_lived

#: The fake clock's unit: a binary fraction, so every sum below is exact in floating point.
U = 1 / 1024


class CostClock:
    """CPU seconds that pass only when the game spends them (``spend``): the search's readings
    themselves cost nothing, so the budget's arithmetic can be followed to the unit."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def spend(self, units: int) -> None:
        self.now += units * U


class _Race:
    """Two seats add 1-3 to a running total; whoever reaches 21 wins.  Each seat has a hidden
    handicap drawn in ``sample`` (so determinisations differ), which only shifts the reward.
    Each play-out costs ``cost`` units of the clock's CPU."""

    def __init__(self, clock: CostClock, cost: int = 1) -> None:
        self.clock = clock
        self.cost = cost

    def sample(self, rng: random.Random) -> list[int]:
        return [0, 0, rng.randrange(3)]  # total, seat to move, hidden handicap

    def to_move(self, s: list[int]) -> int | None:
        return None if s[0] >= 21 else s[1]

    def actions(self, s: list[int]) -> Sequence[Hashable]:
        return (1, 2, 3)

    def apply_action(self, s: list[int], action: Hashable) -> Hashable:
        assert isinstance(action, int)
        s[0] += action
        s[1] = 1 - s[1]
        return None

    def rollout_action(self, s: list[int], rng: random.Random) -> Hashable:
        return rng.choice((1, 2, 3))

    def rewards(self, s: list[int]) -> Sequence[float]:
        self.clock.spend(self.play_out_cost())
        winner = 1 - s[1]  # the seat that moved last reached 21
        return [1.0 if i == winner else 0.0 for i in (0, 1)]

    def play_out_cost(self) -> int:
        return self.cost


def test_the_budget_is_read_on_this_threads_cpu_clock() -> None:
    """The bots never pass a clock, so the default is what every budget is measured on; and
    that clock does not count another thread's work: this thread waits (blocked, no CPU) while
    another burns 20 ms of its own CPU."""
    assert inspect.signature(ismcts.search).parameters["clock"].default is time.thread_time
    burnt: list[float] = []

    def burn() -> None:
        t0 = time.thread_time()
        while time.thread_time() - t0 < 0.020:
            pass
        burnt.append(time.thread_time() - t0)

    mine = time.thread_time()
    other = threading.Thread(target=burn)
    other.start()
    other.join(timeout=60)  # a hang guard: 20 ms of CPU however busy the machine
    mine = time.thread_time() - mine
    assert burnt and burnt[0] >= 0.020
    assert mine < burnt[0] / 2, (mine, burnt)


def test_the_search_stops_at_its_budget_exactly() -> None:
    """A play-out costs 1 unit and an iteration plays the 3 root actions (paired root), so
    after ``k`` iterations ``3k`` units are spent.  The search starts an iteration only if, at
    the mean cost so far, it ends within the budget (256 units): 85 iterations (255 units),
    because the 86th would end at 258.  Neither short of the budget by a whole iteration nor
    over it, whatever the load: only the clock decides."""
    clock = CostClock()
    res = ismcts.search(_Race(clock), 0, Budget(250.0), random.Random(7), clock=clock)
    assert res.iterations == 85
    assert res.cpu_s == clock.now == 255 * U
    assert sum(res.visits.values()) == 3 * 85  # every root action once per iteration
    # Twice the budget buys twice the iterations (less the rounding): the budget, nothing else.
    clock = CostClock()
    res = ismcts.search(_Race(clock), 0, Budget(500.0), random.Random(7), clock=clock)
    assert (res.iterations, res.cpu_s) == (170, 510 * U)


def test_max_iterations_caps_the_search_before_the_budget() -> None:
    clock = CostClock()
    budget = Budget(250.0, max_iterations=10)
    res = ismcts.search(_Race(clock), 0, budget, random.Random(7), clock=clock)
    assert (res.iterations, res.cpu_s) == (10, 30 * U)


class _Lumpy(_Race):
    """``_Race`` whose play-outs become expensive (40 units each instead of 1) from the 21st
    iteration on -- the hands of a game differ that much: the mean cost of the iterations so
    far then says nothing about the next one."""

    def __init__(self, clock: CostClock) -> None:
        super().__init__(clock)
        self.samples = 0

    def sample(self, rng: random.Random) -> list[int]:
        self.samples += 1  # the root's sample, then 3 per iteration: 62 opens the 21st
        return super().sample(rng)

    def play_out_cost(self) -> int:
        return 40 if self.samples > 61 else 1


def test_an_iteration_that_would_overrun_is_cut_short() -> None:
    """The search also looks at the clock between the root actions' play-outs of one
    iteration.  Budget 256 units: 20 cheap iterations spend 60; the 21st (mean 3 so far: go)
    costs 120, ending at 180; the 22nd starts (mean 8.6) and its first play-out ends at 220;
    the second could end at 260 at the dearest play-out's cost (40), past the budget, so the
    search stops there and leaves that world out.  Without the check inside the iteration it
    would have ended at 300: over the budget by more than one play-out (296)."""
    for seed in range(3):  # the worlds sampled differ, the costs and the stop do not
        clock = CostClock()
        res = ismcts.search(_Lumpy(clock), 0, Budget(250.0), random.Random(seed), clock=clock)
        assert res.iterations == 21, seed
        assert res.cpu_s == clock.now == 220 * U, seed
        assert res.cpu_s <= 0.250


def test_with_a_prior_a_budget_spent_before_one_whole_world_returns_the_prior() -> None:
    """Budget 2 units (1.953 ms), play-outs 1 unit: the second root action's play-out could end
    at 2 units, not within the budget, so no world is complete and the prior stands."""
    clock = CostClock()
    res = ismcts.search(_Race(clock), 0, Budget(1.953125), random.Random(7), prior=3, clock=clock)
    assert (res.action, res.iterations, res.cpu_s) == (3, 0, 1 * U)


def _tracked(obj: object) -> bool:
    """Is ``obj`` in one of the collector's generations (``gc.get_objects`` omits the frozen)?"""
    return any(o is obj for o in gc.get_objects())


def test_freezing_takes_the_long_lived_objects_out_of_the_collectors_passes() -> None:
    """A generation-2 pass inside a search walks every long-lived object of the process; what
    ``freeze_long_lived`` froze is skipped, and a second call first unfreezes, so what died in
    between is collected instead of being kept for good (bench/RESULTS.md, the budget's tail)."""
    alive = [[] for _ in range(3)]
    cycle: list[object] = []
    cycle.append(cycle)
    dead = weakref.ref(_Cycle())  # a cycle of its own, unreachable once the call returns ...
    try:
        keep = _Cycle()
        keep_ref = weakref.ref(keep)
        freeze_long_lived()
        assert gc.get_freeze_count() > 0
        assert not _tracked(alive) and not _tracked(cycle)
        assert dead() is None  # ... so the collection before the freeze freed it
        del keep  # frozen, then dropped: the next freeze must not keep it for good
        freeze_long_lived()
        assert keep_ref() is None
        fresh: list[object] = []
        assert _tracked(fresh)  # objects made after the freeze are collected as always
    finally:
        gc.unfreeze()


class _Cycle:
    def __init__(self) -> None:
        self.me = self


def test_a_celery_worker_process_freezes_once_it_is_set_up() -> None:
    """Both the prefork child's signal and the main process's (threads/solo pools) call it."""
    from celery.signals import worker_process_init, worker_ready

    import crisp_site.celery as app

    for signal in (worker_process_init, worker_ready):
        assert app._freeze_long_lived_objects in signal._live_receivers(None)
    try:
        gc.unfreeze()
        app._freeze_long_lived_objects()
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
