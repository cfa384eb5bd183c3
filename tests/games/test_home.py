"""The home page and the site's header, through the Django test client (issue 24, items 2, 6).

The home page offers every game the engine registry knows, each with its pitch, its table's
picture, its rules and one-click "play against the computer" / "play with friends"; the
buttons are the lobby's own flows (their forms are submitted here as a browser would). A
signed-out visitor sees the same page, and the same buttons play as a guest in one click.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from typing import Any

import pytest
from django.test import Client

from games.engines import KINDS, engine_for
from games.models import Game
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

#: Words of the page in each language (from locale/*/django.po).
WORDS = {
    "en": {"play": "Play", "watch": "Watch", "boards": "Leaderboards", "mine": "My games",
           "rules": "Rules", "computer": "Play against the computer",
           "friends": "Play with friends", "names": ["Crisp", "Cribbage", "Triple Crown"]},
    "ja": {"play": "プレイ", "watch": "観戦", "boards": "ランキング", "mine": "自分のゲーム",
           "rules": "ルール", "computer": "コンピューターと対戦", "friends": "友だちと遊ぶ",
           "names": ["クリスプ", "クリベッジ", "トリプルクラウン"]},
    "ru": {"play": "Играть", "watch": "Смотреть", "boards": "Таблицы лидеров",
           "mine": "Мои игры", "rules": "Правила", "computer": "Играть с компьютером",  # noqa: RUF001
           "friends": "Играть с друзьями", "names": ["Крисп", "Криббедж", "Тройная корона"]},  # noqa: RUF001
}  # fmt: skip


class Forms(HTMLParser):
    """Every form of a page: its action and its inputs' names and values."""

    def __init__(self) -> None:
        super().__init__()
        self.forms: list[dict[str, Any]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "form":
            self.forms.append({"action": a.get("action"), "data": {}})
        elif tag == "input" and self.forms and a.get("name"):
            self.forms[-1]["data"][a["name"]] = a.get("value") or ""


def forms(html: str, action: str) -> list[dict[str, str]]:
    parser = Forms()
    parser.feed(html)
    return [f["data"] for f in parser.forms if f["action"] == action]


def header(html: str) -> str:
    return html.split('<header class="site-header">', 1)[1].split("</header>", 1)[0]


def page(client: Client, url: str, language: str) -> str:
    client.cookies["django_language"] = language
    response = client.get(url)
    assert response.status_code == 200, url
    return response.content.decode()


@pytest.mark.parametrize("language", ["en", "ja", "ru"])
def test_a_visitor_sees_every_game_and_plays_as_a_guest_in_one_click(language: str) -> None:
    """Signed out, the same one-click buttons play as a guest (issue 24, item 1): each form
    carries ``as_guest``, and its one POST makes the guest and starts the game."""
    client = Client()
    html = page(client, "/", language)
    w = WORDS[language]
    assert f'<html lang="{language}">' in html
    for kind, name in zip(KINDS, w["names"], strict=True):
        card = html.split(f'id="{kind}"', 1)[1].split("</article>", 1)[0]
        assert f">{name}</h2>" in card
        assert f'href="/rules/{kind}/"' in card
        assert "<svg" in card and 'role="img"' in card  # the table's picture, described
        assert w["computer"] in card and w["friends"] in card
    computer = forms(html, "/games/computer/")
    friends = forms(html, "/games/new/")
    assert [f["kind"] for f in computer] == list(KINDS) == [f["kind"] for f in friends]
    assert all(f["as_guest"] == "1" for f in [*computer, *friends])
    assert 'id="account-note"' in html  # guest play, and signing up later, said on the page
    response = client.post("/games/computer/", computer[0])
    game = Game.objects.get(kind=computer[0]["kind"], status=Game.Status.PLAYING)
    assert response["Location"] == f"/games/{game.pk}/" and game.host.is_guest


def test_the_page_never_sells_one_game_as_the_site() -> None:
    """The site's name is "Crisp online"; the game Crisp appears only as one of three."""
    html = page(Client(), "/", "en")
    hero = html.split('class="home-hero"', 1)[1].split("</section>", 1)[0]
    assert not re.search(r"\b(Crisp|Cribbage|Triple Crown)\b", hero)
    assert "Lowest three cards win" not in html and "What is Crisp?" not in html
    assert ">Crisp <span>online</span></a>" in header(html)
    titles = re.findall(r'<h2 id="home-[a-z_]+-title">([^<]*)</h2>', html)
    assert titles == [engine_for(kind).NAME for kind in KINDS]


@pytest.mark.parametrize("language", ["en", "ja", "ru"])
def test_a_player_plays_from_the_home_page_in_one_click(language: str) -> None:
    person = UserFactory(language=language)
    client = Client()
    client.force_login(person)
    html = page(client, "/", language)
    assert WORDS[language]["computer"] in html and 'id="account-note"' not in html
    computer = forms(html, "/games/computer/")
    friends = forms(html, "/games/new/")
    assert [f["kind"] for f in computer] == list(KINDS) == [f["kind"] for f in friends]
    for data in computer:
        response = client.post("/games/computer/", data)
        game = Game.objects.get(host=person, kind=data["kind"], status=Game.Status.PLAYING)
        assert response["Location"] == f"/games/{game.pk}/"
        assert game.private and game.seats.filter(user__is_bot=True).exists()
    for data in friends:
        response = client.post("/games/new/", data)
        game = Game.objects.get(host=person, kind=data["kind"], status=Game.Status.LOBBY)
        assert response["Location"] == f"/games/{game.pk}/" and game.private


PAGES = ["/", "/rules/", "/rules/cribbage/", "/leaderboards/cribbage/", "/games/",
         "/accounts/profile/", "/accounts/tokens/"]  # fmt: skip


@pytest.mark.parametrize("language", ["en", "ja", "ru"])
def test_every_page_has_the_header(language: str) -> None:
    person = UserFactory(username="aiko", display_name="Aiko", language=language)
    client = Client()
    client.force_login(person)
    w = WORDS[language]
    for url in [*PAGES, "/players/aiko/"]:
        nav = header(page(client, url, language))
        assert f'<a href="/games/">{w["play"]}</a>' in nav, url
        assert f'<a href="/games/#watch-title">{w["watch"]}</a>' in nav, url
        assert f'<a href="/leaderboards/">{w["boards"]}</a>' in nav, url
        assert f'<a href="/games/#my-games-title">{w["mine"]}</a>' in nav, url
        assert f'<a href="/rules/">{w["rules"]}</a>' in nav, url
        # Your name opens your public stats page first; settings and tokens are one level down.
        menu = nav.split('<details class="nav-menu">', 1)[1].split("</details>", 1)[0]
        assert ">Aiko</summary>" in menu
        links = re.findall(r'<a href="([^"]+)"', menu)
        assert links == ["/players/aiko/", "/accounts/profile/", "/accounts/tokens/"]
        assert 'href="/accounts/tokens/"' not in nav.replace(menu, "")


def test_a_visitor_s_header_offers_log_in_instead_of_a_profile() -> None:
    for url in ["/", "/rules/", "/leaderboards/triple_crown/", "/accounts/login/"]:
        nav = header(page(Client(), url, "en"))
        assert '<a href="/leaderboards/">Leaderboards</a>' in nav and "My games" not in nav
        assert "/accounts/login/" in nav and "/accounts/signup/" in nav
        assert "nav-menu" not in nav and 'href="/accounts/tokens/"' not in nav


def test_watch_lands_on_the_games_in_progress_even_when_there_are_none() -> None:
    """The header's "Watch" is /games/#watch-title: the section is there, and says so, when
    nobody is playing a public game."""
    client = Client()
    client.force_login(UserFactory())
    html = page(client, "/games/", "en")
    section = html.split('<h2 id="watch-title">', 1)[1].split("</section>", 1)[0]
    assert "Nobody is playing a public game right now." in section
