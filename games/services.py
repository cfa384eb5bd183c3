"""The only writer of games (docs/SERVICES.md is the contract; keep both true).

Every public function here follows one shape, after Zulip's ``check_* / do_* / notify_*``:

1. **lock** -- open a transaction and ``SELECT … FOR UPDATE`` the game row (``_lock``).  On
   SQLite, where that is a no-op, the IMMEDIATE transaction mode (settings) takes the database
   write lock at ``BEGIN`` instead; either way two writers of one game never interleave.
2. **check** -- every refusal raises ``ServiceError`` *before* anything is written, so a refused
   request changes nothing (and the transaction would roll it back anyway).
3. **apply** -- ask the game's engine (``games.engines.engine_for(game.kind)``, which speaks
   the one interface of docs/ENGINE.md whatever the game), store the new snapshot, append the events
   with gap-free sequence numbers, bump ``Game.version`` exactly once (``_commit_change``).
4. **announce on commit** -- ``transaction.on_commit`` hands the broadcast and the new timers to
   the live layer, so nobody ever hears of a change that then rolled back (boardgame.io
   broadcasts before persisting; we do not).

Helpers whose names start with ``_`` assume the caller holds the game's row lock; their
docstrings say so.  Time always comes from ``games.clock.now_ms()`` so tests can control it.
"""

from __future__ import annotations

import importlib
import logging
import random
import secrets
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from types import ModuleType
from typing import Any

from django.conf import settings as django_settings
from django.contrib.auth.base_user import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.db.models import Q

from games import clock, records
from games.engines import DEFAULT_KIND, KINDS, engine_for
from games.engines.base import Event as EngineEvent
from games.engines.base import IllegalAction
from games.errors import ServiceError
from games.models import (
    CHAT_MAX,
    NAME_MAX,
    ChatMessage,
    EngineCall,
    Event,
    Game,
    IdempotencyKey,
    Round,
    Seat,
)

__all__ = [
    "ActResult",
    "Committed",
    "ServiceError",
    "game_abandon",
    "game_act",
    "game_add_bot",
    "game_back",
    "game_bot_move",
    "game_chat_post",
    "game_create",
    "game_end_now",
    "game_fire_deadline",
    "game_join",
    "game_kick",
    "game_leave",
    "game_leave_playing",
    "game_reap_idle",
    "game_rematch",
    "game_rename",
    "game_start",
    "game_sweep",
    "game_vs_computer",
    "game_wake_bots",
]

logger = logging.getLogger(__name__)

# Invite codes: no 0/O/1/I/L, so they survive being read aloud or typed from a phone.
_INVITE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
_INVITE_LENGTH = 8
_IDEMPOTENCY_KEY_MAX = 100


@dataclass(frozen=True)
class ActResult:
    """What ``game_act`` did: the version it produced and the events it appended (in order).

    ``replayed`` is True when an idempotency key matched an earlier request: nothing was
    applied this time and ``version``/``events`` are those of the first application.
    """

    version: int
    events: list[Event] = field(default_factory=list)
    replayed: bool = False
    #: The actor's seat number, read under the lock (a playing game's seats never move, so
    #: it is also the seat after the commit: the ack is redacted for it without a query).
    seat: int | None = None
    #: The game's kind (its engine), for redacting ``events`` without reading the game again.
    kind: str = ""


@dataclass(frozen=True)
class Committed:
    """A change of a game in play as its author committed it, for the live layer.

    Why: the broadcast used to read the game, its seats and the new events back from the
    database and parse the stored snapshot once per receiver group -- work the author had
    just done (bench/RESULTS.md, "Scale", session 4). Handed over on commit, the frames are
    built from this: the same rows, the same state, the same redaction (``selectors``).
    """

    #: A copy of the row's columns a receiver's state is built from (``selectors.
    #: game_payload_for_seat``), at the committed version.
    game: Game
    #: The engine's ``GameState`` saved as ``game.state`` (immutable by contract).
    state: Any
    #: The change's ``Event`` rows, in order.
    events: list[Event]
    #: Seat number -> user id, if the author read the seats (else the live layer does).
    seat_users: dict[int, int] | None


