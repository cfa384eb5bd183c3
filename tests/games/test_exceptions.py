"""The project-wide exception handler: every refusal is {code, detail}; never a 500 page."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.db import OperationalError
from django.http import Http404

from games import services
from games.engine import IllegalAction
from games.exceptions import api_exception_handler

from .conftest import client_for


def handled(exc: Exception):
    return api_exception_handler(exc, {})


def test_mapping():
    r = handled(IllegalAction("not_your_turn", "it is seat 1's turn"))
    assert (r.status_code, r.data["code"]) == (409, "not_your_turn")
    assert handled(IllegalAction("bad_action", "x")).status_code == 400
    r = handled(OperationalError("canceling statement due to lock timeout"))
    assert (r.status_code, r.data["code"], r["Retry-After"]) == (503, "busy", "1")
    assert handled(Http404()).data["code"] == "not_found"
    assert handled(PermissionDenied()).data["code"] == "permission_denied"
    assert handled(ValueError("boom")) is None  # a bug stays a bug (and is logged as one)


def test_lock_timeout_is_a_busy_503_and_changes_nothing(users, start_game, monkeypatch):
    g = start_game(users[:2])

    def locked(*args, **kwargs):
        raise OperationalError("canceling statement due to lock timeout")

    monkeypatch.setattr(services, "_lock", locked)
    r = client_for(users[0]).post(
        f"/api/v1/games/{g.pk}/actions/", {"action": {"type": "look"}}, format="json"
    )
    assert r.status_code == 503 and r.json()["code"] == "busy"
    g.refresh_from_db()
    assert g.version == 3


def test_unknown_api_path_is_json(users):
    c = client_for(users[0])
    for r in (c.get("/api/v1/games/-1/"), c.post("/api/v1/nothing/here/")):
        assert r.status_code == 404 and r.json()["code"] == "not_found"
