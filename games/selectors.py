"""Reads: everything a receiver (player, spectator, admin page) sees of a game.

``game_payload`` and ``event_payload`` are the only functions that turn stored state into what a
receiver gets, and both go through the game's engine's ``view`` / ``event_view`` (looked up by
``Game.kind``) -- the engine is the one redaction point, whatever the game. Nothing here
serialises ``Game.state``, ``Game.seed``, ``Round.deck`` or ``Event.data`` as they are stored.

**Private looks are shown once** (R3, R4: "the server never sends those values to that player
again"). An event's private form (a look, a drawn card, a Queen receipt) goes to its seat only
at the moment it happens: in the response to the action, in the live broadcast of that version
(``event_payload``), and in ``events_since`` while that event's version is still the game's
current version. Once the game has moved on, the catch-up log serves everyone the public
(spectator) form of older events: the value was seen once; remembering it is the game.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.contrib.auth.base_user import AbstractBaseUser
from django.db.models import Count, OuterRef, Prefetch, Q, QuerySet, Subquery

from crisp_site.prepared import Prepared
from games import clock
from games.engines import KINDS, engine_for
from games.engines.base import NOTHING, awaiting
from games.engines.base import Event as EngineEvent
from games.errors import ServiceError
from games.models import ChatMessage, Event, Game, Seat

if TYPE_CHECKING:
    from games.engines.protocol import Engine
    from games.services import ActResult

__all__ = [
    "act_events_payload",
    "event_frame",
    "event_payload",
    "events_query",
    "events_since",
    "game_access",
    "game_by_invite_code",
    "game_detail",
    "game_for_user",
    "game_legal_actions",
    "game_list",
    "game_payload",
    "game_payload_for_seat",
    "game_query",
    "seat_for_user",
]


#: Where a Game instance keeps the seats it has answered (``seat_for_user``), per user and
#: version: seats change only with a version (joins, leaves and kicks are lobby changes).
_SEATS_MEMO = "_seats_by_user_version"


def _seat_memo(game: Game, user: AbstractBaseUser) -> tuple[dict[Any, Any], Any] | None:
    """The instance's memo and this user's key in it; None when the instance holds no version
    (a partial ``only()`` read): then every answer is read from the database."""
    version = game.__dict__.get("version")
    if version is None:
        return None
    return game.__dict__.setdefault(_SEATS_MEMO, {}), (user.pk, version)


def seat_for_user(*, game: Game, user: AbstractBaseUser | None) -> int | None:
    """The seat number ``user`` holds at ``game``, or None (spectator / not seated).

    Remembered on the instance for its version: a request reads its viewer's seat several
    times (the access check, the payload, the legal actions), and ``game_for_user`` already
    read it with the game, in the same query. A seat changes only with a new version, so an
    instance refreshed to a later version reads it again."""
    if user is None or not getattr(user, "is_authenticated", False):
        return None
    memo = _seat_memo(game, user)
    if memo is not None and memo[1] in memo[0]:
        return memo[0][memo[1]]
    seat = Seat.objects.filter(game=game, user=user).values_list("number", flat=True).first()
    if memo is not None:
        memo[0][memo[1]] = seat
    return seat


def game_query(*, game_id: int, user_id: int | None = None) -> QuerySet[Game]:
    """The one read ``game_for_user`` makes: the game (its host joined) and, for a signed-in
    viewer (``user_id``), that viewer's seat number as ``viewer_seat`` in the same query.

    A function of its keys alone, so the REST API can compile it once per process
    (``games.api.views``: building this SQL was most of a REST read's CPU, bench/rest_cpu.py).
    """
    games = Game.objects.select_related("host").filter(pk=game_id)
    if user_id is not None:
        # The viewer's seat in the same query: every per-game request reads it (bench: the
        # access check was a third of a REST read's time in the leak harness's profile).
        mine = Seat.objects.filter(game=OuterRef("pk"), user_id=user_id).values("number")[:1]
        games = games.annotate(viewer_seat=Subquery(mine))
    return games


def game_for_user(
    *, game_id: int, user: AbstractBaseUser | None, invite_code: str | None = None
) -> Game:
    """The game if ``user`` may look at it at all, else ``not_found`` (404).

    Public games are visible to everybody, signed in or not (watching needs no account,
    issue 24); a private game only to its seated players, staff, or a signed-in user who
    presents its invite code -- never to an anonymous visitor, whose invite link leads to
    signing in (or playing as a guest) first.  Refusing with 404 rather than 403 does not
    confirm that a private game id exists.
    """
    signed_in = getattr(user, "is_authenticated", False)
    query = game_query(game_id=game_id, user_id=user.pk if signed_in else None)  # type: ignore[union-attr]
    return game_access(game=query.first(), user=user, invite_code=invite_code)


def game_access(
    *, game: Game | None, user: AbstractBaseUser | None, invite_code: str | None = None
) -> Game:
    """``game_for_user``'s rule applied to what ``game_query`` read (None: no such row).

    Split from the read so a caller that runs the same query another way (compiled once, the
    REST API) applies the very same rule."""
    if game is None:
        raise ServiceError("not_found", "No such game.", status=404)
    signed_in = getattr(user, "is_authenticated", False)
    if signed_in:
        memo = _seat_memo(game, user)  # type: ignore[arg-type]
        if memo is not None:
            memo[0][memo[1]] = game.viewer_seat  # type: ignore[attr-defined]
    if not game.private or getattr(user, "is_staff", False):
        return game
    if not signed_in:
        raise ServiceError("not_found", "No such game.", status=404)
    if isinstance(invite_code, str) and invite_code.upper() == game.invite_code:
        return game
    if seat_for_user(game=game, user=user) is not None:
        return game
    raise ServiceError("not_found", "No such game.", status=404)


def game_by_invite_code(*, invite_code: str) -> Game:
    """The game an invite code opens, or ``not_found``."""
    game = Game.objects.filter(invite_code=str(invite_code).strip().upper()).first()
    if game is None:
        raise ServiceError("not_found", "No game has this invite code.", status=404)
    return game


def game_list(
    *, user: AbstractBaseUser, scope: str = "open", kind: str | None = None
) -> QuerySet[Game]:
    """``open``: public lobbies anyone may join -- a full one is left out, as nobody can take a
    seat there; ``mine``: every game the user sits at.  ``kind`` keeps only games of that kind.
    (Lobbies nobody will start are closed by ``services.game_reap_lobbies``.)

    The seats come with their users in ONE prefetch query (``select_related``), where
    ``prefetch_related("seats__user")`` made two (the seats, then their users): a statement
    and its SQL's building fewer per list (bench/rest_cpu.py, session 16)."""
    qs = Game.objects.select_related("host").prefetch_related(
        Prefetch("seats", queryset=Seat.objects.select_related("user"))
    )
    if kind is not None:
        qs = qs.filter(kind=kind)
    if scope == "mine":
        return qs.filter(seats__user=user).order_by("-created_at")
    has_room = Q()
    for k in KINDS:
        has_room |= Q(kind=k, seats_taken__lt=engine_for(k).MAX_SEATS)
    return (
        qs.filter(Q(status=Game.Status.LOBBY) & Q(private=False))
        .annotate(seats_taken=Count("seats"))
        .filter(has_room)
        .order_by("-created_at")
    )


def game_detail(*, game: Game, user: AbstractBaseUser | None) -> dict[str, Any]:
    """The public facts of a game (lobby card): no engine state in it.

    The invite code is shown to seated players and staff only -- they are the ones who may
    pass it on.
    """
    if "seats" in getattr(game, "_prefetched_objects_cache", {}):
        # ``game_list`` prefetched ``seats__user``: use it (a query per game otherwise).
        seats = sorted(game.seats.all(), key=lambda s: s.number)
    else:
        seats = _detail_seats(game)
    seated = any(s.user_id == getattr(user, "pk", None) for s in seats)
    engine = engine_for(game.kind)
    out: dict[str, Any] = {
        "id": game.pk,
        "kind": game.kind,
        "status": game.status,
        "version": game.version,
        "host": {"id": game.host_id, "name": _name(game.host)},
        "settings": dict(game.settings),
        "min_seats": engine.MIN_SEATS,
        "max_seats": engine.MAX_SEATS,
        "private": game.private,
        "name": game.name,
        "seats": [
            {
                "seat": s.number,
                "user_id": s.user_id,
                "name": _name(s.user),
                "score": s.score,
                # A computer player's level (null for a person), and whether a computer is
                # playing a person's seat while they are away.
                "bot": s.bot_level if getattr(s.user, "is_bot", False) else None,
                # A guest account (issue 24): shown with a "guest" badge, never rated.
                "is_guest": bool(getattr(s.user, "is_guest", False)),
                "sitting_in": s.sitting_in,
                # Left a game in progress for good (public: the ``player_left`` event says so).
                "left": s.left_at is not None,
            }
            for s in seats
        ],
        "winners": list(game.winners),
        "created_at": game.created_at.isoformat(),
        "started_at": game.started_at.isoformat() if game.started_at else None,
        "ended_at": game.ended_at.isoformat() if game.ended_at else None,
        "invite_code": game.invite_code if seated or getattr(user, "is_staff", False) else None,
        "you": next((s.number for s in seats if s.user_id == getattr(user, "pk", None)), None),
    }
    return out


#: ``game_detail``'s seats (their users joined, in seat order) compiled to SQL once per process
#: (``crisp_site.prepared``): Django building it was about a third of a detail read's own work
#: (bench/rest_cpu.py, bench/RESULTS.md "REST reads", session 16).
_DETAIL_SEATS = Prepared(
    lambda pk: Seat.objects.select_related("user").filter(game_id=pk).order_by("number")
)


def _detail_seats(game: Game) -> list[Seat]:
    """``game.seats.select_related("user").order_by("number")``, compiled once."""
    return _DETAIL_SEATS.fetch(game.pk)


def _name(user: Any) -> str:
    return getattr(user, "public_name", None) or user.get_username()


def game_payload_for_seat(
    *, game: Game, seat: int | None, now: int | None = None, parsed: Any = None
) -> dict[str, Any]:
    """What ``seat`` (None: a spectator) receives as the game's state.

    ``state`` is ``engine.view`` of the stored snapshot (None in the lobby).  ``now`` only
    decides what the seat could do at that instant (``state.you.can``).  ``parsed``: the
    engine's ``GameState`` of ``game.state`` if the caller already holds it -- a broadcast
    builds one frame per seat and a spectator from one parse (``GameState`` is immutable by
    contract, docs/ENGINE.md, so every view may read the same one).

    A game stopped outside the engine (``game_end_now``, ``game_abandon`` mid-game) keeps its
    last engine snapshot, which still says "playing"; the game's own status wins then: the
    state's ``status`` and ``winners`` are the game's, nobody can do anything, nothing is
    awaited (where the view says what it awaits) and no deadline is pending.
    """
    at = clock.now_ms() if now is None else now
    state = None
    if game.state is not None:
        engine = engine_for(game.kind)
        if parsed is None:
            parsed = engine.GameState.from_json(game.state)
        state = engine.view(parsed, seat, at)
        if game.status != Game.Status.PLAYING and state.get("status") == "playing":
            state = stopped_view(engine, state, game.status, list(game.winners))
    return {
        "game_id": game.pk,
        "kind": game.kind,
        "version": game.version,
        "status": game.status,
        "state": state,
    }


def stopped_view(
    engine: Engine, state: dict[str, Any], status: str, winners: list[int]
) -> dict[str, Any]:
    """``state`` (a view of a game stopped outside the engine: an admin's "end now", abandoned
    mid-game) as the stop left it: the game's status and winners, nothing awaited (the shared
    ``awaiting`` of docs/ENGINE.md, "Awaiting"), no deadline, and nothing to do -- ``you.can``
    and the engine's ``MOVE_KEYS`` (Cribbage's ``playable``, Triple Crown's ``legal``) emptied,
    so no client is told it holds a playable card.  One function for the live payload and the
    replay."""
    state["status"] = status
    state["winners"] = list(winners)
    state["awaiting"] = awaiting(NOTHING)
    state["deadlines"] = []
    you = state.get("you")
    if isinstance(you, dict):
        for key in {"can"} | engine.MOVE_KEYS:
            if key in you:
                you[key] = []
    return state


def game_payload(
    *, game: Game, user: AbstractBaseUser | None, now: int | None = None
) -> dict[str, Any]:
    """The receiver's redacted snapshot: its seat's view, or the spectator view."""
    return game_payload_for_seat(game=game, seat=seat_for_user(game=game, user=user), now=now)


def event_payload(*, event: Event, seat: int | None, kind: str | None = None) -> dict[str, Any]:
    """One stored event as ``seat`` (None: a spectator) may receive it.

    ``kind`` is the game's (``Game.kind``); callers that hold the game pass it to save the
    lookup through ``event.game``.  Engine events go through the engine's ``event_view``;
    lobby events never carry a card and are passed through.  The shape is ``{"seq",
    "version", "type", "data", "at"}`` with ``at`` in ms since the epoch (server time when it
    was stored).
    """
    if event.origin == Event.Origin.ENGINE:
        engine = engine_for(event.game.kind if kind is None else kind)
        redacted = engine.event_view(EngineEvent(event.type, event.data), seat)
        data = redacted["data"]
    else:
        data = dict(event.data)
    return event_frame(event, data)


def event_frame(event: Event, data: dict[str, Any]) -> dict[str, Any]:
    """A stored event's wire shape around ``data`` (already as its receiver may see it): one
    place for the live frames and the replays' (``history.replay``)."""
    return {
        "seq": event.seq,
        "version": event.version,
        "type": event.type,
        "data": data,
        "at": clock.from_datetime(event.created_at),
    }


def events_query(*, game_id: int, seq: int, limit: int = 500) -> QuerySet[Event]:
    """The read of ``events_since``: a function of its keys alone (``game_query``'s why)."""
    return Event.objects.filter(game_id=game_id, seq__gt=seq).order_by("seq")[:limit]


def events_since(
    *,
    game: Game,
    user: AbstractBaseUser | None,
    seq: int,
    limit: int = 500,
    rows: list[Event] | None = None,
) -> list[dict[str, Any]]:
    """Events with ``seq`` greater than the given one, each in the requester's redacted form.

    Private forms only for events of the game's current version (see the module docstring:
    a look is shown once); older events in their public form.  ``rows``: what
    ``events_query`` for the same keys gave, if the caller already ran it.
    """
    seat = seat_for_user(game=game, user=user)
    if rows is None:
        rows = list(events_query(game_id=game.pk, seq=seq, limit=limit))
    return [
        event_payload(event=e, seat=seat if e.version == game.version else None, kind=game.kind)
        for e in rows
    ]


def act_events_payload(
    *,
    game: Game,
    seat: int | None,
    result: ActResult | None = None,
    events: list[Event] | None = None,
) -> list[dict[str, Any]]:
    """The events of an action's result as its actor receives them.

    Given the ``result``: a first application is the moment itself, so the actor gets the
    private forms (its look, its drawn card) even if a timer has moved the game on since; a
    replay (idempotency key) follows the "once" rule of ``events_since``.  Given bare
    ``events`` (no result): the "once" rule -- private forms only at the current version.
    """
    if result is not None:
        rows, fresh = result.events, not result.replayed
    else:
        rows, fresh = events or [], False
    return [
        event_payload(
            event=e, seat=seat if fresh or e.version == game.version else None, kind=game.kind
        )
        for e in rows
    ]


def game_legal_actions(
    *, game: Game, user: AbstractBaseUser | None, now: int | None = None
) -> list[dict[str, Any]]:
    """Every action the user's seat may take now, in wire form (empty if none / not seated)."""
    seat = seat_for_user(game=game, user=user)
    if seat is None or game.status != Game.Status.PLAYING or game.state is None:
        return []
    at = clock.now_ms() if now is None else now
    engine = engine_for(game.kind)
    state = engine.GameState.from_json(game.state)
    return [a.to_wire() for a in engine.legal_actions(state, seat, at)]


# --- Game night: chat, games to watch ---------------------------------------------------------


def chat_payload(message: ChatMessage) -> dict[str, Any]:
    """One chat line in its public form: who (name, seat), what, when (server ms)."""
    return {
        "id": message.pk,
        "user_id": message.user_id,
        "name": _name(message.user),
        "seat": message.seat,
        "text": message.text,
        "at": clock.from_datetime(message.created_at),
    }


def game_chat(*, game: Game, limit: int = 100) -> list[dict[str, Any]]:
    """The table's last ``limit`` chat lines, oldest first (lines staff hid are left out)."""
    rows = list(
        ChatMessage.objects.filter(game=game, hidden=False)
        .select_related("user")
        .order_by("-created_at", "-pk")[:limit]
    )
    return [chat_payload(m) for m in reversed(rows)]


def games_to_watch(*, user: AbstractBaseUser | None) -> QuerySet[Game]:
    """Public games in progress the user does not play in (the lobby's "Watch" list; for an
    anonymous visitor, or None, every public game in progress)."""
    qs = (
        Game.objects.select_related("host")
        .prefetch_related("seats__user")
        .filter(status=Game.Status.PLAYING, private=False)
        .order_by("-started_at")
    )
    if user is not None and getattr(user, "is_authenticated", False):
        qs = qs.exclude(seats__user=user)
    return qs
