"""Computer players (issue 11): they sit at seats like people and move through ``game_act``.

``game_add_bot`` (the host seats one in the lobby), ``game_vs_computer`` (a game against the
computer, started at once), ``game_back`` (a person takes their seat back from the computer
sitting in), ``game_bot_move`` (one decision, the Celery task's work) and ``game_wake_bots``
(the sweep's safety net).  Counting timeouts and sitting a computer in for an absent person
happen in every engine change, so they live in the commit step (``commit._sit_in``,
``commit._bot_moves``, ``SIT_IN_LEVEL``).
"""

from __future__ import annotations

import importlib
import logging
import random
from typing import Any

from django.conf import settings as django_settings
from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser
from django.db import transaction
from django.db.models import Q

from games import bots, clock, selectors
from games.engines import DEFAULT_KIND, KINDS, engine_for
from games.errors import ServiceError
from games.models import Event, Game, Seat
from games.services.commit import (
    _bot_moves,
    _engine,
    _lobby_change,
    _lock,
    _seat_event,
    _seat_of,
)
from games.services.lobby import _require_lobby, game_create, game_start
from games.services.play import game_act

logger = logging.getLogger(__name__)

#: The levels a host may choose (``games.bots.LEVELS`` also has ``random``, the benchmark's
#: floor, which is not offered to players).
BOT_LEVELS = ("easy", "medium", "hard")
#: Names of the computer players (pioneers of computing), one per seat a table can have.
BOT_NAMES = ("Ada", "Alan", "Grace", "Claude", "Edsger", "Barbara", "Donald", "Frances")


def _require_bots(kind: str) -> None:
    """Refuse a computer player for a game that has none (``games.bots.GAMES``)."""
    if kind not in bots.GAMES:
        raise ServiceError(
            "no_computer_players",
            f"{engine_for(kind).NAME} has no computer players yet.",
            status=409,
        )


def _bot_user(level: str, busy: set[int]) -> AbstractBaseUser:
    """A computer player's account that does not sit at this game yet (``busy``: user ids of
    the game's seats).  Accounts are made once per name and level and reused across games."""
    user_model = get_user_model()
    for i, name in enumerate(BOT_NAMES):
        username = f"computer-{level}-{i + 1}"
        user = user_model.objects.filter(username=username).first()
        if user is None:
            user = user_model.objects.create_user(
                username=username, password=None, display_name=name, is_bot=True
            )
        if user.pk not in busy:
            return user
    raise ServiceError("game_full", "No computer player is free for this game.", status=409)


@transaction.atomic
def game_add_bot(*, game: Game | int, host: AbstractBaseUser, level: str) -> Game:
    """The host seats a computer player of ``level`` in the lobby's next free seat."""
    g = _lock(game)
    if host is None or g.host_id != host.pk:
        raise ServiceError("not_host", "Only the host can add computer players.", status=403)
    _require_lobby(g)
    if level not in BOT_LEVELS:
        raise ServiceError("bad_level", f"level must be one of: {', '.join(BOT_LEVELS)}.")
    _require_bots(g.kind)
    seats = list(Seat.objects.filter(game=g))
    most = _engine(g).MAX_SEATS
    if len(seats) >= most:
        raise ServiceError(
            "game_full", f"The game already has {most} players.", status=409, extra={"max": most}
        )
    at = clock.now_ms()
    user = _bot_user(level, {s.user_id for s in seats})
    seat = Seat.objects.create(
        game=g, user=user, number=len(seats), bot_level=level, joined_at=clock.to_datetime(at)
    )
    _lobby_change(g, [("seat_joined", {**_seat_event(seat), "bot": level})], at_ms=at)
    return g