# ------------------------------------------------------------------------------------------
# Locking and the common write path
# ------------------------------------------------------------------------------------------
def _lock(game: Game | int) -> Game:
    """Lock the game's row and return a fresh copy.  Call inside ``transaction.atomic``.

    Always re-reads: a ``Game`` instance handed in by a caller may be stale (read before the
    lock), and every check must see the row as it is under the lock.
    """
    pk = game.pk if isinstance(game, Game) else game
    try:
        return Game.objects.select_for_update().get(pk=pk)
    except (Game.DoesNotExist, ValueError, TypeError):
        raise ServiceError("not_found", "No such game.", status=404) from None


def _engine(game: Game) -> ModuleType:
    """The game's engine package: the only way this module reaches the rules."""
    return engine_for(game.kind)


#: The columns a change reads of every seat and its user (``_seats``): the sit-in count, the
#: computer players, the scores, a seat event's name. Not ``bot_memory`` (a computer player's
#: notes, which only ``game_bot_move`` reads) nor the rest of the account.
_SEAT_COLUMNS = (
    "id",
    "game_id",
    "number",
    "user_id",
    "score",
    "missed",
    "sitting_in",
    "bot_level",
    "left_at",  # a seat left for good may not act (game_act): read with the rest, not again
    "user__id",
    "user__username",
    "user__display_name",
    "user__is_bot",
)


def _seats(game: Game) -> list[Seat]:
    """Every seat of the game with its user, in one query of only what a change needs
    (model instances of whole accounts were a tenth of a daphne's CPU per action: bench/
    RESULTS.md, "Scale", session 4).  Caller holds the game's row lock."""
    # order_by: the model's ordering ("game", "number") would join the game row to sort by it.
    return list(
        Seat.objects.filter(game=game)
        .select_related("user")
        .only(*_SEAT_COLUMNS)
        .order_by("number")
    )


def _seat_of(game: Game, user: AbstractBaseUser) -> Seat | None:
    """The user's seat at ``game``, or None.  Caller holds the game's row lock."""
    if user is None or not getattr(user, "is_authenticated", False):
        return None
    return Seat.objects.filter(game=game, user=user).first()


def _event_row(
    game: Game,
    *,
    origin: str,
    type: str,
    data: dict[str, Any],
    version: int,
    round: Round | None = None,
    at_ms: int,
) -> Event:
    """The next event, numbered but not yet written: a change writes its events in one
    ``bulk_create`` (one round trip instead of one per event).  Caller holds the game's row
    lock (that is what makes ``seq`` gap-free and unique without retries)."""
    game.last_seq += 1
    return Event(
        game=game,
        round=round,
        seq=game.last_seq,
        version=version,
        origin=origin,
        type=type,
        data=data,
        created_at=clock.to_datetime(at_ms),
    )


def _announce(
    game_id: int,
    version: int,
    deadlines: list[tuple[str, datetime]],
    bot_moves: list[tuple[int, int]] | None = None,
    change: Committed | None = None,
) -> None:
    """Register the change's side effects to run after the commit, and only then.

    The live layer's modules are imported inside the callbacks: they are loaded lazily (and
    ``importlib`` looks in ``sys.modules`` first, so tests can stand in for them).  ``robust``
    callbacks log instead of raising: a broadcast that fails after the commit must not turn a
    successful, committed change into an error response -- clients resync by version.
    ``change``: what was committed, so the broadcast need not read it back.
    """

    def broadcast() -> None:
        importlib.import_module("games.broadcast").game_changed(game_id, version, change)

    def schedule() -> None:
        importlib.import_module("games.tasks").schedule_deadlines(game_id, deadlines)

    def wake_bots() -> None:
        importlib.import_module("games.tasks").schedule_bots(game_id, version, bot_moves or [])

    transaction.on_commit(broadcast, robust=True)
    if deadlines:
        transaction.on_commit(schedule, robust=True)
    if bot_moves:
        transaction.on_commit(wake_bots, robust=True)


def _lobby_change(
    game: Game, events: Iterable[tuple[str, dict[str, Any]]], *, at_ms: int
) -> list[Event]:
    """Bump the version once, append the lobby events, save, announce.  Caller holds the lock."""
    game.version += 1
    rows = [
        _event_row(
            game, origin=Event.Origin.LOBBY, type=t, data=d, version=game.version, at_ms=at_ms
        )
        for t, d in events
    ]
    Event.objects.bulk_create(rows)
    game.updated_at = clock.to_datetime(at_ms)
    game.save()
    _announce(game.pk, game.version, [])
    return rows


