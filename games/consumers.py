"""The game WebSocket: `/ws/games/<id>/` (docs/PROTOCOL.md is the public description).

Life of a socket:

1. **Accept, then authenticate** — the handshake is answered at once; then the session
   (browser, via `AuthMiddlewareStack`) or a personal API token (`?token=` or
   `Authorization: Token <key>`); with neither, an anonymous spectator of a public game.
   Refusals close at once with a 4xxx code (4401, 4403, 4404:
   the HTTP status + 4000), so the client can tell why; nothing else is ever sent on a
   refused socket.
2. **Subscribe, then read** — join the redaction group (own seat, or spectators) *before* reading
   the snapshot, so no change can fall between the read and the subscription. Frames queued
   meanwhile carry versions the snapshot already covers and are dropped here.
3. **Forward** — every group frame whose `version` is newer than what this socket has. A frame
   whose `prev_version` is ahead of it means a frame was lost (Redis hiccup): the consumer
   catches its client up from the database itself before forwarding anything newer.
4. **Act** — `act` frames go through `games.services.game_act`, answered by `ack` or `error`.

Every database call is one small `database_sync_to_async` function, run on the process's bounded
database thread pool (`crisp_site.db`), not on Channels' single thread that serialised every
socket's database work in the process.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any
from urllib.parse import parse_qs

from autobahn.exception import Disconnected
from channels.consumer import get_handler_name
from channels.exceptions import StopConsumer
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.contrib.auth.models import AnonymousUser

from crisp_site import parsers
from crisp_site.db import parallel_database_sync_to_async as database_sync_to_async
from games import broadcast, clock, presence
from games.consumer_loop import SerialDispatchMixin

logger = logging.getLogger(__name__)

# Close codes (docs/PROTOCOL.md): HTTP status + 4000.
CLOSE_BAD_REQUEST = 4400
CLOSE_UNAUTHENTICATED = 4401
CLOSE_FORBIDDEN = 4403
CLOSE_NO_SUCH_GAME = 4404
CLOSE_THROTTLED = 4429
CLOSE_SERVER_ERROR = 1011
CLOSE_TRY_AGAIN_LATER = 4503  # autobahn refuses 1013 from a server: HTTP 503 + 4000

#: Message types handled without Channels' `aclose_old_connections()` hop first: it is a
#: `sync_to_async` call on the process's single database thread, once per socket per frame,
#: and redundant here, because every database call of this consumer goes through
#: `database_sync_to_async`, which closes old connections around the call itself.
NO_DB_HOP_TYPES = frozenset(
    {"game.update", "game.presence", "game.resync", "game.gap", "websocket.receive"}
)

#: How long a frame that arrived ahead of its predecessor is held before the socket is caught
#: up from the database instead. Frames of one game come from several processes (an action's
#: from a daphne, a timer's from the worker), so the newer one sometimes overtakes the older
#: one by a few milliseconds; catching up at once cost a database read on the daphne's single
#: database thread per socket each time (bench/RESULTS.md, "Scale"). A frame really lost
#: (Redis trouble) is caught up this much later.
GAP_WAIT_SECONDS = 0.25

#: Frames a client may send per second, sustained (bursts up to twice that).
RATE_PER_SECOND = 20

#: How long a closing socket waits for its heartbeat task to stop (it normally takes well under
#: a millisecond; a lost cancellation must not hold the close longer than this).
HEARTBEAT_STOP_SECONDS = 1.0

#: How many sockets of one process may do their connect's database work at once. That work
#: (the token, the game, the snapshot) is Python holding the GIL, not a wait on the database:
#: 500 watchers arriving took every database thread (10 on PostgreSQL), and the event loop,
#: one thread among eleven, answered handshakes too late for daphne's 5 s (bench/watchers.py).
#: The other threads stay free for the players' actions; the crowd's snapshots queue here.
CONNECT_SLOTS = 2
#: The longest a connect waits for a slot before it closes with 4503 (try again later). Under
#: daphne's 10 s application close timeout: a consumer waiting in `connect()` does not see its
#: client leave, and daphne kills (and logs) one still running 10 s after the client left.
CONNECT_WAIT_SECONDS = 8.0
_connect_slots: dict[asyncio.AbstractEventLoop, asyncio.Semaphore] = {}


def connect_slots() -> asyncio.Semaphore:
    """This loop's connect semaphore (asyncio primitives belong to one loop; tests run many)."""
    loop = asyncio.get_running_loop()
    found = _connect_slots.get(loop)
    if found is None:
        for old in [k for k in _connect_slots if k.is_closed()]:
            del _connect_slots[old]
        found = _connect_slots[loop] = asyncio.Semaphore(CONNECT_SLOTS)
    return found


