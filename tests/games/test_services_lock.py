"""The lock discipline of the service layer (docs/SERVICES.md, "The commit step", stage 1).

Every write of a seat's computer-player memory (``Seat.bot_memory``) happens inside a
transaction that holds the game's row lock: ``game_bot_move`` decides outside the lock (a search
may take its whole budget) but must store what it learnt under it, or a concurrent change of the
seat (its player back, a sit-in starting over) could be overwritten by a stale memory.

How it is seen on any database (SQLite ignores ``FOR UPDATE``): a spy on the package's two lock
helpers (``commit._lock`` and ``commit._lock_playing``, wherever a module imported them) marks
the current transaction as locked until it commits, and a database execute wrapper checks every
``UPDATE`` of the seats' table that sets ``bot_memory``: it must run in an atomic block whose
transaction took the lock.  The test runs without the test case's own wrapping transaction
(``transaction=True``), so "in an atomic block" means the service's own transaction.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.db import connection, transaction

from games import services
from games.models import Game, Seat

LOCKERS = ("_lock", "_lock_playing")


class LockWatch:
    """Whether the current transaction took a game's row lock, and each bot memory write."""

    def __init__(self) -> None:
        self.locked = False
        self.locks = 0
        #: (in an atomic block, lock held) for each UPDATE that set ``bot_memory``.
        self.writes: list[tuple[bool, bool]] = []

    def spy(self, real: Callable[..., Any]) -> Callable[..., Any]:
        def locked(*args: Any, **kwargs: Any) -> Any:
            game = real(*args, **kwargs)
            if connection.in_atomic_block:
                self.locked = True
                self.locks += 1
                transaction.on_commit(self.release)
            return game

        return locked

    def release(self) -> None:
        self.locked = False

    def __call__(
        self, execute: Callable[..., Any], sql: str, params: Any, many: bool, ctx: Any
    ) -> Any:
        if not connection.in_atomic_block:
            self.locked = False  # autocommit: any earlier transaction is over
        head = sql.split(" WHERE ")[0]
        is_update = head.lstrip().upper().startswith("UPDATE")
        if is_update and '"games_seat"' in head and '"bot_memory"' in head:
            self.writes.append((connection.in_atomic_block, self.locked))
        return execute(sql, params, many, ctx)


@pytest.fixture
def lock_watch(monkeypatch: pytest.MonkeyPatch) -> Iterator[LockWatch]:
    watch = LockWatch()
    for module in (
        services.commit,
        services.lobby,
        services.play,
        services.bots,
        services.night,
    ):
        for name in LOCKERS:
            if hasattr(module, name):
                monkeypatch.setattr(module, name, watch.spy(getattr(module, name)))
    with connection.execute_wrapper(watch):
        yield watch


@pytest.fixture
def small_bots(settings: Any) -> None:
    """Cheap, reproducible decisions (the search capped by iterations, not by the clock)."""
    settings.CRISP_BOT_SEED = 3
    settings.CRISP_BOT_CPU_MS = 10_000
    settings.CRISP_BOT_MAX_ITERATIONS = 4


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("small_bots")
def test_bot_memory_is_written_only_under_the_game_row_lock(
    users: list[Any], fake_clock: Any, live_calls: Any, lock_watch: LockWatch
) -> None:
    game = services.game_vs_computer(user=users[0], kind="cribbage", level="easy", opponents=1)
    bot = Seat.objects.get(game=game, user__is_bot=True)
    moved = 0
    for _ in range(6):
        game.refresh_from_db()
        if game.status != Game.Status.PLAYING:
            break
        fake_clock.advance(1_000)
        moved += services.game_bot_move(
            game_id=game.pk, seat_number=bot.number, version=game.version
        )
    bot.refresh_from_db()
    assert moved and bot.bot_memory, "the computer player moved and kept its memory"
    # The person leaves for good: a computer sits in with a fresh memory (another writer).
    services.game_leave_playing(game=game, user=users[0])
    assert len(lock_watch.writes) >= 2, lock_watch.writes
    assert all(in_atomic and locked for in_atomic, locked in lock_watch.writes), lock_watch.writes


@pytest.mark.django_db(transaction=True)
def test_the_watch_sees_a_write_outside_the_lock(users: list[Any], lock_watch: LockWatch) -> None:
    """The check above can fail: a bot memory written in a transaction without the lock, or
    outside any transaction, is caught."""
    game = services.game_create(host=users[0])
    seat = Seat.objects.get(game=game)
    with transaction.atomic():
        Seat.objects.filter(pk=seat.pk).update(bot_memory={"x": 1})
    Seat.objects.filter(pk=seat.pk).update(bot_memory=None)
    with transaction.atomic():
        services.commit._lock(game.pk)
        Seat.objects.filter(pk=seat.pk).update(bot_memory={"x": 2})
    assert lock_watch.writes == [(True, False), (False, False), (True, True)]
