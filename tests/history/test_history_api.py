"""The after-game API: shapes, access, pagination, errors as {code, detail}."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from games import services
from games.models import Game
from history import selectors as history_selectors

from .conftest import client_for

pytestmark = pytest.mark.django_db


def test_profile_is_public_and_private_free(finished_game, users):
    users[0].email = "secret@example.com"
    users[0].save()
    finished_game(seed=1, players=users[:2])
    r = APIClient().get(f"/api/v1/players/{users[0].username}/")
    assert r.status_code == 200
    body = r.json()
    assert body["username"] == users[0].username
    assert "secret@example.com" not in r.content.decode() and "email" not in body
    crisp = next(s for s in body["stats"] if s["kind"] == "crisp")
    assert crisp["games"] == 1 and crisp["wins"] in (0, 1)
    keys = {d["key"] for d in crisp["details"]}
    assert {"average_round", "calls", "call_success", "best_round"} <= keys
    assert body["ratings"][0]["kind"] == "crisp" and body["ratings"][0]["provisional"]
    r = APIClient().get("/api/v1/players/nobody-here/")
    assert r.status_code == 404 and r.json()["code"] == "not_found"


def test_history_paginates_filters_and_hides_private_games(
    finished_game, users, make_user, start_game
):
    for seed in range(3):
        finished_game(seed=seed, players=users[:2])
    private = finished_game(seed=4, players=users[:2], private=True)
    lobby_only = services.game_create(host=users[0])
    services.game_abandon(game=lobby_only, user=users[0])  # never started: not history
    base = f"/api/v1/players/{users[0].username}/games/"
    mine = client_for(users[0]).get(base, {"page_size": 2}).json()
    assert (mine["count"], mine["pages"], len(mine["results"])) == (4, 2, 2)
    assert mine["results"][0]["id"] == private.pk  # newest first
    row = mine["results"][0]
    assert row["result"] in ("won", "lost") and len(row["players"]) == 2
    stranger = client_for(make_user()).get(base).json()
    assert stranger["count"] == 3 and private.pk not in [g["id"] for g in stranger["results"]]
    assert client_for(users[0]).get(base, {"kind": "crisp"}).json()["count"] == 4
    bad = client_for(users[0]).get(base, {"kind": "chess"})
    assert bad.status_code == 400 and bad.json()["code"] == "invalid"
    far = client_for(users[0]).get(base, {"page": 9})
    assert far.status_code == 404 and far.json()["code"] == "bad_page"


def test_abandoned_games_are_in_history(users, start_game):
    g = start_game(users[:2])
    services.game_abandon(game=g, user=users[0])
    body = client_for(users[1]).get(f"/api/v1/players/{users[1].username}/games/").json()
    assert body["results"][0]["result"] == "abandoned"
    prof = client_for(users[1]).get(f"/api/v1/players/{users[1].username}/").json()
    assert prof["stats"][0]["abandoned"] == 1 and prof["stats"][0]["games"] == 0


def test_leaderboard(finished_game, users, settings):
    settings.HISTORY_PROVISIONAL_GAMES = 1
    finished_game(seed=1, players=users[:3])
    r = APIClient().get("/api/v1/leaderboards/crisp/", {"page_size": 2})
    body = r.json()
    assert (body["count"], body["pages"]) == (3, 2)
    assert [row["rank"] for row in body["results"]] == [1, 2]
    o = [row["rating"]["ordinal"] for row in body["results"]]
    assert o == sorted(o, reverse=True)
    assert APIClient().get("/api/v1/leaderboards/chess/").json()["code"] == "bad_kind"


def test_rounds(finished_game, users):
    g = finished_game(seed=2, players=users[:2])
    body = client_for(users[0]).get(f"/api/v1/games/{g.pk}/rounds/").json()
    rounds = body["rounds"]
    assert len(rounds) == g.rounds.count()
    assert rounds[-1]["scores"] == [s.score for s in g.seats.order_by("number")]
    assert [sum(x) for x in zip(*[r["round_scores"] for r in rounds], strict=True)] == rounds[-1][
        "scores"
    ]


def test_replay_api(finished_game, users, make_user):
    g = finished_game(seed=3, players=users[:2])
    c = client_for(make_user())  # a spectator of a public game
    base = f"/api/v1/games/{g.pk}/replay/"
    full = c.get(base).json()
    assert full["view"] == "full" and len(full["frames"]) == g.version == full["version"]
    one = client_for(users[1]).get(base, {"at": 10, "view": "seat", "seat": 1}).json()
    assert one["view"] == "seat" and [f["version"] for f in one["frames"]] == [10]
    # A seat's view is its player's (and staff's): not a spectator's, not the opponent's.
    for other in (c, client_for(users[0])):
        r = other.get(base, {"at": 10, "view": "seat", "seat": 1})
        assert r.status_code == 403 and r.json()["code"] == "not_your_seat"
    window = c.get(base, {"start": 4, "limit": 3, "view": "spectator"}).json()
    assert [f["version"] for f in window["frames"]] == [4, 5, 6]
    for params, code in [
        ({"view": "seat"}, "invalid"),
        ({"view": "seat", "seat": 5}, "no_such_seat"),
        ({"at": 10_000}, "no_such_version"),
        ({"view": "nope"}, "invalid"),
    ]:
        r = c.get(base, params)
        assert r.status_code in (400, 404) and r.json()["code"] == code, params
    # Without an account: a public game's full and spectator views (issue 24), never a seat's.
    assert APIClient().get(base).status_code == 200
    assert APIClient().get(base, {"view": "spectator"}).status_code == 200
    r = APIClient().get(base, {"view": "seat", "seat": 0})
    assert r.status_code == 403 and r.json()["code"] == "not_your_seat"


def test_export_api(finished_game, users, staff, make_user):
    g = finished_game(seed=4, players=users[:2])
    base = f"/api/v1/games/{g.pk}/export/"
    c = client_for(users[0])
    doc = c.get(base).json()
    assert doc["format"] == "crisp-online/game-export" and "audit" not in doc
    r = c.get(base, {"download": "true"})
    assert r["Content-Disposition"] == f'attachment; filename="crisp-game-{g.pk}.json"'
    text = c.get(base, {"output": "text"})
    assert text["Content-Type"].startswith("text/plain") and text.content.startswith(b"Crisp")
    denied = c.get(base, {"audit": "true"})
    assert denied.status_code == 403 and denied.json()["code"] == "not_staff"
    audit = client_for(staff).get(base, {"audit": "true"}).json()
    assert audit["audit"]["seed"] == g.seed


def test_export_of_a_game_in_progress_is_refused(users, start_game):
    g = start_game(users[:2])
    r = client_for(users[0]).get(f"/api/v1/games/{g.pk}/export/")
    assert r.status_code == 409 and r.json()["code"] == "game_in_progress"
    assert Game.objects.get(pk=g.pk).status == "playing"


@pytest.mark.parametrize(
    ("kind", "n", "keys"),
    [
        ("cribbage", 2, ["hands", "average_hand", "best_hand", "average_crib", "average_pegging"]),
        (
            "triple_crown",
            4,
            [
                "hands",
                "average_points",
                "high_success",
                "low_success",
                "team_success",
                "double_success",
                "double_won",
                "double_lost",
            ],
        ),
    ],
)
def test_profile_api_carries_the_kinds_own_figures(finished_game, users, kind, n, keys):
    finished_game(seed=3, players=users[:n], kind=kind)
    body = APIClient().get(f"/api/v1/players/{users[1].username}/").json()
    figures = next(s for s in body["stats"] if s["kind"] == kind)
    assert [d["key"] for d in figures["details"]] == keys
    assert all(d["format"] in ("int", "decimal", "percent") for d in figures["details"])
    assert figures["details"] == history_selectors.player_stats(user=users[1])[0]["details"]
