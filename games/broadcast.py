"""Pushing each change of a game to every connected receiver, each in its own redacted form.

Group naming (one Channels group per *redaction*, not per socket):

* `game.<id>.seat.<n>` — the sockets of the user in seat `n` (a user may have several tabs);
* `game.<id>.spectators` — everyone else allowed to watch;
* `game.<id>.table` — every socket of the game, for public frames (presence, the spectator
  count, chat).

`game_changed` runs on commit (the service layer registers it) and computes each group's frame
once — the state through `selectors.game_payload` and every new event through
`selectors.event_payload`, the only two redaction points — and JSON-encodes it once, so a socket
costs a `send` and nothing else. It goes out through the Redis channel layer, so sockets on any
daphne process receive it: with the pub/sub layer (the default) published by the live thread
itself (`_publish`), with the others through a sender loop's thread (`_SenderLoop`). A change
of a game in play comes with what its author committed (`services.Committed`: the row's new
columns, the engine state it saved, its events, the seat map), so the frames are built without
reading anything back and from one parse of the state; a lobby change, a retry, or a burst
that other processes interleaved reads the table once.

Frames carry `prev_version` and `version`: the events in the frame are exactly those with
`prev_version < event.version <= version`, and `state` is the table at `version`. A receiver whose
last version is `prev_version` or later can apply it; one that is behind has a gap and resyncs
(the consumer does that for its socket before anything reaches the client; docs/PROTOCOL.md).
Because every frame carries the whole redacted state, a duplicate or late frame is harmless.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import queue
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from channels.layers import get_channel_layer

from games import clock

logger = logging.getLogger(__name__)

#: A resync that would need more events than this gets a snapshot instead.
MAX_CATCHUP_EVENTS = 500
#: A broadcast that Redis has not taken within this many seconds is given up (and logged):
#: the caller is a request or a timer that must not hang on a dead Redis.
SEND_TIMEOUT = 5.0
#: A broadcast that failed (database or Redis trouble) is tried again after these delays
#: (seconds), then given up (receivers catch up at the next version or reconnect).
RETRY_DELAYS = (0.5, 2.0, 5.0)


def seat_group(game_id: int, seat: int) -> str:
    return f"game.{game_id}.seat.{seat}"


def spectators_group(game_id: int) -> str:
    return f"game.{game_id}.spectators"


def table_group(game_id: int) -> str:
    return f"game.{game_id}.table"


def view_group(game_id: int, seat: int | None) -> str:
    """The group whose frames are redacted for `seat` (None: a spectator)."""
    return spectators_group(game_id) if seat is None else seat_group(game_id, seat)


def encode(frame: dict[str, Any]) -> str:
    """Compact JSON; frames are encoded once per group, never per socket."""
    return json.dumps(frame, separators=(",", ":"), ensure_ascii=False)


def stamp(text: str, server_time: int | None = None) -> str:
    """Add `server_time` (ms, when the frame leaves the server) to an encoded JSON object.

    Spliced into the text so a frame encoded once per group is not decoded per socket.
    """
    ms = clock.now_ms() if server_time is None else server_time
    return f'{text[:-1]},"server_time":{ms}}}'


# --- Reading what a receiver may see (sync: runs in a DB thread) ------------------------------


@dataclass(frozen=True)
class Table:
    """One read of a game: the row and who sits where."""

    game: Any
    seat_users: dict[int, int]  # seat number -> user id
    #: The engine's `GameState` of `game.state`: given by a change's author, or parsed once on
    #: first use, so a frame per seat does not parse the stored snapshot once per seat.
    parsed: Any = None

    @property
    def seats_by_user_id(self) -> dict[str, int]:
        return {str(user_id): seat for seat, user_id in self.seat_users.items()}

    def engine_state(self) -> Any:
        """The parsed engine state (None in the lobby)."""
        if self.parsed is None and self.game.state is not None:
            from games.engines import engine_for

            parsed = engine_for(self.game.kind).GameState.from_json(self.game.state)
            object.__setattr__(self, "parsed", parsed)  # a cache, not a change of the value
        return self.parsed


def load_table(game_id: int, game: Any = None) -> Table | None:
    """The game (unless already read) and its seats: two small queries (no user rows)."""
    from games.models import Game, Seat

    if game is None:
        game = Game.objects.filter(pk=game_id).first()
        if game is None:
            return None
    seats = Seat.objects.filter(game_id=game_id).values_list("number", "user_id")
    return Table(game=game, seat_users=dict(seats))


def events_between(game: Any, after_version: int) -> list[Any] | None:
    """The Event rows with `after_version < version <= game.version`, in order.

    None when there are too many to be worth replaying (a snapshot is cheaper).
    """
    from games.models import Event

    rows = list(
        Event.objects.filter(
            game_id=game.pk, version__gt=after_version, version__lte=game.version
        ).order_by("seq")[: MAX_CATCHUP_EVENTS + 1]
    )
    return None if len(rows) > MAX_CATCHUP_EVENTS else rows


def update_frame(
    table: Table,
    seat: int | None,
    after_version: int,
    rows: Iterable[Any],
    now: int,
    private_from: int,
) -> dict[str, Any]:
    """The `update` frame for one redaction: events after `after_version`, state at version.

    An event's private form (a look, a drawn card) goes to its seat only "at the moment it
    happens" (selectors' module docstring, R3/R4): in the live frame of its version, and in a
    catch-up only while its version is the current one. `private_from` is the first version
    whose events may still carry their private form; older ones go out in the public form.
    """
    from games import selectors

    return {
        "type": "update",
        "game": table.game.pk,
        "prev_version": after_version,
        "version": table.game.version,
        "events": [
            selectors.event_payload(
                event=row,
                seat=seat if row.version >= private_from else None,
                kind=table.game.kind,
            )
            for row in rows
        ],
        "state": selectors.game_payload_for_seat(
            game=table.game, seat=seat, now=now, parsed=table.engine_state()
        ),
    }


def snapshot_frame(table: Table, seat: int | None, now: int) -> dict[str, Any]:
    from games import selectors

    return {
        "type": "snapshot",
        "game": table.game.pk,
        "version": table.game.version,
        "state": selectors.game_payload_for_seat(
            game=table.game, seat=seat, now=now, parsed=table.engine_state()
        ),
    }


def catch_up_frame(table: Table, seat: int | None, since: int | None) -> dict[str, Any]:
    """What a receiver that has `since` needs: the missed events, or a snapshot.

    A snapshot when it has nothing (`since` None), claims a version we never reached, or is
    too far behind.
    """
    now = clock.now_ms()
    if since is None or since < 0 or since > table.game.version:
        return snapshot_frame(table, seat, now)
    rows = events_between(table.game, since)
    if rows is None:
        return snapshot_frame(table, seat, now)
    return update_frame(table, seat, since, rows, now, private_from=table.game.version)


def change_messages(game_id: int, version: int) -> list[tuple[str, dict[str, Any]]]:
    """The channel-layer messages announcing `version` of the game: one per redaction group.

    Read from the database. If later changes committed meanwhile, the frame covers them too
    (state is read once, at the current version); their own `game_changed` calls then send
    frames the consumers drop as already seen.
    """
    table = load_table(game_id)
    if table is None or table.game.version < version:
        return []
    return _messages(table, events_between(table.game, version - 1), version)


def committed_messages(changes: list[Any]) -> list[tuple[str, dict[str, Any]]] | None:
    """The messages for these committed changes of one game, from what their authors held.

    `changes` (`services.Committed`) must be consecutive versions; the frame then says
    `prev_version` = the first one's predecessor and carries every one's events, with the
    state of the last -- exactly what `change_messages` would have read back. None when they
    are not consecutive (another process's change fell between): read the table then.
    """
    changes = sorted(changes, key=lambda c: c.game.version)
    first, last = changes[0].game.version, changes[-1].game.version
    if last - first != len(changes) - 1:
        return None
    newest = changes[-1]
    seat_users = newest.seat_users
    if seat_users is None:
        from games.models import Seat

        seats = Seat.objects.filter(game_id=newest.game.pk).values_list("number", "user_id")
        seat_users = dict(seats)
    table = Table(game=newest.game, seat_users=seat_users, parsed=newest.state)
    rows = [row for change in changes for row in change.events]
    return _messages(table, rows if len(rows) <= MAX_CATCHUP_EVENTS else None, first)


def _messages(
    table: Table, rows: list[Any] | None, version: int
) -> list[tuple[str, dict[str, Any]]]:
    """One message per redaction group: the events of `version` up to the table's (`rows`;
    None: too many, a snapshot instead) and the table's state, each encoded once."""
    game_id = table.game.pk
    now = clock.now_ms()
    seats_by_user = table.seats_by_user_id
    messages = []
    for seat in [*sorted(table.seat_users), None]:
        frame = (
            # Too many events to replay (a long coalesced burst): the whole view instead.
            snapshot_frame(table, seat, now)
            if rows is None
            else update_frame(table, seat, version - 1, rows, now, private_from=version)
        )
        messages.append(
            (
                view_group(game_id, seat),
                {
                    "type": "game.update",
                    "version": table.game.version,
                    "prev_version": version - 1,
                    "seats": seats_by_user,
                    "text": encode(frame),
                },
            )
        )
    # Seats a lobby change vacated (a player left or was removed; those after them moved down):
    # their old groups still hold those players' sockets, and nothing else would reach them.
    # They get the spectator frame, which no consumer forwards as is: the seat map no longer
    # matches the socket's seat, so it resyncs from the database, redacted for its new seat.
    removed = sum(1 for e in rows or [] if e.type in ("seat_left", "seat_kicked"))
    if removed:
        public = messages[-1][1]
        for number in range(len(table.seat_users), len(table.seat_users) + removed):
            messages.append((view_group(game_id, number), public))
    return messages


