"""The game socket's input limits on a real daphne (crisp_site.serve), as docs/PROTOCOL.md says.

A frame over 1 MiB is refused with close code 1009 (autobahn used to drop the TCP connection with
no close frame); JSON nested too deep is a `bad_frame` error and the socket lives on.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import websockets
from websockets.asyncio.client import connect

from accounts.services import token_create
from tests import processes as live
from tests.live.conftest import make_game, make_user

pytestmark = [pytest.mark.live, pytest.mark.django_db(transaction=True)]

MAX_MESSAGE = 1024 * 1024  # daphne's --websocket-max-message-size default, in PROTOCOL.md


async def _frame(socket: Any, kind: str) -> dict[str, Any]:
    while True:
        frame = json.loads(await socket.recv())
        if frame["type"] == kind:
            return frame


async def test_oversized_frame_closes_1009_and_deep_json_is_a_bad_frame(log_dir: Any) -> None:
    from channels.db import database_sync_to_async

    def setup() -> tuple[int, str]:
        players = [make_user(), make_user()]
        game = make_game(players, start=False)
        return game.pk, token_create(user=players[0], name="limits")[1]

    game_id, key = await database_sync_to_async(setup)()
    port = live.free_port()
    with live.running(live.daphne(log_dir, port)):
        live.wait_until(lambda: live.port_open(port), 30, "daphne to listen")
        url = f"ws://127.0.0.1:{port}/ws/games/{game_id}/?token={key}"
        async with connect(url, compression=None, max_size=None) as socket:
            await _frame(socket, "snapshot")
            await socket.send("[" * 1000 + "]" * 1000)
            error = await _frame(socket, "error")
            assert error["code"] == "bad_frame"
            await socket.send(json.dumps({"type": "ping", "id": "after"}))
            assert (await _frame(socket, "pong"))["id"] == "after"  # the socket lives on

            await socket.send(json.dumps({"type": "ping", "pad": "x" * MAX_MESSAGE}))
            with pytest.raises(websockets.ConnectionClosed):
                while True:
                    await socket.recv()
            assert socket.close_code == 1009, (socket.close_code, socket.close_reason)
            assert socket.protocol.close_rcvd is not None  # a real close frame, not a reset

        async with connect(url, compression=None) as socket:  # just under the limit: served
            await _frame(socket, "snapshot")
            pad = "x" * (MAX_MESSAGE - 100)
            await socket.send(json.dumps({"type": "ping", "id": "big", "pad": pad}))
            assert (await _frame(socket, "pong"))["id"] == "big"


async def test_a_client_that_closes_at_once_is_not_a_server_error(log_dir: Any) -> None:
    """Frames for a socket that just closed (its own presence, a pong) are dropped quietly.

    daphne raises autobahn's `Disconnected` ("Attempt to send on a closed protocol") for a send
    after the client's close; that used to be logged as an ERROR with a traceback.
    """
    from channels.db import database_sync_to_async

    def setup() -> tuple[int, list[str]]:
        players = [make_user(), make_user()]
        game = make_game(players, start=False)
        return game.pk, [token_create(user=p, name="quick")[1] for p in players]

    game_id, keys = await database_sync_to_async(setup)()
    port = live.free_port()
    with live.running(live.daphne(log_dir, port)) as (web,):
        live.wait_until(lambda: live.port_open(port), 30, "daphne to listen")
        watcher_url = f"ws://127.0.0.1:{port}/ws/games/{game_id}/?token={keys[1]}"
        async with connect(watcher_url) as watcher:  # keeps presence frames flowing
            await _frame(watcher, "snapshot")
            for n in range(30):
                url = f"ws://127.0.0.1:{port}/ws/games/{game_id}/?token={keys[0]}"
                socket = await connect(url)
                if n % 2:
                    await socket.recv()
                await socket.send(json.dumps({"type": "ping", "id": n}))
                await socket.close()  # at once: the pong and presence frames are still to come
            await watcher.send(json.dumps({"type": "ping", "id": "end"}))
            assert (await _frame(watcher, "pong"))["id"] == "end"
        log = web.log()
    assert "Traceback" not in log, log
    assert "ERROR" not in log, log
