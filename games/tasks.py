"""The Celery tasks: what a worker runs, each asking the service layer.

(Every deadline the service layer passes: an engine's silent deadlines -- Crisp's
``may_start`` -- get none, and what follows them is passed instead; ``services.commit._timers``.)

The service layer schedules on commit through ``games.scheduling``: the game's entries in one
Redis sorted set become exactly the deadlines its change leaves pending (those a change
resolved are removed, not fired for nothing), and a loop in each Celery worker process fires
each when due (``games.timers``, firing through `fire_timer`); each computer player's turn is
queued as the `bot_move` task. Firing only asks the service layer to apply its key; the engine
decides whether the key is still pending and due, so a stale or duplicated firing changes
nothing (removing stale entries is only an optimisation). That makes every failure mode safe
in the same direction:

* a deadline that is never fired (Redis restarted without persistence, a worker killed between
  popping an entry and firing it, no worker running) is covered by `sweep`, which Celery beat
  runs every `CRISP_SWEEP_SECONDS`;
* one fired twice or late is a no-op, and a late deadline still takes effect at its own instant
  (R18), so lateness never changes the game.

This module imports the service layer, never the other way round (the service layer hands its
work to ``games.scheduling``; ``tests/games/test_import_graph.py``).
"""

from __future__ import annotations

import logging
import time

from celery import shared_task
from django.db import close_old_connections

from games import presence, services, timers

logger = logging.getLogger(__name__)


def fire_timer(game_id: int, key: str) -> None:
    """Ask the service layer to apply one deadline the timers' loop found due (``games.timers.
    start_loop``); errors are logged (the sweep retries)."""
    close_old_connections()
    try:
        services.game_fire_deadline(game_id=game_id, key=key)
    except Exception:
        logger.exception("timer %s of game %s failed; the sweep will enforce it", key, game_id)
    finally:
        close_old_connections()


@shared_task(name="games.fire_deadline", ignore_result=True)
def fire_deadline(game_id: int, key: str) -> bool:
    """Ask the service layer to apply deadline `key` of the game; stale or early: nothing.

    Timers no longer enqueue it (`games.timers`); it stays so that countdown tasks queued by an
    earlier release still run after an upgrade."""
    return services.game_fire_deadline(game_id=game_id, key=key)


@shared_task(name="games.sweep", ignore_result=True)
def sweep() -> int:
    """Enforce every overdue deadline whose task did not run (Celery beat, every few seconds),
    and wake the computer players of games that stood still (a bot task lost with its worker)."""
    fired = services.game_sweep()
    if fired:
        logger.info("sweep fired %s overdue deadline(s)", fired)
    services.game_wake_bots()
    global _last_reap
    if time.monotonic() - _last_reap >= REAP_EVERY_SECONDS:
        _last_reap = time.monotonic()
        ended = services.game_reap_idle(connected=games_with_players)
        if ended:
            logger.info("ended %s game(s) nobody plays as abandoned", ended)
        closed = services.game_reap_lobbies(host_connected=lobbies_with_host)
        if closed:
            logger.info("closed %s lobby(ies) nobody will start", closed)
    return fired


#: Games nobody plays and lobbies nobody will start are looked for once a minute, not at every
#: 2 s sweep.
REAP_EVERY_SECONDS = 60.0
_last_reap = float("-inf")


def _connected_seats(game_ids: list[int]) -> dict[int, set[int]] | None:
    """The seat numbers with a socket open at each game (presence in Redis); None if Redis
    cannot say."""
    now = int(time.time() * 1000)
    try:
        pipe = timers.client().pipeline(transaction=False)
        for game_id in game_ids:
            pipe.zrangebyscore(presence._key(game_id), now, "+inf")
        results = pipe.execute()
    except Exception:
        logger.warning("presence unavailable; nothing is ended as idle", exc_info=True)
        return None
    seats: dict[int, set[int]] = {}
    for game_id, members in zip(game_ids, results, strict=True):
        numbers = {m.split(b"|", 1)[0] for m in members}
        seats[game_id] = {int(n) for n in numbers if n.isdigit()}
    return seats


def games_with_players(game_ids: list[int]) -> set[int]:
    """Those of the games with at least one player's socket open (presence in Redis).

    If Redis cannot say, every game counts as connected: ending a game is not undone, so
    when in doubt it is not done.
    """
    seats = _connected_seats(game_ids)
    if seats is None:
        return set(game_ids)
    return {game_id for game_id, numbers in seats.items() if numbers}


def lobbies_with_host(host_seats: dict[int, int]) -> set[int]:
    """Those of the lobbies whose host (``{game_id: host's seat}``) has a socket open.

    If Redis cannot say, every host counts as connected (as in ``games_with_players``).
    """
    seats = _connected_seats(list(host_seats))
    if seats is None:
        return set(host_seats)
    return {game_id for game_id, seat in host_seats.items() if seat in seats.get(game_id, ())}


@shared_task(name="games.bot_move", ignore_result=True)
def bot_move(game_id: int, seat: int, version: int) -> bool:
    """A computer player decides and moves through the service layer (``game_bot_move``);
    queued by ``games.scheduling.schedule_bots`` (by this name)."""
    return services.game_bot_move(game_id=game_id, seat_number=seat, version=version)
