"""The lobby: opening a table, taking and giving up seats, starting and stopping a game.

``game_create``, ``game_join``, ``game_leave``, ``game_kick``, ``game_start``, ``game_abandon``
and ``game_end_now``; each runs the commit step of ``games.services.commit`` (lock, check,
apply, persist, schedule, broadcast on commit).
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser
from django.db import IntegrityError, transaction

from games import clock, signals
from games.engines import DEFAULT_KIND, KINDS, engine_for
from games.engines.base import IllegalAction
from games.errors import ServiceError
from games.models import Game, Seat
from games.services.commit import (
    _engine,
    _engine_change,
    _lobby_change,
    _lock,
    _seat_event,
    _seat_of,
    _stop,
)

# Invite codes: no 0/O/1/I/L, so they survive being read aloud or typed from a phone.
_INVITE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
_INVITE_LENGTH = 8


def _host_settings(kind: object, settings: object) -> dict[str, Any]:
    """The host's choices for ``kind``, validated by that game's engine and completed with its
    defaults: what ``Game.settings`` stores (only the keys of the engine's SETTINGS_SCHEMA)."""
    if not isinstance(kind, str) or kind not in KINDS:
        raise ServiceError("bad_kind", f"kind must be one of: {', '.join(KINDS)}.")
    if settings is None:
        settings = {}
    if not isinstance(settings, dict):
        raise ServiceError("bad_settings", "settings must be an object.")
    engine = engine_for(kind)
    try:
        chosen = engine.host_settings(settings).to_json()
    except IllegalAction as exc:
        raise ServiceError("bad_settings", f"{engine.NAME}: {exc.reason}.") from None
    return {k: chosen[k] for k in engine.SETTINGS_SCHEMA["properties"]}


def _new_invite_code() -> str:
    return "".join(secrets.choice(_INVITE_ALPHABET) for _ in range(_INVITE_LENGTH))


@transaction.atomic
def game_create(
    *,
    host: AbstractBaseUser,
    kind: str = DEFAULT_KIND,
    settings: dict[str, Any] | None = None,
    private: bool = False,
) -> Game:
    """Open a lobby of game ``kind`` with the host's settings; the host takes seat 0.

    ``settings`` are the host's lobby choices, validated by the kind's own engine
    (``host_settings``, the menu its ``SETTINGS_SCHEMA`` describes); missing ones take the
    engine's defaults.

    No lock is needed: nobody else can see the row before the commit.  The invite code is
    random; a collision (31^8 codes) is retried.
    """
    chosen = _host_settings(kind, settings)
    if not isinstance(private, bool):
        raise ServiceError("bad_settings", "private must be true or false.")
    at = clock.now_ms()
    for attempt in range(5):
        try:
            with transaction.atomic():
                game = Game.objects.create(
                    host=host,
                    kind=kind,
                    settings=chosen,
                    private=private,
                    invite_code=_new_invite_code(),
                    created_at=clock.to_datetime(at),
                    updated_at=clock.to_datetime(at),
                )
            break
        except IntegrityError:  # pragma: no cover - a code collision
            if attempt == 4:
                raise
    seat = Seat.objects.create(game=game, user=host, number=0, joined_at=clock.to_datetime(at))
    _lobby_change(
        game,
        [
            ("game_created", {"kind": kind, "settings": chosen, "private": private}),
            ("seat_joined", _seat_event(seat)),
        ],
        at_ms=at,
    )
    return game


def _require_lobby(game: Game) -> None:
    if game.status != Game.Status.LOBBY:
        code = (
            "game_over"
            if game.status in (Game.Status.FINISHED, Game.Status.ABANDONED)
            else ("game_started")
        )
        raise ServiceError(code, f"The game is {game.status}, not in its lobby.", status=409)


@transaction.atomic
def game_join(*, game: Game | int, user: AbstractBaseUser, invite_code: str | None = None) -> Game:
    """Take the next free seat of a lobby.  A private game needs its invite code.

    Locks the game row: two people racing for the last seat get one seat and one
    ``game_full``.  A player already seated gets ``already_joined``.  Anyone else joining a
    private game without the right code gets ``not_found`` -- the same as a game that does not
    exist -- so codes cannot be probed through game ids.
    """
    g = _lock(game)
    # The seat first: a seated player knows the game exists, code or not.
    if _seat_of(g, user) is not None:
        raise ServiceError("already_joined", "You already have a seat at this game.", status=409)
    if g.private and (not isinstance(invite_code, str) or invite_code.upper() != g.invite_code):
        raise ServiceError("not_found", "No such game.", status=404)
    _require_lobby(g)
    _take_next_seat(g, user)
    return g


def _take_next_seat(g: Game, user: AbstractBaseUser) -> Seat:
    """Seat ``user`` in the lobby's next free seat (``game_full`` past the engine's
    ``MAX_SEATS``) and record it.  Caller holds the game's row lock and checked the lobby."""
    taken = Seat.objects.filter(game=g).count()
    most = _engine(g).MAX_SEATS
    if taken >= most:
        raise ServiceError(
            "game_full", f"The game already has {most} players.", status=409, extra={"max": most}
        )
    at = clock.now_ms()
    seat = Seat.objects.create(game=g, user=user, number=taken, joined_at=clock.to_datetime(at))
    _lobby_change(g, [("seat_joined", _seat_event(seat))], at_ms=at)
    return seat


def _remove_seat(g: Game, seat: Seat, *, event_type: str, at: int, by: Any = None) -> None:
    """Delete a lobby seat, close the gap in the numbering, pass the host role on if needed,
    and record it.  Caller holds the game's row lock.  A lobby with no person left (empty, or
    only computer players, who cannot host) is abandoned."""
    data = _seat_event(seat)
    if by is not None:
        data["by"] = by
    seat.delete()
    # Renumber upwards, one row at a time: each moves into the slot just freed, so the
    # (game, number) uniqueness holds after every single UPDATE.
    for i, s in enumerate(Seat.objects.filter(game=g).order_by("number")):
        if s.number != i:
            s.number = i
            s.save(update_fields=["number"])
    events: list[tuple[str, dict[str, Any]]] = [(event_type, data)]
    remaining = Seat.objects.filter(game=g).select_related("user").order_by("number")
    if not remaining.filter(user__is_bot=False).exists():
        g.status = Game.Status.ABANDONED
        g.ended_at = clock.to_datetime(at)
        events.append(("game_abandoned", {"reason": "empty"}))
    elif seat.user_id == g.host_id:
        new_host = next(s for s in remaining if not s.user.is_bot)  # the lowest person's seat
        g.host = new_host.user
        events.append(("host_changed", _seat_event(new_host)))
    _lobby_change(g, events, at_ms=at)


@transaction.atomic
def game_leave(*, game: Game | int, user: AbstractBaseUser) -> Game:
    """Give up one's lobby seat.  A leaving host hands the host role to the lowest person's
    seat; the last person out abandons the lobby.  Once a game has started, seats are fixed (the
    engine's seat count cannot change mid-game): ``game_started``."""
    g = _lock(game)
    seat = _seat_of(g, user)
    if seat is None:
        raise ServiceError("not_seated", "You have no seat at this game.", status=403)
    _require_lobby(g)
    _remove_seat(g, seat, event_type="seat_left", at=clock.now_ms())
    return g


@transaction.atomic
def game_kick(*, game: Game | int, host: AbstractBaseUser, seat_number: int) -> Game:
    """The host removes another player from the lobby (never after the start)."""
    g = _lock(game)
    if host is None or g.host_id != host.pk:
        raise ServiceError("not_host", "Only the host can remove players.", status=403)
    _require_lobby(g)
    if isinstance(seat_number, bool) or not isinstance(seat_number, int):
        raise ServiceError("bad_seat", "seat must be an integer.")
    seat = Seat.objects.filter(game=g, number=seat_number).select_related("user").first()
    if seat is None:
        raise ServiceError("no_such_seat", f"Nobody sits at seat {seat_number}.", status=404)
    if seat.user_id == host.pk:
        raise ServiceError("cannot_kick_self", "The host cannot remove themselves; leave.")
    _remove_seat(g, seat, event_type="seat_kicked", at=clock.now_ms(), by=host.pk)
    return g


@transaction.atomic
def game_start(
    *,
    game: Game | int,
    user: AbstractBaseUser,
    seed: str | None = None,
    timers: dict[str, int] | None = None,
    decks: Sequence[Sequence[str]] | None = None,
) -> Game:
    """The host starts the game: the engine's seat range, a fresh secret seed, round 1 dealt now.

    ``seed``, ``decks`` (stacked decks, round by round) and ``timers`` (the engine's timer
    lengths, e.g. ``{"memorise_ms": 0}``) exist for tests and the admin; the API never passes
    them.  Locks the game row.
    """
    g = _lock(game)
    if user is None or g.host_id != user.pk:
        raise ServiceError("not_host", "Only the host can start the game.", status=403)
    _require_lobby(g)
    engine = _engine(g)
    seats = Seat.objects.filter(game=g).count()
    low, high = engine.MIN_SEATS, engine.MAX_SEATS
    if not low <= seats <= high:
        span = f"{low} to {high}" if low != high else str(low)
        raise ServiceError(
            "not_enough_players" if seats < low else "too_many_players",
            f"A game of {engine.NAME} needs {span} players.",
            status=409,
            extra={"min": low, "max": high},
        )
    at = clock.now_ms()
    g.seed = seed or secrets.token_hex(16)
    try:
        chosen = engine.host_settings(g.settings or {}).to_json()
        settings = engine.Settings.from_json({**chosen, **(timers or {})})
        state, events = engine.new_game(
            seats=seats, settings=settings, seed=g.seed, now=at, decks=decks
        )
    except (IllegalAction, TypeError) as exc:
        raise ServiceError("bad_settings", "The game's settings are invalid.") from exc
    g.status = Game.Status.PLAYING
    g.started_at = clock.to_datetime(at)
    _engine_change(
        g,
        None,
        state,
        events,
        at_ms=at,
        lobby_events=[("game_started", {"seats": seats})],
        call={
            "call": "new_game",
            "settings": settings.to_json(),
            "seats": seats,
            "decks": [list(d) for d in decks] if decks is not None else None,
        },
    )
    return g


@transaction.atomic
def game_abandon(*, game: Game | int, user: AbstractBaseUser) -> Game:
    """Stop a game for good without a result.  The host, or staff.  Locks the game row."""
    g = _lock(game)
    is_staff = bool(getattr(user, "is_staff", False))
    if not is_staff and (user is None or g.host_id != user.pk):
        raise ServiceError(
            "not_host", "Only the host (or an admin) can abandon a game.", status=403
        )
    if g.status in (Game.Status.FINISHED, Game.Status.ABANDONED):
        raise ServiceError("game_over", f"The game is already {g.status}.", status=409)
    at = clock.now_ms()
    g.status = Game.Status.ABANDONED
    g.ended_at = clock.to_datetime(at)
    _stop(g)
    _lobby_change(g, [("game_abandoned", {"by": user.pk, "reason": "abandoned"})], at_ms=at)
    return g


@transaction.atomic
def game_end_now(*, game: Game | int, user: AbstractBaseUser) -> Game:
    """Staff only (the admin's "end now"): finish a running game on the scores it has.

    The round under way is not scored ("scoring nothing more"); the engine's
    ``winners_on_scores`` says who wins on the running totals.  Locks the game row.
    """
    g = _lock(game)
    if not getattr(user, "is_staff", False):
        raise ServiceError("not_staff", "Only an admin can end a game now.", status=403)
    if g.status != Game.Status.PLAYING:
        raise ServiceError("not_playing", f"The game is {g.status}, not playing.", status=409)
    at = clock.now_ms()
    scores = list(Seat.objects.filter(game=g).order_by("number").values_list("score", flat=True))
    g.winners = list(_engine(g).winners_on_scores(scores))
    g.status = Game.Status.FINISHED
    g.ended_at = clock.to_datetime(at)
    _stop(g)
    _lobby_change(
        g,
        [
            (
                "game_ended",
                {"by": user.pk, "reason": "ended_by_admin", "winners": g.winners, "scores": scores},
            )
        ],
        at_ms=at,
    )
    signals.game_finished.send(sender=Game, game=g)
    return g
