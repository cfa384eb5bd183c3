"""Game night: names, rematch, chat, leaving a game in progress, ending games and lobbies nobody
uses.

``game_rename``, ``game_rematch``, ``game_chat_post``, ``game_leave_playing``,
``game_reap_idle`` and ``game_reap_lobbies`` (the REST side is ``games.api.game_night``).  Each
change of a game runs the commit step of ``games.services.commit``; a chat line is no change of
the game (no lock, no version) and is only announced on commit.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any

from django.conf import settings as django_settings
from django.contrib.auth.base_user import AbstractBaseUser
from django.db import transaction
from django.db.models import F

from games import clock, selectors
from games.engines.base import TURN_BASED
from games.errors import ServiceError
from games.models import CHAT_MAX, NAME_MAX, ChatMessage, Game, Seat
from games.services.bots import game_add_bot
from games.services.commit import (
    SIT_IN_LEVEL,
    _bot_moves,
    _engine,
    _lobby_change,
    _lock,
    _lock_lobby,
    _lock_playing,
    _seat_event,
    _seat_of,
    _stop,
)
from games.services.lobby import _require_lobby, _take_next_seat, game_create, game_start

logger = logging.getLogger(__name__)

#: Chat: at most this many lines per person per table within the window.
CHAT_BURST = 5
CHAT_WINDOW_MS = 10_000
#: A game in progress with no player action (and no player connected) for this long is ended as
#: abandoned (timed or untimed: a timed game's timeouts play on by themselves, but nobody is
#: playing it).  The default of ``settings.CRISP_IDLE_GAME_SECONDS``, which overrides it.
IDLE_MS = 30 * 60 * 1000


def _setting_ms(name: str, default_ms: int) -> int:
    """A reaping time from the settings (seconds there, ms here): overridable per site."""
    return int(getattr(django_settings, name, default_ms / 1000) * 1000)


def _clean_text(text: object, *, limit: int, code: str, what: str) -> str:
    """``text`` folded to one line and checked against ``limit`` (a name, a chat line)."""
    if not isinstance(text, str):
        raise ServiceError(code, f"{what} must be text.")
    cleaned = " ".join(text.split())  # no newlines or control spacing: one line
    if len(cleaned) > limit:
        raise ServiceError(code, f"{what} is at most {limit} characters.")
    return cleaned


@transaction.atomic
def game_rename(*, game: Game | int, user: AbstractBaseUser, name: str) -> Game:
    """The host names the game (shown in the lobby and at the table); "" clears the name.

    Allowed until the game ends.  Locks the game row; announced like any lobby change.
    """
    g = _lock(game)
    if user is None or g.host_id != user.pk:
        raise ServiceError("not_host", "Only the host can name the game.", status=403)
    if g.status in (Game.Status.FINISHED, Game.Status.ABANDONED):
        raise ServiceError("game_over", f"The game is {g.status}.", status=409)
    cleaned = _clean_text(name, limit=NAME_MAX, code="bad_name", what="A game's name")
    if cleaned == g.name:
        return g
    g.name = cleaned
    _lobby_change(g, [("game_renamed", {"name": cleaned})], at_ms=clock.now_ms())
    return g


def _rematch_settings(g: Game) -> dict[str, Any]:
    """What a rematch copies, as ``game_create`` takes it: the game, its host settings and
    whether it is private."""
    return {"kind": g.kind, "settings": dict(g.settings), "private": g.private}


@transaction.atomic
def game_rematch(*, game: Game | int, user: AbstractBaseUser) -> Game:
    """Play again: a seated player of a finished game asks for a rematch; the new lobby.

    The first to ask creates it -- same settings, same name, the same computer players at
    their levels, the asker as its host -- and the finished game announces it
    (``rematch_offered``, so every table offers to join); each player who accepts calls this
    too and takes the next seat.  Once every person who played to the end is seated, the
    rematch starts by itself (against the computer alone: at once).  Nobody else is seated:
    the seats of those who do not accept stay open (to anyone for a public game, by the new
    invite code for a private one), and the host may start without them.  Once the rematch has
    started, late acceptors get ``game_started``.  Locks the finished game's row, then the
    rematch's (always that order).
    """
    g = _lock(game)
    if _seat_of(g, user) is None:
        raise ServiceError("not_seated", "You had no seat at this game.", status=403)
    if g.status != Game.Status.FINISHED:
        raise ServiceError("not_finished", "A rematch starts once the game is over.", status=409)
    existing = Game.objects.filter(rematch_of=g).values_list("pk", flat=True).first()
    if existing is None:
        new = game_create(host=user, **_rematch_settings(g))
        new.rematch_of = g
        new.name = g.name
        new.save(update_fields=["rematch_of", "name"])
        for level in _computer_levels(g):
            new = game_add_bot(game=new, host=user, level=level)
        _lobby_change(
            g, [("rematch_offered", {"game_id": new.pk, "by": user.pk})], at_ms=clock.now_ms()
        )
        return _start_when_all_are_back(new, g)
    new = _lock(existing)
    if _seat_of(new, user) is not None:
        return new
    _require_lobby(new)
    _take_next_seat(new, user)
    return _start_when_all_are_back(new, g)


def _computer_levels(g: Game) -> list[str]:
    """The levels of ``g``'s computer players, seat by seat (not a computer sitting in for a
    person: that person is asked to play again, not their stand-in)."""
    return [
        s.bot_level
        for s in Seat.objects.filter(game=g, user__is_bot=True).order_by("number")
        if s.bot_level
    ]


def _start_when_all_are_back(new: Game, old: Game) -> Game:
    """Start the rematch once every person who played ``old`` to its end has accepted: one
    click each, like the first game's players at the same table (a game against the computer
    starts at the first click).  Until then it stays a lobby (and ``game_reap_lobbies`` closes
    it if nobody comes).  Caller holds both row locks."""
    stayed = set(
        Seat.objects.filter(game=old, left_at__isnull=True, user__is_bot=False).values_list(
            "user_id", flat=True
        )
    )
    seated = set(Seat.objects.filter(game=new).values_list("user_id", flat=True))
    engine = _engine(new)
    if not stayed <= seated or not engine.MIN_SEATS <= len(seated) <= engine.MAX_SEATS:
        return new
    return game_start(game=new, user=new.host)


def _chat_sender_seat(game_id: int, user: AbstractBaseUser, invite_code: str | None) -> Seat | None:
    """The sender's seat, if any; refuses whoever may not watch the game (``selectors``)."""
    g = selectors.game_for_user(game_id=game_id, user=user, invite_code=invite_code)
    return _seat_of(g, user)


