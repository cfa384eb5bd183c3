"""The project-wide exception handler: every refusal is {code, detail}; never a 500 page."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.db import OperationalError, connection
from django.http import Http404

from games import services
from games.engines.crisp import IllegalAction
from games.exceptions import api_exception_handler

from .conftest import client_for


def handled(exc: Exception):
    return api_exception_handler(exc, {})


def test_mapping():
    r = handled(IllegalAction("not_your_turn", "it is seat 1's turn"))
    assert (r.status_code, r.data["code"]) == (409, "not_your_turn")
    assert handled(IllegalAction("bad_action", "x")).status_code == 400
    r = handled(lock_timeout())
    assert (r.status_code, r.data["code"], r["Retry-After"]) == (503, "busy", "1")
    r = handled(OperationalError("database is locked"))  # SQLite's lock wait ran out
    assert (r.status_code, r.data["code"]) == (503, "busy")
    assert handled(Http404()).data["code"] == "not_found"
    assert handled(PermissionDenied()).data["code"] == "permission_denied"
    assert handled(ValueError("boom")) is None  # a bug stays a bug (and is logged as one)


class _PgError(Exception):
    """Stands in for the psycopg 3 error Django's OperationalError wraps (``__cause__``)."""

    def __init__(self, message: str, sqlstate: str) -> None:
        super().__init__(message)
        self.sqlstate = sqlstate


def lock_timeout() -> OperationalError:
    """What Django raises on PostgreSQL when ``lock_timeout`` runs out (sqlstate 55P03)."""
    message = "canceling statement due to lock timeout"
    try:
        raise OperationalError(message) from _PgError(message, "55P03")
    except OperationalError as exc:
        return exc


def test_other_operational_errors_are_500s_and_logged(caplog, db):
    """Only a lock wait is ``busy``: a lost connection, a disk error … is a server error --
    in the API's JSON shape, with its traceback in the log (issue 21: it was Django's HTML)."""
    connection.ensure_connection()  # the database was reachable: these are not "unavailable"
    message = "terminating connection due to administrator command"
    try:
        raise OperationalError(message) from _PgError(message, "57P01")
    except OperationalError as exc:
        pg = exc
    for exc in (pg, OperationalError("disk I/O error")):
        caplog.clear()
        with caplog.at_level("ERROR", logger="games.exceptions"):
            r = handled(exc)
        assert (r.status_code, r.data["code"]) == (500, "server_error") and r.data["detail"]
        assert [r.exc_info[1] for r in caplog.records] == [exc]


def test_other_operational_error_via_api_is_500(users, start_game, monkeypatch):
    g = start_game(users[:2])

    def broken(*args, **kwargs):
        raise OperationalError("disk I/O error")

    monkeypatch.setattr(services.play, "_lock_with_seats", broken)
    c = client_for(users[0])
    c.raise_request_exception = False
    r = c.post(f"/api/v1/games/{g.pk}/actions/", {"action": {"type": "look"}}, format="json")
    assert r.status_code == 500 and r.json()["code"] == "server_error"


def test_lock_timeout_is_a_busy_503_and_changes_nothing(users, start_game, monkeypatch):
    g = start_game(users[:2])

    def locked(*args, **kwargs):
        raise lock_timeout()

    monkeypatch.setattr(services.play, "_lock_with_seats", locked)
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