def _round_end_snapshot(
    engine: ModuleType,
    old_state: Any,
    new_state: Any,
    snapshot: dict[str, Any],
    number: int,
    end: EngineEvent,
) -> dict[str, Any] | None:
    """The engine snapshot as round ``number``'s end event left it (for ``Round.state``).

    Usually the new state itself.  A late timer or sweep can run the round's end *and* the
    next round's deal in one batch (the pause between rounds was already over); then the
    state at the end is recomputed: the deadlines due by the end's instant, applied to the
    state before the batch (the engine is deterministic, so this is the state the batch went
    through).  None only if that is impossible -- a pause of 0 ms between rounds (test-only
    timers) deals the next round at the end's own instant.
    """
    if new_state.round_number == number:
        return snapshot
    if old_state is None:  # pragma: no cover - a game's first change deals, never ends a round
        return None
    at_end, events = engine.advance(old_state, end.data["at"])
    if at_end.round_number == number and any(e.type == engine.ROUND_END_EVENT for e in events):
        return at_end.to_json()
    return None


def _engine_change(
    game: Game,
    old_state: Any,
    new_state: Any,
    engine_events: Sequence[EngineEvent],
    *,
    at_ms: int,
    lobby_events: Iterable[tuple[str, dict[str, Any]]] = (),
    actor: Seat | None = None,
    call: dict[str, Any] | None = None,
    seats: list[Seat] | None = None,
    columns_only: bool = False,
) -> list[Event]:
    """Store what the engine produced: snapshot, rounds, scores, events, deadlines, version.

    ``actor`` is the seat of a person who acted themselves (not a bot): their run of timeouts
    ends there.  Seats that timed out in this change (``_seats_timed_out``) count one more; a
    person's seat at two in a row gets a computer player sitting in (``_sit_in``).

    Caller holds the game's row lock.  Rounds: a ``round_dealt`` event creates the ``Round``
    row (with its deck, which the event carries in full); the engine's ``ROUND_END_EVENT``
    stores the round's result and end snapshot (``_round_end_snapshot``).  Events are
    attached to the round current when they happened.
    The pending deadlines are handed to the timer queue on commit (stale timers are harmless:
    ``game_fire_deadline`` ignores them).
    ``call`` says what the engine was asked (``EngineCall``: replays rebuild every version from
    it); a change that finishes the game files its record and ratings (``records``).
    ``seats``: every seat of the game with its user, when the caller has already read them
    (``game_act``), so the sit-in count and the computer players need no query of their own.
    The events are written in one ``bulk_create``: each query is a round trip on a daphne
    process's single database thread (bench/RESULTS.md, "Scale").
    ``columns_only``: the caller changed nothing of the row itself (an action, a timer), so
    only the columns written here are saved (``_CHANGE_COLUMNS``), not the whole row.
    """
    engine = _engine(game)
    game.version += 1
    version = game.version
    lobby_events = [*lobby_events, *_sit_in(game, engine_events, actor, seats)]
    if call is not None:
        EngineCall.objects.create(game=game, version=version, at=at_ms, **call)
    rows: list[Event] = [
        _event_row(game, origin=Event.Origin.LOBBY, type=t, data=d, version=version, at_ms=at_ms)
        for t, d in lobby_events
    ]
    rounds: dict[int, Round] = {}
    current = old_state.round_number if old_state is not None else None
    snapshot = new_state.to_json()
    for ev in engine_events:
        if ev.type == "round_dealt":
            current = ev.data["round"]
            rounds[current] = Round.objects.create(
                game=game,
                number=current,
                dealer=ev.data["dealer"],
                seed=game.seed,
                deck=list(ev.data.get("deck") or []),
                started_at=clock.to_datetime(ev.data.get("at", at_ms)),
            )
        rnd = None
        if current is not None:
            rnd = rounds.get(current)
            if rnd is None:
                # Only what the events' foreign key and a round's end need: not the deck.
                rnd = (
                    Round.objects.filter(game=game, number=current)
                    .only("id", "game_id", "number")
                    .order_by()  # one row (unique): the model's ordering would join the game
                    .first()
                )
                if rnd is not None:
                    rounds[current] = rnd
        if ev.type == engine.ROUND_END_EVENT and rnd is not None:
            rnd.result = ev.data
            rnd.ended_at = clock.to_datetime(ev.data.get("at", at_ms))
            rnd.state = _round_end_snapshot(engine, old_state, new_state, snapshot, rnd.number, ev)
            rnd.save(update_fields=["result", "ended_at", "state"])
        rows.append(
            _event_row(
                game,
                origin=Event.Origin.ENGINE,
                type=ev.type,
                data=ev.data,
                version=version,
                round=rnd,
                at_ms=at_ms,
            )
        )

    Event.objects.bulk_create(rows)
    if actor is not None:
        game.last_played_at = clock.to_datetime(at_ms)
    old_scores = old_state.scores if old_state is not None else None
    if new_state.scores != old_scores:
        for seat in seats if seats is not None else Seat.objects.filter(game=game):
            score = new_state.scores[seat.number]
            if seat.score != score:
                seat.score = score
                seat.save(update_fields=["score"])

    pending = engine.pending_deadlines(new_state)
    timers = _timers(engine, new_state, pending)
    game.state = snapshot
    game.deadlines = [d.to_json() for d in pending]
    # The sweep looks for games by their next *timer*: a silent deadline waits for the next
    # change, whatever it is (``_timers``).
    game.next_deadline_at = clock.to_datetime(timers[0].at) if timers else None
    if new_state.status == "finished" and game.status == Game.Status.PLAYING:
        game.status = Game.Status.FINISHED
        game.winners = list(new_state.winners)
        game.ended_at = clock.to_datetime(at_ms)
    game.updated_at = clock.to_datetime(at_ms)
    game.save(update_fields=_CHANGE_COLUMNS if columns_only else None)
    if game.status == Game.Status.FINISHED:
        records.game_record_finish(game=game)
    committed = Committed(
        game=Game(
            pk=game.pk,
            kind=game.kind,
            version=version,
            status=game.status,
            state=snapshot,
            winners=list(game.winners),
        ),
        state=new_state,
        events=rows,
        seat_users={seat.number: seat.user_id for seat in seats} if seats is not None else None,
    )
    # Every pending deadline, not only the new ones: the timer queue deduplicates by key
    # (games.tasks), and re-sending lets it recover a schedule it lost.
    _announce(
        game.pk,
        version,
        [(d.key, clock.to_datetime(d.at)) for d in timers],
        _bot_moves(game, engine, new_state, at_ms, seats),
        committed,
    )
    return rows


