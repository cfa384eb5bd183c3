"""Quick match (issue 24): "Find me a game" seats players who wait for the same game together.

``match_join`` (ask), ``match_leave`` (stop waiting) and ``match_status`` (what became of it).

A pool is a game kind at a seat count (``MatchPool``).  A player who asks waits in that pool
with a ticket (``MatchTicket``, one per player); as soon as the pool holds enough tickets for a
table, the asker and the waiting players whose ratings are nearest to theirs (the history app's
rating ordinal, read through ``games.extensions``; an unrated player counts as 0, a new
player's ordinal) are seated at a new private game, which starts at once -- only players whose
ratings are within ``MATCH_RATING_SPAN`` of each other, a range that widens with the wait.  A
player who has waited ``MATCH_WAIT_MS`` and chose ``fill_with_computers`` (the default) gets, at
their next status request, the waiting players of the pool and computer players of
``MATCH_BOT_LEVEL`` in the seats left empty.  A waiting player who has stopped asking and
polling for ``MATCH_LAPSE_MS`` (a closed tab) is passed over until they poll again.

The commit step, as every change of a game: **lock** the pool's row (``select_for_update``;
on SQLite the IMMEDIATE transaction serialises writers instead), so every request of one pool
sees every ticket before it and none is seated twice or forgotten; **check** (every refusal a
``ServiceError`` before anything is written); **apply** and **persist** through the lobby's own
services (``game_create``, ``game_join``, ``game_add_bot``, ``game_start``: each locks its game
and broadcasts on commit); the tickets are marked with their game in the same transaction.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser
from django.db import IntegrityError, transaction

from games import bots, clock, extensions
from games.engines import KINDS, engine_for
from games.errors import ServiceError
from games.models import Game, MatchPool, MatchTicket, Seat
from games.services.bots import game_add_bot
from games.services.lobby import game_create, game_join, game_start

#: How long a player waits for people before the empty seats may go to computer players.
MATCH_WAIT_MS = 30_000
#: The level of the computer players that fill a quick match's empty seats.
MATCH_BOT_LEVEL = "medium"
#: Two players are seated together only while their rating ordinals differ by at most this
#: much, plus ``MATCH_RATING_WIDEN`` per second the longer waiting of them has waited: a close
#: opponent soon, anyone a little later.  Without it the queue would seat whoever came first
#: and "nearest rating first" would never choose.
MATCH_RATING_SPAN = 5.0
MATCH_RATING_WIDEN = 1.0
#: A waiting player who has not asked nor polled for this long is passed over (their tab is
#: probably closed) until they poll again: the page polls every 2 s.
MATCH_LAPSE_MS = 15_000

_LIVE = (Game.Status.LOBBY, Game.Status.PLAYING)


@dataclass(frozen=True)
class MatchStatus:
    """Where a player's quick match stands: ``state`` is ``idle`` (not asked), ``waiting``
    or ``matched`` (``game_id`` is their table)."""

    state: str
    kind: str | None = None
    seats: int | None = None
    waited_ms: int = 0
    fill_with_computers: bool = False
    #: When the wait is over and the empty seats may be filled (ms since the epoch).
    fill_at: int | None = None
    game_id: int | None = None

    def to_json(self) -> dict[str, Any]:
        """The API's form (``docs/API.md``, "Quick match")."""
        return {
            "state": self.state,
            "kind": self.kind,
            "seats": self.seats,
            "waited_ms": self.waited_ms,
            "fill_with_computers": self.fill_with_computers,
            "fill_at": self.fill_at,
            "game_id": self.game_id,
        }


def match_default_seats(kind: str) -> int:
    """A pool's seat count when the player names none: the table a game against the computer
    has (``game_vs_computer``): as few as the game allows, Crisp four."""
    engine = engine_for(kind)
    return max(engine.MIN_SEATS, min(4, engine.MAX_SEATS))


def _status(ticket: MatchTicket | None, now: int) -> MatchStatus:
    """The ticket as the API shows it: ``idle`` once its game is over (or left)."""
    if ticket is None or not _live(ticket):
        return MatchStatus("idle")
    asked = clock.from_datetime(ticket.created_at)
    return MatchStatus(
        "matched" if ticket.game_id is not None else "waiting",
        kind=ticket.pool.kind,
        seats=ticket.pool.seats,
        waited_ms=max(0, now - asked),
        fill_with_computers=ticket.fill_with_computers,
        fill_at=asked + MATCH_WAIT_MS,
        game_id=ticket.game_id,
    )


