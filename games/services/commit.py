"""The one commit step every change of a game goes through, in named stages.

Every public function of the package (``games.services``) that changes a game runs these
stages, in this order, inside one ``transaction.atomic``:

1. **lock** (``_lock``) -- ``SELECT … FOR UPDATE`` the game row and re-read it.  On SQLite,
   where that is a no-op, the IMMEDIATE transaction mode (settings) takes the database write
   lock at ``BEGIN`` instead; either way two writers of one game never interleave.  Every write
   of a game's rows below -- seats, scores, a computer player's ``Seat.bot_memory`` included --
   happens while this lock is held.
2. **check** -- the caller's own refusals, each a ``ServiceError`` raised *before* anything is
   written, so a refused request changes nothing (the transaction would roll it back anyway).
3. **apply** -- the caller asks the game's engine (``_engine``: ``games.engines.engine_for(
   game.kind)``, the one interface of docs/ENGINE.md whatever the game) for the new state and
   its events.
4. **persist** -- ``_engine_change`` (a change of a game in play) or ``_lobby_change`` (a
   change around it): the new snapshot, the rounds, the scores, the sit-in count
   (``_sit_in``), the ``EngineCall``, the events with gap-free sequence numbers
   (``_event_row``), ``Game.version`` bumped exactly once.
5. **schedule** -- the pending deadlines that need a timer (``_timers``) and the computer
   players with something to do (``_bot_moves``), handed over on commit (``_announce``).
6. **broadcast on commit** -- ``_announce``: ``transaction.on_commit`` hands the change to the
   live layer, so nobody ever hears of a change that then rolled back (boardgame.io
   broadcasts before persisting; we do not).

Helpers whose names start with ``_`` assume the caller holds the game's row lock; their
docstrings say so.  Time always comes from ``games.clock.now_ms()`` so tests can control it.
"""

from __future__ import annotations

import importlib
import secrets
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from types import ModuleType
from typing import Any

from django.conf import settings as django_settings
from django.contrib.auth.base_user import AbstractBaseUser
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.models import (
    Case,
    DateTimeField,
    Model,
    OuterRef,
    Q,
    Subquery,
    Value,
    When,
)
from django.db.models.functions import Cast

from crisp_site import rows as instances
from games import clock, signals
from games.engines import engine_for
from games.engines.base import Event as EngineEvent
from games.errors import ServiceError
from games.models import EngineCall, Event, Game, Round, Seat
from games.services.prepared import ChangeWrite, Prepared, PreparedUpdate, fetch_together


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
# Stage 1: lock (and what a change reads under it)
# ------------------------------------------------------------------------------------------
def _lock(game: Game | int) -> Game:
    """Lock the game's row and return a fresh copy.  Call inside ``transaction.atomic``.

    Always re-reads: a ``Game`` instance handed in by a caller may be stale (read before the
    lock), and every check must see the row as it is under the lock.
    """
    pk = game.pk if isinstance(game, Game) else game
    try:
        (locked,) = _LOCK.fetch(pk)  # ``select_for_update().get(pk=pk)``, compiled once
    except (ValueError, TypeError):  # no row (nothing to unpack), or not a key at all
        raise ServiceError("not_found", "No such game.", status=404) from None
    return locked


def _with_round(games: Any) -> Any:
    """The game row with its latest round's key and number (``lock_round_id``,
    ``lock_round_number``): the round a change's events belong to, read with the lock
    instead of by a query of its own (``_round``; issue 25, session 14)."""
    latest = Round.objects.filter(game_id=OuterRef("pk")).order_by("-number")
    return games.annotate(
        lock_round_id=Subquery(latest.values("id")[:1]),
        lock_round_number=Subquery(latest.values("number")[:1]),
    )


