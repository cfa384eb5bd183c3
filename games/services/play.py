"""Play: a player's action, a timer going off, the sweep of overdue deadlines.

``game_act`` (every move, a person's or a computer player's), ``game_fire_deadline`` (a timer)
and ``game_sweep`` (the periodic safety net); each runs the commit step of
``games.services.commit``.
"""

from __future__ import annotations

import logging
from datetime import datetime
from types import ModuleType
from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser
from django.db import transaction
from django.db.models import Q

from games import clock
from games.engines.base import IllegalAction
from games.errors import ServiceError
from games.models import Event, Game, IdempotencyKey
from games.services.commit import (
    ActResult,
    _engine,
    _engine_change,
    _lock_playing,
    _lock_playing_with_seats,
    _lock_with_seats,
    _silent,
)

logger = logging.getLogger(__name__)

_IDEMPOTENCY_KEY_MAX = 100


def _require_playing(g: Game) -> tuple[ModuleType, Any]:
    """The game's engine and its current state; refuses unless the game is playing."""
    if g.status == Game.Status.LOBBY:
        raise ServiceError("not_started", "The game has not started yet.", status=409)
    if g.status != Game.Status.PLAYING:
        raise ServiceError("game_over", f"The game is {g.status}.", status=409)
    assert g.state is not None
    engine = _engine(g)
    return engine, engine.GameState.from_json(g.state)


@transaction.atomic
def game_act(
    *,
    game: Game | int,
    user: AbstractBaseUser,
    action: dict[str, Any],
    expected_version: int | None,
    idempotency_key: str | None = None,
    by_bot: bool = False,
) -> ActResult:
    """Apply one player action: the single entry point for every move (REST, WebSocket, and
    the computer players of ``game_bot_move``, which pass ``by_bot``).

    Under the game's row lock (``commit._lock_with_seats``), in this order:

    1. an idempotency key already used by this user at this game returns the first result
       (``replayed=True``) and applies nothing -- checked before the version, because a retry
       carries the version the client had *before* its first attempt succeeded;
    2. the caller must hold a seat they have not left for good (``already_left``; the
       computer sitting in for them still plays it), the game must be playing, the action
       must parse;
    3. ``expected_version`` (if given) must equal ``Game.version``, else ``stale_version``
       with the current version in ``extra`` -- except for the action types the engine
       declares exempt (``VERSION_EXEMPT_ACTIONS``): such an action depends on nothing the
       client saw and commutes with every other seat's, so when every seat sends one at
       once none can refuse another (Crisp's opening look at a deal, rules R3 and E5);
    4. apply: the engine applies it at the server's ``now`` (deadlines already due first);
    5. persist, schedule, broadcast on commit (``commit._engine_change``): snapshot, events,
       deadlines and version are stored; broadcast and timers on commit.
    """
    if idempotency_key is not None and (
        not isinstance(idempotency_key, str) or not 0 < len(idempotency_key) <= _IDEMPOTENCY_KEY_MAX
    ):
        raise ServiceError(
            "bad_idempotency_key", f"An idempotency key is 1 to {_IDEMPOTENCY_KEY_MAX} characters."
        )
    # Every seat in one query: the actor's, and those the sit-in count and the computer
    # players need (``_engine_change``), instead of a query each; sent with the lock (one
    # round trip on PostgreSQL).
    g, seats = _lock_with_seats(game)
    seat = (
        next((s for s in seats if s.user_id == user.pk), None)
        if user is not None and getattr(user, "is_authenticated", False)
        else None
    )
    if idempotency_key is not None and seat is not None:
        prior = IdempotencyKey.objects.filter(game=g, user=user, key=idempotency_key).first()
        if prior is not None:
            if prior.fingerprint != action:
                raise ServiceError(
                    "idempotency_key_reused",
                    "This idempotency key was already used for a different action.",
                    status=409,
                )
            events = list(Event.objects.filter(game=g, version=prior.version).order_by("seq"))
            return ActResult(version=prior.version, events=events, replayed=True)
    if seat is None:
        raise ServiceError("not_seated", "You have no seat at this game.", status=403)
    engine, old = _require_playing(g)
    if seat.left_at is not None and not by_bot:
        # Leaving is for good (``game_leave_playing``): the computer plays the seat to the
        # end, and a move of the person's own must not hand it back (``game_back`` refuses
        # the same way), or the seat would be "left" and played by nobody.
        raise ServiceError(
            "already_left",
            "You have left this game for good; a computer player plays your seat.",
            status=409,
        )
    try:
        act = engine.Action.from_wire(action)
    except IllegalAction as exc:
        raise ServiceError.from_illegal(exc) from None
    if (
        expected_version is not None
        and act.type not in engine.VERSION_EXEMPT_ACTIONS
        and (isinstance(expected_version, bool) or expected_version != g.version)
    ):
        raise ServiceError(
            "stale_version",
            f"The game is at version {g.version}; reload and try again.",
            status=409,
            extra={"version": g.version},
        )
    at = clock.now_ms()
    try:
        new, events = engine.apply(old, seat.number, act, at)
    except IllegalAction as exc:
        raise ServiceError.from_illegal(exc, version=g.version) from None
    call = {"call": "apply", "seat": seat.number, "action": act.to_wire()}
    rows = _engine_change(
        g,
        old,
        new,
        events,
        at_ms=at,
        actor=None if by_bot else seat,
        call=call,
        seats=seats,
        columns_only=True,
    )
    if idempotency_key is not None:
        IdempotencyKey.objects.create(
            game=g, user=user, key=idempotency_key, fingerprint=action, version=g.version
        )
    return ActResult(version=g.version, events=rows, seat=seat.number, kind=g.kind)


