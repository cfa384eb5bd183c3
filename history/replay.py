"""Replays of finished games: every version of a game as a frame, in full or from one seat.

The platform stores ``Game.state`` for the current version only.  Every earlier state is
rebuilt exactly by replaying the engine calls the service layer logged (``EngineCall``: the
``new_game`` with the game's seed and full settings, then each ``apply``/``fire``/``advance`` at
its instant) -- the engine is deterministic, and the rebuilt last state is checked against the
stored one before anything is served.

A frame is what one receiver was (or, for the full view, may now be) shown at one version:

* **a seat's point of view** (``seat=N``; ``None`` is a spectator): the version's events through
  the engine's ``event_view`` for that seat -- private forms only at their own version, which
  is exactly the "shown once" rule of ``games.selectors`` (a look appears in its frame and is
  gone from the next) -- and the engine's ``view`` of that version's state for that seat.  No
  second copy of the rules: redaction is the engine's, as live.
* **full** (``seat="full"``): the kind's ``replay`` hook (``full_view`` / ``full_event_view``,
  docs/ENGINE.md "Optional hooks for history") -- everything the rules let a finished game show;
  what stays hidden for good (a deck order, a stock) stays hidden.  A kind without the hook gets
  the spectator view instead, and the answer says so (``view: "spectator"``).

  The hook speaks for rounds that reached their end (the engine's ``ROUND_END_EVENT``: Crisp's
  reveal, a hand's ``hand_over``), when the rules turn the cards face up.  A game stopped outside
  the engine (abandoned, or ended by an admin) stops in the middle of a round that never got
  there: nothing of that round was ever revealed, so from its ``round_dealt`` on the full view
  is the spectator's (``revealed_until`` finds that point; ``full_event`` / ``full_state`` are
  the one place that applies it, for replays, exports and their notation alike).

Who may open which view (``seat_views``): the full and spectator views, anyone who may open the
replay; a seat's view, that seat's own player and staff only (``not_your_seat``, 403).  A seat's
view shows what that seat alone was shown -- Cribbage's six dealt cards and the two it laid away
(which no one else ever learns, C30c), a look in a round abandoned before its reveal -- so it is
nobody else's to open.

A game in progress has no replay (its live view is all there is): ``game_in_progress`` (409).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

from django.contrib.auth.base_user import AbstractBaseUser
from django.utils.translation import gettext, gettext_noop

from games import clock
from games.engines import engine_for
from games.engines.base import Event as EngineEvent
from games.errors import ServiceError
from games.models import EngineCall, Event, Game, Seat
from games.selectors import event_frame, event_payload, stopped_view
from history.hooks import hook

__all__ = [
    "FULL",
    "Viewer",
    "check_seat_view",
    "describe_events",
    "full_event",
    "full_state",
    "game_for_replay",
    "replay_frames",
    "replay_states",
    "revealed_until",
    "seat_views",
]

logger = logging.getLogger(__name__)

FULL = "full"
#: Who a frame is for: a seat number, None (a spectator) or ``"full"``.
Viewer = int | None | Literal["full"]

_OVER = (Game.Status.FINISHED, Game.Status.ABANDONED)
_STOPPED = {"game_ended": Game.Status.FINISHED, "game_abandoned": Game.Status.ABANDONED}


def game_for_replay(*, game_id: int, user: AbstractBaseUser | None) -> Game:
    """The game if ``user`` may open its replay: any signed-in user for a public game, only
    its players and staff for a private one (``not_found`` otherwise, as for live games; an
    invite code is not enough once the game is over).  Refused while it is played."""
    game = Game.objects.filter(pk=game_id).first()
    if game is None:
        raise ServiceError("not_found", "No such game.", status=404)
    if game.private and not getattr(user, "is_staff", False):
        pk = getattr(user, "pk", None)
        if pk is None or not Seat.objects.filter(game=game, user_id=pk).exists():
            raise ServiceError("not_found", "No such game.", status=404)
    if game.status not in _OVER:
        raise ServiceError(
            "game_in_progress",
            "A game can be replayed once it is over; until then its live view is all there is.",
            status=409,
        )
    return game


def seat_views(game: Game, user: AbstractBaseUser | None) -> list[int]:
    """The seats whose point-of-view replay ``user`` may open: every seat for staff, their own
    seat for a player, none for anyone else (see the module docstring)."""
    seats = Seat.objects.filter(game=game).values_list("number", "user_id")
    if getattr(user, "is_staff", False):
        return sorted(n for n, _u in seats)
    pk = getattr(user, "pk", None)
    return sorted(n for n, u in seats if pk is not None and u == pk)


def check_seat_view(game: Game, user: AbstractBaseUser | None, seat: int) -> None:
    """Refuse a seat's view to anyone but its player and staff (``not_your_seat``, 403)."""
    if seat not in seat_views(game, user):
        raise ServiceError(
            "not_your_seat",
            "A seat's view shows what only that seat saw: it is for its player (and staff). "
            "Everyone may open the full and spectator views.",
            status=403,
        )


