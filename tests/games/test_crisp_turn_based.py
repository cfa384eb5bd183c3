"""Turn-based Crisp (R28) through the service layer: the host's menu, a whole game played by
computer players to its end (the person's seat sat in after two timeouts, as live), every
"Call crisp?" answered through the same ``game_act`` a person's click goes through, and the
REST payloads of a turn-based game."""

from __future__ import annotations

from typing import Any

import pytest

from games import services
from games.errors import ServiceError
from games.models import Event, Game, Seat

from .conftest import client_for
from .test_botplay import _run_bots

TB = {"pace": "turn_based", "turn_seconds": 43_200, "target_score": 50}


def test_the_lobby_takes_a_turn_based_crisp_game_and_refuses_half_a_choice(users: list[Any]):
    game = services.game_create(host=users[0], kind="crisp", settings=TB)
    assert game.settings["pace"] == "turn_based" and game.settings["turn_seconds"] == 43_200
    with pytest.raises(ServiceError) as info:
        services.game_create(host=users[0], kind="crisp", settings={"pace": "turn_based"})
    assert info.value.code == "bad_settings" and "turn_seconds" in str(info.value)
    with pytest.raises(ServiceError) as info:
        services.game_create(host=users[0], kind="crisp", settings={**TB, "draw_seconds": 30})
    assert info.value.code == "bad_settings" and "draw_seconds" in str(info.value)


def test_bots_play_a_whole_turn_based_game_through_the_service_layer(
    users: list[Any], live_calls: Any, fake_clock: Any
) -> None:
    game = services.game_create(host=users[0], kind="crisp", settings=TB)
    for _ in range(2):
        services.game_add_bot(game=game, host=users[0], level="medium")
    # The clock shortened for the test (the lobby offers 12 h, 1 day, 3 days), still longer
    # than a computer player's think time (CRISP_BOT_THINK_MS), so only the person times out.
    services.game_start(game=game, user=users[0], timers={"turn_seconds": 30})
    game = _run_bots(game, live_calls, fake_clock, limit=20_000)
    assert game.status == Game.Status.FINISHED, f"still {game.status} at v{game.version}"
    me = Seat.objects.get(game=game, number=0)
    assert me.sitting_in  # two timeouts in a row, counted from the engine's events
    types = list(Event.objects.filter(game=game).order_by("seq").values_list("type", flat=True))
    assert "window_closed" not in types
    asks, calls, passes = types.count("call_ready"), types.count("call"), types.count("pass")
    assert asks and calls and asks == calls + passes
    # The computers answer "Call crisp?" themselves: only the absent person's clock ran out.
    timed_out = Event.objects.filter(game=game, type="pass", data__timeout=True)
    assert {e.data["seat"] for e in timed_out} <= {0}
    assert Event.objects.filter(game=game, type="game_over").count() == 1


def test_the_call_step_through_the_api(users: list[Any], live_calls: Any, fake_clock: Any):
    """A person answers through the REST API: ``pass`` is refused before the step with a
    reason, the view shows the step to its seat, ``call`` ends the turn."""
    game = services.game_create(host=users[0], kind="crisp", settings=TB)
    services.game_join(game=game, user=users[1])
    services.game_start(game=game, user=users[0])
    seat_user = {s.number: s.user for s in Seat.objects.filter(game=game).select_related("user")}
    base = f"/api/v1/games/{game.pk}"
    first = client_for(users[0]).get(f"{base}/state/").json()["state"]["turn"]["seat"]
    me = client_for(seat_user[first])

    def state() -> dict[str, Any]:
        return me.get(f"{base}/state/").json()

    def act(action: dict[str, Any]) -> Any:
        v = state()["version"]
        return me.post(f"{base}/actions/", {"action": action, "expected_version": v}, format="json")

    r = act({"type": "pass"})
    assert 400 <= r.status_code < 500 and "Call crisp?" in r.content.decode(), r.content
    assert "look" in state()["state"]["you"]["can"]  # its look is still there (R28)
    for _ in range(20):  # draw and play until the turn's last card is down (Kings included)
        s = state()["state"]
        if s["turn"]["phase"] == "call":
            break
        can = s["you"]["can"]
        move = (
            {"type": "draw", "source": "deck"}
            if "draw_deck" in can
            else {"type": "king"}
            if "king" in can
            else {"type": "discard"}
        )
        assert act(move).status_code == 200
    s = state()["state"]
    assert s["turn"]["phase"] == "call" and s["you"]["can"] == ["call", "pass"]
    assert s["awaiting"] == {
        "kind": "call_or_pass",
        "seats": [first],
        "deadline": s["turn"]["draw_deadline"] + 1,
    }
    assert s["settings"]["pace"] == "turn_based" and s["windows"] == []
    assert "look" not in s["you"]["can"]  # gone for good after its first action
    actions = me.get(f"{base}/actions/").json()["actions"]
    assert actions == [{"type": "call"}, {"type": "pass"}]
    assert act({"type": "call"}).status_code == 200
    s = state()["state"]
    assert s["caller"] == first and s["turn"]["final"] and s["turn"]["seat"] != first
