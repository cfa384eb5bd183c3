"""Issue 21, item 3: the REST API's answers at its edges are 4xx JSON ``{code, detail}``.

Each test here failed before its fix: a huge page number (a 500: the offset overflowed), an
over-long idempotency key in the body (``invalid``, where the header and the WebSocket said
``bad_idempotency_key``), a number too large for a double (read as ``inf``).
"""

from __future__ import annotations

import pytest

from .conftest import client_for

pytestmark = pytest.mark.django_db

BASE = "/api/v1/games/"
HUGE = 576460752303423487  # offset (HUGE - 1) * 20 overflows a signed 64-bit integer


@pytest.mark.parametrize(
    "path",
    ["/api/v1/leaderboards/crisp/", "/api/v1/players/{username}/games/"],
)
def test_a_page_past_the_last_is_bad_page_even_on_an_empty_list(users, path):
    client = client_for(users[0])
    url = path.format(username=users[0].username)
    first = client.get(url)
    assert first.status_code == 200 and first.json()["results"] == []
    assert (first.json()["page"], first.json()["pages"]) == (1, 1)
    for page in (2, HUGE, 10**30):
        r = client.get(url, {"page": page})
        assert r.status_code == 404, (page, r.content)
        assert r.json()["code"] == "bad_page" and r.json()["detail"]


def test_an_idempotency_key_out_of_bounds_is_bad_idempotency_key_wherever_it_comes(
    users, start_game
):
    g = start_game(users[:2])
    client = client_for(users[0])
    url = f"{BASE}{g.pk}/actions/"
    body = {"action": {"type": "look"}, "expected_version": g.version}
    for key in ("k" * 101, ""):
        r = client.post(url, {**body, "idempotency_key": key}, format="json")
        assert (r.status_code, r.json()["code"]) == (400, "bad_idempotency_key"), key
    r = client.post(url, body, format="json", HTTP_IDEMPOTENCY_KEY="k" * 101)
    assert (r.status_code, r.json()["code"]) == (400, "bad_idempotency_key")
    r = client.post(url, {**body, "idempotency_key": "k" * 100}, format="json")
    assert r.status_code == 200, r.content


def test_numbers_beyond_a_double_are_malformed_json(users, start_game):
    g = start_game(users[:2])
    client = client_for(users[0])
    for number in ("1e999999", "-1e999999"):
        r = client.post(
            f"{BASE}{g.pk}/actions/",
            '{"action": {"type": "look"}, "expected_version": ' + number + "}",
            content_type="application/json",
        )
        assert r.status_code == 400, r.content
        assert r.json()["code"] == "malformed_json"


def test_the_table_page_opened_by_an_invite_link_watches_over_the_socket_with_the_code(
    users, start_game, client
):
    """Issue 21, item 8, the page's side: the socket it opens carries the code it was let in
    by (the socket refused an outsider without it: 4404, and the page stayed blank)."""
    import json
    import re

    g = start_game(users[:2], private=True)
    client.force_login(users[5])
    page = client.get(f"/games/{g.pk}/", {"code": g.invite_code.lower()}).content.decode()
    boot = json.loads(re.search(r'id="table-boot"[^>]*>(.*?)</script>', page, re.S).group(1))
    assert boot["ws"] == f"/ws/games/{g.pk}/?invite_code={g.invite_code.lower()}"
    client.force_login(users[1])  # a player needs no code
    page = client.get(f"/games/{g.pk}/", {"code": g.invite_code}).content.decode()
    boot = json.loads(re.search(r'id="table-boot"[^>]*>(.*?)</script>', page, re.S).group(1))
    assert boot["ws"] == f"/ws/games/{g.pk}/"


@pytest.mark.django_db(transaction=True)
def test_a_database_that_refuses_connections_is_a_json_503_with_retry_after(
    users, monkeypatch, caplog
):
    """Deterministic: the next connection attempt fails as PostgreSQL's refusal does (no
    waiting out a real timeout). Before: Django's HTML 500 page."""
    from django.db import connection

    client = client_for(users[0])
    connection.close()

    def refuse(*args, **kwargs):
        raise connection.Database.OperationalError("connection refused")

    monkeypatch.setattr(connection, "get_new_connection", refuse)
    for path in (BASE, f"{BASE}1/", "/api/v1/leaderboards/crisp/"):
        r = client.get(path)
        assert r.status_code == 503, (path, r.content)
        assert r["Content-Type"] == "application/json"
        assert r.json()["code"] == "unavailable" and r.json()["detail"]
        assert int(r["Retry-After"]) > 0
    # An outage is logged (Django's one line per 5xx, ours per request), but not a traceback
    # per request: the refusal is known and expected.
    assert not [rec for rec in caplog.records if rec.exc_info]


def test_a_bug_that_escapes_the_api_is_still_json(users, monkeypatch, settings):
    """Production (DEBUG off): Django's last-resort 500 is the API's shape under /api/."""
    from games import selectors

    settings.DEBUG = False

    def bug(**kwargs):
        raise ValueError("a bug")

    monkeypatch.setattr(selectors, "game_list", bug)
    client = client_for(users[0])
    client.raise_request_exception = False
    r = client.get(BASE)
    assert (r.status_code, r["Content-Type"]) == (500, "application/json")
    assert r.json()["code"] == "server_error"
    page = client.get("/games/")  # a page keeps its HTML error page
    assert page["Content-Type"].startswith("text/html")


def test_an_unknown_api_path_with_a_newline_is_the_json_404(users):
    """`/api/v1/games/%0A/export/` missed the catch-all (`.` stops at a newline): HTML 404."""
    r = client_for(users[0]).get("/api/v1/games/%0A/export/")
    assert (r.status_code, r["Content-Type"]) == (404, "application/json")
    assert r.json()["code"] == "not_found"