#: The reads every change makes, compiled to SQL once per process (``prepared``: the ORM's
#: query building was most of their cost on a daphne process; bench/RESULTS.md, session 8).
_LOCK = Prepared(lambda pk: _with_round(Game.objects.select_for_update().filter(pk=pk)))
_LOCK_PLAYING = Prepared(
    lambda pk: _with_round(
        Game.objects.select_for_update().filter(pk=pk, status=Game.Status.PLAYING)
    )
)
_LOCK_PLAYING_SKIP = Prepared(
    lambda pk: _with_round(
        Game.objects.select_for_update(skip_locked=True).filter(pk=pk, status=Game.Status.PLAYING)
    )
)


def _lock_playing(pk: int, *, skip_locked: bool = False) -> Game | None:
    """Lock the row of game ``pk`` if it is playing and return a fresh copy; else None.

    The lock of the writers nobody waits for (a timer, the sweep, the idle reaper), which
    find nothing to refuse: a game gone or no longer playing is simply skipped.
    ``skip_locked``: a row someone else holds is skipped too (SQLite ignores the clause and
    serialises).  Call inside ``transaction.atomic``.
    """
    found = (_LOCK_PLAYING_SKIP if skip_locked else _LOCK_PLAYING).fetch(pk)
    return found[0] if found else None


def _lock_lobby(pk: int, *, skip_locked: bool = False) -> Game | None:
    """``_lock_playing`` for a game still in its lobby (the lobby reaper's lock)."""
    return (
        Game.objects.select_for_update(skip_locked=skip_locked)
        .filter(pk=pk, status=Game.Status.LOBBY)
        .first()
    )


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
    "turn_since",  # who is awaited already (``_persist_turns``): "newly awaited" needs it
    "turn_deadline",
    "user__id",
    "user__username",
    "user__display_name",
    "user__is_bot",
    "user__is_guest",  # a seat event says so (issue 24)
)


def _lock_with_seats(game: Game | int) -> tuple[Game, list[Seat]]:
    """``_lock`` and ``_seats`` in one round trip where the database allows it (PostgreSQL:
    one message, the seats read after the lock is taken; ``prepared.fetch_together``).
    Call inside ``transaction.atomic``."""
    pk = game.pk if isinstance(game, Game) else game
    try:
        found, seats = fetch_together((_LOCK, (pk,)), (_SEATS, (pk,)))
        (locked,) = found
    except (ValueError, TypeError):  # no row (nothing to unpack), or not a key at all
        raise ServiceError("not_found", "No such game.", status=404) from None
    for seat in seats:
        _SEAT_GAME.set_cached_value(seat, locked)
    return locked, seats


def _lock_playing_with_seats(pk: int) -> tuple[Game | None, list[Seat]]:
    """``_lock_playing`` and ``_seats`` in one round trip where the database allows it (a
    timer's reads, as ``_lock_with_seats`` is an action's): the seats are read after the lock
    is taken, in the same message, and are empty when no playing game was locked.  Call inside
    ``transaction.atomic``."""
    found, seats = fetch_together((_LOCK_PLAYING, (pk,)), (_SEATS, (pk,)))
    if not found:
        return None, []
    (locked,) = found
    for seat in seats:
        _SEAT_GAME.set_cached_value(seat, locked)
    return locked, seats


def _seats(game: Game) -> list[Seat]:
    """Every seat of the game with its user, in one query of only what a change needs
    (model instances of whole accounts were a tenth of a daphne's CPU per action: bench/
    RESULTS.md, "Scale", session 4).  Caller holds the game's row lock."""
    seats = _SEATS.fetch(game.pk)
    for seat in seats:  # ``seat.game`` is this instance (no query of its own)
        _SEAT_GAME.set_cached_value(seat, game)
    return seats