async def send_all(messages: list[tuple[str, dict[str, Any]]]) -> None:
    """Send every message through the channel layer: in one round trip per Redis host when the
    layer can (`games.layers`' `group_send_many`), else one `group_send` per group, concurrently
    (the in-memory layer)."""
    layer = get_channel_layer()
    many = getattr(layer, "group_send_many", None)
    if many is not None:
        await many(messages)
        return
    await asyncio.gather(*(layer.group_send(group, message) for group, message in messages))


def _publish(messages: list[tuple[str, dict[str, Any]]]) -> bool:
    """Publish from this (the live) thread when the layer can (the pub/sub layer's
    `publish_many`: the same `PUBLISH`es as `send_all`, with no other thread and no event
    loop); False when it cannot (the classic layer, the in-memory one): `_sender` then."""
    layer = get_channel_layer()
    publish = getattr(layer, "publish_many", None)
    if publish is None or not layer.publishes_without_loop:
        return False
    publish(messages, SEND_TIMEOUT)
    return True


def _send(messages: list[tuple[str, dict[str, Any]]]) -> None:
    """Send a job's messages: published on this thread if the layer can, else through the
    sender loop (`send_all`). Either way gives up after `SEND_TIMEOUT` seconds (per Redis
    host's connect and reply when published here) and raises."""
    if not _publish(messages):
        _sender.run(send_all(messages))


