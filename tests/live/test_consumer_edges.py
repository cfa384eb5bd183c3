"""Issue 21's seams on the game socket (in process, over the real Redis layer):

- item 4: a player who quit for good cannot act over the socket either (``already_left``);
- item 8: an outsider holding a private game's invite code may watch it, as over REST;
- item 3: non-finite numbers are refused at parse time (``1e999999`` would be echoed as
  ``Infinity``, which is not JSON), and an over-long ``idempotency_key`` is refused with the
  code REST uses for the same rule (``bad_idempotency_key``).
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from channels.db import database_sync_to_async

from accounts.services import token_create
from games import services
from games.models import Event, Seat
from tests.live.conftest import communicator, make_game, make_user, session_cookie
from tests.live.test_consumer import closed_with, until

pytestmark = pytest.mark.django_db(transaction=True)

db = database_sync_to_async


@pytest.fixture
def three_players(scheduled: Any) -> tuple[list[Any], Any]:
    players = [make_user(), make_user(), make_user()]
    game = make_game(players, timers={"memorise_ms": 0, "start_delay_ms": 0, "window_ms": 0})
    return players, game


async def test_an_act_after_quitting_is_refused_over_the_socket(three_players: Any) -> None:
    players, game = three_players
    comm = communicator(game.pk, cookie=await db(session_cookie)(players[1]))
    assert (await comm.connect())[0]
    await until(comm, "snapshot")
    await db(services.game_leave_playing)(game=game.pk, user=players[1])
    events = await db(lambda: Event.objects.filter(game=game).count())()
    await comm.send_json_to({"type": "act", "id": "q", "action": {"type": "look"}})
    error = await until(comm, "error")
    assert (error["id"], error["code"]) == ("q", "already_left")
    seat = await db(lambda: Seat.objects.get(game=game, user=players[1]))()
    assert seat.left_at is not None and seat.sitting_in
    assert not await db(lambda: Event.objects.filter(game=game, type="seat_back").exists())()
    assert await db(lambda: Event.objects.filter(game=game).count())() == events
    await comm.disconnect()


async def test_an_invite_code_lets_an_outsider_watch_over_the_socket(scheduled: Any) -> None:
    players = await db(lambda: [make_user(), make_user()])()
    outsider = await db(make_user)()
    game = await db(lambda: make_game(players, private=True))()
    _, key = await db(lambda: token_create(user=outsider, name="watch"))()
    # Without the code (or with a wrong one) the game does not exist for them...
    assert await closed_with(communicator(game.pk, query=f"token={key}")) == 4404
    wrong = "ZZZZZZZZ" if game.invite_code != "ZZZZZZZZ" else "YYYYYYYY"
    query = f"token={key}&invite_code={wrong}"
    assert await closed_with(communicator(game.pk, query=query)) == 4404
    # ...with it they watch as a spectator (any case, as the REST answer accepts it).
    for code in (game.invite_code, game.invite_code.lower()):
        comm = communicator(game.pk, query=f"token={key}&invite_code={code}")
        assert (await comm.connect())[0]
        snapshot = await until(comm, "snapshot")
        assert snapshot["state"]["state"]["seat"] is None
        # A resync reads the game again under the same rule (it does not 4404 mid-socket).
        await comm.send_json_to({"type": "resync"})
        assert (await until(comm, "snapshot"))["version"] == game.version
        await comm.disconnect()
    # A session-cookie socket (the table page's) too.
    cookie = await db(session_cookie)(outsider)
    comm = communicator(game.pk, cookie=cookie, query=f"invite_code={game.invite_code}")
    assert (await comm.connect())[0]
    assert (await until(comm, "snapshot"))["state"]["state"]["seat"] is None
    await comm.disconnect()


async def test_non_finite_numbers_are_refused_and_never_echoed(three_players: Any) -> None:
    players, game = three_players
    comm = communicator(game.pk, cookie=await db(session_cookie)(players[0]))
    assert (await comm.connect())[0]
    await until(comm, "snapshot")
    for number in ("1e999999", "-1e999999"):
        await comm.send_to(text_data='{"type": "ping", "id": ' + number + "}")
        output = await comm.receive_output(timeout=60)
        while "Infinity" not in output["text"] and json.loads(output["text"])["type"] == "presence":
            output = await comm.receive_output(timeout=60)
        assert "Infinity" not in output["text"]  # would not parse in a browser
        frame = json.loads(output["text"])
        assert (frame["type"], frame["code"], frame["id"]) == ("error", "bad_frame", None)
    await comm.send_json_to({"type": "ping", "id": 1.5e300})
    assert (await until(comm, "pong"))["id"] == 1.5e300  # finite numbers are fine
    await comm.disconnect()


async def test_an_over_long_idempotency_key_has_the_rest_code(three_players: Any) -> None:
    players, game = three_players
    comm = communicator(game.pk, cookie=await db(session_cookie)(players[0]))
    assert (await comm.connect())[0]
    await until(comm, "snapshot")
    for key in ("k" * 101, "", 17):
        await comm.send_json_to(
            {"type": "act", "id": "i", "action": {"type": "look"}, "idempotency_key": key}
        )
        error = await until(comm, "error")
        assert error["code"] == "bad_idempotency_key", (key, error)
    await comm.send_json_to(
        {"type": "act", "id": "ok", "action": {"type": "look"}, "idempotency_key": "k" * 100}
    )
    assert (await until(comm, "ack"))["id"] == "ok"
    await comm.disconnect()


async def test_socket_handshakes_with_an_invite_code_count_against_its_limit(
    scheduled: Any, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Sockets are no cheaper way to guess invite codes than REST requests: close 4429."""
    settings.THROTTLE_RATES = {**settings.THROTTLE_RATES, "invite_code": "2/minute"}
    # A window of its own (a fixed instant no other run used): counters live in Redis.
    instant = 1_900_000_000 + uuid.uuid4().int % 10**6 * 60 + 0.25
    monkeypatch.setattr("crisp_site.throttles._clock", lambda: instant)
    players = await db(lambda: [make_user(), make_user()])()
    outsider = await db(make_user)()
    game = await db(lambda: make_game(players, private=True))()
    _, key = await db(lambda: token_create(user=outsider, name="watch"))()
    query = f"token={key}&invite_code={game.invite_code}"
    for _ in range(2):
        comm = communicator(game.pk, query=query)
        assert (await comm.connect())[0]
        await until(comm, "snapshot")
        await comm.disconnect()
    assert await closed_with(communicator(game.pk, query=query)) == 4429
    # Without a code the limit does not apply (a public game, a seated player).
    comm = communicator(game.pk, query=f"token={key}")
    assert await closed_with(comm) == 4404
