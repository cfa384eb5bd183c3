"""The after-game pages: profile, leaderboard, replay shell, the results and rating snippets."""

from __future__ import annotations

import json
import re

import pytest
from django.template.loader import render_to_string
from django.test import Client

from games import services
from history import ratings, replay
from history import selectors as history_selectors

pytestmark = pytest.mark.django_db


def client(user=None) -> Client:
    c = Client()
    if user is not None:
        c.force_login(user)
    return c


def test_profile_page_is_public(finished_game, users):
    users[0].email = "hidden@example.com"
    users[0].save()
    g = finished_game(seed=1, players=users[:2])
    r = client().get(f"/players/{users[0].username}/")
    html = r.content.decode()
    assert r.status_code == 200 and users[0].public_name in html
    assert "hidden@example.com" not in html
    assert f"/games/{g.pk}/replay/" in html and "Crisp" in html
    assert client().get("/players/nobody/").status_code == 404
    filtered = client().get(f"/players/{users[0].username}/?kind=crisp&page=1")
    assert filtered.status_code == 200


def test_leaderboard_page(finished_game, users, settings):
    settings.HISTORY_PROVISIONAL_GAMES = 1
    finished_game(seed=2, players=users[:3])
    r = client().get("/leaderboards/crisp/")
    assert r.status_code == 200
    assert all(u.public_name in r.content.decode() for u in users[:3])
    assert client().get("/leaderboards/").status_code == 302
    assert client().get("/leaderboards/chess/").status_code == 404


def test_replay_page_shell(finished_game, users, start_game):
    g = finished_game(seed=3, players=users[:2])
    r = client(users[1]).get(f"/games/{g.pk}/replay/")
    html = r.content.decode()
    assert r.status_code == 200
    boot = json.loads(re.search(r'id="replay-boot"[^>]*>(.*?)</script>', html, re.S).group(1))
    assert boot["you"] == 1 and boot["kind"] == "crisp" and boot["api"].endswith("/replay/")
    assert "js/replay/player.js" in html and "js/replay/text.js" in html
    # No inline script or handler or style of ours (CSP): only the JSON boot block.
    own = html.split("<main>")[1].split("</main>")[0]
    assert not re.search(r"\son[a-z]+=", own) and "style=" not in own
    assert "<script>" not in html.split("<footer")[1]
    assert "Round by round" in html
    playing = start_game(users[2:4])
    r = client(users[2]).get(f"/games/{playing.pk}/replay/")
    assert r.status_code == 302 and r["Location"] == f"/games/{playing.pk}/"
    # A public game's replay needs no account (issue 24); a private one's sends to log in.
    assert client().get(f"/games/{g.pk}/replay/").status_code == 200
    table = client().get(f"/games/{g.pk}/")  # its finished table, with the way to its replay
    assert table.status_code == 200 and f'href="/games/{g.pk}/replay/"' in table.content.decode()
    hidden = start_game(users[4:6], private=True)
    services.game_abandon(game=hidden, user=users[4])
    r = client().get(f"/games/{hidden.pk}/replay/")
    assert r.status_code == 302 and r["Location"].startswith("/accounts/login/")


def test_results_snippet(finished_game, users):
    g = finished_game(seed=4, players=users[:2])
    html = render_to_string(
        "history/_results.html", {"results": history_selectors.results_table(g)}
    )
    assert html.count("<tr>") == g.rounds.filter(result__isnull=False).count() + 1
    assert users[0].public_name in html


def test_rating_snippet(finished_game, users):
    finished_game(seed=5, players=users[:2])
    got = ratings.ratings_for(users[:3], "crisp")
    html = render_to_string("history/_rating.html", {"rating": got[users[0].pk]})
    assert "rating-chip provisional" in html and "?" in html
    assert "unrated" in render_to_string("history/_rating.html", {"rating": got[users[2].pk]})


def test_replay_lines_are_words(finished_game, users):
    g = finished_game(seed=6, players=users[:2])
    body = client(users[0]).get(f"/api/v1/games/{g.pk}/replay/?view=seat&seat=0").json()
    lines = [line for f in body["frames"] for line in f["lines"]]
    assert "The game starts" in lines
    assert any(line.endswith("from the deck") for line in lines)
    assert any(line.startswith("Game over") for line in lines)
    # Seat 0 never reads seat 1's drawn card: those lines have "?".
    other = users[1].public_name
    assert all("draws ? from" in ln for ln in lines if ln.startswith(f"{other} draws"))


@pytest.mark.parametrize(("language", "words"), [("ja", "山札から"), ("ru", "из колоды")])
def test_replay_lines_and_pages_are_translated(finished_game, users, language, words):
    from django.utils import translation

    g = finished_game(seed=7, players=users[:2])
    _, frames = replay.replay_frames(game=g, viewer="full")
    with translation.override(language):
        lines = [
            line for f in frames for line in replay.describe_events(g.kind, f["events"], ["A", "B"])
        ]
    assert any(words in line for line in lines)
    c = client(users[0])
    c.cookies["django_language"] = language
    html = c.get(f"/players/{users[0].username}/", HTTP_ACCEPT_LANGUAGE=language).content
    assert ("統計" if language == "ja" else "Статистика") in html.decode()