class _SenderLoop:
    """One event loop thread per process for channel-layer sends from synchronous code, for the
    layers that cannot publish from the calling thread (`_publish`: the classic and in-memory
    layers; the pub/sub layer does, since session 19).

    Why: `async_to_sync` from a Celery thread starts a new event loop per call, and the
    channel layer keeps its Redis connections per loop, so every broadcast paid for a thread,
    a loop and a fresh Redis connection (~9 ms measured; the whole broadcast is ~5 ms without
    it). A long-lived loop keeps one connection warm. It also never borrows a daphne process's
    main loop from its database thread.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._pid = 0

    def loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None or self._loop.is_closed() or self._pid != os.getpid():
                loop = asyncio.new_event_loop()
                threading.Thread(
                    target=loop.run_forever, name="crisp-broadcast", daemon=True
                ).start()
                self._loop, self._pid = loop, os.getpid()
            return self._loop

    def run(self, coroutine: Any, timeout: float = SEND_TIMEOUT) -> None:
        future = asyncio.run_coroutine_threadsafe(coroutine, self.loop())
        try:
            future.result(timeout)
        except BaseException:
            future.cancel()
            raise


_sender = _SenderLoop()


class Dispatcher:
    """One background thread per process that runs the live layer's after-commit work.

    Why: on commit, the change's author is a daphne process's *single* database thread (an
    action over a socket) or a Celery task. Reading the table and computing every group's
    frame there (~5 ms) would stall every other table of that daphne process behind it, and
    delay the next timer of that worker thread. Queued here, the author returns at once; one
    thread per process keeps the frames of one process in commit order.

    Broadcasts of one game coalesce: a burst of changes (a timer and an action back to back)
    goes out as one frame per group. A change handed in with what its author committed
    (`services.Committed`) is built from that, with no query; without it (a lobby change, a
    retry) or when the burst has a hole, the job reads the game's newest version once.
    Work still queued when the process exits is lost: receivers catch up by version, and
    the sweep enforces timers that were never enqueued.
    """

    def __init__(self) -> None:
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._pid = 0
        # game id -> (lowest version not yet broadcast, the committed changes since; None if
        # any of them came without one: the job reads the table then).
        self._pending: dict[int, tuple[int, list[Any] | None]] = {}

    def submit(self, job: Any) -> None:
        with self._lock:
            if self._thread is None or not self._thread.is_alive() or self._pid != os.getpid():
                self._thread = threading.Thread(target=self._run, name="crisp-live", daemon=True)
                self._pid = os.getpid()
                self._thread.start()
        self._queue.put(job)

    def changed(self, game_id: int, version: int, change: Any = None) -> None:
        with self._lock:
            known = self._pending.get(game_id)
            self._remember(game_id, version, change)
            if known is not None:
                return  # a job for this game is queued; it will cover this version too
        self.submit(lambda: self._broadcast(game_id))

    def _remember(self, game_id: int, version: int, change: Any) -> None:
        """Add a version to the game's pending broadcast (caller holds `_lock`)."""
        known = self._pending.get(game_id)
        if known is None:
            self._pending[game_id] = (version, None if change is None else [change])
            return
        lowest, changes = known
        both = changes is not None and change is not None
        changes = [*changes, change] if both else None  # type: ignore[misc]
        self._pending[game_id] = (min(lowest, version), changes)

    def _broadcast(self, game_id: int, attempt: int = 0) -> None:
        with self._lock:
            pending = self._pending.pop(game_id, None)
        if pending is None:
            return
        version, changes = pending
        try:
            messages = committed_messages(changes) if changes else None
            if messages is None:
                messages = change_messages(game_id, version)
            if messages:
                _send(messages)
        except Exception:
            # Dropped, an idle game's receivers would never notice: try again a little later.
            if attempt < len(RETRY_DELAYS):
                self._retry_later(game_id, version, attempt + 1, RETRY_DELAYS[attempt])
            raise  # logged by _run

    def _retry_later(self, game_id: int, version: int, attempt: int, delay: float) -> None:
        with self._lock:
            self._remember(game_id, version, None)  # a retry reads the table
        timer = threading.Timer(
            delay, lambda: self.submit(lambda: self._broadcast(game_id, attempt))
        )
        timer.daemon = True
        timer.start()

    def _run(self) -> None:
        from django.db import close_old_connections, connection
        from django.db.utils import DatabaseError

        while True:
            job = self._queue.get()
            try:
                job()
            except DatabaseError:
                logger.exception("live job failed (database); reconnecting")
                connection.close()
            except Exception:
                logger.exception("live job failed")
            finally:
                if self._queue.empty():
                    close_old_connections()

    def drain(self, timeout: float = 10.0) -> None:
        """Wait until everything queued so far has run (tests, benchmarks, shutdown)."""
        done = threading.Event()
        self.submit(done.set)
        done.wait(timeout)


