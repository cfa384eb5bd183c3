"""Every endpoint of /api/v1/games/ and every error code, plus object permissions."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from games import services
from games.models import Event, Game

from .conftest import client_for

BASE = "/api/v1/games/"


def err(resp, status: int, code: str) -> dict:
    assert resp.status_code == status, (resp.status_code, resp.content)
    body = resp.json()
    assert body["code"] == code and isinstance(body["detail"], str), body
    return body


def post(client, url, data=None, **kw):
    return client.post(url, data if data is not None else {}, format="json", **kw)


@pytest.fixture
def lobby(users):
    return services.game_create(host=users[0])


@pytest.fixture
def playing(users, start_game):
    return start_game(users[:2])


# --- authentication and the error shape --------------------------------------------------
def test_anonymous_is_refused(db, lobby):
    """Listing games and every write need an account (a public game's reads do not:
    tests/games/test_watch_anonymous.py)."""
    c = APIClient()
    for r in (c.get(BASE), post(c, f"{BASE}{lobby.pk}/join/"), post(c, f"{BASE}{lobby.pk}/start/")):
        assert r.status_code in (401, 403)
        assert r.json()["code"] == "not_authenticated"


def test_bad_token_is_refused(db):
    r = APIClient().get(BASE, HTTP_AUTHORIZATION="Token nope")
    assert r.status_code == 401
    # The accounts app gives its own precise code; the shape is ours.
    assert r.json()["code"] in ("authentication_failed", "token_invalid")


def test_malformed_json(users, lobby):
    r = client_for(users[1]).post(f"{BASE}{lobby.pk}/join/", "{", content_type="application/json")
    err(r, 400, "malformed_json")


def test_unsupported_media_type(users):
    r = client_for(users[0]).post(BASE, "x", content_type="text/csv")
    err(r, 415, "unsupported_media_type")


def test_method_not_allowed(users, lobby):
    err(client_for(users[0]).delete(f"{BASE}{lobby.pk}/"), 405, "method_not_allowed")


def test_not_found(users):
    err(client_for(users[0]).get(f"{BASE}999999/"), 404, "not_found")


# --- list, create, detail ----------------------------------------------------------------
def test_create_and_validation(users):
    c = client_for(users[0])
    r = post(
        c,
        BASE,
        {"kind": "crisp", "settings": {"target_score": 150, "draw_seconds": 60, "pile_draw": True}},
    )
    assert r.status_code == 201
    body = r.json()
    assert body["kind"] == "crisp" and (body["min_seats"], body["max_seats"]) == (2, 8)
    assert body["settings"] == {
        "target_score": 150,
        "draw_seconds": 60,
        "pile_draw": True,
        "pace": "live",
        "turn_seconds": None,
    }
    assert body["you"] == 0 and body["invite_code"] and body["version"] == 1
    assert "state" not in body and "seed" not in body
    assert post(c, BASE, {}).json()["settings"]["target_score"] == 100  # the engine's default
    bad = err(post(c, BASE, {"settings": {"target_score": 77}}), 400, "bad_settings")
    assert "target_score" in bad["detail"]
    err(post(c, BASE, {"settings": {"draw_seconds": "soon"}}), 400, "bad_settings")
    err(post(c, BASE, {"settings": "fast"}), 400, "invalid")
    bad = err(post(c, BASE, {"kind": "chess"}), 400, "invalid")
    assert "kind" in bad["errors"]


def test_list_open_and_mine(users):
    public = services.game_create(host=users[0])
    private = services.game_create(host=users[0], private=True)
    started = services.game_create(host=users[1])
    services.game_join(game=started, user=users[2])
    services.game_start(game=started, user=users[1])
    c = client_for(users[3])
    assert [g["id"] for g in c.get(BASE).json()] == [public.pk]
    assert all(g["invite_code"] is None for g in c.get(BASE).json())
    mine = client_for(users[0]).get(BASE, {"scope": "mine"}).json()
    assert {g["id"] for g in mine} == {public.pk, private.pk}
    err(c.get(BASE, {"scope": "all"}), 400, "invalid")


@pytest.mark.parametrize("scope", ["open", "mine"])
def test_list_is_a_constant_number_of_queries(users, make_user, scope):
    """Seats (and their users) come from the list's prefetch, not one query per game."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    me = make_user()

    def listed(n: int) -> tuple[int, list]:
        for i in range(n):
            g = services.game_create(host=me if scope == "mine" else users[i % 2])
            for u in users[2:5]:
                services.game_join(game=g, user=u)
        c = client_for(me)
        with CaptureQueriesContext(connection) as ctx:
            body = c.get(BASE, {"scope": scope}).json()
        return len(ctx.captured_queries), body

    few, body = listed(2)
    assert len(body) == 2
    many, body = listed(8)
    assert len(body) == 10 and many == few
    for game in body:  # seats still in seat order, with their names
        assert [s["seat"] for s in game["seats"]] == [0, 1, 2, 3]
        assert [s["user_id"] for s in game["seats"]][1:] == [u.pk for u in users[2:5]]


