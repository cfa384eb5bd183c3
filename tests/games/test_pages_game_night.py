"""Pages of a game night: the rules in three languages, the home page, the lobby's names and
"Watch" list, rematch and leaving through the site's forms."""

from __future__ import annotations

import pytest

from games import services
from games.models import Game

pytestmark = pytest.mark.django_db


MINUS = "\u22125"  # the rules print minus five with a real minus sign


@pytest.mark.parametrize(
    ("language", "words"),
    [
        ("en", ["How to play Crisp", "3 seconds", "2 seconds", MINUS, "+5", "Queen", "final turn"]),
        ("ja", ["クリスプの遊び方", "3秒", "2秒", MINUS, "+5", "クイーン", "最後の手番"]),
        (
            "ru",
            ["Как играть в Крисп", "3 секунды", "2 секунды", MINUS, "+5", "Дама", "последний ход"],
        ),
    ],
)
def test_rules_page_in_every_language(client, language, words):
    client.cookies["django_language"] = language
    page = client.get("/rules/crisp/")
    assert page.status_code == 200  # anyone may read them, signed in or not
    text = page.content.decode()
    for word in words:
        assert word in text, word
    assert 'class="site-header"' in text
    framed = client.get("/rules/crisp/?embed=1")
    assert framed["X-Frame-Options"] == "SAMEORIGIN"  # the table's "?" dialog frames it
    embedded = framed.content.decode()
    assert words[0] in embedded and 'class="site-header"' not in embedded
    assert client.get("/rules/chess/").status_code == 404


def test_home_lobby_and_table_link_the_rules(client, users, start_game):
    assert 'href="/rules/"' in client.get("/").content.decode()
    client.force_login(users[0])
    assert 'href="/rules/"' in client.get("/games/").content.decode()
    g = start_game(users[:2])
    table = client.get(f"/games/{g.pk}/").content.decode()
    assert 'id="rules-button"' in table and "/rules/crisp/?embed=1" in table


def test_lobby_shows_names_and_games_to_watch(client, users, start_game):
    g = start_game(users[1:3])
    services.game_rename(game=g, user=users[1], name="Friday <cards>")
    client.force_login(users[0])
    page = client.get("/games/").content.decode()
    assert "Friday &lt;cards&gt;" in page
    assert f'href="/games/{g.pk}/"' in page and "Watch" in page
    private = start_game(users[3:5], private=True)
    assert f'href="/games/{private.pk}/"' not in client.get("/games/").content.decode()


def test_create_with_a_name_rematch_and_quit_through_the_site(client, users, start_game, staff):
    client.force_login(users[0])
    r = client.post("/games/new/", {"target_score": "50", "name": "Game night"})
    game = Game.objects.get(host=users[0])
    assert game.name == "Game night" and r["Location"] == f"/games/{game.pk}/"
    g = start_game(users[:3])
    r = client.post(f"/games/{g.pk}/quit/")
    assert r["Location"] == "/games/"
    assert f'href="/games/{g.pk}/"' not in client.get("/games/").content.decode()  # not "mine"
    services.game_end_now(game=g, user=staff)
    r = client.post(f"/games/{g.pk}/rematch/")
    new = Game.objects.get(rematch_of=g)
    assert r["Location"] == f"/games/{new.pk}/" and new.host == users[0]


@pytest.mark.parametrize(
    ("language", "line"), [("ru", "Криббедж"), ("ja", "クリベッジ"), ("en", "Cribbage needs 2")]
)
def test_a_lobby_says_how_many_players_its_game_needs_in_the_page_language(
    client, users, language, line
):
    """The game's name inside "needs N players" is the page language's (issue 22, item 9)."""
    game = services.game_create(host=users[0], kind="cribbage")
    client.force_login(users[0])
    client.cookies["django_language"] = language
    text = client.get(f"/games/{game.pk}/").content.decode()
    needs = [chunk for chunk in text.split('<p class="muted small">')[1:] if "2" in chunk[:80]]
    assert any(line in chunk.split("</p>")[0] for chunk in needs), needs[:2]