dispatcher = Dispatcher()


def game_changed(game_id: int, version: int, change: Any = None) -> None:
    """Push version `version` of the game to every receiver (run on commit; never raises).

    Queued to the process's live thread (see `Dispatcher`), which builds each redaction
    group's frame -- from `change` (`services.Committed`, what the author committed) if given,
    else from one read of the table -- and sends it. The change is committed whatever happens
    there: if
    Redis is unreachable the receivers miss the frame and catch up when they reconnect or see
    the next version (a gap), so a failure is logged, not raised into the request or task.
    """
    try:
        dispatcher.changed(game_id, version, change)
    except Exception:
        logger.exception("broadcast of game %s version %s not queued", game_id, version)


def presence_message(game_id: int, summary: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """A `presence` frame (seats and spectator count) for every socket of the table.

    Sent when a seat's socket comes or goes, never for a spectator's (games.presence).
    """
    frame = {"type": "presence", "game": game_id, **summary}
    return table_group(game_id), {"type": "game.presence", "text": encode(frame)}


def presence_frame(game_id: int, summary: dict[str, Any]) -> str:
    """The `presence` frame for one socket (a connecting one learns the table as it is)."""
    return encode({"type": "presence", "game": game_id, **summary})


def spectators_message(game_id: int, count: int) -> tuple[str, dict[str, Any]]:
    """The coalesced `spectators` frame for every socket of the table (at most one per game
    per `games.presence.SPECTATORS_EVERY_SECONDS`). Handled as `game.presence`: a socket
    forwards it as it is."""
    frame = {"type": "spectators", "game": game_id, "spectators": count}
    return table_group(game_id), {"type": "game.presence", "text": encode(frame)}


def chat_frame(message: Any) -> dict[str, Any]:
    """A chat line as every receiver of the table gets it (players and spectators alike)."""
    from games import selectors

    return {"type": "chat", "game": message.game_id, "message": selectors.chat_payload(message)}


def chat_posted(game_id: int, message_id: int) -> None:
    """Send a new chat line to every socket of the table (run on commit; never raises).

    Chat is not game state: it has no version and is not replayed by resync; a client that
    missed lines while offline reads them back from GET /api/v1/games/<id>/chat/.
    """

    def job() -> None:
        from games.models import ChatMessage

        message = ChatMessage.objects.select_related("user").filter(pk=message_id).first()
        if message is None:
            return
        text = encode(chat_frame(message))
        _send([(table_group(game_id), {"type": "game.chat", "text": text})])

    try:
        dispatcher.submit(job)
    except Exception:
        logger.exception("chat line %s of game %s not queued", message_id, game_id)


def user_group(user_id: int) -> str:
    """`user.<id>`: every socket and long poll of one person (issue 26, "your move")."""
    return f"user.{user_id}"


def turns_changed(user_ids: list[int]) -> None:
    """Tell each person's sockets and long polls that their "your move" list changed (run on
    commit by the service layer; never raises).  The message carries no count nor game: each
    receiver reads the person's own list (`games.turns`), so nothing here can leak."""
    ids = sorted(set(user_ids))
    if not ids:
        return

    def job() -> None:
        _send([(user_group(u), {"type": "turns.changed"}) for u in ids])

    try:
        dispatcher.submit(job)
    except Exception:
        logger.exception("your-move wake-up for %s not queued", ids)
