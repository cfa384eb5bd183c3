"""The game consumer in process (Channels' WebsocketCommunicator), over the real Redis layer.

`transaction=True`: the consumer reads through `database_sync_to_async` on another thread,
which must see what the test wrote; and the service layer's on-commit broadcast must run.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from channels.db import database_sync_to_async

from accounts.services import token_create
from games import services
from tests.games.leak_kit import same_as_spectator
from tests.live.conftest import communicator, make_game, make_user, session_cookie

pytestmark = pytest.mark.django_db(transaction=True)

db = database_sync_to_async

#: How long a test waits for a frame before it fails. An event wait's ceiling, not a guess at how
#: long the frame takes: a frame that comes arrives well within it even on two cores another
#: process keeps busy (CI has seen a 1011 close arrive more than 5 s late).
WAIT = 60


async def receive(comm: Any, timeout: float = WAIT) -> dict[str, Any]:
    return await comm.receive_json_from(timeout=timeout)


async def drain(comm: Any, quiet: float = 0.4) -> list[dict[str, Any]]:
    """Every frame that arrives until none has for `quiet` seconds."""
    frames = []
    # receive_nothing, not a receive timeout: a timed-out receive cancels the application.
    while not await comm.receive_nothing(timeout=quiet):
        frames.append(await comm.receive_json_from())
    return frames


async def until(comm: Any, kind: str, timeout: float = WAIT) -> dict[str, Any]:
    """The next frame of type `kind`, skipping others (presence, mostly)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        left = deadline - asyncio.get_running_loop().time()
        frame = await receive(comm, max(0.05, left))
        if frame["type"] == kind:
            return frame


async def closed_with(comm: Any) -> int:
    """The close code of a refused socket; asserts nothing else was sent first."""
    connected, _ = await comm.connect()
    assert connected  # accepted, so that the close code reaches the client
    output = await comm.receive_output(timeout=WAIT)
    assert output["type"] == "websocket.close", output
    return output["code"]


@pytest.fixture
def two_players(scheduled: Any) -> tuple[list[Any], Any]:
    players = [make_user(), make_user()]
    game = make_game(players, timers={"memorise_ms": 0, "start_delay_ms": 0, "window_ms": 0})
    return players, game


async def test_anonymous_socket_watches_a_public_game_as_a_spectator(two_players: Any) -> None:
    """Watching needs no account (issue 24): a socket with neither session nor token gets the
    spectator's snapshot and the live frames, and its act or chat is refused (the socket goes
    on watching)."""
    players, game = two_players
    anon = communicator(game.pk)
    connected, _ = await anon.connect()
    assert connected
    snapshot = await until(anon, "snapshot")
    # Presence: a spectator, never at a seat (docs/API.md, "Watching without an account").
    presence = await until(anon, "presence")
    assert presence["seats"] == {} and presence["spectators"] == 1, presence
    spectator = await db(make_user)()
    watcher = communicator(game.pk, cookie=await db(session_cookie)(spectator))
    assert (await watcher.connect())[0]
    signed_in = await until(watcher, "snapshot")
    # Exactly what a signed-in spectator receives (the server's clock reading aside).
    same_as_spectator(snapshot["state"], signed_in["state"], "anonymous snapshot")
    assert snapshot["state"]["state"]["seat"] is None
    assert snapshot["version"] == signed_in["version"]
    await anon.send_json_to({"type": "act", "id": 1, "action": {"type": "look"}})
    refused = await until(anon, "error")
    assert (refused["id"], refused["code"]) == (1, "not_authenticated")
    await anon.send_json_to({"type": "chat", "id": 2, "text": "hello"})
    refused = await until(anon, "error")
    assert (refused["id"], refused["code"]) == (2, "not_authenticated")
    # A player's move reaches the anonymous watcher live.
    player = communicator(game.pk, cookie=await db(session_cookie)(players[0]))
    assert (await player.connect())[0]
    await until(player, "snapshot")
    await player.send_json_to({"type": "act", "id": 3, "action": {"type": "look"}})
    update = await until(anon, "update")
    assert update["version"] > snapshot["version"]
    for comm in (anon, watcher, player):
        await comm.disconnect()


async def test_anonymous_socket_is_refused_a_private_game_with_4404(scheduled: Any) -> None:
    players = await db(lambda: [make_user(), make_user()])()
    game = await db(lambda: make_game(players, private=True))()
    assert await closed_with(communicator(game.pk)) == 4404
    # Its invite code does not open it to a visitor without an account either.
    code = game.invite_code
    assert await closed_with(communicator(game.pk, query=f"invite_code={code}")) == 4404
    assert await closed_with(communicator(game.pk + 1000)) == 4404