def test_detail_of_private_game_needs_code_or_seat(users):
    g = services.game_create(host=users[0], private=True)
    err(client_for(users[1]).get(f"{BASE}{g.pk}/"), 404, "not_found")
    r = client_for(users[1]).get(f"{BASE}{g.pk}/", {"invite_code": g.invite_code})
    assert r.status_code == 200 and r.json()["invite_code"] is None  # not seated: not shown
    assert client_for(users[0]).get(f"{BASE}{g.pk}/").json()["invite_code"] == g.invite_code
    for suffix in ("state/", "events/", "actions/"):
        err(client_for(users[1]).get(f"{BASE}{g.pk}/{suffix}"), 404, "not_found")


# --- lobby actions -----------------------------------------------------------------------
def test_join_by_id_and_code(users):
    g = services.game_create(host=users[0], private=True)
    err(post(client_for(users[1]), f"{BASE}{g.pk}/join/"), 404, "not_found")
    r = post(client_for(users[1]), f"{BASE}{g.pk}/join/", {"invite_code": g.invite_code})
    assert r.status_code == 200 and r.json()["you"] == 1
    r = post(client_for(users[2]), f"{BASE}join/", {"invite_code": g.invite_code.lower()})
    assert r.status_code == 200 and r.json()["you"] == 2
    err(post(client_for(users[2]), f"{BASE}join/", {"invite_code": g.invite_code}), 409,
        "already_joined")  # fmt: skip
    err(post(client_for(users[3]), f"{BASE}join/", {"invite_code": "NOPE"}), 404, "not_found")
    err(post(client_for(users[3]), f"{BASE}join/", {}), 400, "invalid")


def test_game_full(users, make_user):
    g = services.game_create(host=users[0])
    for u in users[1:]:
        assert post(client_for(u), f"{BASE}{g.pk}/join/").status_code == 200
    err(post(client_for(make_user()), f"{BASE}{g.pk}/join/"), 409, "game_full")


def test_leave_and_kick(users, lobby):
    for u in users[1:4]:
        services.game_join(game=lobby, user=u)
    url = f"{BASE}{lobby.pk}/"
    assert post(client_for(users[1]), url + "leave/").json()["you"] is None
    err(post(client_for(users[1]), url + "leave/"), 403, "not_seated")
    err(post(client_for(users[2]), url + "kick/", {"seat": 2}), 403, "not_host")
    err(post(client_for(users[0]), url + "kick/", {"seat": 0}), 400, "cannot_kick_self")
    err(post(client_for(users[0]), url + "kick/", {"seat": 6}), 404, "no_such_seat")
    err(post(client_for(users[0]), url + "kick/", {"seat": "x"}), 400, "invalid")
    r = post(client_for(users[0]), url + "kick/", {"seat": 1})
    assert [s["user_id"] for s in r.json()["seats"]] == [users[0].pk, users[3].pk]


def test_start_and_abandon(users, lobby):
    url = f"{BASE}{lobby.pk}/"
    err(post(client_for(users[0]), url + "start/"), 409, "not_enough_players")
    services.game_join(game=lobby, user=users[1])
    err(post(client_for(users[1]), url + "start/"), 403, "not_host")
    r = post(client_for(users[0]), url + "start/")
    assert r.status_code == 200 and r.json()["status"] == "playing"
    err(post(client_for(users[0]), url + "start/"), 409, "game_started")
    err(post(client_for(users[2]), url + "join/"), 409, "game_started")
    err(post(client_for(users[1]), url + "leave/"), 409, "game_started")
    err(post(client_for(users[1]), url + "abandon/"), 403, "not_host")
    assert post(client_for(users[0]), url + "abandon/").json()["status"] == "abandoned"
    err(post(client_for(users[0]), url + "abandon/"), 409, "game_over")


# --- play ----------------------------------------------------------------------------------
def first(game: Game) -> int:
    game.refresh_from_db()
    return game.state["round"]["turn"]["seat"]


def user_at(game, seat):
    return game.seats.get(number=seat).user


def act_url(game):
    return f"{BASE}{game.pk}/actions/"


