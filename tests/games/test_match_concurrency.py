"""Quick match under concurrent requests (PostgreSQL: real row locks).

Many players press "Find me a game" at the same instant, some twice: every player ends up at
exactly one table or still waiting (never at two, never lost), every table is full, and at most
one seat's worth of players is left waiting.  SQLite serialises writers (its IMMEDIATE
transactions), so this runs on PostgreSQL only.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable

import pytest
from django.db import connection

from games import services
from games.models import Game, MatchTicket, Seat

from .conftest import client_for

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

URL = "/api/v1/match/"


def _at_once(jobs: list, request: Callable) -> list[tuple[int, int, dict]]:
    """Run ``request(client)`` for each user in ``jobs`` in its own thread, all released at
    one barrier: ``(user id, status, body)`` per request."""
    barrier = threading.Barrier(len(jobs))
    answers: list[tuple[int, int, dict]] = []
    lock = threading.Lock()
    errors: list[BaseException] = []

    def worker(user) -> None:
        client = client_for(user)
        try:
            barrier.wait()
            r = request(client)
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
    return answers


def test_concurrent_requests_seat_everyone_once(make_user, fake_clock):
    if connection.vendor != "postgresql":
        pytest.skip("select_for_update is a no-op on SQLite")
    players = [make_user() for _ in range(9)]
    # Each player asks twice at once (a double click), all at the same instant.
    jobs = [p for p in players for _ in range(2)]
    answers = _at_once(jobs, lambda c: c.post(URL, {"kind": "cribbage"}, format="json"))
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


def test_players_whose_wait_is_over_polling_at_once_get_one_table(make_user, fake_clock):
    """Three wait for a table of four; the wait ends and all poll at once, twice each: one
    game with the three of them and one computer player, not a table each."""
    if connection.vendor != "postgresql":
        pytest.skip("select_for_update is a no-op on SQLite")
    players = [make_user() for _ in range(3)]
    for p in players:
        assert services.match_join(user=p, kind="triple_crown").state == "waiting"
    fake_clock.advance(services.MATCH_WAIT_MS - 1)
    for p in players:  # their pages poll (a player silent for MATCH_LAPSE_MS is passed over)
        assert services.match_status(user=p).state == "waiting"
    fake_clock.advance(1)
    answers = _at_once([p for p in players for _ in range(2)], lambda c: c.get(URL))
    assert {status for _, status, _ in answers} == {200}, answers
    games = list(Game.objects.all())
    assert len(games) == 1, games
    seats = list(Seat.objects.filter(game=games[0]).select_related("user"))
    assert sorted(s.user_id for s in seats if not s.user.is_bot) == sorted(p.pk for p in players)
    assert sum(s.user.is_bot for s in seats) == 1
    assert {b["game_id"] for _, _, b in answers if b["state"] == "matched"} == {games[0].pk}