async def test_invalid_token_is_closed_with_4401(two_players: Any) -> None:
    _, game = two_players
    comm = communicator(game.pk, query="token=crisp_abcdefgh_" + "x" * 43)
    assert await closed_with(comm) == 4401


async def test_missing_game_and_foreign_private_game_close_with_4404(scheduled: Any) -> None:
    players = await db(lambda: [make_user(), make_user()])()
    outsider = await db(make_user)()
    game = await db(lambda: make_game(players, private=True))()
    cookie = await db(session_cookie)(outsider)
    assert await closed_with(communicator(game.pk + 1000, cookie=cookie)) == 4404
    # 404, not 403: a socket cannot probe which private games exist.
    assert await closed_with(communicator(game.pk, cookie=cookie)) == 4404
    # Its players are welcome.
    comm = communicator(game.pk, cookie=await db(session_cookie)(players[1]))
    connected, _ = await comm.connect()
    assert connected
    assert (await until(comm, "snapshot"))["state"]["state"]["seat"] == 1
    await comm.disconnect()


async def test_token_in_query_or_header_authenticates_and_gets_own_snapshot(
    two_players: Any,
) -> None:
    players, game = two_players
    _, key = await db(lambda: token_create(user=players[1], name="bot"))()
    for comm in (
        communicator(game.pk, query=f"token={key}"),
        communicator(game.pk, headers=[(b"authorization", f"Token {key}".encode())]),
    ):
        connected, _ = await comm.connect()
        assert connected
        snapshot = await receive(comm)
        assert snapshot["type"] == "snapshot"
        assert snapshot["version"] == game.version
        assert snapshot["state"]["state"]["seat"] == 1
        assert isinstance(snapshot["server_time"], int)
        # Every deadline is in the state as a server timestamp.
        assert all(isinstance(d["at"], int) for d in snapshot["state"]["state"]["deadlines"])
        await comm.disconnect()


async def test_act_is_acked_and_every_receiver_gets_its_own_redaction(two_players: Any) -> None:
    players, game = two_players
    spectator = await db(make_user)()
    comms = {}
    for name, user in (("p0", players[0]), ("p1", players[1]), ("spec", spectator)):
        comms[name] = communicator(game.pk, cookie=await db(session_cookie)(user))
        assert (await comms[name].connect())[0]
        await until(comms[name], "snapshot")
    for comm in comms.values():
        await drain(comm, 0.2)  # presence frames

    await comms["p1"].send_json_to(
        {"type": "act", "id": "a1", "action": {"type": "look"}, "version": game.version}
    )
    ack = await until(comms["p1"], "ack")
    assert ack["id"] == "a1" and ack["version"] == game.version + 1
    [look] = [e for e in ack["events"] if e["type"] == "look"]
    assert look["data"]["left"] and look["data"]["right"]  # shown to its seat

    updates = {name: await until(comm, "update") for name, comm in comms.items()}
    for name, update in updates.items():
        assert update["prev_version"] == game.version and update["version"] == game.version + 1
        [event] = [e for e in update["events"] if e["type"] == "look"]
        if name == "p1":
            assert event["data"]["left"] == look["data"]["left"]
        else:
            assert event["data"]["left"] is None and event["data"]["right"] is None
    assert updates["p0"]["state"]["state"]["seat"] == 0
    assert updates["spec"]["state"]["state"]["seat"] is None
    for comm in comms.values():
        await comm.disconnect()


async def test_refused_and_malformed_frames_get_error_frames(two_players: Any) -> None:
    players, game = two_players
    comm = communicator(game.pk, cookie=await db(session_cookie)(players[0]))
    await comm.connect()
    await until(comm, "snapshot")
    await comm.send_json_to({"type": "act", "id": 1, "action": {"type": "call"}, "version": 0})
    error = await until(comm, "error")
    assert error["id"] == 1 and error["code"] == "stale_version"
    assert error["extra"]["version"] == game.version
    await comm.send_json_to({"type": "act", "id": 2, "action": {"type": "fly"}})
    assert (await until(comm, "error"))["code"] == "bad_action"
    await comm.send_json_to({"type": "act", "id": 3, "action": {"type": "swap", "place": "left"}})
    error = await until(comm, "error")
    assert error["code"] not in {"bad_frame", "server_error"} and error["detail"]
    await comm.send_json_to({"type": "dance"})
    assert (await until(comm, "error"))["code"] == "bad_frame"
    await comm.send_to(text_data="not json")
    assert (await until(comm, "error"))["code"] == "bad_frame"
    await comm.send_json_to({"type": "ping", "id": "p"})
    pong = await until(comm, "pong")
    assert pong["id"] == "p" and isinstance(pong["server_time"], int)
    await comm.disconnect()