class Refused(Exception):
    """A socket that must be closed with `code` before anything is sent."""

    def __init__(self, code: int, detail: str) -> None:
        super().__init__(detail)
        self.code = code


# --- Database calls (each one small; run through database_sync_to_async) --------------------


def _user_for_token(key: str) -> Any:
    from accounts.tokens import user_for_token

    return user_for_token(key)


def _table_for(
    game_id: int, user: Any, invite_code: str | None = None
) -> tuple[broadcast.Table, int | None]:
    """The game and the user's seat (None: spectator), if they may watch it; else Refused.

    Who may watch is the selectors' rule, the REST API's too (`game_for_user`: public games to
    everyone, without an account too; a private one to its players, staff, and a signed-in user
    who presents its invite code -- an invite link lets a friend watch before, or without,
    taking a seat). A refused
    private game closes with 4404, like a missing one, so a socket cannot probe which private
    game ids exist.
    """
    from games import selectors
    from games.errors import ServiceError

    try:
        game = selectors.game_for_user(game_id=game_id, user=user, invite_code=invite_code)
    except ServiceError as error:
        raise Refused(
            4000 + error.status if 400 <= error.status < 500 else CLOSE_FORBIDDEN, error.detail
        ) from None
    table = broadcast.load_table(game_id, game)
    assert table is not None
    seat = next((n for n, uid in table.seat_users.items() if uid == user.pk), None)
    return table, seat


def _handshake(scope: dict[str, Any], user: Any, query: dict[str, str]) -> Any:
    """The handshake as the throttles read a request: its user, query and client address
    (`META`'s `REMOTE_ADDR` and `X-Forwarded-For`, believed only from `TRUSTED_PROXIES` as for
    HTTP, crisp_site/proxies.py)."""
    from types import SimpleNamespace

    meta = {"REMOTE_ADDR": (scope.get("client") or ("", 0))[0] or ""}
    for name, value in scope.get("headers", []):
        if name.lower() == b"x-forwarded-for":
            meta["HTTP_X_FORWARDED_FOR"] = value.decode("latin-1")
    return SimpleNamespace(user=user, method="GET", query_params=query, GET=query, META=meta)


def _seat_of(
    game_id: int, user: Any, invite_code: str | None = None, scope: dict[str, Any] | None = None
) -> int | None:
    """The user's seat at a game they may watch (else Refused). A handshake presenting an
    invite code counts against the same `invite_code` limit as a REST request presenting one
    (crisp_site/throttles.py): sockets are no cheaper way to guess codes. An anonymous
    watcher's handshake counts against its address's `anon_read` limit, as its REST reads do."""
    from crisp_site.throttles import AnonReadThrottle, InviteCodeThrottle

    query = {"invite_code": invite_code} if invite_code is not None else {}
    handshake = _handshake(scope or {}, user, query)
    if invite_code is not None and not InviteCodeThrottle().allow_request(handshake, None):
        raise Refused(CLOSE_THROTTLED, "Too many requests presenting an invite code.")
    if not AnonReadThrottle().allow_request(handshake, None):
        raise Refused(CLOSE_THROTTLED, "Too many requests from this address; sign in or wait.")
    return _table_for(game_id, user, invite_code)[1]