def _pool(kind: object, seats: object) -> MatchPool:
    """The pool of ``kind`` at ``seats``, checked against the game's seat range."""
    if not isinstance(kind, str) or kind not in KINDS:
        raise ServiceError("bad_kind", f"kind must be one of: {', '.join(KINDS)}.")
    engine = engine_for(kind)
    if seats is None:
        seats = match_default_seats(kind)
    if isinstance(seats, bool) or not isinstance(seats, int):
        raise ServiceError("bad_seats", "seats must be a whole number.")
    if not engine.MIN_SEATS <= seats <= engine.MAX_SEATS:
        raise ServiceError(
            "bad_seats",
            f"{engine.NAME} is played by {engine.MIN_SEATS} to {engine.MAX_SEATS} players.",
            extra={"min": engine.MIN_SEATS, "max": engine.MAX_SEATS},
        )
    pool, _ = MatchPool.objects.get_or_create(kind=kind, seats=seats)
    return pool


def _lock_pool(pool: MatchPool) -> MatchPool:
    """Stage 1: lock the pool's row.  Call inside ``transaction.atomic``."""
    return MatchPool.objects.select_for_update().get(pk=pool.pk)


def _ticket(user: AbstractBaseUser, *, lock: bool) -> MatchTicket | None:
    qs = MatchTicket.objects.select_related("pool", "game").filter(user=user)
    if lock:
        qs = qs.select_for_update(of=("self",))
    return qs.first()


def _live(ticket: MatchTicket) -> bool:
    """A matched ticket still counts while its game does and its player has not left it for
    good (asking again answers with that game); after that the player is free to ask again."""
    if ticket.game_id is None:
        return True
    if ticket.game is None or ticket.game.status not in _LIVE:
        return False
    return not Seat.objects.filter(
        game_id=ticket.game_id, user_id=ticket.user_id, left_at__isnull=False
    ).exists()


def _rating(user: AbstractBaseUser, kind: str) -> float:
    """The player's rating ordinal of ``kind`` (0 unrated, or without the history app)."""
    payload = extensions.seat_ratings([user.pk], kind).get(user.pk)
    return float(payload["ordinal"]) if payload else 0.0


def _seat_them(pool: MatchPool, tickets: list[MatchTicket], *, bots_to_add: int) -> Game:
    """A new private game of the pool with these players (the longest waiting hosts) and
    ``bots_to_add`` computer players, started at once; the tickets point at it.  Caller holds
    the pool's lock and has locked the tickets."""
    tickets = sorted(tickets, key=lambda t: (t.created_at, t.pk))
    host = tickets[0].user
    game = game_create(host=host, kind=pool.kind, private=True)
    for t in tickets[1:]:
        game_join(game=game, user=t.user, invite_code=game.invite_code)
    for _ in range(bots_to_add):
        game_add_bot(game=game, host=host, level=MATCH_BOT_LEVEL)
    game = game_start(game=game, user=host)
    MatchTicket.objects.filter(pk__in=[t.pk for t in tickets]).update(game=game)
    return game


def _in_range(a: MatchTicket, b: MatchTicket, now: int) -> bool:
    """Whether ``a`` and ``b`` may be seated together now (``MATCH_RATING_SPAN``)."""
    since = min(clock.from_datetime(a.created_at), clock.from_datetime(b.created_at))
    span = MATCH_RATING_SPAN + MATCH_RATING_WIDEN * max(0, now - since) / 1000
    return abs(a.rating - b.rating) <= span


def _try_match(pool: MatchPool, mine: MatchTicket, now: int) -> bool:
    """Seat ``mine`` with the nearest-rated waiting players in range, if enough are.  Caller
    holds the pool's lock and ``mine``'s."""
    others = [t for t in _waiting(pool, but=mine, now=now) if _in_range(mine, t, now)]
    if len(others) < pool.seats - 1:
        return False
    _seat_them(pool, [mine, *_nearest(mine, others, pool.seats - 1)], bots_to_add=0)
    mine.refresh_from_db()
    return True


def _nearest(ticket: MatchTicket, others: list[MatchTicket], n: int) -> list[MatchTicket]:
    """The ``n`` waiting tickets nearest in rating to ``ticket``'s; ties: the longest waiting."""
    return sorted(others, key=lambda t: (abs(t.rating - ticket.rating), t.created_at, t.pk))[:n]


def _waiting(pool: MatchPool, *, but: MatchTicket, now: int) -> list[MatchTicket]:
    """The pool's other waiting tickets whose players still poll (``MATCH_LAPSE_MS``), locked.
    Caller holds the pool's lock."""
    return list(
        MatchTicket.objects.select_for_update(of=("self",))
        .select_related("user")
        .filter(pool=pool, game__isnull=True, seen_at__gte=clock.to_datetime(now - MATCH_LAPSE_MS))
        .exclude(pk=but.pk)
    )