def test_state_lobby_and_playing(users, lobby, playing, make_user):
    r = client_for(users[0]).get(f"{BASE}{lobby.pk}/state/").json()
    assert r["state"] is None and r["status"] == "lobby"
    me = client_for(users[0]).get(f"{BASE}{playing.pk}/state/").json()
    assert me["state"]["seat"] == 0 and me["version"] == playing.version
    assert me["state"]["hands"] == [[None] * 3, [None] * 3]
    spectator = client_for(make_user()).get(f"{BASE}{playing.pk}/state/").json()
    assert spectator["state"]["seat"] is None and "you" not in spectator["state"]
    for body in (me, spectator):
        assert "seed" not in str(body) and "deck_order" not in str(body)


def test_legal_actions(users, playing, make_user, fake_clock):
    r = client_for(users[0]).get(act_url(playing)).json()
    assert r["actions"] == [{"type": "look"}] and r["seat"] == 0 and r["version"] == 3
    fake_clock.advance(5000)
    s = first(playing)
    acts = client_for(user_at(playing, s)).get(act_url(playing)).json()["actions"]
    assert {"type": "draw", "source": "deck"} in acts
    assert client_for(make_user()).get(act_url(playing)).json()["actions"] == []


def test_post_action_and_its_errors(users, playing, fake_clock, make_user):
    s = first(playing)
    c = client_for(user_at(playing, s))
    other = client_for(user_at(playing, 1 - s))
    draw = {"type": "draw", "source": "deck"}
    err(post(c, act_url(playing), {"action": draw, "expected_version": 3}), 409, "too_early")
    fake_clock.advance(5000)
    err(post(other, act_url(playing), {"action": draw, "expected_version": 3}), 409,
        "not_your_turn")  # fmt: skip
    err(post(c, act_url(playing), {"action": {"type": "zap"}, "expected_version": 3}), 400,
        "bad_action")  # fmt: skip
    err(post(c, act_url(playing), {"action": "draw"}), 400, "bad_action")
    err(post(c, act_url(playing), {"expected_version": 3}), 400, "invalid")
    err(post(c, act_url(playing), {"action": draw, "expected_version": -1}), 400, "invalid")
    err(post(c, act_url(playing), {"action": {"type": "swap", "place": "left"}}), 409,
        "wrong_phase")  # fmt: skip
    err(post(client_for(make_user()), act_url(playing), {"action": draw}), 403, "not_seated")
    body = err(post(c, act_url(playing), {"action": draw, "expected_version": 2}), 409,
               "stale_version")  # fmt: skip
    assert body["version"] == 3
    assert Event.objects.filter(game=playing).count() == 5  # nothing changed so far
    r = post(c, act_url(playing), {"action": draw, "expected_version": 3})
    assert r.status_code == 200
    body = r.json()
    assert body["version"] == 4 and not body["replayed"]
    drawn = next(e for e in body["events"] if e["type"] == "draw")
    assert drawn["data"]["card"] is not None  # the drawer sees its card
    assert body["state"]["state"]["held"]["card"] == drawn["data"]["card"]


def test_idempotency_key_in_header_or_body(users, playing):
    c = client_for(users[0])
    r1 = post(c, act_url(playing), {"action": {"type": "look"}, "expected_version": 3},
              HTTP_IDEMPOTENCY_KEY="abc")  # fmt: skip
    r2 = post(c, act_url(playing), {"action": {"type": "look"}, "expected_version": 3,
                                    "idempotency_key": "abc"})  # fmt: skip
    assert r1.status_code == r2.status_code == 200
    assert r2.json()["replayed"] and r2.json()["version"] == r1.json()["version"] == 4
    # The replay is no longer "the moment": the look's values are not sent again (R4).
    assert r1.json()["events"][-1]["data"]["left"] is not None
    playing.refresh_from_db()
    assert playing.version == 4
    err(post(c, act_url(playing), {"action": {"type": "call"}, "idempotency_key": "abc"}), 409,
        "idempotency_key_reused")  # fmt: skip


def test_game_over_and_not_started(users, lobby, playing, staff):
    err(post(client_for(users[0]), act_url(lobby), {"action": {"type": "look"}}), 409,
        "not_started")  # fmt: skip
    services.game_abandon(game=playing, user=staff)
    err(post(client_for(users[0]), act_url(playing), {"action": {"type": "look"}}), 409,
        "game_over")  # fmt: skip


