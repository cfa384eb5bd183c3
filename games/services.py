"""The only writer of games (docs/SERVICES.md is the contract; keep both true).

Every public function here follows one shape, after Zulip's ``check_* / do_* / notify_*``:

1. **lock** -- open a transaction and ``SELECT … FOR UPDATE`` the game row (``_lock``).  On
   SQLite, where that is a no-op, the IMMEDIATE transaction mode (settings) takes the database
   write lock at ``BEGIN`` instead; either way two writers of one game never interleave.
2. **check** -- every refusal raises ``ServiceError`` *before* anything is written, so a refused
   request changes nothing (and the transaction would roll it back anyway).
3. **apply** -- ask the engine (``games.engine``), store the new snapshot, append the events
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
import secrets
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.db.models import Q

from games import clock
from games.engine import (
    Action,
    GameState,
    IllegalAction,
    Settings,
    advance,
    fire,
    new_game,
    pending_deadlines,
)
from games.engine import Event as EngineEvent
from games.engine import apply as engine_apply
from games.errors import ServiceError
from games.models import (
    DRAW_SECONDS,
    MAX_SEATS,
    MIN_SEATS,
    TARGET_SCORES,
    Event,
    Game,
    IdempotencyKey,
    Round,
    Seat,
)

__all__ = [
    "ActResult",
    "ServiceError",
    "game_abandon",
    "game_act",
    "game_create",
    "game_end_now",
    "game_fire_deadline",
    "game_join",
    "game_kick",
    "game_leave",
    "game_start",
    "game_sweep",
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


def _seat_of(game: Game, user: AbstractBaseUser) -> Seat | None:
    """The user's seat at ``game``, or None.  Caller holds the game's row lock."""
    if user is None or not getattr(user, "is_authenticated", False):
        return None
    return Seat.objects.filter(game=game, user=user).first()


def _append(
    game: Game,
    *,
    origin: str,
    type: str,
    data: dict[str, Any],
    version: int,
    round: Round | None = None,
    at_ms: int,
) -> Event:
    """Append one event with the next sequence number.  Caller holds the game's row lock
    (that is what makes ``seq`` gap-free and unique without retries)."""
    game.last_seq += 1
    return Event.objects.create(
        game=game,
        round=round,
        seq=game.last_seq,
        version=version,
        origin=origin,
        type=type,
        data=data,
        created_at=clock.to_datetime(at_ms),
    )


def _announce(game_id: int, version: int, deadlines: list[tuple[str, datetime]]) -> None:
    """Register the change's side effects to run after the commit, and only then.

    The live layer's modules are imported inside the callbacks: they are loaded lazily (and
    ``importlib`` looks in ``sys.modules`` first, so tests can stand in for them).  ``robust``
    callbacks log instead of raising: a broadcast that fails after the commit must not turn a
    successful, committed change into an error response -- clients resync by version.
    """

    def broadcast() -> None:
        importlib.import_module("games.broadcast").game_changed(game_id, version)

    def schedule() -> None:
        importlib.import_module("games.tasks").schedule_deadlines(game_id, deadlines)

    transaction.on_commit(broadcast, robust=True)
    if deadlines:
        transaction.on_commit(schedule, robust=True)


def _lobby_change(
    game: Game, events: Iterable[tuple[str, dict[str, Any]]], *, at_ms: int
) -> list[Event]:
    """Bump the version once, append the lobby events, save, announce.  Caller holds the lock."""
    game.version += 1
    rows = [
        _append(game, origin=Event.Origin.LOBBY, type=t, data=d, version=game.version, at_ms=at_ms)
        for t, d in events
    ]
    game.updated_at = clock.to_datetime(at_ms)
    game.save()
    _announce(game.pk, game.version, [])
    return rows


def _round_end_snapshot(
    old_state: GameState | None,
    new_state: GameState,
    snapshot: dict[str, Any],
    number: int,
    reveal: EngineEvent,
) -> dict[str, Any] | None:
    """The engine snapshot as round ``number``'s reveal left it (for ``Round.state``).

    Usually the new state itself.  A late timer or sweep can run the reveal *and* the next
    round's deal in one batch (the between-rounds pause was already over); then the state
    at the reveal is recomputed: the deadlines due by the reveal's instant, applied to the
    state before the batch (the engine is deterministic, so this is the state the batch went
    through).  None only if that is impossible -- a between-rounds pause of 0 ms (test-only
    timers) deals the next round at the reveal's own instant.
    """
    if new_state.round_number == number:
        return snapshot
    if old_state is None:  # pragma: no cover - a game's first change deals, never reveals
        return None
    at_reveal, _ = advance(old_state, reveal.data["at"])
    if at_reveal.round_number == number and at_reveal.round.reveal is not None:
        return at_reveal.to_json()
    return None


def _engine_change(
    game: Game,
    old_state: GameState | None,
    new_state: GameState,
    engine_events: Sequence[EngineEvent],
    *,
    at_ms: int,
    lobby_events: Iterable[tuple[str, dict[str, Any]]] = (),
) -> list[Event]:
    """Store what the engine produced: snapshot, rounds, scores, events, deadlines, version.

    Caller holds the game's row lock.  Rounds: a ``round_dealt`` event creates the ``Round``
    row (with its deck, which the event carries in full); a ``reveal`` stores the round's
    result and end snapshot (``_round_end_snapshot``).  Events are attached to the round
    current when they happened.
    The pending deadlines are handed to the timer queue on commit (stale timers are harmless:
    ``game_fire_deadline`` ignores them).
    """
    game.version += 1
    version = game.version
    rows: list[Event] = [
        _append(game, origin=Event.Origin.LOBBY, type=t, data=d, version=version, at_ms=at_ms)
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
                rnd = Round.objects.filter(game=game, number=current).first()
                if rnd is not None:
                    rounds[current] = rnd
        if ev.type == "reveal" and rnd is not None:
            rnd.result = ev.data
            rnd.ended_at = clock.to_datetime(ev.data.get("at", at_ms))
            rnd.state = _round_end_snapshot(old_state, new_state, snapshot, rnd.number, ev)
            rnd.save(update_fields=["result", "ended_at", "state"])
        rows.append(
            _append(
                game,
                origin=Event.Origin.ENGINE,
                type=ev.type,
                data=ev.data,
                version=version,
                round=rnd,
                at_ms=at_ms,
            )
        )

    old_scores = old_state.scores if old_state is not None else None
    if new_state.scores != old_scores:
        for seat in Seat.objects.filter(game=game):
            score = new_state.scores[seat.number]
            if seat.score != score:
                seat.score = score
                seat.save(update_fields=["score"])

    pending = pending_deadlines(new_state)
    game.state = snapshot
    game.deadlines = [d.to_json() for d in pending]
    game.next_deadline_at = clock.to_datetime(pending[0].at) if pending else None
    if new_state.status == "finished" and game.status == Game.Status.PLAYING:
        game.status = Game.Status.FINISHED
        game.winners = list(new_state.winners)
        game.ended_at = clock.to_datetime(at_ms)
    game.updated_at = clock.to_datetime(at_ms)
    game.save()
    # Every pending deadline, not only the new ones: the timer queue deduplicates by key
    # (games.tasks), and re-sending lets it recover a schedule it lost.
    _announce(game.pk, version, [(d.key, clock.to_datetime(d.at)) for d in pending])
    return rows


def _stop(game: Game) -> None:
    """Clear the timers of a game that ends outside the engine.  Caller holds the lock."""
    game.deadlines = []
    game.next_deadline_at = None


# ------------------------------------------------------------------------------------------
# Lobby
# ------------------------------------------------------------------------------------------
def _check_settings(target_score: object, draw_seconds: object, pile_draw: object) -> None:
    if isinstance(target_score, bool) or target_score not in TARGET_SCORES:
        raise ServiceError("bad_settings", "target_score must be 50, 100 or 150.")
    if draw_seconds is not None and (
        isinstance(draw_seconds, bool) or draw_seconds not in DRAW_SECONDS
    ):
        raise ServiceError("bad_settings", "draw_seconds must be 30, 45, 60 or null (no limit).")
    if not isinstance(pile_draw, bool):
        raise ServiceError("bad_settings", "pile_draw must be true or false.")


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
    target_score: int = 100,
    draw_seconds: int | None = None,
    pile_draw: bool = False,
    private: bool = False,
) -> Game:
    """Open a lobby with the host's three settings; the host takes seat 0.

    No lock is needed: nobody else can see the row before the commit.  The invite code is
    random; a collision (31^8 codes) is retried.
    """
    _check_settings(target_score, draw_seconds, pile_draw)
    if not isinstance(private, bool):
        raise ServiceError("bad_settings", "private must be true or false.")
    at = clock.now_ms()
    for attempt in range(5):
        try:
            with transaction.atomic():
                game = Game.objects.create(
                    host=host,
                    target_score=target_score,
                    draw_seconds=draw_seconds,
                    pile_draw=pile_draw,
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
    settings = {"target_score": target_score, "draw_seconds": draw_seconds, "pile_draw": pile_draw}
    _lobby_change(
        game,
        [
            ("game_created", {"settings": settings, "private": private}),
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
    taken = Seat.objects.filter(game=g).count()
    if taken >= MAX_SEATS:
        raise ServiceError("game_full", f"The game already has {MAX_SEATS} players.", status=409)
    at = clock.now_ms()
    seat = Seat.objects.create(game=g, user=user, number=taken, joined_at=clock.to_datetime(at))
    _lobby_change(g, [("seat_joined", _seat_event(seat))], at_ms=at)
    return g


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
) -> Game:
    """The host starts the game: 2 to 8 seats, a fresh secret seed, round 1 dealt now.

    ``seed`` and ``timers`` (the engine's timer lengths, e.g. ``{"memorise_ms": 0}``) exist for
    tests and the admin; the API never passes them.  Locks the game row.
    """
    g = _lock(game)
    if user is None or g.host_id != user.pk:
        raise ServiceError("not_host", "Only the host can start the game.", status=403)
    _require_lobby(g)
    seats = Seat.objects.filter(game=g).count()
    if not MIN_SEATS <= seats <= MAX_SEATS:
        raise ServiceError(
            "not_enough_players", f"A game needs {MIN_SEATS} to {MAX_SEATS} players.", status=409
        )
    at = clock.now_ms()
    g.seed = seed or secrets.token_hex(16)
    try:
        settings = Settings(
            target_score=g.target_score,
            draw_seconds=g.draw_seconds,
            pile_draw=g.pile_draw,
            **(timers or {}),
        )
        state, events = new_game(seats=seats, settings=settings, seed=g.seed, now=at)
    except (IllegalAction, TypeError) as exc:
        raise ServiceError("bad_settings", "The game's settings are invalid.") from exc
    g.status = Game.Status.PLAYING
    g.started_at = clock.to_datetime(at)
    _engine_change(
        g, None, state, events, at_ms=at, lobby_events=[("game_started", {"seats": seats})]
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

    The round under way is not scored ("scoring nothing more"); the lowest running total
    wins, ties all win (section 9).  Locks the game row.
    """
    g = _lock(game)
    if not getattr(user, "is_staff", False):
        raise ServiceError("not_staff", "Only an admin can end a game now.", status=403)
    if g.status != Game.Status.PLAYING:
        raise ServiceError("not_playing", f"The game is {g.status}, not playing.", status=409)
    at = clock.now_ms()
    scores = list(Seat.objects.filter(game=g).order_by("number").values_list("score", flat=True))
    low = min(scores)
    g.winners = [i for i, s in enumerate(scores) if s == low]
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
    return g


# ------------------------------------------------------------------------------------------
# Play
# ------------------------------------------------------------------------------------------
def _require_playing(g: Game) -> GameState:
    if g.status == Game.Status.LOBBY:
        raise ServiceError("not_started", "The game has not started yet.", status=409)
    if g.status != Game.Status.PLAYING:
        raise ServiceError("game_over", f"The game is {g.status}.", status=409)
    assert g.state is not None
    return GameState.from_json(g.state)


@transaction.atomic
def game_act(
    *,
    game: Game | int,
    user: AbstractBaseUser,
    action: dict[str, Any],
    expected_version: int | None,
    idempotency_key: str | None = None,
) -> ActResult:
    """Apply one player action: the single entry point for every move (REST and WebSocket).

    Under the game's row lock, in this order:

    1. an idempotency key already used by this user at this game returns the first result
       (``replayed=True``) and applies nothing -- checked before the version, because a retry
       carries the version the client had *before* its first attempt succeeded;
    2. the caller must hold a seat, the game must be playing, the action must parse;
    3. ``expected_version`` (if given) must equal ``Game.version``, else ``stale_version``
       with the current version in ``extra``;
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
    seat = _seat_of(g, user)
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
    old = _require_playing(g)
    try:
        act = Action.from_wire(action)
    except IllegalAction as exc:
        raise ServiceError.from_illegal(exc) from None
    if expected_version is not None and (
        isinstance(expected_version, bool) or expected_version != g.version
    ):
        raise ServiceError(
            "stale_version",
            f"The game is at version {g.version}; reload and try again.",
            status=409,
            extra={"version": g.version},
        )
    at = clock.now_ms()
    try:
        new, events = engine_apply(old, seat.number, act, at)
    except IllegalAction as exc:
        raise ServiceError.from_illegal(exc, version=g.version) from None
    rows = _engine_change(g, old, new, events, at_ms=at)
    if idempotency_key is not None:
        IdempotencyKey.objects.create(
            game=g, user=user, key=idempotency_key, fingerprint=action, version=g.version
        )
    return ActResult(version=g.version, events=rows)


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
    old = GameState.from_json(g.state)
    at = clock.now_ms()
    new, events = fire(old, key, at)
    if not events:
        return False
    _engine_change(g, old, new, events, at_ms=at)
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
        old = GameState.from_json(g.state)
        new, events = advance(old, at)
        if not events:
            return False
        _engine_change(g, old, new, events, at_ms=at)
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