def _seen(ticket: MatchTicket, now: int, **changes: Any) -> None:
    """Note the player's request on their waiting ticket (and any other change of it)."""
    ticket.seen_at = clock.to_datetime(now)
    for name, value in changes.items():
        setattr(ticket, name, value)
    ticket.save(update_fields=["seen_at", *changes])


@transaction.atomic
def match_join(
    *,
    user: AbstractBaseUser,
    kind: str,
    seats: int | None = None,
    fill_with_computers: bool = True,
) -> MatchStatus:
    """Ask for a game ("Find me a game") of ``kind`` at ``seats`` (default ``match_default_seats``).

    Seats the player at once if the pool has enough waiting players (nearest rating first),
    else leaves them waiting.  Asking again while waiting in the same pool, or while the game
    one was matched to is still on, changes nothing but the fill choice and answers the same
    (idempotent); waiting in another pool is ``already_waiting`` (409: leave it first).
    """
    if not isinstance(fill_with_computers, bool):
        raise ServiceError("bad_fill", "fill_with_computers must be true or false.")
    pool = _lock_pool(_pool(kind, seats))
    now = clock.now_ms()
    mine = _ticket(user, lock=True)
    if mine is not None and _live(mine):
        if mine.game_id is None and mine.pool_id != pool.pk:
            raise ServiceError(
                "already_waiting",
                "You are already waiting for another game; leave that queue first.",
                status=409,
                extra={"kind": mine.pool.kind, "seats": mine.pool.seats},
            )
        if mine.game_id is None:
            _seen(mine, now, fill_with_computers=fill_with_computers)
            _try_match(pool, mine, now)  # back after a lapse: others may be in range now
        return _status(mine, now)
    if mine is not None:  # matched to a game that is over: a new request
        mine.delete()
    try:
        with transaction.atomic():
            mine = MatchTicket.objects.create(
                user=user,
                pool=pool,
                rating=_rating(user, pool.kind),
                fill_with_computers=fill_with_computers,
                created_at=clock.to_datetime(now),
                seen_at=clock.to_datetime(now),
            )
    except IntegrityError:  # the same player's request for another pool got in first
        raise ServiceError(
            "already_waiting", "You are already waiting for another game.", status=409
        ) from None
    _try_match(pool, mine, now)
    return _status(mine, now)


def match_status(*, user: AbstractBaseUser) -> MatchStatus:
    """Where the player's quick match stands.  A waiting player is seated now if enough
    players have come within range meanwhile (the range widens with the wait); one whose wait
    is over and who chose to fill with computers is seated with whoever else waits in the
    pool and computer players.  (The page polls this: no timer is needed for either.)

    Only a waiting player's request writes (and locks): the lobby page asks on every visit,
    and a read in a transaction would take SQLite's write lock for nothing."""
    now = clock.now_ms()
    mine = _ticket(user, lock=False)
    if mine is None or mine.game_id is not None:
        return _status(mine, now)
    with transaction.atomic():
        return _status_waiting(user, mine.pool, now)


def _status_waiting(user: AbstractBaseUser, pool: MatchPool, now: int) -> MatchStatus:
    """``match_status`` for a player who was waiting when asked: the commit step."""
    pool = _lock_pool(pool)
    mine = _ticket(user, lock=True)
    if mine is None or mine.game_id is not None or mine.pool_id != pool.pk:
        return _status(mine, now)  # seated (or gone) while we waited for the lock
    _seen(mine, now)
    if _try_match(pool, mine, now):
        return _status(mine, now)
    due = now >= clock.from_datetime(mine.created_at) + MATCH_WAIT_MS
    if due and mine.fill_with_computers and pool.kind in bots.GAMES:
        people = [mine, *_nearest(mine, _waiting(pool, but=mine, now=now), pool.seats - 1)]
        _seat_them(pool, people, bots_to_add=pool.seats - len(people))
        mine.refresh_from_db()
    return _status(mine, now)


@transaction.atomic
def match_leave(*, user: AbstractBaseUser) -> None:
    """Stop waiting.  ``not_waiting`` (404) without a ticket; ``already_matched`` (409) once
    seated at a game that is still on (leave the game itself instead)."""
    mine = _ticket(user, lock=False)
    if mine is not None:
        _lock_pool(mine.pool)
        mine = _ticket(user, lock=True)
    if mine is None or not _live(mine):
        raise ServiceError("not_waiting", "You are not waiting for a game.", status=404)
    if mine.game_id is not None:
        raise ServiceError(
            "already_matched",
            "You have been seated already.",
            status=409,
            extra={"game_id": mine.game_id},
        )
    mine.delete()
