"""Presence with a crowd (issue 21, item 5): what spectators coming and going cost the others.

Every join or leave used to send a `presence` frame to every socket of the game: N watchers
arriving cost N² frames (500 on one table: 250,000, and handshakes timed out behind them).
Now a spectator's change reaches the others only as one coalesced `spectators` count per period,
while a seat's player coming or going is still announced at once. bench/watchers.py measures
the real thing; these tests prove the bound without any clock: the period's wait is held open
by the test (`held_period`), so what one period gathers is exactly countable, and "no frame
came" is proven by a chat line sent afterwards through the same table group (Redis delivers a
channel's messages in order, so every frame published before it arrives before it).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from channels.db import database_sync_to_async

from games import presence
from tests.live.conftest import communicator, make_game, make_user, session_cookie

pytestmark = pytest.mark.django_db(transaction=True)

db = database_sync_to_async

#: Frames that tell a socket who is at the table.
PRESENCE_TYPES = ("presence", "spectators")

#: Hang guards, not speed goals: a frame or a handshake waits up to ``WAIT`` s; a database call
#: the test holds up is let go after ``HOLD`` s at the latest (the test releases it as soon as it
#: has seen what it needs), longer than ``WAIT``, so a handshake answered only after that call
#: still fails at its own wait, however busy the machine.
WAIT = 30
HOLD = 120


async def until(comm: Any, kind: str, seen: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The next frame of type `kind`; the frames skipped on the way go to `seen`."""
    while True:
        frame = await comm.receive_json_from(timeout=WAIT)
        if frame["type"] == kind:
            return frame
        if seen is not None:
            seen.append(frame)


async def presence_frames_before_a_chat_line(player: Any, text: str) -> list[dict[str, Any]]:
    """Every presence-like frame the player got before its own chat line came back."""
    await player.send_json_to({"type": "chat", "id": text, "text": text})
    seen: list[dict[str, Any]] = []
    while (await until(player, "chat", seen))["message"]["text"] != text:
        pass
    return [f for f in seen if f["type"] in PRESENCE_TYPES]


