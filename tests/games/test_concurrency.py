"""Many clients act on one game at the same instant (PostgreSQL: real row locks).

Each wave, every thread reads the version and its legal actions, waits at a barrier, then all
post at once with that ``expected_version``.  Under ``select_for_update`` exactly one action
wins per version and every other is refused ``stale_version``; sequence numbers have no gaps or
duplicates; and the stored state equals an engine replay of the winners in version order.
(SQLite has no row locks -- its IMMEDIATE transactions serialise writers -- so this runs on
PostgreSQL only.)
"""

from __future__ import annotations

import random
import threading

import pytest
from django.db import connection

from games import services
from games.engines.crisp import Action, Settings, new_game
from games.engines.crisp import apply as engine_apply
from games.models import Event, Game

from .conftest import client_for

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

THREADS_PER_SEAT = 4
SEATS = 3
WAVES = 25


def test_one_winner_per_version(users, fake_clock):
    if connection.vendor != "postgresql":
        pytest.skip("select_for_update is a no-op on SQLite")
    t0 = fake_clock.ms
    players = users[:SEATS]
    game = services.game_create(host=players[0], settings={"draw_seconds": None, "pile_draw": True})
    for p in players[1:]:
        services.game_join(game=game, user=p)
    services.game_start(game=game, user=players[0], seed="race")
    game.refresh_from_db()
    v0 = game.version
    url = f"/api/v1/games/{game.pk}/actions/"

    n = SEATS * THREADS_PER_SEAT
    read_barrier = threading.Barrier(n + 1)
    post_barrier = threading.Barrier(n)
    done_barrier = threading.Barrier(n + 1)
    results: list[tuple[int, dict, dict, int, int]] = []  # status, body, action, seat, now
    lock = threading.Lock()
    errors: list[BaseException] = []

    def worker(i: int) -> None:
        seat = i % SEATS
        client = client_for(players[seat])
        rng = random.Random(i)
        try:
            for _ in range(WAVES):
                read_barrier.wait()
                body = client.get(url).json()
                # The opening look is exempt from the version check (services.game_act, R3):
                # it never races, so it is not one of the racing moves here.
                moves = [a for a in body["actions"] if a["type"] != "look"]
                action = rng.choice(moves) if moves else None
                post_barrier.wait()
                if action is not None:
                    now = fake_clock.ms
                    r = client.post(
                        url, {"action": action, "expected_version": body["version"]}, format="json"
                    )
                    with lock:
                        results.append((r.status_code, r.json(), action, seat, now))
                done_barrier.wait()
        except BaseException as exc:  # surface thread failures in the test
            errors.append(exc)
            for b in (read_barrier, post_barrier, done_barrier):
                b.abort()
        finally:
            connection.close()

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    try:
        for _ in range(WAVES):
            fake_clock.advance(2500)  # memorise / start delays pass between waves
            read_barrier.wait()
            done_barrier.wait()
    except threading.BrokenBarrierError:
        pass
    for t in threads:
        t.join(60)
    assert not errors, errors

    game.refresh_from_db()
    wins = sorted((b["version"], a, seat, now) for status, b, a, seat, now in results
                  if status == 200)  # fmt: skip
    losses = [b for status, b, *_ in results if status != 200]
    # Exactly one winner per version, and every version after the start came from a winner.
    assert [w[0] for w in wins] == list(range(v0 + 1, game.version + 1))
    assert len(wins) >= WAVES // 2 and len(losses) > len(wins)
    assert {b["code"] for b in losses} == {"stale_version"}, losses[:3]
    # Gap-free, duplicate-free sequence numbers.
    seqs = list(Event.objects.filter(game=game).order_by("seq").values_list("seq", flat=True))
    assert seqs == list(range(1, game.last_seq + 1))
    # The stored state is exactly the replay of the winners, in version order.
    st, _ = new_game(
        seats=SEATS, settings=Settings(target_score=game.settings["target_score"],
                                       draw_seconds=None, pile_draw=True),
        seed="race", now=t0,
    )  # fmt: skip
    for _, action, seat, now in wins:
        st, _ = engine_apply(st, seat, Action.from_wire(action), now)
    assert Game.objects.get(pk=game.pk).state == st.to_json()
    print(f"concurrency: {len(results)} posts, {len(wins)} won, {len(losses)} stale")