@transaction.atomic
def game_chat_post(
    *, game: Game | int, user: AbstractBaseUser, text: str, invite_code: str | None = None
) -> ChatMessage:
    """Say something at the table: anyone who may watch the game (its players, and for a
    public game every signed-in spectator) may; everyone watching receives it.

    One line of 1 to ``CHAT_MAX`` characters (whitespace folded), at most ``CHAT_BURST`` lines
    per person per ``CHAT_WINDOW_MS`` (``rate_limited``, 429).  Stored as typed: every place
    that shows it escapes it.  Not part of the game's state: no version bump, no lock.
    """
    if user is None or not getattr(user, "is_authenticated", False):
        raise ServiceError("not_authenticated", "Sign in to chat.", status=401)
    pk = game.pk if isinstance(game, Game) else game
    seat = _chat_sender_seat(pk, user, invite_code)
    cleaned = _clean_text(text, limit=CHAT_MAX, code="bad_chat", what="A chat line")
    if not cleaned:
        raise ServiceError("bad_chat", "A chat line cannot be empty.")
    at = clock.now_ms()
    recent = ChatMessage.objects.filter(
        game_id=pk, user=user, created_at__gt=clock.to_datetime(at - CHAT_WINDOW_MS)
    ).count()
    if recent >= CHAT_BURST:
        raise ServiceError("rate_limited", "Too many chat lines; wait a few seconds.", status=429)
    message = ChatMessage.objects.create(
        game_id=pk,
        user=user,
        seat=seat.number if seat is not None else None,
        text=cleaned,
        created_at=clock.to_datetime(at),
    )

    def announce() -> None:
        importlib.import_module("games.broadcast").chat_posted(pk, message.pk)

    transaction.on_commit(announce, robust=True)
    return message


def _abandon(g: Game, *, reason: str, at: int, data: dict[str, Any] | None = None) -> None:
    """End a game in progress (or close a lobby) without a result, its state kept.  Caller
    holds the lock."""
    g.status = Game.Status.ABANDONED
    g.ended_at = clock.to_datetime(at)
    _stop(g)
    _lobby_change(g, [("game_abandoned", {"reason": reason, **(data or {})})], at_ms=at)