# --- object permissions: nobody reads another seat's secrets -------------------------------
def test_b_cannot_act_for_a_nor_see_a_look(users, playing):
    a, b = client_for(users[0]), client_for(users[1])
    r = post(a, act_url(playing), {"action": {"type": "look"}})
    look = r.json()["events"][-1]
    left, right = look["data"]["left"], look["data"]["right"]
    assert left and right
    for since in (0, 5):
        events = b.get(f"{BASE}{playing.pk}/events/", {"since": since}).json()["events"]
        b_look = [e for e in events if e["type"] == "look"]
        assert b_look and b_look[0]["data"]["left"] is None and b_look[0]["data"]["right"] is None
    assert left not in str(b.get(f"{BASE}{playing.pk}/state/").json()["state"]["hands"])
    # The owner gets it while it is the moment (current version) ...
    mine = a.get(f"{BASE}{playing.pk}/events/", {"since": 5}).json()["events"]
    assert mine[-1]["data"]["left"] == left
    # ... and not again once the game has moved on (R3/R4: "once").
    post(b, act_url(playing), {"action": {"type": "look"}})
    again = a.get(f"{BASE}{playing.pk}/events/", {"since": 5}).json()["events"]
    assert again[0]["type"] == "look" and again[0]["data"]["left"] is None


def test_drawn_card_private_to_drawer(users, playing, fake_clock, make_user):
    fake_clock.advance(5000)
    s = first(playing)
    drawer, other = client_for(user_at(playing, s)), client_for(user_at(playing, 1 - s))
    r = post(drawer, act_url(playing), {"action": {"type": "draw", "source": "deck"}})
    card = r.json()["state"]["state"]["held"]["card"]
    for c in (other, client_for(make_user())):
        assert card not in str(c.get(f"{BASE}{playing.pk}/state/").json())
        assert card not in str(c.get(f"{BASE}{playing.pk}/events/").json())


def test_events_since_and_limit(users, playing):
    c = client_for(users[0])
    body = c.get(f"{BASE}{playing.pk}/events/").json()
    assert [e["seq"] for e in body["events"]] == [1, 2, 3, 4, 5] and body["version"] == 3
    assert [e["seq"] for e in c.get(f"{BASE}{playing.pk}/events/?since=3&limit=1").json()
            ["events"]] == [4]  # fmt: skip
    assert body["events"][-1]["data"]["deck"] is None  # round_dealt without its deck
    err(c.get(f"{BASE}{playing.pk}/events/?since=-1"), 400, "invalid")
    err(c.get(f"{BASE}{playing.pk}/events/?since=x"), 400, "invalid")


def test_schema_and_docs_are_served(db, client):
    r = client.get("/api/schema/")
    assert r.status_code == 200 and b"/api/v1/games/{game_id}/actions/" in r.content
    docs = client.get("/api/docs/")
    assert docs.status_code == 200
    html = docs.content.decode()
    assert "swagger-ui" in html and "cdn" not in html.lower() and "/static/" in html


@pytest.mark.parametrize("stop", ["end_now", "abandon"])
def test_state_of_a_game_stopped_mid_round_is_not_playing(users, playing, staff, make_user, stop):
    """``end_now`` / ``abandon`` stop a game outside the engine: the state says so too."""
    if stop == "end_now":
        services.game_end_now(game=playing, user=staff)
    else:
        services.game_abandon(game=playing, user=users[0])
    playing.refresh_from_db()
    status = "finished" if stop == "end_now" else "abandoned"
    for user in (users[0], users[1], make_user()):
        body = client_for(user).get(f"{BASE}{playing.pk}/state/").json()
        assert body["status"] == status
        state = body["state"]
        assert state["status"] == status
        assert state["winners"] == playing.winners
        assert state["awaiting"] == {"kind": "nothing", "seats": [], "deadline": None}
        assert state["deadlines"] == []
        if user in users[:2]:
            assert state["you"]["can"] == []
    assert client_for(users[0]).get(act_url(playing)).json()["actions"] == []


def test_lobby_endpoints_answer_from_the_saved_instance(users, monkeypatch):
    """The services return the instance they saved: no re-read, and the answer is current."""
    reads: list[int] = []
    original = Game.refresh_from_db

    def spy(self, *args, **kwargs):
        reads.append(self.pk)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Game, "refresh_from_db", spy)
    host = client_for(users[0])
    created = post(host, BASE, {"settings": {"target_score": 50}, "private": False}).json()
    url = f"{BASE}{created['id']}/"
    answers = [created]
    for u in users[1:4]:
        answers.append(post(client_for(u), url + "join/").json())
    answers.append(post(client_for(users[3]), url + "leave/").json())
    answers.append(post(host, url + "kick/", {"seat": 2}).json())
    answers.append(post(host, url + "start/").json())
    answers.append(post(host, url + "abandon/").json())
    assert reads == []
    assert [a["version"] for a in answers] == list(range(1, 9))
    final = host.get(url).json()
    assert answers[-1] == final and final["status"] == "abandoned"
    assert [s["user_id"] for s in final["seats"]] == [users[0].pk, users[1].pk]
