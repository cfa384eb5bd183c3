"""The timers' sorted set and loop (games/timers.py), against the test run's real Redis.

Scheduling is once per key however often a change passes it; popping is atomic (two loops
never fire one entry); the loop fires what is due and nothing early, and keeps going through
a failing firing."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime, timedelta

import pytest
import redis

from games import timers


@pytest.fixture
def client(redis_client: redis.Redis) -> redis.Redis:
    redis_client.delete(timers.set_key(), timers.wake_key())
    yield redis_client
    redis_client.delete(timers.set_key(), timers.wake_key())


def _at(ms_from_now: int) -> datetime:
    return datetime.now(tz=UTC) + timedelta(milliseconds=ms_from_now)


def test_a_key_is_scheduled_once_at_its_first_instant(client: redis.Redis) -> None:
    first = _at(-1000)
    timers.add(client, 7, [("r1:t1:timeout", first), ("r1:w1", _at(-500))])
    # A later change passes the same pending key again (even with another instant): kept.
    timers.add(client, 7, [("r1:t1:timeout", _at(-10))])
    assert client.zcard(timers.set_key()) == 2
    due, nxt = timers.pop_due(client, int(time.time() * 1000), 100)
    assert due == [(7, "r1:t1:timeout"), (7, "r1:w1")]  # in due order
    assert nxt is None and client.zcard(timers.set_key()) == 0


def test_only_what_is_due_is_popped_and_the_next_instant_is_told(client: redis.Redis) -> None:
    timers.add(client, 1, [("a", _at(-5)), ("later", _at(60_000))])
    now = int(time.time() * 1000)
    due, nxt = timers.pop_due(client, now, 100)
    assert due == [(1, "a")]
    assert nxt is not None and nxt - now > 50_000
    assert timers.pop_due(client, now, 100) == ([], nxt)  # nothing fires twice


def test_concurrent_loops_never_pop_the_same_entry(client: redis.Redis) -> None:
    timers.add(client, 3, [(f"k{i}", _at(-1)) for i in range(600)])
    got: list[list[tuple[int, str]]] = [[] for _ in range(4)]

    # Each popper pops once, then waits for the others to have popped once too: all four are
    # then popping at the same time, whatever the machine's load (unsynchronised, a thread
    # started late on a busy machine could find the set already emptied by the first).
    together = threading.Barrier(4, timeout=60)

    def popper(i: int) -> None:
        c = redis.Redis(connection_pool=client.connection_pool)
        first = True
        while True:
            due, _ = timers.pop_due(c, int(time.time() * 1000), 7)
            if first:
                together.wait()
                first = False
            if not due:
                return
            got[i].extend(due)

    threads = [threading.Thread(target=popper, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    flat = [e for g in got for e in g]
    assert len(flat) == 600 and len(set(flat)) == 600
    assert all(got)  # they really raced: every popper took entries


def test_the_loop_fires_when_due_never_early_and_survives_a_failing_firing(
    client: redis.Redis,
) -> None:
    fired: list[tuple[int, str, float]] = []
    done = threading.Event()

    def fire(game_id: int, key: str) -> None:
        fired.append((game_id, key, time.time()))
        if key == "boom":
            raise RuntimeError("a firing that fails")  # logged by the pool; the loop goes on
        if len(fired) == 3:
            done.set()

    loop = timers.TimerLoop(client, max_sleep_ms=1000, threads=2, fire=fire)
    loop.start()
    try:
        t0 = time.time()
        timers.add(client, 5, [("boom", _at(0)), ("b", _at(300))])
        timers.add(client, 6, [("c", _at(150))])
        assert done.wait(60), fired
    finally:
        loop.stop()
    assert sorted((g, k) for g, k, _ in fired) == [(5, "b"), (5, "boom"), (6, "c")]
    when = {k: at for _, k, at in fired}
    # Never before its instant (ms resolution; the clock is this process's own).
    assert when["c"] >= t0 + 0.149 and when["b"] >= t0 + 0.299
    assert loop.fired == 3 and client.zcard(timers.set_key()) == 0


def test_a_busy_loop_pops_no_more_than_it_can_fire_and_leaves_the_rest_to_another(
    client: redis.Redis,
) -> None:
    """A worker whose firing threads are all stuck (an overloaded database, say) must not pop
    everything due into its own queue: it takes its backlog (threads + as many waiting) and
    leaves the rest in Redis, where an idle worker's loop fires it at once."""
    gate = threading.Event()
    stuck: list[str] = []
    free: list[str] = []
    all_free = threading.Event()

    def stuck_fire(game_id: int, key: str) -> None:
        stuck.append(key)
        gate.wait(20)

    def free_fire(game_id: int, key: str) -> None:
        free.append(key)
        if len(free) == 26:
            all_free.set()

    timers.add(client, 8, [(f"k{i:02}", _at(-1)) for i in range(30)])
    busy = timers.TimerLoop(client, max_sleep_ms=200, threads=2, fire=stuck_fire)
    assert busy.backlog == 4
    other = timers.TimerLoop(client, max_sleep_ms=200, threads=2, fire=free_fire)
    busy.start()
    try:
        deadline = time.time() + 60
        # Wait for the two firings to have begun (not only been handed to the pool).
        while (busy.in_flight < 4 or len(stuck) < 2) and time.time() < deadline:
            time.sleep(0.01)
        time.sleep(0.3)  # room to pop more, if it would (a negative check: never a false fail)
        assert busy.in_flight == 4 and len(stuck) == 2  # two firing, two waiting
        assert client.zcard(timers.set_key()) == 26
        other.start()
        assert all_free.wait(60), free
    finally:
        gate.set()
        busy.stop()
        other.stop()
    assert len(stuck) == 4 and sorted(stuck + free) == [f"k{i:02}" for i in range(30)]
    assert busy.in_flight == 0 and client.zcard(timers.set_key()) == 0