@transaction.atomic
def game_leave_playing(*, game: Game | int, user: AbstractBaseUser) -> Game:
    """Leave a game in progress for good (a lobby seat is given up with ``game_leave``).

    The seat stays -- the engine's seat count is fixed -- and is marked as left
    (``player_left``); a computer player sits in for it (``SIT_IN_LEVEL``) so the others play
    on, and its player no longer finds it among their games in progress.  When no person is
    left at the table (computer players do not count), the game is abandoned, its state kept.
    Locks the game row.
    """
    g = _lock(game)
    seat = _seat_of(g, user)
    if seat is None:
        raise ServiceError("not_seated", "You have no seat at this game.", status=403)
    if g.status == Game.Status.LOBBY:
        raise ServiceError("not_started", "Leave a lobby with game_leave.", status=409)
    if g.status != Game.Status.PLAYING:
        raise ServiceError("game_over", f"The game is {g.status}.", status=409)
    if seat.left_at is not None:
        raise ServiceError("already_left", "You have already left this game.", status=409)
    at = clock.now_ms()
    seat.left_at = clock.to_datetime(at)
    seat.sitting_in, seat.bot_level, seat.bot_memory = True, SIT_IN_LEVEL, None
    seat.save(update_fields=["left_at", "sitting_in", "bot_level", "bot_memory"])
    people = Seat.objects.filter(game=g, left_at__isnull=True, user__is_bot=False)
    if not people.exists():
        _lobby_change(g, [("player_left", _seat_event(seat))], at_ms=at)
        _abandon(g, reason="everyone_left", at=at)
        return g
    _lobby_change(
        g,
        [
            ("player_left", _seat_event(seat)),
            ("sitting_in", {**_seat_event(seat), "level": SIT_IN_LEVEL}),
        ],
        at_ms=at,
    )
    engine = _engine(g)
    if g.state is not None:
        moves = _bot_moves(g, engine, engine.GameState.from_json(g.state), at)
        if moves:
            version = g.version

            def wake() -> None:
                importlib.import_module("games.scheduling").schedule_bots(g.pk, version, moves)

            transaction.on_commit(wake, robust=True)
    return g


def _last_player_action_ms(g: Game) -> int:
    """When a person last moved at ``g`` themselves (``Game.last_played_at``: not a timer,
    not a computer player), or else when it started, in server ms."""
    last = g.last_played_at
    started = g.started_at or g.created_at
    return clock.from_datetime(max(last, started) if last is not None else started)


def game_reap_idle(
    *,
    now: datetime | None = None,
    idle_ms: int | None = None,
    connected: Callable[[list[int]], Iterable[int]] | None = None,
) -> int:
    """End as abandoned every game in progress nobody is playing; the number ended.

    A game is idle when no player has acted for ``idle_ms`` (default
    ``settings.CRISP_IDLE_GAME_SECONDS``, else ``IDLE_MS``) and none of its players is
    connected: ``connected(ids)`` returns those of the given games that have a player's socket
    open (the live layer knows; this layer does not).  A turn-based game (issue 26) is never
    idle: its players are away between moves by design, and its own timeouts move it on.  Its
    state is kept.  One transaction per game, each re-checked under the game's row lock, like
    ``game_sweep``.  The periodic sweep runs it (games.tasks).
    """
    if idle_ms is None:
        idle_ms = _setting_ms("CRISP_IDLE_GAME_SECONDS", IDLE_MS)
    at = clock.from_datetime(now) if now is not None else clock.now_ms()
    cutoff = clock.to_datetime(at - idle_ms)
    candidates = [
        pk
        for pk, chosen in Game.objects.filter(
            status=Game.Status.PLAYING, started_at__lte=cutoff
        ).values_list("pk", "settings")
        # A turn-based game's players are away by design (issue 26): it ends by its own
        # timeouts (and the computer sitting in after them), never as idle.  (Tested in
        # Python: a JSON key's absence is NULL in SQL, which ``exclude`` would drop too.)
        if (chosen or {}).get("pace") != TURN_BASED
    ]
    if candidates and connected is not None:
        keep = set(connected(candidates))
        candidates = [pk for pk in candidates if pk not in keep]
    ended = 0
    for pk in candidates:
        try:
            with transaction.atomic():
                g = _lock_playing(pk, skip_locked=True)
                if g is None or clock.to_datetime(_last_player_action_ms(g)) > cutoff:
                    continue
                _abandon(g, reason="idle", at=at, data={"idle_ms": idle_ms})
                ended += 1
        except Exception:  # one broken game must not stop the others
            logger.exception("idle check failed for game %s", pk)
    return ended