def game_vs_computer(
    *,
    user: AbstractBaseUser,
    kind: str = DEFAULT_KIND,
    level: str = "medium",
    opponents: int | None = None,
    settings: dict[str, Any] | None = None,
) -> Game:
    """Play against the computer: a private game of ``kind``, the user at seat 0 and
    ``opponents`` computer players of ``level`` (default: as few as the game allows, at least
    one; Crisp three), started at once.  One transaction: all of it happens, or none."""
    if kind not in KINDS:
        raise ServiceError("bad_kind", f"kind must be one of: {', '.join(KINDS)}.")
    engine = engine_for(kind)
    _require_bots(kind)
    if level not in BOT_LEVELS:
        raise ServiceError("bad_level", f"level must be one of: {', '.join(BOT_LEVELS)}.")
    if opponents is None:
        opponents = max(engine.MIN_SEATS - 1, min(3, engine.MAX_SEATS - 1))
    if isinstance(opponents, bool) or not isinstance(opponents, int):
        raise ServiceError("bad_opponents", "opponents must be a whole number.")
    if not engine.MIN_SEATS <= opponents + 1 <= engine.MAX_SEATS:
        raise ServiceError(
            "bad_opponents",
            f"{engine.NAME} takes {engine.MIN_SEATS - 1} to {engine.MAX_SEATS - 1} opponents.",
        )
    with transaction.atomic():
        game = game_create(host=user, kind=kind, settings=settings, private=True)
        for _ in range(opponents):
            game_add_bot(game=game, host=user, level=level)
        return game_start(game=game, user=user)


@transaction.atomic
def game_back(*, game: Game | int, user: AbstractBaseUser) -> Game:
    """The "I'm back" button: the player takes their seat back from the computer sitting in."""
    g = _lock(game)
    seat = _seat_of(g, user)
    if seat is None:
        raise ServiceError("not_seated", "You have no seat at this game.", status=403)
    if seat.left_at is not None:
        raise ServiceError("already_left", "You have left this game.", status=409)
    if not seat.sitting_in:
        raise ServiceError("not_sat_in", "Nobody is sitting in for you.", status=409)
    if g.status != Game.Status.PLAYING:
        raise ServiceError("game_over", f"The game is {g.status}.", status=409)
    seat.sitting_in, seat.bot_level, seat.bot_memory, seat.missed = False, "", None, 0
    seat.save(update_fields=["sitting_in", "bot_level", "bot_memory", "missed"])
    _lobby_change(g, [("seat_back", _seat_event(seat))], at_ms=clock.now_ms())
    return g


#: A decision that must land inside a window (Crisp's crisp call, 3 s) gets at most this share
#: of the window's time left as its CPU budget: its wall time on a loaded machine is a few
#: times its CPU (docs/BOTS.md, "Time"), and the call must still be on time.
BOT_WINDOW_SHARE = 0.1


def _bot_budget(closes_at: int | None = None, now: int = 0) -> Any:
    """The CPU budget of one computer decision: ``settings.CRISP_BOT_CPU_MS`` (default the
    bots' 200 ms) and ``CRISP_BOT_MAX_ITERATIONS`` (tests: a reproducible search), capped for
    a decision inside a window at ``BOT_WINDOW_SHARE`` of what is left of it."""
    cpu = float(getattr(django_settings, "CRISP_BOT_CPU_MS", bots.Budget().cpu_ms))
    if closes_at is not None:
        cpu = max(1.0, min(cpu, (closes_at - now) * BOT_WINDOW_SHARE))
    return bots.Budget(cpu, getattr(django_settings, "CRISP_BOT_MAX_ITERATIONS", None))


def _bot_rng() -> random.Random:
    """A fresh generator per decision; ``settings.CRISP_BOT_SEED`` (tests only) seeds it, so
    two runs of the same decision -- the twin-worlds proof -- draw the same numbers."""
    seed = getattr(django_settings, "CRISP_BOT_SEED", None)
    return random.Random() if seed is None else random.Random(seed)  # noqa: S311 - play


def game_bot_move(*, game_id: int, seat_number: int, version: int) -> bool:
    """A computer player's turn (Celery, ``games.tasks.bot_move``): True if it moved.

    Fair by construction: the bot (``games.bots``) is handed only an ``Observation`` -- a frozen
    record of what the seat was sent (the seat's redacted state, ``selectors.
    game_payload_for_seat``, and each event in the form the seat's live socket received it,
    ``selectors.event_payload``: private forms at their own version) and of its own past
    decisions -- kept between turns in ``Seat.bot_memory`` (``games.bots.ask``).  It never
    sees the engine state, the deck or the seed, and nothing writable reaches it.  It decides
    *outside* the game's lock (a search may take its whole budget), stores its memory under
    the lock (only if nobody changed the seat's memory or its player meanwhile), and then acts
    through ``game_act`` on the version it saw: if the game moved on meanwhile, the move is
    refused as stale and the newer change wakes it again.

    A move that opens a window of this seat that a decision must land in (Crisp: the crisp
    window, 3 s, rules/crisp.md) is followed at once, in this same call, by that window's
    decision on the new version, budgeted to the window (``BOT_WINDOW_SHARE``): not after a
    think time and a queue, which under load put the call past the window's end.
    """
    moved, window = _bot_turn(game_id, seat_number, version, closes_at=None)
    if moved and window is not None:
        _bot_turn(game_id, seat_number, window[0], closes_at=window[1])
    return moved