def revealed_until(kind: str, events: Iterable[tuple[int, str]]) -> int | None:
    """The ``seq`` from which nothing was ever revealed, given a game's engine events as
    ``(seq, type)`` in order: the ``round_dealt`` of a round with no ``ROUND_END_EVENT`` after
    it (a game abandoned or ended by an admin mid-round), else None (every round reached its
    end, when its cards turned face up).

    >>> revealed_until("crisp", [(1, "round_dealt"), (9, "reveal"), (12, "round_dealt")])
    12
    >>> revealed_until("cribbage", [(1, "round_dealt"), (9, "hand_over"), (10, "game_over")])
    """
    end = engine_for(kind).ROUND_END_EVENT
    opened = None
    for seq, typ in events:
        if typ == "round_dealt":
            opened = seq
        elif typ == end:
            opened = None
    return opened


def full_event(kind: str, event: EngineEvent, *, revealed: bool = True) -> dict[str, Any]:
    """An engine event in the full after-game form (``{type, data}``): the kind's
    ``full_event_view`` in a round that reached its end, else (``revealed=False``, or a kind
    without the hook) the spectator's form.  Replays, exports and notation all call this."""
    full = hook(kind, "replay")
    if full is None or not revealed:
        return engine_for(kind).event_view(event, None)
    return full.full_event_view(event)


def full_state(kind: str, state: Any, now: int, *, revealed: bool = True) -> dict[str, Any]:
    """An engine state in the full view: the kind's ``full_view`` in a round that reached its
    end, else (``revealed=False``, or a kind without the hook) the spectator's view."""
    full = hook(kind, "replay")
    if full is None or not revealed:
        return engine_for(kind).view(state, None, now)
    return full.full_view(state, now)


def _unrevealed(game: Game) -> tuple[int, int] | None:
    """``(seq, version)`` of the ``round_dealt`` from which nothing was revealed, or None."""
    rows = list(
        Event.objects.filter(game=game, origin=Event.Origin.ENGINE)
        .order_by("seq")
        .values_list("seq", "type", "version")
    )
    seq = revealed_until(game.kind, ((s, t) for s, t, _v in rows))
    if seq is None:
        return None
    return seq, next(v for s, _t, v in rows if s == seq)


@dataclass(frozen=True)
class VersionState:
    """The engine state as a version left it (None before the deal) and that version's instant."""

    version: int
    at: int | None
    state: Any
    call: EngineCall | None


def replay_states(game: Game) -> Iterator[VersionState]:
    """Every version's engine state, rebuilt from the logged engine calls, in order.

    Raises ``replay_unavailable`` (409) for a game whose calls were not logged (started before
    replays existed) and ``replay_mismatch`` (500, logged) if the rebuilt last state is not the
    stored one -- a replay is exact or it is not served.
    """
    engine = engine_for(game.kind)
    calls = {c.version: c for c in EngineCall.objects.filter(game=game).order_by("version")}
    engine_versions = set(
        Event.objects.filter(game=game, origin=Event.Origin.ENGINE)
        .values_list("version", flat=True)
        .distinct()
    )
    if not engine_versions <= set(calls) or (game.state is not None and not calls):
        raise ServiceError(
            "replay_unavailable",
            "This game was played before replays were recorded; it has no replay.",
            status=409,
        )
    state = None
    for version in range(1, game.version + 1):
        call = calls.get(version)
        if call is not None:
            state = _run(engine, game, state, call)
        yield VersionState(version, call.at if call is not None else None, state, call)
    if (state.to_json() if state is not None else None) != game.state:
        logger.error("replay of game %s does not reproduce its stored state", game.pk)
        raise ServiceError("replay_mismatch", "This game's replay is damaged.", status=500)


def _run(engine: Any, game: Game, state: Any, call: EngineCall) -> Any:
    """One logged engine call applied to ``state``: the next version's state."""
    if call.call == EngineCall.Call.NEW_GAME:
        settings = engine.Settings.from_json(call.settings)
        new, _ = engine.new_game(
            seats=call.seats, settings=settings, seed=game.seed, now=call.at, decks=call.decks
        )
    elif call.call == EngineCall.Call.APPLY:
        new, _ = engine.apply(state, call.seat, engine.Action.from_wire(call.action), call.at)
    elif call.call == EngineCall.Call.FIRE:
        new, _ = engine.fire(state, call.key, call.at)
    else:
        new, _ = engine.advance(state, call.at)
    return new


