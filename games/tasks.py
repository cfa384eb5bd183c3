"""Timers and the periodic sweep.

(Every deadline the service layer passes: an engine's silent deadlines -- Crisp's
``may_start`` -- get none, and what follows them is passed instead; ``services._timers``.)

The service layer calls `schedule_deadlines` on commit with every pending deadline of the game;
they go into one Redis sorted set that a loop in each Celery worker process fires when due
(`games.timers`). Firing only asks the service layer to apply its key; the engine decides
whether the key is still pending and due, so a stale or duplicated firing changes nothing. That
makes every failure mode safe in the same direction:

* a deadline that is never fired (Redis restarted without persistence, a worker killed between
  popping an entry and firing it, no worker running) is covered by `sweep`, which Celery beat
  runs every `CRISP_SWEEP_SECONDS`;
* one fired twice or late is a no-op, and a late deadline still takes effect at its own instant
  (R18), so lateness never changes the game.
"""

from __future__ import annotations

import logging
import time
from datetime import datetime

import redis
from celery import shared_task
from django.conf import settings

logger = logging.getLogger(__name__)

_redis: redis.Redis | None = None


def _client() -> redis.Redis:
    """One thread-safe client (and pool) per process, made on first use."""
    global _redis
    if _redis is None:
        _redis = redis.Redis.from_url(settings.REDIS_URL, socket_timeout=2)
    return _redis


def schedule_deadlines(game_id: int, deadlines: list[tuple[str, datetime]]) -> None:
    """Schedule every `(key, due)` (`enqueue_deadlines`); called on commit by the service layer.

    Handed to the process's live thread (`games.broadcast.dispatcher`), so the change's author
    (a daphne database thread, a worker thread) does not wait on the broker.
    """
    from games.broadcast import dispatcher

    deadlines = list(deadlines)
    dispatcher.submit(lambda: enqueue_deadlines(game_id, deadlines))


def enqueue_deadlines(game_id: int, deadlines: list[tuple[str, datetime]]) -> None:
    """Put every `(key, due)` in the timers' sorted set (`games.timers.add`: one `ZADD`; a key
    already waiting keeps its place).

    Every change of a game passes all its pending deadlines, so the same key arrives many times
    (a window stays pending over several changes); only the first stays. Never raises: the
    commit has happened, and if Redis is down the sweep enforces the deadline instead.
    """
    from games import timers

    try:
        timers.add(_client(), game_id, deadlines)
    except redis.RedisError:
        logger.warning("deadlines of game %s not scheduled; the sweep will enforce them", game_id)


@shared_task(name="games.fire_deadline", ignore_result=True)
def fire_deadline(game_id: int, key: str) -> bool:
    """Ask the service layer to apply deadline `key` of the game; stale or early: nothing.

    Timers no longer enqueue it (`games.timers`); it stays so that countdown tasks queued by an
    earlier release still run after an upgrade."""
    from games import services

    return services.game_fire_deadline(game_id=game_id, key=key)


@shared_task(name="games.sweep", ignore_result=True)
def sweep() -> int:
    """Enforce every overdue deadline whose task did not run (Celery beat, every few seconds),
    and wake the computer players of games that stood still (a bot task lost with its worker)."""
    from games import services

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
    return fired


#: Games nobody plays are looked for once a minute, not at every 2 s sweep.
REAP_EVERY_SECONDS = 60.0
_last_reap = float("-inf")


def games_with_players(game_ids: list[int]) -> set[int]:
    """Those of the games with at least one player's socket open (presence in Redis).

    If Redis cannot say, every game counts as connected: ending a game is not undone, so
    when in doubt it is not done.
    """
    from games import presence

    now = int(time.time() * 1000)
    try:
        pipe = _client().pipeline(transaction=False)
        for game_id in game_ids:
            pipe.zrangebyscore(presence._key(game_id), now, "+inf")
        results = pipe.execute()
    except Exception:
        logger.warning("presence unavailable; no game is ended as idle", exc_info=True)
        return set(game_ids)
    return {
        game_id
        for game_id, members in zip(game_ids, results, strict=True)
        if any(not m.startswith(b"s|") for m in members)
    }


def schedule_bots(game_id: int, version: int, moves: list[tuple[int, int]]) -> None:
    """Wake each computer player of ``moves`` (``(seat, think ms)``) after its think time;
    called on commit by the service layer.  A stale wake-up (the game moved on) is a no-op."""
    from games.broadcast import dispatcher

    moves = list(moves)

    def enqueue() -> None:
        for seat, think_ms in moves:
            try:
                bot_move.apply_async(args=[game_id, seat, version], countdown=think_ms / 1000)
            except Exception:  # the broker is down: the sweep wakes the bot later
                logger.exception("could not wake the bot at seat %s of game %s", seat, game_id)

    dispatcher.submit(enqueue)


@shared_task(name="games.bot_move", ignore_result=True)
def bot_move(game_id: int, seat: int, version: int) -> bool:
    """A computer player decides and moves through the service layer (``game_bot_move``)."""
    from games import services

    return services.game_bot_move(game_id=game_id, seat_number=seat, version=version)
