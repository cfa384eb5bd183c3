"""Quick match (issue 24, item 3): "Find me a game" seats waiting players together.

Service and API, on any database (SQLite serialises writers; the row locks are proven on
PostgreSQL by tests/games/test_match_concurrency.py).  Time is the fake clock's: no sleeping.
"""

from __future__ import annotations

import pytest

from games import services
from games.errors import ServiceError
from games.models import Game, MatchTicket, Seat
from history.models import Rating

from .conftest import client_for

pytestmark = pytest.mark.django_db

URL = "/api/v1/match/"


def _rate(user, kind: str, ordinal: float) -> None:
    Rating.objects.create(user=user, kind=kind, mu=ordinal + 25, sigma=25 / 3, ordinal=ordinal)


def _players(game_id: int) -> list[int]:
    return sorted(Seat.objects.filter(game_id=game_id).values_list("user_id", flat=True))


def test_two_players_asking_for_cribbage_a_few_seconds_apart_play_each_other(users, fake_clock):
    first = services.match_join(user=users[0], kind="cribbage")
    assert (first.state, first.seats, first.game_id) == ("waiting", 2, None)
    fake_clock.advance(3_000)
    second = services.match_join(user=users[1], kind="cribbage")
    assert second.state == "matched"
    game = Game.objects.get(pk=second.game_id)
    assert (game.kind, game.status, game.private) == ("cribbage", Game.Status.PLAYING, True)
    assert _players(game.pk) == sorted([users[0].pk, users[1].pk])
    assert game.host_id == users[0].pk  # the longest waiting hosts
    # The first player learns it from the status.
    status = services.match_status(user=users[0])
    assert (status.state, status.game_id) == ("matched", game.pk)


def test_through_the_api(users, fake_clock):
    a, b = client_for(users[0]), client_for(users[1])
    r = a.post(URL, {"kind": "cribbage"}, format="json")
    assert r.status_code == 200 and r.json()["state"] == "waiting", r.content
    assert a.get(URL).json()["state"] == "waiting"
    fake_clock.advance(2_000)
    r = b.post(URL, {"kind": "cribbage"}, format="json")
    assert r.status_code == 200 and r.json()["state"] == "matched", r.content
    game_id = r.json()["game_id"]
    body = a.get(URL).json()
    assert (body["state"], body["game_id"]) == ("matched", game_id)
    # Both sit at the game and can read their own state.
    for client in (a, b):
        assert client.get(f"/api/v1/games/{game_id}/state/").status_code == 200


def test_api_refusals_are_code_and_detail(users):
    a = client_for(users[0])
    r = a.post(URL, {"kind": "chess"}, format="json")
    assert r.status_code == 400 and "code" in r.json()
    r = a.post(URL, {"kind": "cribbage", "seats": 3}, format="json")
    assert (r.status_code, r.json()["code"]) == (400, "bad_seats")
    r = a.delete(URL)
    assert (r.status_code, r.json()["code"]) == (404, "not_waiting")
    assert a.get(URL).json()["state"] == "idle"
    assert client_for(None).get(URL).status_code in (401, 403)


def test_nearest_rating_first(users, fake_clock):
    kind = "cribbage"
    for user, ordinal in zip(users[:4], (0.0, 30.0, 16.0, 3.0), strict=True):
        _rate(user, kind, ordinal)
    # 0 and 30 are too far apart to be seated together yet: both wait.
    assert services.match_join(user=users[0], kind=kind).state == "waiting"
    assert services.match_join(user=users[1], kind=kind).state == "waiting"
    fake_clock.advance(12_000)
    assert services.match_status(user=users[0]).state == "waiting"  # 30 > 5 + 12
    # 16 asks after 12 s: both are in range now (16 and 14 <= 5 + 12); the nearest, 30, wins.
    done = services.match_join(user=users[2], kind=kind)
    assert done.state == "matched"
    assert _players(done.game_id) == sorted([users[1].pk, users[2].pk])
    assert services.match_status(user=users[0]).state == "waiting"
    # A 3 comes: close enough at once.
    assert services.match_join(user=users[3], kind=kind).state == "matched"


def test_the_rating_range_widens_with_the_wait(users, fake_clock):
    _rate(users[1], "cribbage", 20.0)
    services.match_join(user=users[0], kind="cribbage", fill_with_computers=False)
    services.match_join(user=users[1], kind="cribbage", fill_with_computers=False)
    fake_clock.advance(10_000)
    assert services.match_status(user=users[0]).state == "waiting"  # polling, as the page does
    fake_clock.advance(4_999)  # 20 > 5 + 14.999
    assert services.match_status(user=users[1]).state == "waiting"
    fake_clock.advance(1)  # 20 <= 5 + 15: the next status seats them
    done = services.match_status(user=users[1])
    assert done.state == "matched"
    assert _players(done.game_id) == sorted([users[0].pk, users[1].pk])


def test_only_the_same_game_and_seat_count_are_seated_together(users):
    services.match_join(user=users[0], kind="crisp", seats=3)
    services.match_join(user=users[1], kind="crisp", seats=2)
    assert services.match_join(user=users[2], kind="cribbage").state == "waiting"
    assert services.match_join(user=users[3], kind="crisp", seats=2).state == "matched"
    assert services.match_status(user=users[0]).state == "waiting"