def replay_frames(
    *, game: Game, viewer: Viewer, start: int = 1, limit: int | None = None
) -> tuple[str, list[dict[str, Any]]]:
    """The frames of versions ``start`` .. ``start + limit - 1`` for ``viewer``, and which view
    was served (``"full"``, ``"seat"`` or ``"spectator"``).

    A frame: ``{version, at, status, events, state}`` -- ``events`` the version's events in
    the viewer's form (``{seq, version, type, data, at}``, as the live log), ``state`` the
    engine's view of the state that version left (None in the lobby); for a seat, where its
    private forms differ from the public ones, ``events_later``: the version's events as its
    log showed them once the game had moved on (the public forms; a look is shown once).
    """
    engine = engine_for(game.kind)
    full = viewer == FULL and hook(game.kind, "replay") is not None
    served = "full" if full else ("seat" if isinstance(viewer, int) else "spectator")
    seat = viewer if isinstance(viewer, int) else None
    # From here on nothing was revealed (a round the game stopped in): the full view is the
    # spectator's there (version ``game.version + 1``: nowhere).
    hidden = _unrevealed(game) if full else None
    hidden_seq, hidden_version = hidden if hidden is not None else (None, game.version + 1)
    end = game.version if limit is None else min(game.version, start + limit - 1)
    rows: dict[int, list[Event]] = {}
    for e in Event.objects.filter(game=game, version__gte=1, version__lte=end).order_by("seq"):
        rows.setdefault(e.version, []).append(e)
    status = Game.Status.LOBBY.value
    winners: list[int] = []
    stopped = False
    frames: list[dict[str, Any]] = []
    for vs in replay_states(game):
        events = rows.get(vs.version, [])
        for e in events:
            if e.origin == Event.Origin.LOBBY and e.type == "game_started":
                status = Game.Status.PLAYING.value
            if e.origin == Event.Origin.LOBBY and e.type in _STOPPED:
                status, stopped = _STOPPED[e.type].value, True
                winners = list(e.data.get("winners") or [])
        if vs.state is not None and vs.state.status == "finished" and not stopped:
            status, winners = Game.Status.FINISHED.value, list(vs.state.winners)
        if not start <= vs.version <= end:
            continue  # replayed all the same: the last state is checked against the stored one
        at = vs.at if vs.at is not None else _first_at(events)
        state = None
        if vs.state is not None:
            if full:
                revealed = vs.version < hidden_version
                state = full_state(game.kind, vs.state, at, revealed=revealed)
            else:
                state = engine.view(vs.state, seat, at)
            if stopped:
                state = stopped_view(engine, state, status, winners)
        shown = [_event(e, game.kind, seat, full=full, hidden_seq=hidden_seq) for e in events]
        frame = {"version": vs.version, "at": at, "status": status, "events": shown, "state": state}
        if seat is not None:
            # What this seat's log showed of this version afterwards: the public forms (a look
            # is shown once); given only where it differs from the moment itself.
            later = [_event(e, game.kind, None) for e in events]
            if later != shown:
                frame["events_later"] = later
        frames.append(frame)
    return served, frames


def _first_at(events: list[Event]) -> int | None:
    return clock.from_datetime(events[0].created_at) if events else None


def _event(
    event: Event,
    kind: str,
    seat: int | None,
    *,
    full: bool = False,
    hidden_seq: int | None = None,
) -> dict[str, Any]:
    """One stored event in the frame's form: the full form, or the seat's (exactly what the
    seat received live: ``games.selectors.event_payload``)."""
    if not full or event.origin != Event.Origin.ENGINE:
        return event_payload(event=event, seat=seat, kind=kind)
    revealed = hidden_seq is None or event.seq < hidden_seq
    shown = full_event(kind, EngineEvent(event.type, event.data), revealed=revealed)
    return event_frame(event, shown["data"])


#: Lobby events in words (they are the platform's own, the same for every kind).
_LOBBY_WORDS = {
    "game_started": gettext_noop("The game starts"),
    "game_ended": gettext_noop("An admin ends the game on the scores so far"),
    "game_abandoned": gettext_noop("The game is abandoned"),
}


def describe_events(kind: str, events: list[dict[str, Any]], names: list[str]) -> list[str]:
    """Each event of a frame in public words, in the current language: the kind's
    ``notation.describe`` hook where it has one, else the event's type and public fields.
    Events not worth a line (timer bookkeeping) are left out by the hook."""
    notation = hook(kind, "notation")
    describe = getattr(notation, "describe", None) if notation is not None else None
    lines = []
    for e in events:
        if e["type"] in _LOBBY_WORDS:
            lines.append(gettext(_LOBBY_WORDS[e["type"]]))
            continue
        if e["type"] in ("game_created", "seat_joined", "seat_left", "seat_kicked", "host_changed"):
            continue  # the lobby before the game: not part of its story
        if describe is not None:
            said = describe({"type": e["type"], "data": e["data"]}, names)
            if said is None:
                continue
            message, params = said
            words = {k: gettext(v) if k.endswith("_word") else v for k, v in params.items()}
            lines.append(gettext(message) % words)
        else:
            shown = ", ".join(
                f"{k}: {v}" for k, v in e["data"].items() if k != "at" and v is not None
            )
            lines.append(f"{e['type']} ({shown})" if shown else e["type"])
    return lines