def test_admin_lists_records_and_ratings_read_only(finished_game, users, staff):
    g = finished_game(seed=8, players=users[:2])
    c = client(staff)
    for path in ("gamerecord", "rating", "playerstats"):
        r = c.get(f"/admin/history/{path}/")
        assert r.status_code == 200, path
        # Their pages moved with the history app (issue 23); an old link still lands there.
        r = c.get(f"/admin/games/{path}/?q=1")
        assert (r.status_code, r["Location"]) == (301, f"/admin/history/{path}/?q=1")
    assert str(g.pk) in c.get("/admin/history/gamerecord/").content.decode()
    assert c.get("/admin/history/rating/add/").status_code == 403
    page = c.get(f"/games/{g.pk}/replay/").content.decode()
    assert "audit=true" in page
    assert "audit=true" not in client(users[0]).get(f"/games/{g.pk}/replay/").content.decode()


def test_nav_and_after_game_snippets(finished_game, users):
    g = finished_game(seed=9, players=users[:2])
    html = render_to_string(
        "history/_after_game.html", {"game": g, "results": history_selectors.results_table(g)}
    )
    assert f"/games/{g.pk}/replay/" in html and f"/api/v1/games/{g.pk}/export/" in html
    assert "Round by round" in html and "This game is over" in html
    # History's links live in every page's header (templates/base.html), not a snippet of its own.
    client = Client()
    client.force_login(users[0])
    page = client.get("/games/").content.decode()
    header = page[page.index("<header") : page.index("</header>")]
    assert "/leaderboards/" in header and f"/players/{users[0].username}/" in header


@pytest.mark.parametrize(
    ("kind", "n", "labels"),
    [
        ("cribbage", 2, {"en": "Best hand", "ja": "最高の手札", "ru": "Лучшая рука"}),
        (
            "triple_crown",
            4,
            {
                "en": "Double Stakes won",
                "ja": "ダブルステークスの勝ち",
                "ru": "Двойных ставок выиграно",
            },
        ),
    ],
)
def test_profile_shows_the_kinds_own_figures_in_every_language(
    finished_game, users, kind, n, labels
):
    """The profile renders Cribbage's and Triple Crown's ``summary`` like Crisp's: each label,
    translated, with its value (a dash where there is nothing to average yet)."""
    from django.utils import translation

    finished_game(seed=4, players=users[:n], kind=kind)
    figures = next(s for s in history_selectors.player_stats(user=users[0]) if s["kind"] == kind)
    assert figures["games"] == 1 and figures["details"]
    for language, label in labels.items():
        c = client()
        c.cookies["django_language"] = language
        html = c.get(f"/players/{users[0].username}/", HTTP_ACCEPT_LANGUAGE=language)
        text = re.sub(r"\s+", " ", html.content.decode())
        with translation.override(language):
            details = {
                d["key"]: d for d in history_selectors.player_stats(user=users[0])[0]["details"]
            }
        assert label in text
        for d in details.values():
            value = d["value"]
            if value is None:
                shown = "\u2013"
            elif d["format"] == "percent":
                shown = f"{round(value * 100)} %"
            elif d["format"] == "decimal":
                shown = f"{value:.2f}".replace(".", "," if language == "ru" else ".")
            else:
                shown = str(value)
            assert f"<dt>{d['label']}</dt><dd>{shown}</dd>" in text.replace("> <", "><"), (
                language,
                d,
            )


@pytest.mark.parametrize("kind", ["cribbage", "triple_crown"])
def test_every_event_of_a_cribbage_or_triple_crown_replay_reads_in_words(
    finished_game, users, kind
):
    """Every event of every frame, full or from a seat, formats in every language (the
    translations keep each message's parameters) and nothing falls back to the raw type.
    One game read in the three languages (it was played once per language before)."""
    from django.utils import translation

    n = 2 if kind == "cribbage" else 4
    g = finished_game(seed=5, players=users[:n], kind=kind)
    names = [u.public_name for u in users[:n]]
    views = [replay.replay_frames(game=g, viewer=viewer)[1] for viewer in ("full", None, 0)]
    for language in ("en", "ja", "ru"):
        lines = []
        with translation.override(language):
            for frames in views:
                for f in frames:
                    lines += replay.describe_events(g.kind, f["events"], names)
        assert len(lines) > 100, language
        assert not [ln for ln in lines if "(" in ln and ln.split(" (")[0].isidentifier()]
        assert not [ln for ln in lines if "%(" in ln]
        if language != "en":
            english = ("plays", "wins trick", "lays away", "is dealt by")
            assert not [ln for ln in lines if any(w in ln for w in english)], language