#: Every column of the game row ``_engine_change`` writes (``columns_only``).
_CHANGE_COLUMNS = (
    "version",
    "last_seq",
    "state",
    "deadlines",
    "next_deadline_at",
    "updated_at",
    "last_played_at",
    "status",
    "winners",
    "ended_at",
)


def _silent(engine: ModuleType) -> frozenset[str]:
    """The engine's deadline kinds that need no timer (``SILENT_DEADLINES``, docs/ENGINE.md)."""
    return engine.SILENT_DEADLINES


def _timers(engine: ModuleType, state: Any, pending: Sequence[Any]) -> list[Any]:
    """The deadlines that get a timer: every pending one except the engine's silent kinds,
    plus what becomes pending once a silent one has happened (Crisp: the draw clock's
    timeout, which runs from the turn's ``start_at``), computed now from the state as it will
    be at that instant.

    Why: a silent deadline's only effect is one every receiver computes from what it was
    already sent, so its own timer, transaction and broadcast bought nothing but load (issue
    13: about a third of all changes at human pace). The engine applies it, at its own
    instant, before whatever comes next -- an action, another deadline, the sweep -- so the
    game's history and every rule are the same as with a timer.
    """
    silent = _silent(engine)
    timers = [d for d in pending if d.kind not in silent]
    keys = {d.key for d in timers}
    for d in pending:
        if d.kind in silent:
            ahead, _ = engine.advance(state, d.at)
            for later in engine.pending_deadlines(ahead):
                if later.kind not in silent and later.key not in keys:
                    timers.append(later)
                    keys.add(later.key)
    timers.sort(key=lambda d: d.at)
    return timers


def _stop(game: Game) -> None:
    """Clear the timers of a game that ends outside the engine.  Caller holds the lock."""
    game.deadlines = []
    game.next_deadline_at = None


