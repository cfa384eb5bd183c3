"""The game-night endpoints: chat, rematch, quit, name (games/api/game_night.py)."""

from __future__ import annotations

import pytest

from games import services
from games.models import Game

from .conftest import client_for

pytestmark = pytest.mark.django_db

BASE = "/api/v1/games/"


def test_chat_over_rest(users, start_game):
    g = start_game(users[:2], private=True)
    c = client_for(users[0])
    r = c.post(f"{BASE}{g.pk}/chat/", {"text": "<b>gg</b>"}, format="json")
    assert r.status_code == 201, r.json()
    line = r.json()
    assert (line["text"], line["seat"], line["name"]) == ("<b>gg</b>", 0, users[0].public_name)
    assert client_for(users[1]).get(f"{BASE}{g.pk}/chat/").json()["messages"] == [line]
    r = c.post(f"{BASE}{g.pk}/chat/", {"text": "x" * 201}, format="json")
    assert r.status_code == 400
    outsider = client_for(users[5])
    assert outsider.get(f"{BASE}{g.pk}/chat/").status_code == 404
    assert outsider.post(f"{BASE}{g.pk}/chat/", {"text": "hi"}, format="json").status_code == 404


def test_rematch_quit_and_name_over_rest(users, start_game, staff):
    g = start_game(users[:3])
    c0, c1 = client_for(users[0]), client_for(users[1])
    r = c0.post(f"{BASE}{g.pk}/name/", {"name": "Friday"}, format="json")
    assert r.status_code == 200 and r.json()["name"] == "Friday"
    assert c1.post(f"{BASE}{g.pk}/name/", {"name": "no"}, format="json").status_code == 403
    assert c0.post(f"{BASE}{g.pk}/rematch/").json()["code"] == "not_finished"
    assert c1.post(f"{BASE}{g.pk}/quit/").status_code == 200
    assert c1.post(f"{BASE}{g.pk}/quit/").json()["code"] == "already_left"
    services.game_end_now(game=g, user=staff)
    r = c1.post(f"{BASE}{g.pk}/rematch/")
    assert r.status_code == 200
    new = r.json()
    assert new["status"] == "lobby" and new["name"] == "Friday" and new["you"] == 0
    assert c0.post(f"{BASE}{g.pk}/rematch/").json()["id"] == new["id"]
    assert Game.objects.get(pk=new["id"]).seats.count() == 2


def test_admins_can_read_the_chat(users, start_game, staff, client):
    g = start_game(users[:2])
    services.game_chat_post(game=g, user=users[1], text="<i>nice</i>")
    client.force_login(staff)
    page = client.get("/admin/games/chatmessage/").content.decode()
    assert "&lt;i&gt;nice&lt;/i&gt;" in page and "<i>nice</i>" not in page
