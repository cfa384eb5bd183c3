"""The ASGI app serves HTTP and WebSocket, through the real Redis channel layer."""

from __future__ import annotations

import asyncio
import json
import urllib.request

import pytest
import websockets
from channels.testing import HttpCommunicator, WebsocketCommunicator

from crisp_site.asgi import application
from tests import processes as live


@pytest.mark.django_db
async def test_home_page_over_asgi() -> None:
    communicator = HttpCommunicator(application, "GET", "/", headers=[(b"host", b"localhost")])
    # The first request imports every URL module (DRF, drf-spectacular…): allow for a slow start.
    response = await communicator.get_response(timeout=30)
    assert response["status"] == 200
    assert b"Crisp" in response["body"]


@pytest.mark.django_db
async def test_websocket_ping_travels_through_the_redis_layer() -> None:
    communicator = WebsocketCommunicator(
        application,
        "/ws/ping/",
        headers=[(b"origin", b"http://localhost"), (b"host", b"localhost")],
    )
    connected, _ = await communicator.connect(timeout=30)
    assert connected
    await communicator.send_json_to({"type": "ping", "data": 42})
    assert await communicator.receive_json_from(timeout=30) == {"type": "pong", "data": 42}
    await communicator.send_json_to({"type": "nonsense"})
    error = await communicator.receive_json_from(timeout=30)
    assert error["type"] == "error" and error["code"] == "bad_frame"
    await communicator.disconnect()


async def test_websocket_from_a_foreign_origin_is_refused() -> None:
    communicator = WebsocketCommunicator(
        application,
        "/ws/ping/",
        headers=[(b"origin", b"http://evil.example"), (b"host", b"localhost")],
    )
    connected, _ = await communicator.connect(timeout=30)
    assert not connected


@pytest.mark.live
@pytest.mark.django_db(transaction=True)
def test_real_daphne_serves_http_and_websocket(log_dir) -> None:
    port = live.free_port()
    with live.running(live.daphne(log_dir, port)):
        live.wait_until(lambda: live.port_open(port), 30, "daphne to listen")
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/") as response:
            assert response.status == 200
            assert b"Crisp" in response.read()

        async def ping() -> dict:
            async with websockets.connect(
                f"ws://127.0.0.1:{port}/ws/ping/", origin="http://localhost"
            ) as socket:
                await socket.send(json.dumps({"type": "ping", "data": "hello"}))
                return json.loads(await asyncio.wait_for(socket.recv(), 10))

        assert asyncio.run(ping()) == {"type": "pong", "data": "hello"}


@pytest.mark.django_db(transaction=True)
async def test_token_client_without_origin_connects_but_a_foreign_origin_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Non-browser clients (no Origin header) authenticate by token; browsers always send one."""
    from channels.db import database_sync_to_async

    from accounts.services import token_create
    from tests.live.conftest import make_game, make_user

    monkeypatch.setattr(
        "games.scheduling.schedule_deadlines", lambda game_id, deadlines, version=None: None
    )

    def setup() -> tuple[int, str]:
        players = [make_user(), make_user()]
        game = make_game(players)
        return game.pk, token_create(user=players[1], name="bot")[1]

    game_id, key = await database_sync_to_async(setup)()
    path = f"/ws/games/{game_id}/?token={key}"
    bot = WebsocketCommunicator(application, path, headers=[(b"host", b"localhost")])
    connected, _ = await bot.connect(timeout=30)
    assert connected
    snapshot = await bot.receive_json_from(timeout=30)
    assert snapshot["type"] == "snapshot" and snapshot["state"]["state"]["seat"] == 1
    await bot.disconnect()

    foreign = WebsocketCommunicator(
        application, path, headers=[(b"origin", b"http://evil.example"), (b"host", b"localhost")]
    )
    connected, _ = await foreign.connect(timeout=30)
    assert not connected


@pytest.mark.live
@pytest.mark.django_db(transaction=True)
def test_daphnes_started_with_reuse_port_share_one_port(log_dir) -> None:
    """The scale-out recipe (README, "Scaling out"): N daphnes on one port, the kernel
    spreading the connections over them (``crisp_site.serve --reuse-port``)."""
    import psutil

    port = live.free_port()
    first = live.daphne(log_dir, port, "daphne-a", reuse_port=True)
    second = live.daphne(log_dir, port, "daphne-b", reuse_port=True)
    with live.running(first, second):
        live.wait_until(lambda: live.port_open(port), 30, "a daphne to listen")

        def listening(process: live.LiveProcess) -> bool:
            return any(
                c.status == psutil.CONN_LISTEN and c.laddr.port == port
                for c in psutil.Process(process.process.pid).net_connections("tcp")
            )

        live.wait_until(lambda: listening(first) and listening(second), 30, "both to listen")

        def served_by() -> dict[int, int]:
            out = {}
            for process in (first, second):
                conns = psutil.Process(process.process.pid).net_connections("tcp")
                out[process.process.pid] = sum(
                    c.status == psutil.CONN_ESTABLISHED and c.laddr.port == port for c in conns
                )
            return out

        async def many() -> dict[int, int]:
            sockets = [
                await websockets.connect(
                    f"ws://127.0.0.1:{port}/ws/ping/", origin="http://localhost"
                )
                for _ in range(24)
            ]
            try:
                for i, ws in enumerate(sockets):  # every one is served
                    await ws.send(json.dumps({"type": "ping", "data": i}))
                    assert json.loads(await asyncio.wait_for(ws.recv(), 30))["data"] == i
                return served_by()
            finally:
                for ws in sockets:
                    await ws.close()

        counts = asyncio.run(many())
    # 24 connections, each to one of two sockets by the kernel's hash: both get some (all on
    # one has a chance of 2**-23).
    assert sum(counts.values()) == 24 and all(counts.values()), counts