#: ``_seats``' read, compiled once. order_by: the model's ordering ("game", "number") would
#: join the game row to sort by it.
_SEATS = Prepared(
    lambda game_id: (
        Seat.objects.filter(game_id=game_id)
        .select_related("user")
        .only(*_SEAT_COLUMNS)
        .order_by("number")
    )
)
_SEAT_GAME = Seat._meta.get_field("game")
#: The current round's row, for the events' foreign key and a round's end: not the deck. One
#: row (unique): no ordering, the model's would join the game. Compiled once (``prepared``).
#: Read only when the lock's own (``_with_round``) is not the round asked for (``_round``).
_ROUND = Prepared(
    lambda game_id, number: (
        Round.objects.filter(game_id=game_id, number=number)
        .only("id", "game_id", "number")
        .order_by()
    ),
    keys=2,
)


#: ``Round.from_db(db, ["id", "game_id", "number"], values)``'s instance (``rows.loaded``).
_ROUND_ROW = instances.loaded(Round, ("id", "game_id", "number"))


def _round(game: Game, number: int) -> Round | None:
    """Round ``number`` of ``game`` (its key, game and number; the rest deferred, as
    ``_ROUND`` gives it), from what the lock read when that is the round, else read."""
    if getattr(game, "lock_round_number", None) == number and game.lock_round_id is not None:
        return _ROUND_ROW(game._state.db or "default", (game.lock_round_id, game.pk, number))
    found = _ROUND.fetch(game.pk, number)
    return found[0] if found else None


def _seat_of(game: Game, user: AbstractBaseUser) -> Seat | None:
    """The user's seat at ``game``, or None.  Caller holds the game's row lock."""
    if user is None or not getattr(user, "is_authenticated", False):
        return None
    return Seat.objects.filter(game=game, user=user).first()


def _seat_event(seat: Seat) -> dict[str, Any]:
    """A seat as its lobby events name it (seat number, account, shown name)."""
    user = seat.user
    name = getattr(user, "public_name", None) or user.get_username()
    return {
        "seat": seat.number,
        "user_id": user.pk,
        "name": name,
        "is_guest": user.is_guest,
    }


# ------------------------------------------------------------------------------------------
# The unsaved rows of a change, built positionally
# ------------------------------------------------------------------------------------------
# Why: an event, the engine call and the broadcast's copy of the game are built with
# ``Model.__init__``'s positional path (``from_db`` for the copy), one value per column in the
# model's order. The keyword path looks every field up by name, calls each missing column's
# default and sets a foreign key through its descriptor: ~8 us an event row and ~16 a game row
# when hot, several times that on the daphne's database thread between actions (bench/results/
# session19-engine.md).
def _columns(model: type[Model], expected: tuple[str, ...]) -> tuple[str, ...]:
    """``expected``, after checking that it is ``model``'s concrete columns in their order (a
    model whose columns change fails here, at import, not in a write)."""
    found = tuple(f.attname for f in model._meta.concrete_fields)
    if found != expected:  # pragma: no cover - a migration's reminder
        raise RuntimeError(f"{model.__name__}'s columns are {found}, not {expected}")
    return expected


_columns(
    Event,
    ("id", "game_id", "round_id", "seq", "version", "origin", "type", "data", "created_at"),
)
_EVENT_GAME = Event._meta.get_field("game")
#: ``Event(*values)``'s unsaved instance, and ``EngineCall``'s (``rows.unsaved``).
_NEW_EVENT = instances.unsaved(Event)
_NEW_CALL = instances.unsaved(EngineCall)
_EVENT_ROUND = Event._meta.get_field("round")
#: ``EngineCall``'s columns in the model's order, and the value of each an engine call leaves
#: out (the model's own defaults: constants, checked below).
_CALL_COLUMNS = tuple(f.attname for f in EngineCall._meta.concrete_fields)
_CALL_DEFAULTS = {f.attname: f.get_default() for f in EngineCall._meta.concrete_fields}
_CALL_PER_ROW = [
    f for f in EngineCall._meta.concrete_fields if f.has_default() and callable(f.default)
]
if _CALL_PER_ROW:  # pragma: no cover - a migration's reminder
    raise RuntimeError("an EngineCall column's default is made per row: build it by keyword")
