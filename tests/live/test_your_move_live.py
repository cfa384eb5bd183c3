"""Issue 26: the "your move" long poll (``GET /api/v1/me/turns/?wait=N``) and the per-person
socket (``/ws/me/``), in process over the real Redis channel layer.

``transaction=True``: the view and the consumer read on the database thread pool, and the
service layer's on-commit wake-up (``broadcast.turns_changed``) must run.  Every wait is for an
event (a frame, a response, a Redis group's member); none is a guessed sleep.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from channels.testing import HttpCommunicator

from accounts.services import token_create
from crisp_site.asgi import application
from games import broadcast, services
from tests.live.conftest import Communicator, make_game, make_user, session_cookie

pytestmark = pytest.mark.django_db(transaction=True)

db = database_sync_to_async
WAIT = 60
QUICK = {"memorise_ms": 0, "start_delay_ms": 0, "window_ms": 0}


def _crisp_turn(game: Any, players: list[Any]) -> tuple[Any, Any]:
    """(the player whose turn it is, the other) at a two-seat Crisp game."""
    game.refresh_from_db()
    seat = game.state["round"]["turn"]["seat"]
    return players[seat], players[1 - seat]


def _move(game: Any, user: Any) -> None:
    """A whole Crisp turn: draw from the deck, then discard (or whatever the drawn card
    demands) until the turn has passed on."""
    from games import selectors

    seat = game.seats.get(user=user).number
    for _ in range(10):
        game.refresh_from_db()
        if game.state["round"]["turn"]["seat"] != seat:
            return
        legal = selectors.game_legal_actions(game=game, user=user)
        pick = next(
            (a for a in legal if a.get("type") == "discard"),
            next((a for a in legal if a.get("type") == "draw"), legal[0] if legal else None),
        )
        assert pick is not None, "the turn's seat has nothing to do"
        services.game_act(game=game, user=user, action=pick, expected_version=game.version)
    raise AssertionError("the turn never passed on")


async def _get(path: str, key: str) -> tuple[int, dict[str, Any]]:
    comm = HttpCommunicator(
        application,
        "GET",
        path,
        headers=[(b"host", b"localhost"), (b"authorization", f"Token {key}".encode())],
    )
    response = await comm.get_response(timeout=WAIT + 10)
    import json

    return response["status"], json.loads(response["body"])


@pytest.fixture
def subscribed(monkeypatch: pytest.MonkeyPatch) -> dict[str, asyncio.Event]:
    """group name -> an event set once a listener has joined it (the long poll subscribed):
    the channel layer's own ``group_add``, observed."""
    layer = get_channel_layer()
    joined: dict[str, asyncio.Event] = {}
    original = layer.group_add

    async def group_add(group: str, channel: str) -> None:
        await original(group, channel)
        joined.setdefault(group, asyncio.Event()).set()

    monkeypatch.setattr(layer, "group_add", group_add)
    return joined


@pytest.fixture
def two_games(scheduled: Any) -> dict[str, Any]:
    a, b, c = make_user(), make_user(), make_user()
    ab = make_game([a, b], timers=QUICK)
    bc = make_game([b, c], timers=QUICK)
    return {"a": a, "b": b, "c": c, "ab": ab, "bc": bc}


async def test_the_long_poll_wakes_when_a_move_changes_the_list(
    two_games: dict[str, Any], subscribed: dict[str, asyncio.Event]
) -> None:
    g = two_games
    mover, waiter = await db(_crisp_turn)(g["ab"], [g["a"], g["b"]])
    _, key = await db(lambda: token_create(user=waiter, name="poll"))()
    status, before = await _get("/api/v1/me/turns/", key)
    assert status == 200
    poll = asyncio.ensure_future(_get(f"/api/v1/me/turns/?wait=60&since={before['etag']}", key))
    group = broadcast.user_group(waiter.pk)
    async with asyncio.timeout(WAIT):
        await subscribed.setdefault(group, asyncio.Event()).wait()
    assert not poll.done()
    await db(_move)(g["ab"], mover)  # the turn passes to the waiter
    status, after = await poll
    assert status == 200
    # The poll let go of its channel (the pub/sub layer keeps a queue per subscribed one).
    inner = getattr(get_channel_layer(), "_get_layer", None)
    if inner is not None:
        assert not [c for c in inner().channels if "specific." in c]
    assert after["etag"] != before["etag"]
    assert g["ab"].pk in [t["game"] for t in after["turns"]]
    assert g["ab"].pk not in [t["game"] for t in before["turns"]]


async def test_the_long_poll_times_out_with_the_same_list(two_games: dict[str, Any]) -> None:
    g = two_games
    _, key = await db(lambda: token_create(user=g["a"], name="poll"))()
    _, now = await _get("/api/v1/me/turns/", key)
    status, later = await _get(f"/api/v1/me/turns/?wait=1&since={now['etag']}", key)
    assert status == 200 and later == now
    # A stale token answers at once with the list as it is.
    status, fresh = await _get("/api/v1/me/turns/?wait=60&since=stale", key)
    assert status == 200 and fresh == now


async def test_the_person_s_socket_sends_the_count_when_it_changes(
    two_games: dict[str, Any],
) -> None:
    g = two_games
    mover, waiter = await db(_crisp_turn)(g["ab"], [g["a"], g["b"]])
    cookie = await db(session_cookie)(waiter)
    comm = Communicator(
        application,
        "/ws/me/",
        headers=[
            (b"origin", b"http://localhost"),
            (b"host", b"localhost"),
            (b"cookie", cookie.encode()),
        ],
    )
    connected, _ = await comm.connect()
    assert connected
    first = await comm.receive_json_from()
    assert first["type"] == "turns" and set(first) == {"type", "count", "etag"}
    await db(_move)(g["ab"], mover)
    second = await comm.receive_json_from()
    assert second["type"] == "turns" and second["count"] == first["count"] + 1
    await comm.disconnect()


async def test_an_unknown_person_s_socket_is_closed_with_4401(scheduled: Any) -> None:
    comm = Communicator(application, "/ws/me/", headers=[(b"host", b"localhost")])
    connected, _ = await comm.connect()
    assert connected
    output = await comm.receive_output(timeout=WAIT)
    assert output == {"type": "websocket.close", "code": 4401}
    user = await db(make_user)()
    assert user.pk
