"""Issue 26, "your move, everywhere": the list (games.turns), the page, the header count and
``GET /api/v1/me/turns/`` without a wait (the long poll and the socket: tests/live/)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from accounts.services import token_create
from games import services, turns
from games.models import Seat

pytestmark = pytest.mark.django_db


def _awaiting(user: Any) -> list[int]:
    return [t["game"] for t in turns.turn_list(user)]


def _cribbage(start_game: Any, players: list[Any], **kw: Any) -> Any:
    """A Cribbage game: its lay-away awaits both seats at once."""
    return start_game(players, kind="cribbage", **kw)


def test_the_list_is_sorted_by_time_left_and_lists_opponents(
    users: list[Any], start_game: Any
) -> None:
    a = users[0]
    first = _cribbage(start_game, [a, users[1]])
    second = _cribbage(start_game, [users[2], a])
    third = _cribbage(start_game, [a, users[3]])
    # Deadlines as the commit step would store them: the second soonest, the first none.
    seat = Seat.objects.get(game=second, user=a)
    Seat.objects.filter(game=first, user=a).update(turn_deadline=None)
    Seat.objects.filter(game=third, user=a).update(
        turn_deadline=seat.turn_since + timedelta(hours=5)
    )
    Seat.objects.filter(game=second, user=a).update(
        turn_deadline=seat.turn_since + timedelta(hours=1)
    )
    items = turns.turn_list(a)
    assert [t["game"] for t in items] == [second.pk, third.pk, first.pk]
    assert items[0]["opponents"] == [{"name": users[2].public_name, "bot": False}]
    assert items[0]["url"] == reverse("games:table", args=[second.pk])
    assert items[2]["deadline"] is None and items[0]["pace"] == "live"
    assert turns.turn_count(a) == 3


def test_only_games_in_progress_that_the_person_plays_are_listed(
    users: list[Any], start_game: Any, staff: Any
) -> None:
    a = users[0]
    playing = _cribbage(start_game, [a, users[1]])
    ended = _cribbage(start_game, [a, users[2]])
    lobby = services.game_create(host=a, kind="cribbage")
    services.game_join(game=lobby, user=users[3])
    services.game_end_now(game=ended, user=staff)
    assert _awaiting(a) == [playing.pk]
    # A seat a computer sits in for is the computer's to move.
    Seat.objects.filter(game=playing, user=a).update(sitting_in=True)
    assert _awaiting(a) == [] and turns.turn_count(a) == 0
    assert turns.turn_list(None) == [] and turns.turn_count(None) == 0


def test_the_page_lists_the_games_and_links_to_their_tables(
    users: list[Any], start_game: Any
) -> None:
    a = users[0]
    game = _cribbage(start_game, [a, users[1]])
    client = Client()
    client.force_login(a)
    page = client.get(reverse("games:your-move"))
    assert page.status_code == 200
    html = page.content.decode()
    assert reverse("games:table", args=[game.pk]) in html
    assert users[1].public_name in html
    assert 'id="turn-list"' in html and "turn-list-empty" not in html


def test_the_page_says_what_to_do_when_nothing_awaits(users: list[Any]) -> None:
    client = Client()
    client.force_login(users[0])
    html = client.get(reverse("games:your-move")).content.decode()
    assert "turn-list-empty" in html and reverse("games:lobby") in html
    assert Client().get(reverse("games:your-move")).status_code == 302  # sign in first


def test_every_page_s_header_shows_the_count_with_one_query(
    users: list[Any], start_game: Any
) -> None:
    a = users[0]
    _cribbage(start_game, [a, users[1]])
    _cribbage(start_game, [users[2], a])
    client = Client()
    client.force_login(a)
    html = client.get(reverse("rules:index")).content.decode()
    assert 'id="your-move-link"' in html and 'data-count="2"' in html
    assert "data-your-move-count>2<" in html and "js/yourmove.js" in html
    with CaptureQueriesContext(connection) as queries:
        client.get(reverse("rules:index"))
    counting = [q["sql"] for q in queries if "turn_since" in q["sql"]]
    assert len(counting) == 1 and "COUNT" in counting[0].upper()
    # Nobody signed in: no link, no script, no query.
    html = Client().get(reverse("rules:index")).content.decode()
    assert "your-move-link" not in html and "yourmove.js" not in html


#: The API's async view reads on the database thread pool (crisp_site.db), which must see
#: what the test wrote: committed rows.
api_db = pytest.mark.django_db(transaction=True)


@api_db
def test_the_api_lists_the_same_as_json(users: list[Any], start_game: Any) -> None:
    a = users[0]
    game = _cribbage(start_game, [a, users[1]])
    _, key = token_create(user=a, name="turns")
    client = Client()
    r = client.get("/api/v1/me/turns/", HTTP_AUTHORIZATION=f"Token {key}")
    assert r.status_code == 200, r.content
    data = r.json()
    assert data["count"] == 1 and r["ETag"] == f'"{data["etag"]}"'
    (t,) = data["turns"]
    assert t["game"] == game.pk and t["kind"] == "cribbage" and t["pace"] == "live"
    assert t["url"].endswith(reverse("games:table", args=[game.pk]))
    assert t["since"] and "deadline" in t
    assert set(t) == {
        "game", "kind", "name", "url", "seat", "since", "deadline", "pace", "opponents"
    }  # fmt: skip
    # The session works too (the site's own pages).
    client.force_login(users[1])
    assert client.get("/api/v1/me/turns/").json()["count"] == 1


@api_db
@pytest.mark.parametrize(
    ("headers", "query", "status", "code"),
    [
        ({}, "", 401, "not_authenticated"),
        ({"HTTP_AUTHORIZATION": "Token nope"}, "", 401, "token_invalid"),
        (None, "?wait=61", 400, "bad_wait"),
        (None, "?wait=-1", 400, "bad_wait"),
        (None, "?wait=soon", 400, "bad_wait"),
    ],
)
def test_the_api_refuses_with_a_reason(
    users: list[Any], headers: dict[str, str] | None, query: str, status: int, code: str
) -> None:
    if headers is None:
        _, key = token_create(user=users[0], name="turns")
        headers = {"HTTP_AUTHORIZATION": f"Token {key}"}
    r = Client().get(f"/api/v1/me/turns/{query}", **headers)
    assert r.status_code == status and r.json()["code"] == code
    assert Client().post("/api/v1/me/turns/").status_code == 405


def test_the_schema_documents_the_endpoint() -> None:
    r = Client().get("/api/schema/?format=json")
    op = r.json()["paths"]["/api/v1/me/turns/"]["get"]
    assert {p["name"] for p in op["parameters"]} >= {"wait", "since"}
    assert "200" in op["responses"]
