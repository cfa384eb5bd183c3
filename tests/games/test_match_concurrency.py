"""Quick match under concurrent requests (PostgreSQL: real row locks).

Many players press "Find me a game" at the same instant, some twice: every player ends up at
exactly one table or still waiting (never at two, never lost), every table is full, and at most
one seat's worth of players is left waiting.  SQLite serialises writers (its IMMEDIATE
transactions), so this runs on PostgreSQL only.
"""

from __future__ import annotations

import threading
from collections import Counter

import pytest
from django.db import connection

from games.models import Game, MatchTicket, Seat

from .conftest import client_for

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

URL = "/api/v1/match/"


def test_concurrent_requests_seat_everyone_once(make_user, fake_clock):
    if connection.vendor != "postgresql":
        pytest.skip("select_for_update is a no-op on SQLite")
    players = [make_user() for _ in range(9)]
    # Each player asks twice at once (a double click), all at the same instant.
    jobs = [p for p in players for _ in range(2)]
    barrier = threading.Barrier(len(jobs))
    answers: list[tuple[int, int, dict]] = []
    lock = threading.Lock()
    errors: list[BaseException] = []

    def worker(user) -> None:
        client = client_for(user)
        try:
            barrier.wait()
            r = client.post(URL, {"kind": "cribbage"}, format="json")
            with lock:
                answers.append((user.pk, r.status_code, r.json()))
        except BaseException as exc:
            errors.append(exc)
            barrier.abort()
        finally:
            connection.close()

    threads = [threading.Thread(target=worker, args=(u,)) for u in jobs]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors
    assert len(answers) == len(jobs)
    assert {status for _, status, _ in answers} == {200}, answers

    seated = Counter(Seat.objects.values_list("user_id", flat=True))
    assert all(n == 1 for n in seated.values()), seated  # nobody at two tables
    games = list(Game.objects.all())
    assert len(games) == 4  # nine players, two a table: four tables, one waits
    assert all(Seat.objects.filter(game=g).count() == 2 for g in games)
    waiting = list(MatchTicket.objects.filter(game__isnull=True).values_list("user_id", flat=True))
    assert len(waiting) == 1 and waiting[0] not in seated  # nobody lost
    assert set(seated) | set(waiting) == {p.pk for p in players}
    # Every answer agrees with what was stored: the same player's two requests too.
    for user_pk, _, body in answers:
        ticket = MatchTicket.objects.get(user_id=user_pk)
        if body["state"] == "matched":
            assert body["game_id"] == ticket.game_id
    assert MatchTicket.objects.count() == len(players)