async def test_reconnect_with_version_gets_exactly_the_missed_events(two_players: Any) -> None:
    players, game = two_players
    cookie = await db(session_cookie)(players[0])
    comm = communicator(game.pk, cookie=cookie)
    await comm.connect()
    have = (await until(comm, "snapshot"))["version"]
    await comm.disconnect()

    await db(
        lambda: services.game_act(
            game=game.pk, user=players[1], action={"type": "look"}, expected_version=None
        )
    )()
    await db(
        lambda: services.game_act(
            game=game.pk, user=players[0], action={"type": "look"}, expected_version=None
        )
    )()

    comm = communicator(game.pk, cookie=cookie, query=f"version={have}")
    await comm.connect()
    update = await until(comm, "update")
    assert update["prev_version"] == have and update["version"] == have + 2
    versions = [e["version"] for e in update["events"]]
    assert versions == sorted(versions)
    assert {e["version"] for e in update["events"]} == {have + 1, have + 2}
    looks = {e["data"]["seat"]: e["data"] for e in update["events"] if e["type"] == "look"}
    assert looks[1]["left"] is None  # not ours
    assert looks[0]["left"]  # ours, and still the current version: its one showing
    # resync on the open socket: nothing missed -> an empty update; nonsense -> a snapshot.
    await comm.send_json_to({"type": "resync", "version": have + 2})
    same = await until(comm, "update")
    assert same["events"] == [] and same["version"] == have + 2
    await comm.send_json_to({"type": "resync", "version": have + 99})
    assert (await until(comm, "snapshot"))["version"] == have + 2
    await comm.disconnect()


