"""The game consumer survives bad frames and failing handlers, and never leaves a ghost seat.

A consumer that dies without `disconnect()` would leave its heartbeat task touching presence
forever (a "connected" seat nobody holds); these tests pin the cleanup.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from channels.db import database_sync_to_async

from games import presence
from tests.live.conftest import communicator, make_game, make_user, session_cookie
from tests.live.test_consumer import WAIT, until

pytestmark = pytest.mark.django_db(transaction=True)

db = database_sync_to_async


@pytest.fixture
def two_players(scheduled: Any) -> tuple[list[Any], Any]:
    players = [make_user(), make_user()]
    game = make_game(players, timers={"memorise_ms": 0, "start_delay_ms": 0, "window_ms": 0})
    return players, game


@pytest.fixture
def touches(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Channel names of every presence touch, with a fast heartbeat."""
    seen: list[str] = []
    real = presence.touch

    async def touch(
        game_id: int, seat: int | None, channel_name: str, person: str | None = None
    ) -> Any:
        seen.append(channel_name)
        return await real(game_id, seat, channel_name, person=person)

    monkeypatch.setattr(presence, "touch", touch)
    monkeypatch.setattr(presence, "REFRESH_SECONDS", 0.05)
    return seen


async def test_binary_and_empty_frames_get_bad_frame_and_the_socket_lives_on(
    two_players: Any,
) -> None:
    players, game = two_players
    comm = communicator(game.pk, cookie=await db(session_cookie)(players[0]))
    await comm.connect()
    await until(comm, "snapshot")
    await comm.send_to(bytes_data=b"\x00\x01")
    assert (await until(comm, "error"))["code"] == "bad_frame"
    await comm.send_input({"type": "websocket.receive", "text": ""})
    assert (await until(comm, "error"))["code"] == "bad_frame"
    await comm.send_to(text_data="{not json")
    assert (await until(comm, "error"))["code"] == "bad_frame"
    await comm.send_json_to({"type": "ping", "id": "still-here"})
    assert (await until(comm, "pong"))["id"] == "still-here"
    await comm.disconnect()


async def _wait_for_close(comm: Any, timeout: float = WAIT) -> int:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        output = await comm.receive_output(timeout=max(0.05, deadline - loop.time()))
        if output["type"] == "websocket.close":
            return output.get("code", 1000)