def _bot_turn(
    game_id: int, seat_number: int, version: int, *, closes_at: int | None
) -> tuple[bool, tuple[int, int] | None]:
    """One decision of the seat's computer player at ``version`` (``game_bot_move``): whether
    it moved, and ``(version, closes_at)`` of a window of its own its move opened."""
    game = Game.objects.filter(pk=game_id, status=Game.Status.PLAYING).first()
    if game is None or game.version != version or game.kind not in bots.GAMES:
        return False, None
    seat = Seat.objects.filter(game=game, number=seat_number).select_related("user").first()
    if seat is None or not seat.bot_level or not (seat.sitting_in or seat.user.is_bot):
        return False, None
    stored = seat.bot_memory
    if stored:
        memory = bots.Memory.from_json(stored)
        rows = Event.objects.filter(game=game, seq__gt=memory.to_json()["last_seq"] or 0)
    else:
        # A computer player seated in the lobby has been "connected" since the deal: every
        # event, each in the private form its seat's socket got live.  One sitting in for a
        # person starts as a reconnecting person would: this version's events and the state.
        memory = bots.Memory(game.kind, seat_number, salt=f"{game.pk}:{seat_number}")
        rows = Event.objects.filter(game=game)
        if seat.sitting_in:
            rows = rows.filter(version=game.version)
    now = clock.now_ms()
    memory.observe(
        events=[
            selectors.event_payload(event=e, seat=seat_number, kind=game.kind)
            for e in rows.order_by("seq")
        ],
        view=selectors.game_payload_for_seat(game=game, seat=seat_number, now=now)["state"],
    )
    bot = bots.bot_for(game.kind, seat.bot_level, budget=_bot_budget(closes_at, now))
    action = bots.ask(bot, memory, now, _bot_rng())
    with transaction.atomic():
        _lock(game)
        current = (
            Seat.objects.filter(pk=seat.pk)
            .values_list("bot_level", "sitting_in", "bot_memory")
            .first()
        )
        if current is not None and current[0] and current[2] == stored:
            Seat.objects.filter(pk=seat.pk).update(bot_memory=memory.to_json())
    if action is None:
        return False, None
    try:
        done = game_act(
            game=game, user=seat.user, action=action, expected_version=version, by_bot=True
        )
    except ServiceError as exc:
        if exc.code != "stale_version":
            logger.warning("bot at seat %s of game %s refused: %s", seat_number, game_id, exc)
        return False, None
    if closes_at is not None:  # a window's own decision opens no further one
        return True, None
    closes = getattr(bots.game_for(game.kind), "window_closes", None)
    after = None if closes is None else Game.objects.filter(pk=game_id).first()
    if after is None or after.version != done.version or after.status != Game.Status.PLAYING:
        return True, None
    view = selectors.game_payload_for_seat(game=after, seat=seat_number, now=clock.now_ms())
    at = closes(view["state"], seat_number)
    return True, None if at is None else (after.version, at)


def game_wake_bots(*, idle_ms: int = 10_000) -> int:
    """Wake the computer players of every game that has not changed for ``idle_ms`` (the
    periodic sweep's safety net, as for deadlines: a bot task lost with its worker)."""
    at = clock.now_ms()
    stale = clock.to_datetime(at - idle_ms)
    ids = list(
        Game.objects.filter(status=Game.Status.PLAYING, updated_at__lt=stale)
        .filter(Q(seats__user__is_bot=True) | Q(seats__sitting_in=True))
        .values_list("pk", flat=True)
        .distinct()
    )
    woken = 0
    for pk in ids:
        game = Game.objects.filter(pk=pk).first()
        if game is None or game.state is None:
            continue
        engine = _engine(game)
        moves = _bot_moves(game, engine, engine.GameState.from_json(game.state), at)
        if moves:
            importlib.import_module("games.scheduling").schedule_bots(game.pk, game.version, moves)
            woken += 1
    return woken