def _catch_up(
    game_id: int, user: Any, since: int | None, invite_code: str | None = None
) -> tuple[int | None, dict[str, Any]]:
    """(seat, frame): what this user needs from `since` on, redacted for their seat now."""
    table, seat = _table_for(game_id, user, invite_code)
    return seat, broadcast.catch_up_frame(table, seat, since)


def _act(game_id: int, user: Any, content: dict[str, Any]) -> tuple[int | None, dict[str, Any]]:
    """Apply the action; (the user's seat now, the ack frame with the events in its form).

    The ack carries the events so the actor gets a private result (a Jack's look) even if the
    broadcast frame of that version were lost: it is shown once, here or there. They are
    redacted for the seat the user holds *after* the action, not for the socket's cached seat
    (a lobby renumbering may have moved it meanwhile). For a first application that is the
    seat the service layer applied it for: seats never move once a game plays (leaving one in
    progress keeps the seat, `game_leave_playing`), and an act needs a playing game. A replay
    (idempotency key) reads the game and the seat now.
    """
    from crisp_site import rows
    from games import selectors, services
    from games.models import Game

    result = services.game_act(
        game=game_id,
        user=user,
        action=content["action"],
        expected_version=content.get("version"),
        idempotency_key=content.get("idempotency_key"),
    )
    if result.replayed:
        game = Game.objects.only("pk", "version", "kind").get(pk=game_id)
        seat = selectors.seat_for_user(game=game, user=user)
    else:
        # A first application: the seat it was applied for (a playing game's seats do not
        # move) and the game as the change left it; two round trips fewer on the daphne
        # process's one database thread (bench/RESULTS.md, "Scale"). Its key, kind and
        # version (in the model's column order), the rest deferred: ``from_db``'s instance
        # (a third of ``Game(...)``, which made every other column's default: bench/results/
        # session19-engine.md), built without ``Model.__init__`` (``rows.loaded``).
        game = rows.loaded(Game, ("id", "kind", "version"))(
            "default", (game_id, result.kind, result.version)
        )
        seat = result.seat
    return seat, {
        "type": "ack",
        "id": content.get("id"),
        "version": result.version,
        "replayed": result.replayed,
        "events": selectors.act_events_payload(game=game, seat=seat, result=result),
    }