async def test_a_failing_handler_closes_1011_and_cleans_up(
    two_players: Any, touches: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from games.consumers import GameConsumer

    players, game = two_players
    watcher = communicator(game.pk, cookie=await db(session_cookie)(players[1]))
    await watcher.connect()
    await until(watcher, "snapshot")
    victim = communicator(game.pk, cookie=await db(session_cookie)(players[0]))
    await victim.connect()
    await until(victim, "snapshot")
    while (await until(watcher, "presence"))["seats"] != {"0": 1, "1": 1}:
        pass

    async def boom(self: Any, ref: Any, content: Any) -> None:
        raise RuntimeError("handler bug")

    monkeypatch.setattr(GameConsumer, "_on_act", boom)
    await victim.send_json_to({"type": "act", "id": 1, "action": {"type": "look"}})
    assert await _wait_for_close(victim) == 1011
    while (await until(watcher, "presence"))["seats"] != {"1": 1}:
        pass  # the dead socket left presence
    # ...and its heartbeat stopped: no more touches from it.  Over the watcher's next beats
    # (counted, not timed: a busy machine slows both heartbeats alike), after two that a beat
    # of the victim's still under way could share, only one socket touches: the watcher.
    before = len(touches)
    async with asyncio.timeout(WAIT):
        while len(touches) < before + 8:
            await asyncio.sleep(0.01)  # a polling interval
    assert len(set(touches[before + 2 :])) <= 1  # only the watcher's heartbeat
    await watcher.disconnect()


async def test_a_heartbeat_that_loses_its_cancellation_still_stops_and_the_close_is_prompt(
    two_players: Any, touches: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Python 3.11's `asyncio.wait_for` can swallow a cancellation (redis-py used it per send):
    the heartbeat then went on beating for a closed socket, and the close waited on it."""
    real = presence.touch  # the fixture's recording wrapper
    armed, entered = [False], asyncio.Event()
    swallowed: list[int] = []
    beating: list[asyncio.Task[Any]] = []  # the heartbeat task that lost its cancellation

    async def touch_losing_a_cancel(
        game_id: int, seat: int | None, channel_name: str, person: str | None = None
    ) -> Any:
        if armed[0] and not swallowed:
            entered.set()
            try:
                # A Redis that never answers: the close's cancellation lands in here. Never
                # answering (not a few seconds' sleep) makes "the close is prompt" an event: a
                # close that waited for this beat would never come, and the disconnect below
                # would fail, however busy the machine.
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                swallowed.append(1)
                current = asyncio.current_task()
                assert current is not None
                current.uncancel()  # what wait_for's race does: the task runs on
                beating.append(current)
        return await real(game_id, seat, channel_name, person=person)

    monkeypatch.setattr(presence, "touch", touch_losing_a_cancel)
    players, game = two_players
    comm = communicator(game.pk, cookie=await db(session_cookie)(players[0]))
    await comm.connect()
    await until(comm, "snapshot")  # connect's own touch is done: what follows is a heartbeat
    armed[0] = True
    async with asyncio.timeout(WAIT):
        await entered.wait()
    await comm.disconnect(timeout=WAIT)  # returns only if the close did not wait for the beat
    assert swallowed  # the cancellation really was lost, inside a beat
    closed = len(touches)
    # ...and no beat ran after the socket closed: the heartbeat task itself ends (the event,
    # not a guessed half second; a heartbeat beating on for a closed socket never would),
    # after finishing at most the beat it was inside.
    [beat] = beating
    done, _ = await asyncio.wait([beat], timeout=WAIT)
    assert done, "the heartbeat went on after the close"
    assert len(touches) - closed <= 1


async def test_a_failing_resync_closes_1011(
    two_players: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    players, game = two_players
    comm = communicator(game.pk, cookie=await db(session_cookie)(players[0]))
    await comm.connect()
    await until(comm, "snapshot")

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("database trouble")

    monkeypatch.setattr("games.broadcast.catch_up_frame", broken)
    await comm.send_json_to({"type": "resync", "version": game.version})
    assert await _wait_for_close(comm) == 1011


async def test_ack_events_are_redacted_for_the_seat_the_user_holds_not_a_cached_one(
    two_players: Any,
) -> None:
    """`_act` reads the actor's seat itself: a socket's cached seat may be stale."""
    from games.consumers import _act

    players, game = two_players
    content = {"id": "a", "action": {"type": "look"}, "version": game.version}
    seat, ack = await db(_act)(game.pk, players[1], content)
    assert seat == 1
    [look] = [e for e in ack["events"] if e["type"] == "look"]
    assert look["data"]["left"] and look["data"]["right"]  # the actor's form, seat 1


async def test_heartbeat_survives_a_failing_beat_and_resyncs_in_order(
    two_players: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from games.consumers import GameConsumer

    monkeypatch.setattr(presence, "REFRESH_SECONDS", 0.05)
    beats: list[int] = []
    real_touch = GameConsumer._touch_presence

    async def flaky(self: Any, force: bool = False) -> None:
        if not force:
            beats.append(1)
            if len(beats) == 1:
                raise RuntimeError("one bad beat")
        await real_touch(self, force)

    monkeypatch.setattr(GameConsumer, "_touch_presence", flaky)
    # Every beat sees a "restarted" Redis: each triggers a catch-up.
    run_ids = iter(range(10**6))

    async def new_run_id() -> str:
        return str(next(run_ids))

    monkeypatch.setattr(presence, "server_run_id", new_run_id)
    on_heartbeat_task: list[bool] = []
    real_resync = GameConsumer._resync

    async def resync(self: Any, since: int | None) -> bool:
        on_heartbeat_task.append(asyncio.current_task() is self.heartbeat)
        return await real_resync(self, since)

    monkeypatch.setattr(GameConsumer, "_resync", resync)

    players, game = two_players
    comm = communicator(game.pk, cookie=await db(session_cookie)(players[0]))
    await comm.connect()
    await until(comm, "snapshot")
    catch_up = await until(comm, "update")  # from a heartbeat's resync, no change needed
    assert catch_up["version"] == game.version and catch_up["events"] == []
    assert len(beats) >= 2  # the beat after the failing one ran
    assert on_heartbeat_task and not any(on_heartbeat_task)
    await comm.disconnect()


async def test_broadcast_and_client_frames_cost_no_database_thread_hop(
    two_players: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Channels' dispatch would run aclose_old_connections (a DB-thread hop) per message."""
    import channels.consumer

    players, game = two_players
    a = communicator(game.pk, cookie=await db(session_cookie)(players[0]))
    await a.connect()
    await until(a, "snapshot")
    await until(a, "presence")
    hops: list[int] = []
    real = channels.consumer.aclose_old_connections

    async def counted() -> None:
        hops.append(1)
        await real()

    monkeypatch.setattr(channels.consumer, "aclose_old_connections", counted)
    b = communicator(game.pk, cookie=await db(session_cookie)(players[1]))
    await b.connect()
    await until(b, "snapshot")
    hops.clear()  # b's own connect may hop; what follows must not
    await until(a, "presence")  # game.presence through the layer
    await a.send_json_to({"type": "ping", "id": 1})
    await until(a, "pong")
    await b.send_json_to({"type": "act", "id": 2, "action": {"type": "look"}})
    await until(b, "ack")
    await until(a, "update")  # game.update through the layer
    assert hops == []
    await a.disconnect()
    await b.disconnect()


async def test_a_redis_pool_that_times_out_costs_one_log_line_not_a_traceback_per_beat(
    two_players: Any, touches: list[str], monkeypatch: pytest.MonkeyPatch, caplog: Any
) -> None:
    """Found at 500 tables on one daphne: every heartbeat of 2,000 sockets waited out the
    presence pool (`ConnectionError: No connection available.`) and logged a 36-line
    traceback: 6,000 in 45 s. Now: one line per 10 s per process, and the socket lives on."""
    import logging

    from redis.exceptions import ConnectionError as RedisConnectionError

    async def exhausted(
        game_id: int, seat: int | None, channel_name: str, person: str | None = None
    ) -> Any:
        touches.append(channel_name)
        raise RedisConnectionError("No connection available.")

    monkeypatch.setattr(presence, "touch", exhausted)
    monkeypatch.setitem(presence._reported, "at", float("-inf"))
    caplog.set_level(logging.INFO)
    players, game = two_players
    comm = communicator(game.pk, cookie=await db(session_cookie)(players[0]))
    await comm.connect()
    await until(comm, "snapshot")
    # The connect's touch and several failing beats: polled for (the beats are 50 ms apart),
    # with the suite's 60 s ceiling, so a heartbeat that never touches fails here, not at the
    # run's hang guard 15 minutes later.
    async with asyncio.timeout(60):
        while len(touches) < 6:
            await asyncio.sleep(0.05)
    await comm.send_json_to({"type": "ping", "id": "alive"})
    assert (await until(comm, "pong"))["id"] == "alive"
    await comm.disconnect()
    lines = [r for r in caplog.records if "presence" in r.getMessage()]
    assert len(lines) == 1, [r.getMessage() for r in lines]
    assert lines[0].levelno == logging.WARNING and lines[0].exc_info is None
    assert "ConnectionError: No connection available." in lines[0].getMessage()