# ------------------------------------------------------------------------------------------
# Lobby
# ------------------------------------------------------------------------------------------
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


def _seat_event(seat: Seat) -> dict[str, Any]:
    user = seat.user
    name = getattr(user, "public_name", None) or user.get_username()
    return {"seat": seat.number, "user_id": user.pk, "name": name}


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
    and record it.  Caller holds the game's row lock.  An empty lobby is abandoned."""
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
    if not remaining.exists():
        g.status = Game.Status.ABANDONED
        g.ended_at = clock.to_datetime(at)
        events.append(("game_abandoned", {"reason": "empty"}))
    elif seat.user_id == g.host_id:
        new_host = remaining[0]
        g.host = new_host.user
        events.append(("host_changed", _seat_event(new_host)))
    _lobby_change(g, events, at_ms=at)


@transaction.atomic
def game_leave(*, game: Game | int, user: AbstractBaseUser) -> Game:
    """Give up one's lobby seat.  A leaving host hands the host role to the lowest seat;
    the last one out abandons the lobby.  Once a game has started, seats are fixed (the
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
    records.game_record_finish(game=g)
    return g


# ------------------------------------------------------------------------------------------
# Play
# ------------------------------------------------------------------------------------------
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

    Under the game's row lock, in this order:

    1. an idempotency key already used by this user at this game returns the first result
       (``replayed=True``) and applies nothing -- checked before the version, because a retry
       carries the version the client had *before* its first attempt succeeded;
    2. the caller must hold a seat they have not left for good (``already_left``; the
       computer sitting in for them still plays it), the game must be playing, the action
       must parse;
    3. ``expected_version`` (if given) must equal ``Game.version``, else ``stale_version``
       with the current version in ``extra`` -- except for the opening ``look``, which is
       exempt: it depends on nothing the client saw (it shows the seat's own cards as they
       lie now, E5) and commutes with every other seat's look, so at a deal, when every
       seat asks at once, no look can refuse another (R3);
    4. the engine applies it at the server's ``now`` (deadlines already due first);
    5. snapshot, events, deadlines and version are stored; broadcast and timers on commit.
    """
    if idempotency_key is not None and (
        not isinstance(idempotency_key, str) or not 0 < len(idempotency_key) <= _IDEMPOTENCY_KEY_MAX
    ):
        raise ServiceError(
            "bad_idempotency_key", f"An idempotency key is 1 to {_IDEMPOTENCY_KEY_MAX} characters."
        )
    g = _lock(game)
    # Every seat in one query: the actor's, and those the sit-in count and the computer
    # players need (``_engine_change``), instead of a query each.
    seats = _seats(g)
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
        and act.type not in engine.VERSION_EXEMPT_ACTIONS  # applied whatever version was seen
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
    try:
        g = Game.objects.select_for_update().get(pk=game_id)
    except Game.DoesNotExist:
        return False
    if g.status != Game.Status.PLAYING or g.state is None:
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
    # Every seat with its user in one query: what the sit-in count and the computer players
    # need, and the broadcast's seat map (so the live thread reads nothing back).
    seats = _seats(g)
    _engine_change(g, old, new, events, at_ms=at, call=call, seats=seats, columns_only=True)
    return True


def _sweep_one(pk: int, at: int) -> bool:
    """Apply every overdue deadline of one game in its own transaction.

    ``skip_locked``: a game whose row is locked right now is being changed by someone else,
    and that change applies the due deadlines itself (the engine catches up before any
    action), so the sweep need not wait for it.  SQLite ignores the clause and serialises.
    """
    with transaction.atomic():
        g = (
            Game.objects.select_for_update(skip_locked=True)
            .filter(pk=pk, status=Game.Status.PLAYING)
            .first()
        )
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


# ------------------------------------------------------------------------------------------
# Computer players (issue 11): bots sit at seats like people and move through ``game_act``
# ------------------------------------------------------------------------------------------
#: The levels a host may choose (``games.bots.LEVELS`` also has ``random``, the benchmark's
#: floor, which is not offered to players).
BOT_LEVELS = ("easy", "medium", "hard")
#: The level that sits in for an absent person.
SIT_IN_LEVEL = "medium"
#: A person's seat gets a computer player after this many timeouts in a row.
SIT_IN_AFTER_TIMEOUTS = 2
#: Names of the computer players (pioneers of computing), one per seat a table can have.
BOT_NAMES = ("Ada", "Alan", "Grace", "Claude", "Edsger", "Barbara", "Donald", "Frances")