class GameConsumer(SerialDispatchMixin, AsyncJsonWebsocketConsumer):
    """One socket watching (and possibly playing) one game.

    Run by `games.consumer_loop` (Channels' semantics without a task per message: a broadcast
    frame reaches every socket of its group, bench/RESULTS.md Session 16)."""

    game_id: int
    user: Any
    invite_code: str | None = None  # `?invite_code=`: may watch a private game (as over REST)
    seat: int | None = None
    version: int = -1
    groups_joined: tuple[str, ...] = ()
    heartbeat: asyncio.Task[None] | None = None
    redis_run_id: str = ""
    held: dict[str, Any] | None = None  # the newest frame that arrived ahead of a missing one
    gap_timer: asyncio.Task[None] | None = None

    # --- connection ---------------------------------------------------------------------

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        """Run the socket; whatever ends it (even a cancellation), leave nothing behind."""
        try:
            await super().__call__(scope, receive, send)
        finally:
            await self._clean_up()

    async def dispatch(self, message: dict[str, Any]) -> None:
        """A handler that raises closes the socket with 1011 after cleaning up.

        Without this the exception would end the consumer without `disconnect()`, and its
        heartbeat would keep a ghost seat "connected".

        Frequent message types (`NO_DB_HOP_TYPES`) skip Channels' per-message
        `aclose_old_connections()` (checked against Channels 4.3's `AsyncConsumer.dispatch`).
        """
        try:
            if message.get("type") in NO_DB_HOP_TYPES:
                await getattr(self, get_handler_name(message))(message)
            else:
                await super().dispatch(message)
        except StopConsumer:
            raise
        except Disconnected:
            # A send after the client closed (daphne learns of the close a moment after the
            # protocol does): nothing failed; the socket is simply gone.
            logger.debug(
                "socket of game %s closed before a %s frame",
                getattr(self, "game_id", "?"),
                message.get("type"),
            )
            await self._clean_up()
            raise StopConsumer() from None
        except Exception:
            logger.exception(
                "socket of game %s failed on %s", getattr(self, "game_id", "?"), message.get("type")
            )
            await self._clean_up()
            with contextlib.suppress(Exception):
                await self.close(code=CLOSE_SERVER_ERROR)
            raise StopConsumer() from None

    async def connect(self) -> None:
        self.game_id = int(self.scope["url_route"]["kwargs"]["game_id"])
        self.allowance = float(RATE_PER_SECOND * 2)
        self.allowance_at = asyncio.get_running_loop().time()
        self.invite_code = _query(self.scope, "invite_code")
        # The handshake is answered before any database work: daphne drops a connection not
        # accepted within 5 s, and 500 watchers arriving at once queued longer than that for
        # the database threads (bench/watchers.py). Refusals were accepted first anyway.
        await self.accept()
        slots = connect_slots()
        try:
            async with asyncio.timeout(CONNECT_WAIT_SECONDS):
                await slots.acquire()
        except TimeoutError:
            await self.close(code=CLOSE_TRY_AGAIN_LATER)
            return
        try:
            try:
                self.user = await self._authenticate()
                self.seat = await database_sync_to_async(_seat_of)(
                    self.game_id, self.user, self.invite_code, self.scope
                )
            except Refused as refused:
                await self.close(code=refused.code)
                return
            await self._subscribe(self.seat)
            since = _query_int(self.scope, "version")
            if not await self._resync(since):
                return
        finally:
            slots.release()
        self.heartbeat = asyncio.ensure_future(self._heartbeat())

    async def _authenticate(self) -> Any:
        """The session user, or the user of a presented API token (an invalid token refuses),
        else an anonymous watcher: watching a public game needs no account (issue 24). An
        anonymous socket is a spectator (seat None) of a public game only (`game_for_user`
        refuses it a private one with 4404) and may not act or chat (`_refuse_anonymous`)."""
        key = _query(self.scope, "token") or _header_token(self.scope)
        if key:
            user = await database_sync_to_async(_user_for_token)(key)
            if user is None:
                raise Refused(CLOSE_UNAUTHENTICATED, "Invalid API token.")
            return user
        return self.scope.get("user") or AnonymousUser()

    async def _refuse_anonymous(self, ref: Any) -> bool:
        """Answer an anonymous watcher's act or chat with `not_authenticated` (True: refused).
        The socket stays open: it goes on watching."""
        if self.user.is_authenticated:
            return False
        await self._error(
            ref,
            "not_authenticated",
            "Watching needs no account; playing and chatting do. Sign in (or play as a "
            "guest), or present an API token.",
        )
        return True

    async def disconnect(self, code: int) -> None:
        await self._clean_up()

    async def _clean_up(self) -> None:
        """Stop the heartbeat, leave presence and the groups (idempotent)."""
        heartbeat, self.heartbeat = self.heartbeat, None
        if heartbeat is not None:
            heartbeat.cancel()
            # Bounded: a cancellation swallowed under the heartbeat (Python 3.11's
            # `asyncio.wait_for` does that; see `presence.client`) must not hold the close.
            # The heartbeat also stops by itself once it is no longer `self.heartbeat`.
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.wait([heartbeat], timeout=HEARTBEAT_STOP_SECONDS)
        gap_timer, self.gap_timer = self.gap_timer, None
        if gap_timer is not None:
            gap_timer.cancel()
        if not self.groups_joined:
            return
        with contextlib.suppress(Exception):
            await self._announce(await presence.leave(self.game_id, self.seat, self.channel_name))
        for group in self.groups_joined:
            with contextlib.suppress(Exception):
                await self.channel_layer.group_discard(group, self.channel_name)
        self.groups_joined = ()

    async def _subscribe(self, seat: int | None) -> None:
        """Be in exactly the groups of `seat`'s redaction (and the table's)."""
        wanted = (broadcast.view_group(self.game_id, seat), broadcast.table_group(self.game_id))
        for group in self.groups_joined:
            if group not in wanted:
                await self.channel_layer.group_discard(group, self.channel_name)
        for group in wanted:
            await self.channel_layer.group_add(group, self.channel_name)
        self.groups_joined = wanted
        self.seat = seat

    async def _resync(self, since: int | None) -> bool:
        """Send what the client needs after `since` (None: a snapshot). False if refused now."""
        try:
            seat, frame = await database_sync_to_async(_catch_up)(
                self.game_id, self.user, since, self.invite_code
            )
        except Refused as refused:
            await self.close(code=refused.code)
            return False
        except Exception:
            logger.exception("resync failed for a socket of game %s", self.game_id)
            await self.close(code=CLOSE_SERVER_ERROR)
            return False
        change = None
        if seat != self.seat or self.heartbeat is None:
            old_seat = self.seat
            await self._subscribe(seat)
            if seat != old_seat:
                with contextlib.suppress(Exception):
                    left = await presence.leave(self.game_id, old_seat, self.channel_name)
                    await self._announce(left)
            change = await self._touch_presence(force=True)
        self.version = frame["version"]
        await self.send(text_data=broadcast.stamp(broadcast.encode(frame)))
        if change is not None:  # after the snapshot: the client learns the table, then who is in
            await self._announce(change, own=True)
        return True

    # --- presence -------------------------------------------------------------------------

    async def _touch_presence(self, force: bool = False) -> presence.Change | None:
        """Register or refresh this socket's presence; what changed, for `_announce` (None:
        presence is unavailable, or a beat changed nothing)."""
        try:
            change = await presence.touch(
                self.game_id,
                self.seat,
                self.channel_name,
                person=presence.person_of(self.user, self.channel_name),
            )
            run_id = await presence.server_run_id()
        except presence.UNAVAILABLE as exc:  # down or overloaded: rate-limited, one line
            presence.report_unavailable(self.game_id, exc)
            return None
        except Exception:  # a bug: presence is advisory, the socket goes on
            logger.warning("presence failed for game %s", self.game_id, exc_info=True)
            return None
        if self.redis_run_id and run_id != self.redis_run_id:
            # Redis restarted under us: group memberships kept in Redis are gone and frames
            # sent meanwhile are lost. Join again and catch the client up from the database.
            # (Presence was lost too: this touch registered the socket again, a change.)
            logger.info("redis restarted; resubscribing socket of game %s", self.game_id)
            self.redis_run_id = run_id
            # Through the socket's own channel, so the catch-up runs in order with the
            # socket's other frames instead of concurrently from the heartbeat task.
            await self.channel_layer.send(self.channel_name, {"type": "game.resync"})
        self.redis_run_id = run_id
        if force or change.seats_changed or change.spectators_changed:
            return change
        return None

    async def _announce(self, change: presence.Change, own: bool = False) -> None:
        """Tell the table what changed, at a cost to the other sockets bounded by the seats.

        A seat's socket coming or going (or expiring): one `presence` frame to the table (this
        socket too, if it is in it). A spectator's: a coalesced `spectators` count, at most one
        per period per game, whatever the crowd (`presence.request_count`). `own`: a
        connecting socket that caused no seat change gets the table's presence by itself.
        """
        if change.seats_changed:
            group, message = broadcast.presence_message(self.game_id, change.summary())
            await self.channel_layer.group_send(group, message)
        elif own:
            frame = broadcast.presence_frame(self.game_id, change.summary())
            await self.send(text_data=broadcast.stamp(frame))
        if change.spectators_changed:
            try:
                await presence.request_count(self.game_id)
            except presence.UNAVAILABLE as exc:
                presence.report_unavailable(self.game_id, exc)

    async def _heartbeat(self) -> None:
        """Refresh presence until the socket cleans up, on the process's common beat
        (`presence.next_beat_in`: every socket's touch of a tick goes in one send), on the
        game's phase of it (`presence.beat_phase`: one send per phase, not one burst).

        The loop checks that it is still the socket's heartbeat rather than trusting
        `cancel()` alone: a cancellation lost inside a library call would otherwise leave it
        beating for a socket that is gone (a ghost seat).
        """
        loop = asyncio.get_running_loop()
        while self.heartbeat is asyncio.current_task():
            # At most REFRESH_SECONDS, on the process's common beat: one send for the sockets
            # of a phase.
            phase = presence.beat_phase(self.game_id)
            await asyncio.sleep(presence.next_beat_in(loop, phase))
            if self.heartbeat is not asyncio.current_task():
                return
            try:
                change = await self._touch_presence()
                if change is not None:
                    await self._announce(change)
            except Exception:
                # One failed beat (Redis hiccup) must not end presence for the socket's life.
                logger.warning("heartbeat failed for game %s", self.game_id, exc_info=True)

    # --- frames from the client -----------------------------------------------------------

    async def receive(
        self, text_data: str | None = None, bytes_data: bytes | None = None, **kwargs: Any
    ) -> None:
        """Every client frame: binary, empty or non-JSON text is a `bad_frame`, not a crash."""
        content = await self.decode_json(text_data) if text_data else None
        ref = content.get("id") if isinstance(content, dict) else None
        if not self._within_rate():
            await self._error(ref, "rate_limited", "Too many frames; slow down.")
            return
        if not isinstance(content, dict):
            await self._error(None, "bad_frame", "Frames are JSON objects in text frames.")
            return
        await self.receive_json(content, **kwargs)

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        ref = content.get("id") if isinstance(content, dict) else None
        kind = content.get("type") if isinstance(content, dict) else None
        if kind == "act":
            await self._on_act(ref, content)
        elif kind == "resync":
            since = content.get("version")
            if since is not None and (not isinstance(since, int) or isinstance(since, bool)):
                await self._error(ref, "bad_frame", "resync.version must be an integer.")
                return
            await self._resync(since)
        elif kind == "ping":
            await self.send_json({"type": "pong", "id": ref, "server_time": clock.now_ms()})
        elif kind == "chat":
            await self._on_chat(ref, content)
        else:
            await self._error(ref, "bad_frame", "Unknown frame type; see docs/PROTOCOL.md.")

    async def decode_json(self, text_data: str) -> Any:
        """The frame's JSON, or None (a `bad_frame`) when it is not JSON or nests too deep."""
        try:
            return parsers.loads(text_data)
        except ValueError:
            return None

    async def _on_act(self, ref: Any, content: dict[str, Any]) -> None:
        from games.errors import ServiceError

        if await self._refuse_anonymous(ref):
            return

        version = content.get("version")
        # `idempotency_key` is checked by the service layer, which answers
        # `bad_idempotency_key` on either channel (one rule, one code).
        if not isinstance(content.get("action"), dict) or (
            version is not None and (not isinstance(version, int) or isinstance(version, bool))
        ):
            await self._error(ref, "bad_frame", "act needs an action object; see PROTOCOL.md.")
            return
        try:
            seat, ack = await database_sync_to_async(_act)(self.game_id, self.user, content)
        except ServiceError as error:
            await self._error(ref, error.code, error.detail, error.extra)
            return
        except Exception:
            logger.exception("act failed in game %s", self.game_id)
            await self._error(ref, "server_error", "The server could not process this action.")
            return
        await self.send(text_data=broadcast.stamp(broadcast.encode(ack)))
        if seat != self.seat:
            await self._resync(self.version)  # moves the socket to its new seat's redaction

    async def _on_chat(self, ref: Any, content: dict[str, Any]) -> None:
        """A chat line: stored by the service; every socket of the table (this one too) gets it
        as a `chat` frame from the broadcast. The sender gets `chat_ack` with the line's id."""
        from games import services
        from games.errors import ServiceError

        if await self._refuse_anonymous(ref):
            return
        text = content.get("text")
        if not isinstance(text, str):
            await self._error(ref, "bad_frame", "chat needs a text string; see PROTOCOL.md.")
            return
        try:
            message = await database_sync_to_async(services.game_chat_post)(
                game=self.game_id, user=self.user, text=text
            )
        except ServiceError as error:
            await self._error(ref, error.code, error.detail, error.extra)
            return
        frame = {"type": "chat_ack", "id": ref, "message_id": message.pk}
        await self.send(text_data=broadcast.stamp(broadcast.encode(frame)))

    async def game_chat(self, message: dict[str, Any]) -> None:
        await self.send(text_data=broadcast.stamp(message["text"]))

    async def _error(
        self, ref: Any, code: str, detail: str, extra: dict[str, Any] | None = None
    ) -> None:
        frame = {"type": "error", "id": ref, "code": code, "detail": detail}
        if extra:
            frame["extra"] = extra
        await self.send(text_data=broadcast.stamp(broadcast.encode(frame)))

    def _within_rate(self) -> bool:
        now = asyncio.get_running_loop().time()
        self.allowance = min(
            RATE_PER_SECOND * 2.0, self.allowance + (now - self.allowance_at) * RATE_PER_SECOND
        )
        self.allowance_at = now
        if self.allowance < 1:
            return False
        self.allowance -= 1
        return True

    # --- frames from the channel layer ----------------------------------------------------

    async def game_update(self, message: dict[str, Any]) -> None:
        if message["version"] <= self.version:
            return  # already covered by what this socket has
        seat = message["seats"].get(str(self.user.pk))
        if seat != self.seat:
            # Seat changed (joined, left, kicked): the database says what this receiver needs
            # now, redacted for its new seat.
            self.held = None
            await self._resync(self.version)
            return
        if message["prev_version"] > self.version:
            # A gap: the missing frame is usually a moment behind, from another process. Hold
            # this one (the newest, if several) and wait; `game_gap` catches up from the
            # database if the gap is still open by then.
            if self.held is None or message["version"] > self.held["version"]:
                self.held = message
            if self.gap_timer is None or self.gap_timer.done():
                self.gap_timer = asyncio.ensure_future(self._gap_later())
            return
        self.version = message["version"]
        await self.send(text_data=broadcast.stamp(message["text"]))
        held = self.held
        if held is not None and held["prev_version"] <= self.version:
            # The missing frame came: the held one continues it, in order.
            self.held = None
            if held["version"] > self.version:
                self.version = held["version"]
                await self.send(text_data=broadcast.stamp(held["text"]))

    async def _gap_later(self) -> None:
        await asyncio.sleep(GAP_WAIT_SECONDS)
        # Through the socket's own channel, so the check runs in order with its other frames.
        with contextlib.suppress(Exception):
            await self.channel_layer.send(self.channel_name, {"type": "game.gap"})

    async def game_gap(self, message: dict[str, Any]) -> None:
        """The wait for a missing frame is over: if it never came, catch up from the database."""
        held, self.held = self.held, None
        if held is not None and held["version"] > self.version:
            await self._resync(self.version)

    async def game_resync(self, message: dict[str, Any]) -> None:
        """Sent by this socket's heartbeat after a Redis restart: re-join, catch up."""
        await self._subscribe(self.seat)
        await self._resync(self.version)

    async def game_presence(self, message: dict[str, Any]) -> None:
        await self.send(text_data=broadcast.stamp(message["text"]))


def _query(scope: dict[str, Any], name: str) -> str | None:
    values = parse_qs(scope.get("query_string", b"").decode("latin-1")).get(name)
    return values[0] if values else None


def _query_int(scope: dict[str, Any], name: str) -> int | None:
    value = _query(scope, name)
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def _header_token(scope: dict[str, Any]) -> str | None:
    for name, value in scope.get("headers", []):
        if name.lower() == b"authorization":
            scheme, _, key = value.decode("latin-1").partition(" ")
            if scheme.lower() in {"token", "bearer"} and key.strip():
                return key.strip()
    return None
