"""What a committed change leaves to happen later: its timers and its computer players' turns.

The service layer hands both over on commit (``games.services.commit._announce``, looked up by
name then, so tests can stand in for this module); each goes to the process's live thread
(``games.broadcast.dispatcher``), so the change's author (a daphne database thread, a worker
thread) does not wait on Redis or the broker:

* ``schedule_deadlines`` makes the game's entries in the timers' Redis sorted set
  (``games.timers``) exactly the deadlines its change leaves pending (removing those no
  longer pending); a loop in each Celery worker fires each when due
  (``games.tasks.fire_timer``);
* ``schedule_bots`` queues each computer player's turn (the Celery task ``games.bot_move``,
  sent by name) after its think time.

Why a module of its own, below ``games.tasks``: the Celery tasks call the service layer, and
the service layer calls these, so with both in one module each would import the other
(``tests/games/test_import_graph.py``).
"""

from __future__ import annotations

import logging
from datetime import datetime

import redis
from celery import current_app

from games import broadcast, timers

logger = logging.getLogger(__name__)

#: The Celery task of one computer player's turn (``games.tasks.bot_move``), sent by name.
BOT_MOVE_TASK = "games.bot_move"


def schedule_deadlines(
    game_id: int, deadlines: list[tuple[str, datetime]], version: int | None = None
) -> None:
    """Make the game's timers ``deadlines`` (``(key, due)``, every timer the change of
    ``version`` leaves pending; ``enqueue_deadlines``); called on commit by the service layer,
    handed to the process's live thread."""
    deadlines = list(deadlines)
    broadcast.dispatcher.submit(lambda: enqueue_deadlines(game_id, deadlines, version))


def enqueue_deadlines(
    game_id: int, deadlines: list[tuple[str, datetime]], version: int | None = None
) -> None:
    """Make the game's entries in the timers' sorted set exactly ``deadlines``, as of the
    change of ``version`` (``games.timers.replace``: one ``EVALSHA``): the keys no longer
    pending are removed -- their entries would each cost a worker a transaction to find them
    stale --, the new ones added; a key already waiting keeps its place; a call older than
    the last one applied for the game changes nothing.  Without a version, only adds
    (``games.timers.add``).

    Every change of a game passes all its pending timers, so the same key arrives many times
    (a window stays pending over several changes); only the first stays. Never raises: the
    commit has happened, and if Redis is down the sweep enforces the deadline instead (a stale
    entry left behind fires as a no-op).
    """
    try:
        if version is None:
            timers.add(timers.client(), game_id, deadlines)
        else:
            timers.replace(timers.client(), game_id, version, deadlines)
    except redis.RedisError:
        logger.warning("deadlines of game %s not scheduled; the sweep will enforce them", game_id)


def schedule_bots(game_id: int, version: int, moves: list[tuple[int, int]]) -> None:
    """Wake each computer player of ``moves`` (``(seat, think ms)``) after its think time;
    called on commit by the service layer.  A stale wake-up (the game moved on) is a no-op."""
    moves = list(moves)

    def enqueue() -> None:
        for seat, think_ms in moves:
            try:
                current_app.send_task(
                    BOT_MOVE_TASK, args=[game_id, seat, version], countdown=think_ms / 1000
                )
            except Exception:  # the broker is down: the sweep wakes the bot later
                logger.exception("could not wake the bot at seat %s of game %s", seat, game_id)

    broadcast.dispatcher.submit(enqueue)