@transaction.atomic
def game_fire_deadline(*, game_id: int, key: str) -> bool:
    """A timer went off (Celery).  True if it changed the game.

    Stale keys (the turn is already over), early deliveries and games no longer playing
    change nothing and do not bump the version -- the engine's ``fire`` returns no events
    then, and we write nothing.  Locks the game row.
    """
    # The lock and every seat with its user in one message (``_lock_playing_with_seats``):
    # what the sit-in count and the computer players need, and the broadcast's seat map (so
    # the live thread reads nothing back). A stale timer reads the seats for nothing, in the
    # same round trip.
    g, seats = _lock_playing_with_seats(game_id)
    if g is None or g.state is None:
        return False
    engine = _engine(g)
    old = engine.GameState.from_json(g.state)
    at = clock.now_ms()
    new, events = engine.fire(old, key, at)
    call: dict[str, Any] = {"call": "fire", "key": key}
    if not events:
        # A timer scheduled beyond a silent deadline (``_timers``): its key is pending only
        # once the silent one has happened, so apply every due deadline, as the sweep does.
        due = [d for d in engine.pending_deadlines(old) if d.at <= at]
        if not due or due[0].kind not in _silent(engine):
            return False
        ahead, _ = engine.advance(old, due[0].at)
        if not any(d.key == key for d in engine.pending_deadlines(ahead)):
            return False  # stale: nothing of this timer's is pending
        new, events = engine.advance(old, at)
        if not events:
            return False
        call = {"call": "advance"}
    _engine_change(g, old, new, events, at_ms=at, call=call, seats=seats, columns_only=True)
    return True


def _sweep_one(pk: int, at: int) -> bool:
    """Apply every overdue deadline of one game in its own transaction.

    ``skip_locked``: a game whose row is locked right now is being changed by someone else,
    and that change applies the due deadlines itself (the engine catches up before any
    action), so the sweep need not wait for it.  SQLite ignores the clause and serialises.
    """
    with transaction.atomic():
        g = _lock_playing(pk, skip_locked=True)
        if g is None or g.state is None:
            return False
        engine = _engine(g)
        old = engine.GameState.from_json(g.state)
        new, events = engine.advance(old, at)
        if not events:
            return False
        _engine_change(g, old, new, events, at_ms=at, call={"call": "advance"}, columns_only=True)
        return True


def game_sweep(*, now: datetime | None = None) -> int:
    """Fire every overdue deadline of every game (Celery beat); the number of games changed.

    The safety net under the per-deadline timers: a task lost with its worker is caught here.
    One transaction per game, deliberately not one for the whole sweep: a sweep must not hold
    every overdue game's lock at once, and one game's failure must not undo another's.
    """
    at = clock.from_datetime(now) if now is not None else clock.now_ms()
    due = list(
        Game.objects.filter(
            Q(status=Game.Status.PLAYING) & Q(next_deadline_at__lte=clock.to_datetime(at))
        ).values_list("pk", flat=True)
    )
    changed = 0
    for pk in due:
        try:
            if _sweep_one(pk, at):
                changed += 1
        except Exception:  # one broken game must not stop the sweep of the others
            logger.exception("sweep failed for game %s", pk)
    return changed