#: Defaults of the lobby reaping times (``settings.CRISP_LOBBY_HOST_AWAY_SECONDS``,
#: ``CRISP_LOBBY_IDLE_SECONDS``, ``CRISP_REMATCH_LOBBY_SECONDS`` override them): a lobby whose
#: host is not connected closes after ``LOBBY_HOST_AWAY_MS`` untouched, any lobby after
#: ``LOBBY_IDLE_MS`` untouched, and a rematch lobby nobody else joined after ``REMATCH_LOBBY_MS``.
LOBBY_HOST_AWAY_MS = 5 * 60 * 1000
LOBBY_IDLE_MS = 60 * 60 * 1000
REMATCH_LOBBY_MS = 3 * 60 * 1000
#: A turn-based lobby (issue 26) waits for friends who come by once a day: its host being away
#: and a rematch not taken at once close nothing; only this long untouched closes it
#: (``settings.CRISP_TURN_BASED_LOBBY_IDLE_SECONDS`` overrides it).
TURN_BASED_LOBBY_IDLE_MS = 7 * 24 * 60 * 60 * 1000


def _lobby_times() -> dict[str, int]:
    """The three lobby reaping times, in ms, as the settings have them."""
    return {
        "host_gone": _setting_ms("CRISP_LOBBY_HOST_AWAY_SECONDS", LOBBY_HOST_AWAY_MS),
        "idle": _setting_ms("CRISP_LOBBY_IDLE_SECONDS", LOBBY_IDLE_MS),
        "rematch_not_taken": _setting_ms("CRISP_REMATCH_LOBBY_SECONDS", REMATCH_LOBBY_MS),
        "turn_based_idle": _setting_ms(
            "CRISP_TURN_BASED_LOBBY_IDLE_SECONDS", TURN_BASED_LOBBY_IDLE_MS
        ),
    }


def _lobby_reason(g: Game, at: int, times: dict[str, int], host_online: bool) -> str | None:
    """Why lobby ``g`` closes now (a key of ``times``), or None: it stays open.

    "Untouched" is ``updated_at``: every lobby change (a join, a leave, a computer player
    added, a rename) bumps it, so a lobby someone joined meanwhile is not closed.  A turn-based
    lobby closes only after ``turn_based_idle`` untouched (its people come by once a day).
    """
    quiet = at - clock.from_datetime(g.updated_at)
    if (g.settings or {}).get("pace") == TURN_BASED:
        return "turn_based_idle" if quiet >= times["turn_based_idle"] else None
    if quiet >= times["idle"]:
        return "idle"
    if g.rematch_of_id is not None and quiet >= times["rematch_not_taken"]:
        people = Seat.objects.filter(game=g, user__is_bot=False).count()
        if people <= 1:
            return "rematch_not_taken"
    if quiet >= times["host_gone"] and not host_online:
        return "host_gone"
    return None


def _host_seats(game_ids: list[int]) -> dict[int, int]:
    """Each lobby's host's seat number (the host always sits in their lobby)."""
    rows = Seat.objects.filter(game_id__in=game_ids, user_id=F("game__host_id")).values_list(
        "game_id", "number"
    )
    return dict(rows)


def game_reap_lobbies(
    *,
    now: datetime | None = None,
    host_connected: Callable[[dict[int, int]], Iterable[int]] | None = None,
) -> int:
    """Close every open lobby nobody will start; the number closed.

    A lobby closes (abandoned, ``game_abandoned`` with the reason and the time that ran out)
    when it is untouched for the ``idle`` time, when it is a rematch lobby nobody but its host
    joined for the ``rematch_not_taken`` time, or when its host has not been connected to it
    for the ``host_gone`` time (``_lobby_times``).  ``host_connected({game_id: host_seat})``
    returns the games whose host has a socket open (the live layer knows; without it every
    host counts as gone).  One transaction per lobby, each re-checked under the row lock (a
    lobby someone joined or started meanwhile is skipped), like ``game_reap_idle``; running it
    twice closes nothing more.  The periodic sweep runs it (games.tasks).
    """
    times = _lobby_times()
    at = clock.from_datetime(now) if now is not None else clock.now_ms()
    cutoff = clock.to_datetime(at - min(times.values()))
    candidates = list(
        Game.objects.filter(status=Game.Status.LOBBY, updated_at__lte=cutoff).values_list(
            "pk", flat=True
        )
    )
    online: set[int] = set()
    if candidates and host_connected is not None:
        online = set(host_connected(_host_seats(candidates)))
    closed = 0
    for pk in candidates:
        try:
            with transaction.atomic():
                g = _lock_lobby(pk, skip_locked=True)
                if g is None:
                    continue
                reason = _lobby_reason(g, at, times, host_online=pk in online)
                if reason is None:
                    continue
                _abandon(g, reason=reason, at=at, data={"after_ms": times[reason]})
                closed += 1
        except Exception:  # one broken lobby must not stop the others
            logger.exception("lobby check failed for game %s", pk)
    return closed
