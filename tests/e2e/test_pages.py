"""The games' web pages without a browser: thin views over the service layer."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from games import services
from games.models import Game
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def host() -> Any:
    return UserFactory(display_name="Aiko")


@pytest.fixture
def guest() -> Any:
    return UserFactory(display_name="Boris")


def client_for(user: Any) -> Client:
    c = Client()
    c.force_login(user)
    return c


def test_lobby_sends_a_signed_out_visitor_to_watch() -> None:
    """Playing needs an account, watching does not (issue 24): the lobby's public part."""
    response = Client().get("/games/")
    assert response.status_code == 302
    assert response["Location"] == "/games/watch/"


def test_lobby_lists_open_and_my_games(host: Any, guest: Any) -> None:
    open_game = services.game_create(
        host=host, settings={"target_score": 50, "draw_seconds": 30, "pile_draw": True}
    )
    private = services.game_create(host=host, private=True)
    page = client_for(guest).get("/games/").content.decode()
    assert f"/games/{open_game.pk}/join/" in page  # public lobby to join
    assert f"/games/{private.pk}/" not in page  # the private game is not listed
    assert "30 s per draw" in page and "pile drawing" in page and "1 / 8" in page
    mine = client_for(host).get("/games/").content.decode()
    assert "Waiting to start" in mine
    assert f"/games/{open_game.pk}/join/" not in mine  # one's own games are under "My games"


def test_create_game_with_settings(host: Any) -> None:
    response = client_for(host).post(
        "/games/new/",
        {"kind": "crisp", "crisp-target_score": "150", "crisp-draw_seconds": "45",
         "crisp-pile_draw": "1", "private": "1"},
    )  # fmt: skip
    game = Game.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/games/{game.pk}/"
    assert (game.kind, game.private) == ("crisp", True)
    assert game.settings == {
        "target_score": 150,
        "draw_seconds": 45,
        "pile_draw": True,
        "pace": "live",
        "turn_seconds": None,
    }


def test_create_with_bad_settings_is_a_friendly_message(host: Any) -> None:
    response = client_for(host).post(
        "/games/new/", {"kind": "crisp", "crisp-target_score": "77"}, follow=True
    )
    assert "Those settings are not valid." in response.content.decode()
    assert not Game.objects.exists()


def test_join_by_code_and_wrong_code(host: Any, guest: Any) -> None:
    game = services.game_create(host=host, private=True)
    c = client_for(guest)
    wrong = c.post("/games/join/", {"invite_code": "NOPE2345"}, follow=True)
    assert "invite code is wrong" in wrong.content.decode()
    right = c.post("/games/join/", {"invite_code": game.invite_code.lower()})
    assert right["Location"] == f"/games/{game.pk}/"
    assert game.seats.count() == 2
    # Joining again by code just opens the table.
    again = c.post("/games/join/", {"invite_code": game.invite_code})
    assert again["Location"] == f"/games/{game.pk}/"


def test_table_lobby_for_host_shows_invite_kick_and_start(host: Any, guest: Any) -> None:
    game = services.game_create(host=host, private=True)
    services.game_join(game=game, user=guest, invite_code=game.invite_code)
    page = client_for(host).get(f"/games/{game.pk}/").content.decode()
    assert game.invite_code in page and f"?code={game.invite_code}" in page
    assert "Remove Boris" in page and 'id="start-game"' in page
    assert 'id="table-boot"' in page and "/games/jsi18n/" in page


def test_private_table_needs_the_code(host: Any, guest: Any) -> None:
    game = services.game_create(host=host, private=True)
    c = client_for(guest)
    assert c.get(f"/games/{game.pk}/")["Location"] == "/games/"
    page = c.get(f"/games/{game.pk}/?code={game.invite_code}").content.decode()
    assert 'id="join-game"' in page and 'id="invite-code"' not in page
    c.post(f"/games/{game.pk}/join/", {"invite_code": game.invite_code})
    assert game.seats.count() == 2


def test_kick_leave_and_start(host: Any, guest: Any) -> None:
    game = services.game_create(host=host)
    services.game_join(game=game, user=guest)
    h, g = client_for(host), client_for(guest)
    refused = g.post(f"/games/{game.pk}/kick/", {"seat": "0"}, follow=True)
    assert "Only the host can do that." in refused.content.decode()
    h.post(f"/games/{game.pk}/kick/", {"seat": "1"})
    assert game.seats.count() == 1
    too_few = h.post(f"/games/{game.pk}/start/", follow=True)
    assert "This game needs 2 to 8 players." in too_few.content.decode()
    services.game_join(game=game, user=guest)
    assert g.post(f"/games/{game.pk}/leave/")["Location"] == "/games/"
    services.game_join(game=game, user=guest)
    h.post(f"/games/{game.pk}/start/")
    game.refresh_from_db()
    assert game.status == Game.Status.PLAYING
    page = g.get(f"/games/{game.pk}/").content.decode()
    assert 'id="table-app"' in page


def test_pages_speak_japanese(host: Any) -> None:
    c = client_for(host)
    c.cookies["django_language"] = "ja"
    catalog = c.get("/games/jsi18n/").content.decode()
    assert "\\u30af\\u30ea\\u30b9\\u30d7" in catalog or "クリスプ" in catalog  # "クリスプ"
    c.cookies["django_language"] = "ru"
    assert (
        "КРИСП" in c.get("/games/jsi18n/").content.decode()
        or "\\u041a\\u0420" in c.get("/games/jsi18n/").content.decode()
    )


@pytest.mark.parametrize("language", ["ja", "ru"])
def test_every_table_string_is_translated(language: str) -> None:
    """Each gettext("…") of the table modules (the shared client and every game's) has a
    compiled translation (djangojs catalogs)."""
    import gettext
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent.parent
    source = "\n".join(p.read_text() for p in sorted((root / "static/js").rglob("*.js")))
    wanted = set(re.findall(r'\bn?gettext\("((?:[^"\\]|\\.)*)"', source))
    # ngettext's plural forms are msgid_plural, found through the singular.
    wanted -= set(re.findall(r'\bngettext\("(?:[^"\\]|\\.)*",\s*"((?:[^"\\]|\\.)*)"', source))
    assert len(wanted) > 120
    mo = root / f"locale/{language}/LC_MESSAGES/djangojs.mo"
    with mo.open("rb") as f:
        catalog = gettext.GNUTranslations(f)
    # The same in some language: a card letter and a number; a list separator (ru: ", ").
    same = {"K +%(n)s", ", "}
    missing = [s for s in sorted(wanted) if catalog.gettext(s) == s and s not in same]
    assert missing == []
    # One msgid, one meaning: "left" is the place of a card here (not "left the game").
    assert catalog.gettext("left") == {"ja": "左", "ru": "левая"}[language]
