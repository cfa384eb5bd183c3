"""Timers: one Celery countdown task per engine deadline, plus the periodic sweep.

(Every deadline the service layer passes: an engine's silent deadlines -- Crisp's
``may_start`` -- get none, and what follows them is passed instead; ``services._timers``.)

The service layer calls `schedule_deadlines` on commit with every pending deadline of the game.
Each task only asks the service layer to fire its key; the engine decides whether the key is
still pending and due, so a stale or duplicated task changes nothing. That makes every failure
mode of the broker safe in the same direction:

* a task that never runs (worker killed with SIGKILL: its countdown tasks stay unacknowledged in
  Redis until the visibility timeout, an hour; Redis restarted without persistence: they are
  gone) is covered by `sweep`, which Celery beat runs every `CRISP_SWEEP_SECONDS`;
* a task that runs twice (redelivered after the visibility timeout) or late is a no-op, and a
  late deadline still takes effect at its own instant (R18), so lateness never changes the game.
"""

from __future__ import annotations

import contextlib
import logging
import time
from datetime import UTC, datetime

import redis
from celery import shared_task
from django.conf import settings

logger = logging.getLogger(__name__)

#: How long the "already scheduled" marker outlives a deadline's due time.
_MARK_GRACE_MS = 60_000

_redis: redis.Redis | None = None


def _client() -> redis.Redis:
    """One thread-safe client (and pool) per process, made on first use."""
    global _redis
    if _redis is None:
        _redis = redis.Redis.from_url(settings.REDIS_URL, socket_timeout=2)
    return _redis


def _prefix() -> str:
    return settings.CHANNEL_LAYERS["default"]["CONFIG"].get("prefix", "crisp")


def _as_datetime(due: datetime | int | float) -> datetime:
    """Deadlines arrive as aware datetimes (SERVICES.md); engine ms are accepted too."""
    if isinstance(due, datetime):
        return due if due.tzinfo is not None else due.replace(tzinfo=UTC)
    return datetime.fromtimestamp(due / 1000, tz=UTC)


def schedule_deadlines(game_id: int, deadlines: list[tuple[str, datetime]]) -> None:
    """Enqueue one countdown task per `(key, due)`; called on commit by the service layer.

    Handed to the process's live thread (`games.broadcast.dispatcher`), so the change's author
    (a daphne database thread, a worker thread) does not wait on the broker.
    """
    from games.broadcast import dispatcher

    deadlines = list(deadlines)
    dispatcher.submit(lambda: enqueue_deadlines(game_id, deadlines))


def enqueue_deadlines(game_id: int, deadlines: list[tuple[str, datetime]]) -> None:
    """Enqueue one countdown task per `(key, due)`.

    Every change of a game passes all its pending deadlines, so the same key arrives many times
    (a window stays pending over several changes). A Redis `SET NX` marker per key lets only the
    first call enqueue; if Redis lost the marker (restart) the key is simply enqueued again,
    which is harmless. Never raises: the commit has happened, and if the broker is down the sweep
    enforces the deadline instead.
    """
    now = datetime.now(tz=UTC)
    for key, raw_due in deadlines:
        due = _as_datetime(raw_due)
        marker = f"{_prefix()}:deadline:{game_id}:{key}"
        ttl_ms = max(0, int((due - now).total_seconds() * 1000)) + _MARK_GRACE_MS
        try:
            if not _client().set(marker, 1, nx=True, px=ttl_ms):
                continue
        except redis.RedisError:
            logger.warning("deadline marker not set for game %s key %s", game_id, key)
        try:
            fire_deadline.apply_async(args=[game_id, key], eta=due)
        except Exception:  # the broker is down: the sweep will enforce it
            logger.exception("could not enqueue deadline %s of game %s", key, game_id)
            with contextlib.suppress(redis.RedisError):
                _client().delete(marker)


@shared_task(name="games.fire_deadline", ignore_result=True)
def fire_deadline(game_id: int, key: str) -> bool:
    """Ask the service layer to apply deadline `key` of the game; stale or early: nothing."""
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