def _seats_timed_out(events: Sequence[EngineEvent], timeout_events: frozenset[str]) -> set[int]:
    """Seats the server moved for on a timeout in these events.  A convention of every engine
    (docs/ENGINE.md): such an event carries the ``seat`` and ``"timeout": true``, or is of one
    of the engine's ``TIMEOUT_EVENTS`` types."""
    out: set[int] = set()
    for ev in events:
        seat = ev.data.get("seat")
        if isinstance(seat, int) and (ev.data.get("timeout") is True or ev.type in timeout_events):
            out.add(seat)
    return out


def _sit_in(
    game: Game,
    events: Sequence[EngineEvent],
    actor: Seat | None,
    seats: list[Seat] | None = None,
) -> list[tuple[str, dict[str, Any]]]:
    """Count timeouts in a row per seat; a person's seat that reaches
    ``SIT_IN_AFTER_TIMEOUTS`` is played by a computer until its player is back.  Returns the
    lobby events to record.  ``seats``: the game's seats (with users) if already read; they
    are updated in place.  Caller holds the game's row lock."""
    out: list[tuple[str, dict[str, Any]]] = []
    timed_out = _seats_timed_out(events, engine_for(game.kind).TIMEOUT_EVENTS)
    if (
        actor is not None
        and actor.left_at is None  # a seat left for good stays with the computer
        and actor.number not in timed_out
        and (actor.missed or actor.sitting_in)
    ):
        if actor.sitting_in:  # a person who moves themselves is back
            out.append(("seat_back", _seat_event(actor)))
        actor.missed, actor.sitting_in, actor.bot_level, actor.bot_memory = 0, False, "", None
        actor.save(update_fields=["missed", "sitting_in", "bot_level", "bot_memory"])
    if not timed_out:
        return out
    timed_out_seats = (
        [seat for seat in seats if seat.number in timed_out]
        if seats is not None
        else Seat.objects.filter(game=game, number__in=timed_out).select_related("user")
    )
    for seat in timed_out_seats:
        seat.missed += 1
        fields = ["missed"]
        if (
            seat.missed >= SIT_IN_AFTER_TIMEOUTS
            and not seat.sitting_in
            and not getattr(seat.user, "is_bot", False)
        ):
            seat.sitting_in = True
            seat.bot_level = SIT_IN_LEVEL
            seat.bot_memory = None  # the bot starts from what it is shown from now on
            fields += ["sitting_in", "bot_level", "bot_memory"]
            out.append(("sitting_in", {**_seat_event(seat), "level": SIT_IN_LEVEL}))
        seat.save(update_fields=fields)
    return out


def _bot_moves(
    game: Game, engine: ModuleType, state: Any, at_ms: int, seats: list[Seat] | None = None
) -> list[tuple[int, int]]:
    """``(seat, countdown ms)`` for every seat a computer plays that has something to do in a
    moment: the live layer wakes each one after its think time (``games.tasks.schedule_bots``).
    A seat with nothing to do is woken by the next change instead.  ``seats``: the game's
    seats with their users, if already read (no query then).  Caller holds the lock."""
    if state.status != "playing":
        return []
    if seats is not None:
        numbers = [
            seat.number
            for seat in seats
            if seat.bot_level and (seat.sitting_in or getattr(seat.user, "is_bot", False))
        ]
    else:
        numbers = list(
            Seat.objects.filter(game=game)
            .exclude(bot_level="")
            .filter(Q(sitting_in=True) | Q(user__is_bot=True))
            .values_list("number", flat=True)
        )
    # A silent deadline (``_timers``) brings no change to wake a computer player when it
    # happens, so a seat is also woken once after each (a think time after its instant): what
    # it opens (Crisp: the next player's draw) is then among its moves. A wake whose version
    # has moved on meanwhile is a no-op (``game_bot_move``).
    opens = [d.at for d in engine.pending_deadlines(state) if d.kind in _silent(engine)]
    # Think time per move (settings.CRISP_BOT_THINK_MS): read as a person's, keeps a table moving.
    low, high = django_settings.CRISP_BOT_THINK_MS
    moves = []
    for number in sorted(numbers):
        for start in [at_ms, *(at for at in opens if at > at_ms)]:
            think = low + secrets.randbelow(max(1, high - low))
            if engine.legal_actions(state, number, start + think):
                moves.append((number, start - at_ms + think))
    return moves