#: What an engine call (``_engine_change``'s ``call``) may name: the columns of its own.
_CALL_FIELDS = frozenset(_CALL_COLUMNS) - {"id", "game_id", "version", "at"}
_CALL_GAME = EngineCall._meta.get_field("game")


def _call_row(game: Game, version: int, at_ms: int, call: dict[str, Any]) -> EngineCall:
    """``EngineCall(game=game, version=version, at=at_ms, **call)``, positionally; a ``call``
    naming anything else goes the keyword path (which refuses it as it always did)."""
    if not call.keys() <= _CALL_FIELDS:
        return EngineCall(game=game, version=version, at=at_ms, **call)
    values = {**_CALL_DEFAULTS, **call, "game_id": game.pk, "version": version, "at": at_ms}
    row = _NEW_CALL([values[column] for column in _CALL_COLUMNS])
    _CALL_GAME.set_cached_value(row, game)
    return row


#: The columns of the game row the broadcast's copy carries (``Committed.game``), in the
#: model's order (``Model.from_db`` takes them so); the rest are deferred, as in an ``.only()``.
_COMMITTED_COLUMNS = tuple(
    f.attname
    for f in Game._meta.concrete_fields
    if f.attname in {"id", "kind", "status", "version", "state", "winners"}
)


#: ``Game.from_db(db, _COMMITTED_COLUMNS, values)``'s instance (``rows.loaded``).
_COMMITTED_GAME = instances.loaded(Game, _COMMITTED_COLUMNS)


def _committed_game(game: Game, version: int, snapshot: dict[str, Any]) -> Game:
    """``Committed.game``: a copy of the row's columns a receiver's state is built from, at
    ``version`` (``Game.from_db``: the positional path)."""
    values = {
        "id": game.pk,
        "kind": game.kind,
        "status": game.status,
        "version": version,
        "state": snapshot,
        "winners": list(game.winners),
    }
    return _COMMITTED_GAME(
        game._state.db or "default", [values[column] for column in _COMMITTED_COLUMNS]
    )