def test_fill_with_computers_after_the_wait(users, fake_clock):
    asked = services.match_join(user=users[0], kind="triple_crown")
    assert asked.fill_with_computers is True  # the default
    assert asked.fill_at == fake_clock.ms + services.MATCH_WAIT_MS
    services.match_join(user=users[1], kind="triple_crown", fill_with_computers=False)
    fake_clock.advance(services.MATCH_WAIT_MS - 1)
    assert services.match_status(user=users[1]).state == "waiting"  # still here, not filling
    assert services.match_status(user=users[0]).state == "waiting"  # not yet
    fake_clock.advance(1)
    done = services.match_status(user=users[0])
    assert done.state == "matched"
    seats = list(Seat.objects.filter(game_id=done.game_id).select_related("user"))
    people = sorted(s.user_id for s in seats if not s.user.is_bot)
    assert people == sorted([users[0].pk, users[1].pk])  # whoever waited comes along
    bots = [s for s in seats if s.user.is_bot]
    assert len(bots) == 2 and {s.bot_level for s in bots} == {services.MATCH_BOT_LEVEL}
    assert Game.objects.get(pk=done.game_id).status == Game.Status.PLAYING
    assert services.match_status(user=users[1]).game_id == done.game_id


def test_no_fill_keeps_waiting_and_can_be_chosen_later(users, fake_clock):
    services.match_join(user=users[0], kind="cribbage", fill_with_computers=False)
    fake_clock.advance(services.MATCH_WAIT_MS * 2)
    assert services.match_status(user=users[0]).state == "waiting"
    # Asking again changes the choice; the next status fills.
    again = services.match_join(user=users[0], kind="cribbage", fill_with_computers=True)
    assert again.state == "waiting"
    assert services.match_status(user=users[0]).state == "matched"


def test_a_player_who_stopped_polling_is_passed_over_until_back(users, fake_clock):
    services.match_join(user=users[0], kind="cribbage")  # and closes the tab
    fake_clock.advance(services.MATCH_LAPSE_MS + 1)
    assert services.match_join(user=users[1], kind="cribbage").state == "waiting"
    fake_clock.advance(1_000)
    done = services.match_status(user=users[0])  # back: seated with whoever waits in range
    assert done.state == "matched"
    assert _players(done.game_id) == sorted([users[0].pk, users[1].pk])


def test_leaving_the_queue(users, fake_clock):
    services.match_join(user=users[0], kind="cribbage")
    services.match_leave(user=users[0])
    assert services.match_status(user=users[0]).state == "idle"
    # Nobody is left to be seated with: the next player waits.
    assert services.match_join(user=users[1], kind="cribbage").state == "waiting"
    with pytest.raises(ServiceError) as exc:
        services.match_leave(user=users[0])
    assert exc.value.code == "not_waiting"
    # Once seated, leaving the queue is refused (the game is left instead).
    services.match_join(user=users[0], kind="cribbage")
    with pytest.raises(ServiceError) as exc:
        services.match_leave(user=users[0])
    assert (exc.value.code, exc.value.status) == ("already_matched", 409)


def test_asking_again_is_idempotent(users, fake_clock):
    first = services.match_join(user=users[0], kind="cribbage")
    fake_clock.advance(5_000)
    again = services.match_join(user=users[0], kind="cribbage")
    assert again.state == "waiting" and again.fill_at == first.fill_at
    assert MatchTicket.objects.filter(user=users[0]).count() == 1
    with pytest.raises(ServiceError) as exc:
        services.match_join(user=users[0], kind="crisp")
    assert exc.value.code == "already_waiting"
    matched = services.match_join(user=users[1], kind="cribbage")
    # A matched player asking again while the game is on gets that game, not a second one.
    assert services.match_join(user=users[1], kind="cribbage").game_id == matched.game_id
    assert services.match_join(user=users[0], kind="cribbage").game_id == matched.game_id
    assert Game.objects.count() == 1
    # Once that game is over, asking again is a new request.
    services.game_abandon(game=matched.game_id, user=users[0])
    assert services.match_join(user=users[0], kind="cribbage").state == "waiting"


def test_the_schema_describes_the_answers(users, fake_clock):
    """POST, GET and DELETE are published, and every answer here is one the schema describes."""
    import jsonschema

    from .test_schema_truth import _nullable_to_json_schema

    client = client_for(users[0])
    schema = client.get("/api/schema/", {"format": "json"}).json()
    ops = schema["paths"]["/api/v1/match/"]
    assert {"get", "post", "delete"} <= set(ops)
    assert ops["delete"]["responses"].keys() >= {"204", "404", "409"}
    components = _nullable_to_json_schema(schema["components"]["schemas"])

    def check(body: dict, name: str) -> None:
        # The component, with the others beside it so its $refs resolve.
        node = {**components[name], "components": {"schemas": components}}
        jsonschema.Draft7Validator(node).validate(body)

    answers = [
        client.get(URL).json(),
        client.post(URL, {"kind": "cribbage"}, format="json").json(),
        client.get(URL).json(),
        client_for(users[1]).post(URL, {"kind": "cribbage"}, format="json").json(),
    ]
    assert [a["state"] for a in answers] == ["idle", "waiting", "waiting", "matched"]
    for body in answers:
        check(body, "MatchStatusOutput")
    for body in (
        client.delete(URL).json(),  # already_matched
        client_for(users[2]).delete(URL).json(),  # not_waiting
        client.post(URL, {"kind": "cribbage", "seats": 9}, format="json").json(),
    ):
        check(body, "Error")


def test_a_game_that_is_over_or_left_frees_the_player(users, fake_clock):
    services.match_join(user=users[0], kind="cribbage")
    game_id = services.match_join(user=users[1], kind="cribbage").game_id
    assert services.match_status(user=users[1]).state == "matched"
    # Leaving the game for good: the status is idle and asking again is a new request.
    services.game_leave_playing(game=game_id, user=users[1])
    assert services.match_status(user=users[1]).state == "idle"
    assert services.match_join(user=users[1], kind="cribbage").state == "waiting"
    assert services.match_status(user=users[0]).game_id == game_id  # still playing there
    services.game_abandon(game=game_id, user=users[0])
    assert services.match_status(user=users[0]).state == "idle"