def _require_bots(kind: str) -> None:
    """Refuse a computer player for a game that has none (``games.bots.GAMES``)."""
    from games import bots

    if kind not in bots.GAMES:
        raise ServiceError(
            "no_computer_players",
            f"{engine_for(kind).NAME} has no computer players yet.",
            status=409,
        )


def _bot_user(level: str, busy: set[int]) -> AbstractBaseUser:
    """A computer player's account that does not sit at this game yet (``busy``: user ids of
    the game's seats).  Accounts are made once per name and level and reused across games."""
    from django.contrib.auth import get_user_model

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
    from games import bots

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
    from games import bots, selectors

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
            importlib.import_module("games.tasks").schedule_bots(game.pk, game.version, moves)
            woken += 1
    return woken


# ------------------------------------------------------------------------------------------
# Game night: names, rematch, chat, leaving a game in progress, ending games nobody plays
# ------------------------------------------------------------------------------------------
#: Chat: at most this many lines per person per table within the window.
CHAT_BURST = 5
CHAT_WINDOW_MS = 10_000
#: A game in progress with no player action for this long is ended as abandoned (timed or
#: untimed: a timed game's timeouts play on by themselves, but nobody is playing it).
IDLE_MS = 30 * 60 * 1000


def _clean_text(text: object, *, limit: int, code: str, what: str) -> str:
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

    The first to ask creates it -- same settings, same name, the asker as its host -- and the
    finished game announces it (``rematch_offered``, so every table offers to join); each
    player who accepts calls this too and takes the next seat.  Nobody else is seated: the
    seats of those who do not accept stay open (to anyone for a public game, by the new
    invite code for a private one).  Once the rematch has started, late acceptors get
    ``game_started``.  Locks the finished game's row, then the rematch's (always that order).
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
        _lobby_change(
            g, [("rematch_offered", {"game_id": new.pk, "by": user.pk})], at_ms=clock.now_ms()
        )
        return new
    new = _lock(existing)
    if _seat_of(new, user) is not None:
        return new
    _require_lobby(new)
    _take_next_seat(new, user)
    return new


def _chat_sender_seat(game_id: int, user: AbstractBaseUser, invite_code: str | None) -> Seat | None:
    from games import selectors

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
    """End a game in progress without a result, its state kept.  Caller holds the lock."""
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
                importlib.import_module("games.tasks").schedule_bots(g.pk, version, moves)

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
    idle_ms: int = IDLE_MS,
    connected: Callable[[list[int]], Iterable[int]] | None = None,
) -> int:
    """End as abandoned every game in progress nobody is playing; the number ended.

    A game is idle when no player has acted for ``idle_ms`` and none of its players is
    connected: ``connected(ids)`` returns those of the given games that have a player's socket
    open (the live layer knows; this layer does not).  Its state is kept.  One transaction per
    game, each re-checked under the game's row lock, like ``game_sweep``.  The periodic sweep
    runs it (games.tasks).
    """
    at = clock.from_datetime(now) if now is not None else clock.now_ms()
    cutoff = clock.to_datetime(at - idle_ms)
    candidates = list(
        Game.objects.filter(status=Game.Status.PLAYING, started_at__lte=cutoff).values_list(
            "pk", flat=True
        )
    )
    if candidates and connected is not None:
        keep = set(connected(candidates))
        candidates = [pk for pk in candidates if pk not in keep]
    ended = 0
    for pk in candidates:
        try:
            with transaction.atomic():
                g = (
                    Game.objects.select_for_update(skip_locked=True)
                    .filter(pk=pk, status=Game.Status.PLAYING)
                    .first()
                )
                if g is None or clock.to_datetime(_last_player_action_ms(g)) > cutoff:
                    continue
                _abandon(g, reason="idle", at=at, data={"idle_ms": idle_ms})
                ended += 1
        except Exception:  # one broken game must not stop the others
            logger.exception("idle check failed for game %s", pk)
    return ended