# ------------------------------------------------------------------------------------------
# Stage 4: persist (snapshot, rounds, scores, events, version)
# ------------------------------------------------------------------------------------------
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
    statement (``_WRITE_CHANGE`` or ``bulk_create``; one round trip instead of one per
    event).  Caller holds the game's row lock (that is what makes ``seq`` gap-free and unique
    without retries)."""
    game.last_seq += 1
    # ``Event(game=game, round=round, ...)``, built positionally (the columns' order is checked
    # at import, ``_columns``); the relations cached as the keyword path's descriptors cache them.
    row = _NEW_EVENT(
        (
            None,
            game.pk,
            None if round is None else round.pk,
            game.last_seq,
            version,
            origin,
            type,
            data,
            clock.to_datetime(at_ms),
        )
    )
    _EVENT_GAME.set_cached_value(row, game)
    _EVENT_ROUND.set_cached_value(row, round)
    return row


def _lobby_change(
    game: Game, events: Iterable[tuple[str, dict[str, Any]]], *, at_ms: int
) -> list[Event]:
    """Bump the version once, append the lobby events, save, announce.  Caller holds the lock.

    Around a game in play (a person leaves for good, "I'm back", a rename) the seats' "your
    move" columns are brought up to date too (``_persist_turns``): a seat a computer now sits
    in for leaves its person's list at once, and one taken back while it is its move enters
    it -- without waiting for the game's next move."""
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
    if game.status == Game.Status.PLAYING and game.state is not None:
        engine = _engine(game)
        state = engine.GameState.from_json(game.state)
        _announce_turns(game, _persist_turns(game, engine, state, at_ms, _seats(game)))
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
    it); a change that finishes the game sends ``signals.game_finished`` (its record, ratings).
    ``seats``: every seat of the game with its user, when the caller has already read them
    (``game_act``), so the sit-in count and the computer players need no query of their own.
    The engine call, the events, the row and the seats' turns are written together
    (``_WRITE_CHANGE``: one statement on PostgreSQL): each query is a round trip on a daphne
    process's single database thread (bench/RESULTS.md, "Scale", sessions 4 and 14).
    ``columns_only``: the caller changed nothing of the row itself (an action, a timer), so
    only the columns written here are saved (``_CHANGE_COLUMNS``), not the whole row, and
    everything in one write (``_WRITE_CHANGE``); otherwise through the ORM, one by one.
    """
    engine = _engine(game)
    game.version += 1
    version = game.version
    # A timed-out seat's new count rides in the seats' UPDATE of ``_WRITE_CHANGE`` (one
    # statement fewer per timer that times a seat out) when that write runs and has the seats.
    counts: dict[int, int] | None = {} if columns_only and seats is not None else None
    lobby_events = [*lobby_events, *_sit_in(game, engine, engine_events, actor, seats, counts)]
    call_row = _call_row(game, version, at_ms, call) if call is not None else None
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
                rnd = _round(game, current)
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
    if seats is None:
        # One query for every seat with its user: the turns below, the computer players and
        # the broadcast's seat map all need them (a change whose caller read none).
        seats = _seats(game)
    turns, turn_writes = _turns(game, engine, new_state, at_ms, seats)
    if columns_only:
        # The engine call, the events, the row's columns and the seats' turns: one statement
        # on PostgreSQL, its SQL written once (``ChangeWrite``).
        _WRITE_CHANGE.write(game, call_row, rows, _seat_writes(seats, turn_writes, counts))
    else:
        if call_row is not None:
            call_row.save()
        Event.objects.bulk_create(rows)
        game.save()
        _write_turns(turn_writes)
    if game.status == Game.Status.FINISHED:
        signals.game_finished.send(sender=Game, game=game)
    committed = Committed(
        game=_committed_game(game, version, snapshot),
        state=new_state,
        events=rows,
        seat_users={seat.number: seat.user_id for seat in seats} if seats is not None else None,
    )
    # Every pending deadline, not only the new ones: the timer queue deduplicates by key
    # (games.timers), and re-sending lets it recover a schedule it lost.
    _announce(
        game.pk,
        version,
        [(d.key, clock.to_datetime(d.at)) for d in timers],
        _bot_moves(game, engine, new_state, at_ms, seats),
        committed,
    )
    _announce_turns(game, turns)
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
_SAVE_CHANGE = PreparedUpdate(Game, _CHANGE_COLUMNS)
#: The seats' "your move" columns (``_turns``), and the timeouts-in-a-row count (``_sit_in``;
#: None keeps the seat's count).
_SEAT_WRITE_COLUMNS = ("turn_since", "turn_deadline", "missed")
#: Every write of an action's or a timer's change (``columns_only``) in one go.
_WRITE_CHANGE = ChangeWrite(
    EngineCall, Event, _SAVE_CHANGE, Seat, _SEAT_WRITE_COLUMNS, keep_when_none=("missed",)
)


def _seat_writes(
    seats: list[Seat], turns: TurnWrites, counts: dict[int, int] | None
) -> dict[int, tuple[Any, ...]]:
    """``_WRITE_CHANGE``'s seat rows: each seat whose turn (``_turns``) or timeout count
    (``_sit_in``'s ``counts``) changed, with its turn columns as they now are (a seat written
    for its count keeps its turn: ``_turns`` updated the seats in place) and its new count,
    or None to keep it (the actor's reset, a sit-in, are saved by ``_sit_in`` itself)."""
    counts = counts or {}
    by_pk = {seat.pk: seat for seat in seats}
    return {
        pk: (*turns.get(pk, (by_pk[pk].turn_since, by_pk[pk].turn_deadline)), counts.get(pk))
        for pk in [*turns, *(pk for pk in counts if pk not in turns)]
    }


# ------------------------------------------------------------------------------------------
# Stage 5: schedule (the timers a change leaves pending)
# ------------------------------------------------------------------------------------------
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

    Each silent deadline's state is advanced on from the previous one's rather than from
    ``state`` again (a late ``advance`` gives the same state as a punctual one: every deadline
    takes effect at its own instant, docs/ENGINE.md): Crisp leaves two or three windows
    pending after a discard, which cost a clone and every earlier window's closing again
    each (issue 25, session 21). Pending deadlines out of order start from ``state`` again.
    """
    silent = _silent(engine)
    timers = [d for d in pending if d.kind not in silent]
    keys = {d.key for d in timers}
    ahead, upto = state, None
    for d in pending:
        if d.kind in silent:
            if upto is not None and d.at < upto:
                ahead = state
            ahead, _ = engine.advance(ahead, d.at)
            upto = d.at
            for later in engine.pending_deadlines(ahead):
                if later.kind not in silent and later.key not in keys:
                    timers.append(later)
                    keys.add(later.key)
    timers.sort(key=lambda d: d.at)
    return timers


def _stop(game: Game) -> None:
    """Clear the timers of a game that ends outside the engine.  Caller holds the lock.

    Its seats are awaited no more either (``Seat.turn_since``): a game stopped by staff or
    abandoned leaves nobody's "your move" list a stale row (the list also filters on the
    game's status; this keeps the columns true).  The people who were awaited are told their
    list changed, on commit (``_announce_turns``) -- but nobody is told it is their move."""
    game.deadlines = []
    game.next_deadline_at = None
    awaited = list(
        Seat.objects.filter(game=game, turn_since__isnull=False).values_list("user_id", flat=True)
    )
    if awaited:
        Seat.objects.filter(game=game, turn_since__isnull=False).update(
            turn_since=None, turn_deadline=None
        )
        _announce_turns(game, Turns(newly=[], changed=awaited, deadline=None))


# ------------------------------------------------------------------------------------------
# Part of stage 4 for every change in play: who is awaited now (issue 26, "your move")
# ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Turns:
    """What a change did to the people awaited at its game (``_persist_turns``).

    ``newly``: the people whose move it became (``signals.your_move``); ``changed``: everyone
    whose "your move" list changed (newly awaited, awaited no more, or a new deadline), whose
    header counts, sockets and long polls are woken (``broadcast.turns_changed``).
    """

    newly: list[int]
    changed: list[int]
    deadline: datetime | None


def _is_person(seat: Seat) -> bool:
    """A seat its person plays now: not a computer player's, none sitting in, not left."""
    return not getattr(seat.user, "is_bot", False) and not seat.sitting_in and seat.left_at is None


def _persist_turns(
    game: Game, engine: ModuleType, state: Any, at_ms: int, seats: list[Seat]
) -> Turns:
    """``_turns``, written at once (a change around a game in play: ``_lobby_change``)."""
    turns, writes = _turns(game, engine, state, at_ms, seats)
    _write_turns(writes)
    return turns


#: Seat key -> its new (``turn_since``, ``turn_deadline``).
TurnWrites = dict[int, tuple[datetime | None, datetime | None]]


def _turns(
    game: Game, engine: ModuleType, state: Any, at_ms: int, seats: list[Seat]
) -> tuple[Turns, TurnWrites]:
    """Who the table awaits now, and the seats' columns that say so (``turn_since``,
    ``turn_deadline``) to write: the changed seats only.

    "Awaited" is the shared turn model every engine has (``awaiting(state, now)["seats"]``,
    docs/ENGINE.md), at the change's instant, for the seats a person plays (``_is_person``).
    "Newly" is compared with what the seats held before this change -- the same columns the
    previous change wrote under the same lock -- so a seat awaited before and after (a look,
    a draw before the discard, a Cribbage "go" that leaves the same player on) is not told
    again.  Every changed seat is written in ONE ``UPDATE`` (``CASE`` per seat), and by an
    action or a timer in the same statement as the rest of its change (``ChangeWrite``): an
    action's round trips are pinned (tests/games/test_query_budget.py).  Caller holds the
    lock and has read ``seats`` under it (with ``_SEAT_COLUMNS``); they are updated in place.
    """
    if state.status == "playing" and game.status == Game.Status.PLAYING:
        wait = engine.awaiting(state, at_ms)
    else:
        wait = {"seats": [], "deadline": None}
    awaited = set(wait["seats"])
    deadline = clock.to_datetime(wait["deadline"]) if wait["deadline"] is not None else None
    since = clock.to_datetime(at_ms)
    newly: list[int] = []
    changed: list[int] = []
    writes: TurnWrites = {}
    for seat in seats:
        if seat.number in awaited and _is_person(seat):
            if seat.turn_since is None:
                newly.append(seat.user_id)
                writes[seat.pk] = (since, deadline)
            elif seat.turn_deadline != deadline:
                writes[seat.pk] = (seat.turn_since, deadline)
        elif seat.turn_since is not None:
            writes[seat.pk] = (None, None)
        else:
            continue
        if seat.pk in writes:
            seat.turn_since, seat.turn_deadline = writes[seat.pk]
            changed.append(seat.user_id)
    return Turns(newly=newly, changed=changed, deadline=deadline), writes


def _write_turns(writes: TurnWrites) -> None:
    """The seats' turn columns of ``_turns`` in one ORM ``UPDATE`` (a change off the hot path)."""
    if not writes:
        return

    # Cast: to PostgreSQL a CASE of bare NULLs is ``text``, which no timestamp takes.
    def at(value: datetime | None) -> Cast:
        return Cast(Value(value), output_field=DateTimeField())

    Seat.objects.filter(pk__in=writes).update(
        turn_since=Case(
            *(When(pk=pk, then=at(w[0])) for pk, w in writes.items()), default=at(None)
        ),
        turn_deadline=Case(
            *(When(pk=pk, then=at(w[1])) for pk, w in writes.items()), default=at(None)
        ),
    )


def _announce_turns(game: Game, turns: Turns | None) -> None:
    """On commit, and only then: ``signals.your_move`` for the people newly awaited, and a
    wake-up for everyone whose "your move" list changed (``broadcast.turns_changed``: their
    header count's socket and their long polls).  A rolled-back change tells nobody."""
    if turns is None or not turns.changed:
        return

    def your_move() -> None:
        signals.your_move.send(
            sender=Game, game=game, user_ids=list(turns.newly), deadline=turns.deadline
        )

    def notify() -> None:
        importlib.import_module("games.broadcast").turns_changed(list(turns.changed))

    # ``transaction.on_commit``'s own step, the connection looked up once (``_announce``).
    on_commit = connections[DEFAULT_DB_ALIAS].on_commit
    if turns.newly:
        on_commit(your_move, robust=True)
    on_commit(notify, robust=True)


# ------------------------------------------------------------------------------------------
# Part of stages 4 and 5 for every change in play: the sit-in count and the computer players
# to wake.  Here, not in ``bots``, because every engine change runs them (``_engine_change``).
# ------------------------------------------------------------------------------------------
#: The level that sits in for an absent person.
SIT_IN_LEVEL = "medium"
#: A person's seat gets a computer player after this many timeouts in a row.
SIT_IN_AFTER_TIMEOUTS = 2


def _seats_timed_out(engine: ModuleType, events: Sequence[EngineEvent]) -> set[int]:
    """Seats the server moved for on a timeout in these events.  A convention of every engine
    (docs/ENGINE.md): such an event carries the ``seat`` and ``"timeout": true``, or is of a
    type the engine declares a timeout by itself (``TIMEOUT_EVENTS``)."""
    out: set[int] = set()
    for ev in events:
        seat = ev.data.get("seat")
        if isinstance(seat, int) and (
            ev.data.get("timeout") is True or ev.type in engine.TIMEOUT_EVENTS
        ):
            out.add(seat)
    return out


def _sit_in(
    game: Game,
    engine: ModuleType,
    events: Sequence[EngineEvent],
    actor: Seat | None,
    seats: list[Seat] | None = None,
    counts: dict[int, int] | None = None,
) -> list[tuple[str, dict[str, Any]]]:
    """Count timeouts in a row per seat; a person's seat that reaches
    ``SIT_IN_AFTER_TIMEOUTS`` is played by a computer until its player is back.  Returns the
    lobby events to record.  ``seats``: the game's seats (with users) if already read; they
    are updated in place.  ``counts``: when given, a seat whose only change is its count is
    not saved here but put there (seat key -> count), for the caller's one write of the
    change (``_seat_writes``).  Caller holds the game's row lock."""
    out: list[tuple[str, dict[str, Any]]] = []
    timed_out = _seats_timed_out(engine, events)
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
        if counts is not None and fields == ["missed"]:
            counts[seat.pk] = seat.missed
        else:
            seat.save(update_fields=fields)
    return out


def _bot_moves(
    game: Game, engine: ModuleType, state: Any, at_ms: int, seats: list[Seat] | None = None
) -> list[tuple[int, int]]:
    """``(seat, countdown ms)`` for every seat a computer plays that has something to do in a
    moment: the live layer wakes each one after its think time (``games.scheduling.schedule_bots``).
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
    if not numbers:  # no computer player: nobody to wake (and no deadline to look at)
        return []
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


# ------------------------------------------------------------------------------------------
# Stages 5 and 6 on commit: timers, computer players and the broadcast, only once committed
# ------------------------------------------------------------------------------------------
def _announce(
    game_id: int,
    version: int,
    deadlines: list[tuple[str, datetime]],
    bot_moves: list[tuple[int, int]] | None = None,
    change: Committed | None = None,
) -> None:
    """Register the change's side effects to run after the commit, and only then.

    The live layer's two modules this hands over to (``games.broadcast``, ``games.scheduling``)
    are looked up by name when the change commits: ``importlib`` looks in ``sys.modules``
    first, so tests can stand in for them; neither imports the service layer back
    (``tests/games/test_import_graph.py``).  ``robust``
    callbacks log instead of raising: a broadcast that fails after the commit must not turn a
    successful, committed change into an error response -- clients resync by version.
    ``change``: what was committed, so the broadcast need not read it back.

    ``deadlines`` are every timer the change leaves pending, and scheduling makes the game's
    timers exactly these, as of ``version`` (``games.scheduling.schedule_deadlines``): so an
    engine's change (``change`` given) is scheduled even with none left -- a key it resolved,
    a finished game, leaves no entry behind to be fired for nothing.  A lobby change (no
    ``change``: ``_lobby_change``) leaves the engine's deadlines as they were and schedules
    nothing; a game stopped by one keeps its entries, which fire as no-ops (not playing).
    """

    def broadcast() -> None:
        importlib.import_module("games.broadcast").game_changed(game_id, version, change)

    def schedule() -> None:
        importlib.import_module("games.scheduling").schedule_deadlines(
            game_id, deadlines, version=version
        )

    def wake_bots() -> None:
        importlib.import_module("games.scheduling").schedule_bots(game_id, version, bot_moves or [])

    # ``transaction.on_commit(f, robust=True)`` is ``connections["default"].on_commit(f, True)``;
    # the look-up (a thread-local's, ~2 us) made once, not per callback (issue 25, session 21).
    on_commit = connections[DEFAULT_DB_ALIAS].on_commit
    on_commit(broadcast, robust=True)
    if deadlines or change is not None:
        on_commit(schedule, robust=True)
    if bot_moves:
        on_commit(wake_bots, robust=True)
