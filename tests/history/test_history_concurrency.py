"""Games sharing players finish at the same time (PostgreSQL: real row locks): every rated game
rates each of its players once, and recomputing from scratch gives the same ratings -- the
records' order is the order the rating locks were taken in."""

from __future__ import annotations

import random
import threading

import pytest
from django.db import connection, connections

from history.models import GameRecord, PlayerStats, Rating
from history.services import records_recompute

from .conftest import play

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

GAMES = 4


def test_games_finishing_together_rate_once_and_recompute_the_same(users, start_game, fake_clock):
    if connection.vendor != "postgresql":
        pytest.skip("select_for_update is a no-op on SQLite")
    rng = random.Random(5)
    pool = users[:3]  # few players, many games: most pairs of games share someone
    games = [start_game(rng.sample(pool, 2 + i % 2), seed=f"race-{i}", draw_seconds=30)
             for i in range(GAMES)]  # fmt: skip
    errors: list[BaseException] = []
    barrier = threading.Barrier(GAMES)

    def worker(i: int) -> None:
        try:
            barrier.wait()
            play(games[i], fake_clock, random.Random(i), tolerant=True)
        except BaseException as exc:  # reported below
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(GAMES)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert GameRecord.objects.count() == GAMES
    played = {u.pk: 0 for u in pool}
    for record in GameRecord.objects.all():
        for p in record.players:
            played[p["user_id"]] += 1
    assert {r.user_id: r.games for r in Rating.objects.all()} == {
        u: n for u, n in played.items() if n
    }
    assert {s.user_id: s.games for s in PlayerStats.objects.all()} == {
        u: n for u, n in played.items() if n
    }
    before = sorted((r.user_id, r.mu, r.sigma) for r in Rating.objects.all())
    records_recompute()
    assert sorted((r.user_id, r.mu, r.sigma) for r in Rating.objects.all()) == before
