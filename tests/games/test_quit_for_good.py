"""Issue 21, item 4: a player who quit a game in progress for good cannot act in it.

Before the fix an action from them answered 200 with ``seat_back`` and left the seat
``left=true, sitting_in=false`` -- a seat nobody plays -- while ``POST …/back/`` still said
``already_left``. The refusal is ``409 already_left`` and changes nothing.
"""

from __future__ import annotations

import pytest

from games import services
from games.errors import ServiceError
from games.models import Event, Seat

from .conftest import client_for

pytestmark = pytest.mark.django_db

BASE = "/api/v1/games/"


def _seat_state(game, user) -> tuple[bool, bool, str]:
    seat = Seat.objects.get(game=game, user=user)
    return seat.left_at is not None, seat.sitting_in, seat.bot_level


def test_an_action_after_quitting_is_refused_and_changes_nothing(users, start_game):
    g = start_game(users[:3])
    client = client_for(users[1])
    assert client.post(f"{BASE}{g.pk}/quit/").status_code == 200
    g.refresh_from_db()
    before = (g.version, Event.objects.filter(game=g).count(), _seat_state(g, users[1]))
    assert before[2][:2] == (True, True)

    r = client.post(
        f"{BASE}{g.pk}/actions/", {"action": {"type": "look"}, "version": g.version}, format="json"
    )
    assert r.status_code == 409, r.content
    assert r.json()["code"] == "already_left" and r.json()["detail"]
    g.refresh_from_db()
    assert (g.version, Event.objects.filter(game=g).count(), _seat_state(g, users[1])) == before
    assert not Event.objects.filter(game=g, type="seat_back").exists()
    # The two doors agree: "I'm back" says the same.
    assert client.post(f"{BASE}{g.pk}/back/").json()["code"] == "already_left"


def test_the_computer_sitting_in_for_a_player_who_left_still_plays(users, start_game):
    """The refusal is for the person, not for the computer playing the seat (``by_bot``)."""
    g = start_game(users[:3])
    services.game_leave_playing(game=g, user=users[1])
    g.refresh_from_db()
    with pytest.raises(ServiceError) as info:
        services.game_act(
            game=g, user=users[1], action={"type": "look"}, expected_version=g.version
        )
    assert info.value.code == "already_left" and info.value.status == 409
    result = services.game_act(
        game=g, user=users[1], action={"type": "look"}, expected_version=g.version, by_bot=True
    )
    assert result.version == g.version + 1
    assert _seat_state(g, users[1])[:2] == (True, True)