def test_a_loop_waiting_for_a_far_deadline_is_woken_by_an_earlier_one(
    client: redis.Redis,
) -> None:
    """The loop blocks on the wake-up list while its next instant is far off; a deadline added
    for sooner leaves a token and is fired at its own instant, not at the far one's (nor after
    the loop's longest sleep: ten minutes here, so that a firing within the test's wait can only
    be the token's doing, however busy the machine -- no bound on lateness to guess)."""
    fired: dict[str, float] = {}
    soon = threading.Event()

    def fire(game_id: int, key: str) -> None:
        fired[key] = time.time()
        if key == "soon":
            soon.set()

    timers.add(client, 9, [("far", _at(60_000))])
    loop = timers.TimerLoop(client, max_sleep_ms=600_000, threads=1, fire=fire)
    loop.start()
    try:
        time.sleep(0.5)  # blocked on the wake-up list by now
        t0 = time.time()
        timers.add(client, 9, [("soon", _at(400))])
        assert soon.wait(60)
    finally:
        loop.stop(timeout=60)
    assert "far" not in fired
    assert t0 + 0.399 <= fired["soon"]  # not before its instant
    assert client.llen(timers.wake_key()) == 0  # the token was taken


def test_a_loop_whose_process_is_shutting_down_puts_popped_entries_back(
    client: redis.Redis,
) -> None:
    """Found at 500 tables: a worker's warm shutdown closed the firing threads' executor while
    the loop still popped, and the loop thread died with a traceback, the popped entries left
    to the sweep. Now the entries go back into the set (due) and the loop ends quietly."""
    died: list[BaseException] = []
    old_hook = threading.excepthook
    threading.excepthook = lambda args: died.append(args.exc_value)  # type: ignore[assignment]
    loop = timers.TimerLoop(client, max_sleep_ms=200, threads=1, fire=lambda g, k: None)
    loop.pool.shutdown()  # what the interpreter's shutdown does to every executor
    try:
        timers.add(client, 4, [("r1:t1:timeout", _at(-10)), ("r1:w1", _at(-5))])
        loop.start()
        loop.join(10)
    finally:
        threading.excepthook = old_hook
    assert not loop.is_alive() and died == []
    assert loop.fired == 0
    due, _ = timers.pop_due(client, int(time.time() * 1000), 100)
    assert sorted(due) == [(4, "r1:t1:timeout"), (4, "r1:w1")]


def test_stop_loop_stops_this_process_loop(client: redis.Redis, monkeypatch) -> None:
    """Connected to the worker's shutdown signals (crisp_site/celery.py)."""
    from crisp_site import celery as celery_app

    loop = timers.TimerLoop(client, max_sleep_ms=5000, threads=1, fire=lambda g, k: None)
    loop.start()
    monkeypatch.setattr(timers, "_loop", loop)
    celery_app._stop_timers_in_this_process()
    assert not loop.is_alive() and timers._loop is None
    timers.stop_loop()  # idempotent


def test_a_later_deadline_leaves_no_token(client: redis.Redis) -> None:
    timers.add(client, 1, [("first", _at(1000))])
    client.delete(timers.wake_key())
    timers.add(client, 1, [("second", _at(5000))])
    assert client.llen(timers.wake_key()) == 0
    timers.add(client, 1, [("earlier", _at(10))])
    assert client.llen(timers.wake_key()) == 1


def test_without_redis_scheduling_logs_and_returns(monkeypatch, caplog) -> None:
    """After the commit nothing may raise: the sweep enforces what could not be scheduled."""
    from games import scheduling

    class Down:
        def register_script(self, *a, **k):
            def run(*a, **k):
                raise redis.ConnectionError("down")

            return run

    monkeypatch.setattr(timers, "client", lambda: Down())
    scheduling.enqueue_deadlines(1, [("k", _at(10))])
    assert "the sweep will enforce them" in caplog.text