@pytest.fixture
async def held_period(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[asyncio.Event]:
    """The spectator count's period, held open until the test sets the event (then closed
    again for the next period: the event is cleared once a count has gone by)."""
    gate = asyncio.Event()

    async def wait_period() -> None:
        await gate.wait()
        gate.clear()

    # raising=False: on code without coalescing the tests fail on what they assert, not here.
    monkeypatch.setattr(presence, "_wait_period", wait_period, raising=False)
    yield gate
    for task in list(getattr(presence, "_counts", ())):
        task.cancel()


@pytest.fixture
def table(scheduled: Any) -> tuple[list[Any], list[Any], Any]:
    """A started game of two players, and watchers who are not in it."""
    players = [make_user(), make_user()]
    game = make_game(players, timers={"memorise_ms": 0, "start_delay_ms": 0, "window_ms": 0})
    return players, [make_user() for _ in range(8)], game


async def connected(game_id: int, user: Any) -> Any:
    comm = communicator(game_id, cookie=await db(session_cookie)(user))
    connected_, _ = await comm.connect()
    assert connected_
    await until(comm, "snapshot")
    return comm


async def test_spectators_coming_and_going_send_the_players_no_frame_each(
    table: Any, held_period: asyncio.Event
) -> None:
    """8 spectators joining, then leaving, within one period: no frame to the player."""
    players, watchers, game = table
    player = await connected(game.pk, players[0])
    assert (await until(player, "presence"))["seats"] == {"0": 1}
    spectators = []
    for watcher in watchers:
        comm = await connected(game.pk, watcher)
        await until(comm, "presence")  # its own view of the table: its presence is registered
        spectators.append(comm)
    assert await presence_frames_before_a_chat_line(player, "joined") == []
    for comm in spectators:
        await comm.disconnect()  # returns once the consumer has cleaned up
    assert await presence_frames_before_a_chat_line(player, "left") == []
    await player.disconnect()


async def test_the_coalesced_count_arrives_once_per_period_and_is_right(
    table: Any, held_period: asyncio.Event
) -> None:
    players, watchers, game = table
    player = await connected(game.pk, players[0])
    await until(player, "presence")
    spectators = [await connected(game.pk, w) for w in watchers]
    held_period.set()  # the period ends: one count for every join in it
    count = await until(player, "spectators")
    assert count == {
        "type": "spectators",
        "game": game.pk,
        "spectators": len(watchers),
        "server_time": count["server_time"],
    }
    for comm in spectators:  # the spectators get the same one frame
        assert (await until(comm, "spectators"))["spectators"] == len(watchers)
    assert await presence_frames_before_a_chat_line(player, "one count") == []
    for comm in spectators[2:]:
        await comm.disconnect()
    held_period.set()
    assert (await until(player, "spectators"))["spectators"] == 2
    assert await presence_frames_before_a_chat_line(player, "two left") == []
    for comm in [*spectators[:2], player]:
        await comm.disconnect()


async def test_a_seat_coming_and_going_is_announced_at_once(
    table: Any, held_period: asyncio.Event
) -> None:
    """The seats' dots do not wait for the spectator count's period (held open here)."""
    players, watchers, game = table
    spectator = await connected(game.pk, watchers[0])
    own = await until(spectator, "presence")  # a connecting socket learns the table
    assert (own["seats"], own["spectators"]) == ({}, 1)
    player = await connected(game.pk, players[1])
    assert (await until(spectator, "presence"))["seats"] == {"1": 1}
    await player.disconnect()
    assert (await until(spectator, "presence"))["seats"] == {}
    await spectator.disconnect()


async def test_the_database_threads_keep_their_sqlite_connection(
    transactional_db: None,
) -> None:
    """A socket's connect made three database calls, each opening a SQLite connection (a
    third of the database threads' time with 500 watchers arriving): a pool thread now opens
    one and keeps it."""
    from django.db import connection
    from django.db.backends.signals import connection_created

    from crisp_site.db import db_threads, parallel_database_sync_to_async

    if connection.vendor != "sqlite":
        pytest.skip("SQLite only; PostgreSQL's kept connections: tests/site/test_db_threads.py")
    opened: list[int] = []

    def count(sender: Any, connection: Any, **kwargs: Any) -> None:
        opened.append(1)

    def query() -> int:
        from games.models import Game

        return Game.objects.count()

    connection_created.connect(count)
    try:
        for _ in range(3 * db_threads()):
            await parallel_database_sync_to_async(query)()
    finally:
        connection_created.disconnect(count)
    # (0 when every pool thread already has one from an earlier test; 3 per thread before)
    assert len(opened) <= db_threads(), (len(opened), db_threads())


async def test_the_handshake_is_answered_before_the_database_is_read(
    table: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """daphne drops a socket its application has not accepted within 5 s: with a crowd
    arriving, the database threads' queue was longer than that, and handshakes failed."""
    import threading

    from games import consumers

    _, watchers, game = table
    release = threading.Event()
    real = consumers._seat_of

    def slow_seat_of(*args: Any) -> Any:
        release.wait(HOLD)  # the database threads are busy with everyone else's connect
        return real(*args)

    monkeypatch.setattr(consumers, "_seat_of", slow_seat_of)
    comm = communicator(game.pk, cookie=await db(session_cookie)(watchers[0]))
    try:
        connected_, _ = await comm.connect(timeout=WAIT)
        assert connected_
    finally:
        release.set()
    await until(comm, "snapshot")  # and the first frame is still the snapshot
    await comm.disconnect()


async def test_a_crowd_connecting_does_its_database_work_a_few_at_a_time(
    table: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The connect's database work holds the GIL: a crowd on every database thread left the
    event loop too little of it to answer handshakes. Connects past `CONNECT_SLOTS` wait."""
    import threading

    from games import consumers

    _, watchers, game = table
    slots = getattr(consumers, "CONNECT_SLOTS", 2)
    # The connects past the slots wait until the test lets the first ones go, however long the
    # six handshakes take on a busy machine (the bound on that wait is the next test's).
    monkeypatch.setattr(consumers, "CONNECT_WAIT_SECONDS", HOLD, raising=False)
    lock, inside, most = threading.Lock(), [0], [0]
    release = threading.Event()
    real = consumers._seat_of

    def crowded_seat_of(*args: Any) -> Any:
        with lock:
            inside[0] += 1
            most[0] = max(most[0], inside[0])
        release.wait(HOLD)
        with lock:
            inside[0] -= 1
        return real(*args)

    monkeypatch.setattr(consumers, "_seat_of", crowded_seat_of)
    cookies = [await db(session_cookie)(w) for w in watchers[:6]]
    comms = [communicator(game.pk, cookie=c) for c in cookies]
    try:
        for comm in comms:
            connected_, _ = await comm.connect(timeout=WAIT)  # answered while the others wait
            assert connected_
        while inside[0] < slots:
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.3)  # room for a connect past the bound to show itself
    finally:
        release.set()
    for comm in comms:
        await until(comm, "snapshot")
        await comm.disconnect()
    assert most[0] == slots


async def test_a_connect_that_waits_too_long_for_a_slot_is_told_to_try_again_later(
    table: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A consumer waiting in `connect()` does not see its client leave; daphne kills one still
    running 10 s after, with a warning each (hundreds with a crowd). The wait is bounded."""
    import threading

    from games import consumers

    _, watchers, game = table
    monkeypatch.setattr(consumers, "CONNECT_SLOTS", 1, raising=False)
    monkeypatch.setattr(consumers, "CONNECT_WAIT_SECONDS", 0.2, raising=False)
    release, entered = threading.Event(), threading.Event()
    real = consumers._seat_of

    def busy_seat_of(*args: Any) -> Any:
        entered.set()
        release.wait(HOLD)
        return real(*args)

    monkeypatch.setattr(consumers, "_seat_of", busy_seat_of)
    first = communicator(game.pk, cookie=await db(session_cookie)(watchers[0]))
    late = communicator(game.pk, cookie=await db(session_cookie)(watchers[1]))
    try:
        assert (await first.connect(timeout=WAIT))[0]
        await asyncio.get_running_loop().run_in_executor(None, entered.wait, WAIT)
        assert (await late.connect(timeout=WAIT))[0]
        output = await late.receive_output(timeout=WAIT)
        assert (output["type"], output.get("code")) == ("websocket.close", 4503)
    finally:
        release.set()
    await until(first, "snapshot")
    await first.disconnect()