async def test_a_lost_frame_is_caught_up_by_the_consumer(
    two_players: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    players, game = two_players
    comm = communicator(game.pk, cookie=await db(session_cookie)(players[0]))
    await comm.connect()
    have = (await until(comm, "snapshot"))["version"]
    from games import broadcast

    real = broadcast.game_changed
    monkeypatch.setattr(broadcast, "game_changed", lambda game_id, version, change=None: None)
    await db(
        lambda: services.game_act(
            game=game.pk, user=players[1], action={"type": "look"}, expected_version=None
        )
    )()
    monkeypatch.setattr(broadcast, "game_changed", real)
    await db(
        lambda: services.game_act(
            game=game.pk, user=players[0], action={"type": "look"}, expected_version=None
        )
    )()
    update = await until(comm, "update")
    # The frame of have+2 said prev_version have+1: the consumer caught its client up itself.
    assert update["prev_version"] == have and update["version"] == have + 2
    assert {e["version"] for e in update["events"]} == {have + 1, have + 2}
    await comm.disconnect()


async def test_a_frame_that_overtakes_its_predecessor_waits_for_it(
    two_players: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Frames of one game come from several processes, so v+2's may arrive before v+1's: the
    consumer holds v+2 for a moment and sends both in order, without a database catch-up."""
    players, game = two_players
    comm = communicator(game.pk, cookie=await db(session_cookie)(players[0]))
    await comm.connect()
    have = (await until(comm, "snapshot"))["version"]
    from channels.layers import get_channel_layer

    from games import broadcast, consumers

    catch_ups: list[Any] = []
    real_catch_up = consumers._catch_up
    monkeypatch.setattr(consumers, "_catch_up", lambda *a: catch_ups.append(a) or real_catch_up(*a))
    monkeypatch.setattr(broadcast, "game_changed", lambda game_id, version, change=None: None)
    frames = []
    for user in (players[1], players[0]):
        await db(
            lambda u=user: services.game_act(
                game=game.pk, user=u, action={"type": "look"}, expected_version=None
            )
        )()
        frames.append(await db(broadcast.change_messages)(game.pk, have + 1 + len(frames)))
    layer = get_channel_layer()
    for group, message in reversed([m for batch in frames for m in batch]):
        await layer.group_send(group, message)
    first, second = await until(comm, "update"), await until(comm, "update")
    assert (first["prev_version"], first["version"]) == (have, have + 1)
    assert (second["prev_version"], second["version"]) == (have + 1, have + 2)
    assert catch_ups == []  # straight from the broadcast, no database read
    await comm.disconnect()


async def test_presence_counts_sockets_per_seat(two_players: Any) -> None:
    players, game = two_players
    a = communicator(game.pk, cookie=await db(session_cookie)(players[0]))
    await a.connect()
    await until(a, "snapshot")
    first = await until(a, "presence")
    assert first["seats"] == {"0": 1}
    b = communicator(game.pk, cookie=await db(session_cookie)(players[1]))
    await b.connect()
    presence = await until(a, "presence")
    assert presence["seats"] == {"0": 1, "1": 1} and presence["spectators"] == 0
    await b.disconnect()
    assert (await until(a, "presence"))["seats"] == {"0": 1}
    await a.disconnect()


async def test_a_spectator_who_joins_is_moved_to_the_seat_redaction(scheduled: Any) -> None:
    host, other, joiner = await db(lambda: [make_user(), make_user(), make_user()])()
    game = await db(lambda: make_game([host, other], start=False))()
    comm = communicator(game.pk, cookie=await db(session_cookie)(joiner))
    await comm.connect()
    assert (await until(comm, "snapshot"))["state"]["status"] == "lobby"
    await db(lambda: services.game_join(game=game.pk, user=joiner))()
    await until(comm, "update")
    await db(lambda: services.game_start(game=game.pk, user=host))()
    update = await until(comm, "update")
    assert update["state"]["state"]["seat"] == 2
    assert update["state"]["state"]["you"]["can"] == ["look"]
    await comm.disconnect()


async def test_removed_and_renumbered_lobby_sockets_hear_of_it(scheduled: Any) -> None:
    """A player removed from a lobby is told at once (their seat's group would otherwise never
    hear again), and the player who moved down into the freed seat gets their new seat's view."""
    players = await db(lambda: [make_user(), make_user(), make_user()])()

    def lobby() -> Any:
        game = services.game_create(host=players[0])
        for p in players[1:]:
            services.game_join(game=game, user=p)
        return game

    game = await db(lobby)()
    comms = []
    for p in players[1:]:
        comm = communicator(game.pk, cookie=await db(session_cookie)(p))
        await comm.connect()
        await until(comm, "snapshot")
        comms.append(comm)
    await db(services.game_kick)(game=game.pk, host=players[0], seat_number=1)
    kicked = await until(comms[0], "update")
    assert [e["type"] for e in kicked["events"]] == ["seat_kicked"]
    assert kicked["events"][0]["data"]["user_id"] == players[1].pk
    moved = await until(comms[1], "update")
    assert moved["events"][0]["type"] == "seat_kicked"
    # The moved socket follows its seat: the next change reaches it in seat 1's group.
    await db(services.game_leave)(game=game.pk, user=players[0])
    assert (await until(comms[1], "update"))["events"][0]["type"] == "seat_left"
    for comm in comms:
        await comm.disconnect()


async def test_chat_reaches_players_and_spectators(two_players: Any) -> None:
    players, game = two_players
    watcher = await db(make_user)()
    comms = []
    for user in (*players, watcher):
        comm = communicator(game.pk, cookie=await db(session_cookie)(user))
        await comm.connect()
        await until(comm, "snapshot")
        comms.append(comm)
    await comms[0].send_json_to({"type": "chat", "id": "c1", "text": "<script>x</script> gl"})
    ack = await until(comms[0], "chat_ack")
    assert ack["id"] == "c1"
    for comm in comms:
        line = (await until(comm, "chat"))["message"]
        assert line["id"] == ack["message_id"]
        assert (line["text"], line["seat"]) == ("<script>x</script> gl", 0)
    await comms[2].send_json_to({"type": "chat", "id": 2, "text": ""})
    assert (await until(comms[2], "error"))["code"] == "bad_chat"
    await comms[2].send_json_to({"type": "chat", "id": 3})
    assert (await until(comms[2], "error"))["code"] == "bad_frame"
    for comm in comms:
        await comm.disconnect()


async def test_games_with_players_online_are_not_idle(two_players: Any) -> None:
    """The sweep ends idle games only where no player is connected (presence in Redis)."""
    from games import presence, timers
    from games.tasks import games_with_players, lobbies_with_host

    players, game = two_players
    watcher = await db(make_user)()
    spectator = communicator(game.pk, cookie=await db(session_cookie)(watcher))
    await spectator.connect()
    await until(spectator, "snapshot")
    assert await db(games_with_players)([game.pk]) == set()  # a spectator is not a player
    comm = communicator(game.pk, cookie=await db(session_cookie)(players[0]))
    await comm.connect()
    await until(comm, "snapshot")
    assert await db(games_with_players)([game.pk, game.pk + 1]) == {game.pk}
    # The lobby reaper's question: is the host's own seat connected (issue 24, item 4).
    assert await db(lobbies_with_host)({game.pk: 0}) == {game.pk}
    assert await db(lobbies_with_host)({game.pk: 1}) == set()
    # And the socket's person counts as online site-wide (the lobby's "people online").
    online = await db(timers.client().zscore)(presence._online_key(), f"u{players[0].pk}")
    assert online is not None
    await comm.disconnect()
    await spectator.disconnect()
