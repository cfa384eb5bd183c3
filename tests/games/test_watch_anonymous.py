"""Watching a public game needs no account (issue 24): the pages, the read API and its limits
for a visitor with no session and no token.  Their sockets: tests/live/test_consumer.py; that
nothing they are sent leaks: the leak kits (tests/games/leak_kit.py, tests/live/test_leaks*.py,
tests/history/test_replay_leaks.py)."""

from __future__ import annotations

import uuid

import pytest
from django.test import Client
from rest_framework.test import APIClient

from crisp_site import throttles
from games import services
from games.models import ChatMessage, Game

from .conftest import client_for
from .leak_kit import same_as_spectator

BASE = "/api/v1/games/"


@pytest.fixture
def playing(users, start_game) -> Game:
    return start_game(users[:2])


@pytest.fixture
def private(users, start_game) -> Game:
    return start_game(users[2:4], private=True)


# --- the read API ---------------------------------------------------------------------------
@pytest.mark.parametrize("path", ["", "state/", "events/", "chat/", "actions/"])
def test_anonymous_reads_a_public_game_as_a_spectator(path, playing, make_user):
    services.game_chat_post(game=playing, user=playing.host, text="good luck")
    url = f"{BASE}{playing.pk}/{path}"
    anonymous = APIClient().get(url)
    assert anonymous.status_code == 200, anonymous.content
    spectator = client_for(make_user()).get(url)
    same_as_spectator(anonymous.json(), spectator.json(), url)


def test_anonymous_state_is_the_spectators_view(playing):
    body = APIClient().get(f"{BASE}{playing.pk}/state/").json()
    assert body["state"]["seat"] is None
    assert APIClient().get(f"{BASE}{playing.pk}/actions/").json()["actions"] == []


@pytest.mark.parametrize("path", ["", "state/", "events/", "chat/", "actions/"])
def test_a_private_game_is_not_found_for_anonymous_even_with_its_code(path, private):
    url = f"{BASE}{private.pk}/{path}"
    for params in ({}, {"invite_code": private.invite_code}):
        r = APIClient().get(url, params)
        assert r.status_code == 404, r.content
        assert r.json()["code"] == "not_found"


@pytest.mark.parametrize(
    "path,body",
    [
        ("actions/", {"action": {"type": "look"}}),
        ("chat/", {"text": "hello"}),
        ("join/", {}),
        ("leave/", {}),
        ("start/", {}),
        ("back/", {}),
        ("abandon/", {}),
        ("quit/", {}),
        ("rematch/", {}),
        ("bots/", {"level": "easy"}),
        ("kick/", {"seat": 1}),
        ("name/", {"name": "x"}),
    ],
)
def test_every_write_is_refused_to_anonymous_with_a_reason(path, body, playing):
    version = playing.version
    r = APIClient().post(f"{BASE}{playing.pk}/{path}", body, format="json")
    assert r.status_code in (401, 403), r.content
    answer = r.json()
    assert answer["code"] == "not_authenticated" and answer["detail"], answer
    playing.refresh_from_db()
    assert playing.version == version
    assert not ChatMessage.objects.filter(game=playing, text="hello").exists()


def test_anonymous_reads_are_limited_per_address(playing, settings, monkeypatch, make_user):
    """``anon_read``: per client address, and only for clients with no account."""
    settings.THROTTLE_RATES = {**settings.THROTTLE_RATES, "anon_read": "3/minute"}
    monkeypatch.setattr(throttles, "_clock", lambda: 1_800_000_000.25)
    address = f"10.{uuid.uuid4().int % 250}.{uuid.uuid4().int % 250}.{uuid.uuid4().int % 250}"
    url = f"{BASE}{playing.pk}/state/"
    anonymous = APIClient(REMOTE_ADDR=address)
    assert [anonymous.get(url).status_code for _ in range(3)] == [200, 200, 200]
    refused = anonymous.get(url)
    assert refused.status_code == 429 and refused.json()["code"] == "throttled"
    assert "Retry-After" in refused.headers
    # The same address, signed in: not counted against the watchers' limit.
    member = client_for(make_user())
    assert member.get(url, REMOTE_ADDR=address).status_code == 200
    # The table page and the replay page count against the same budget.
    assert Client(REMOTE_ADDR=address).get(f"/games/{playing.pk}/").status_code == 429


# --- the pages ------------------------------------------------------------------------------
def test_anonymous_opens_a_public_table_as_a_spectator(playing):
    page = Client().get(f"/games/{playing.pk}/")
    assert page.status_code == 200
    html = page.content.decode()
    assert 'id="play-signin"' in html and "/accounts/login/?next=" in html
    assert 'id="chat-form" autocomplete="off" hidden' in html  # reads the chat, never posts
    assert page.context["boot"]["you"] is None and page.context["boot"]["user_id"] is None


def test_anonymous_sees_sign_in_instead_of_take_a_seat_in_a_public_lobby(users):
    lobby = services.game_create(host=users[0], kind="cribbage")
    html = Client().get(f"/games/{lobby.pk}/").content.decode()
    assert 'id="join-game"' not in html
    assert 'id="play-signin"' in html
    # A signed-in stranger still gets the button.
    member = Client()
    member.force_login(users[5])
    assert 'id="join-game"' in member.get(f"/games/{lobby.pk}/").content.decode()


def test_a_private_or_missing_game_sends_anonymous_to_sign_in(private):
    for url in (
        f"/games/{private.pk}/",
        f"/games/{private.pk}/?code={private.invite_code}",
        f"/games/{private.pk + 1000}/",
    ):
        r = Client().get(url)
        assert r.status_code == 302 and r["Location"].startswith("/accounts/login/?next="), url


def test_the_lobby_sends_anonymous_to_the_watch_page_which_lists_public_games(playing, private):
    r = Client().get("/games/")
    assert r.status_code == 302 and r["Location"] == "/games/watch/"
    page = Client().get("/games/watch/")
    assert page.status_code == 200
    listed = [g["id"] for g in page.context["watch"]]
    assert listed == [playing.pk]  # the private game is not listed
    assert f'href="/games/{playing.pk}/"' in page.content.decode()


def test_the_watch_page_leaves_out_a_members_own_games(playing, users, start_game):
    member = Client()
    member.force_login(users[0])
    assert [g["id"] for g in member.get("/games/watch/").context["watch"]] == []


@pytest.mark.parametrize(
    "language,words",
    [("en", "play as a guest"), ("ja", "ゲストとしてプレイ"), ("ru", "играйте как гость")],
)
def test_the_watchers_words_are_translated(language, words, playing):
    client = Client()
    client.cookies["django_language"] = language
    for url in ("/games/watch/", f"/games/{playing.pk}/"):
        html = client.get(url).content.decode()
        assert words in html and 'href="/accounts/login/?next=' in html, (language, url)


def test_anonymous_takes_a_seat_in_a_public_lobby_as_a_guest_in_two_clicks(users):
    """The lobby's "Sign in or play as a guest" offers the guest button itself (it linked to the
    home page): one POST makes the guest and comes back to this table, whose seat is one more
    click away."""
    lobby = services.game_create(host=users[0], kind="cribbage")
    visitor = Client()
    table = f"/games/{lobby.pk}/"
    html = visitor.get(table).content.decode()
    assert 'action="/accounts/guest/"' in html and f'name="next" value="{table}"' in html
    back = visitor.post("/accounts/guest/", {"next": table})
    assert back.status_code == 302 and back["Location"] == table
    html = visitor.get(table).content.decode()
    assert 'id="join-game"' in html and 'id="play-signin"' not in html
    assert visitor.session["_auth_user_id"]
