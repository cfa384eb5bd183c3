"""Schemathesis fuzzes every games endpoint from the published OpenAPI schema, authenticated
with a real API token, in-process over WSGI: whatever it sends, never a 5xx, always JSON.

Bounded: a fixed number of examples per operation, derandomised so CI runs are repeatable.
"""

from __future__ import annotations

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from hypothesis import HealthCheck, given, settings

from accounts.services import token_create
from games import services

EXAMPLES = 20


@pytest.fixture
def keep_connection():
    """What Django's test client does: a WSGI request must not close the test's connection."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.fixture
def token(users) -> str:
    _, key = token_create(user=users[0], name="fuzz")
    return key


def test_no_server_errors(users, token, fake_clock, keep_connection):
    # Some games to hit: ids 1.. exist in several states (schemathesis likes small ints).
    lobby = services.game_create(host=users[0])
    playing = services.game_create(host=users[0], settings={"draw_seconds": 30, "pile_draw": True})
    services.game_join(game=playing, user=users[1])
    services.game_start(game=playing, user=users[0])
    services.game_create(host=users[1], private=True)
    assert lobby.pk >= 1
    schema = schemathesis.openapi.from_wsgi("/api/schema/", get_wsgi_application())
    schema = schema.include(path_regex=r"^/api/v1/games")
    headers = {"Authorization": f"Token {token}"}
    failures: list[str] = []
    operations = 0
    for result in schema.get_all_operations():
        operation = result.ok()
        operations += 1

        @given(case=operation.as_strategy())
        @settings(
            max_examples=EXAMPLES,
            deadline=None,
            derandomize=True,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        def run(case) -> None:
            response = case.call(headers=headers)
            if response.status_code >= 500:
                failures.append(f"{case.method} {case.formatted_path}: {response.status_code}")
            elif response.status_code != 204:
                ctype = response.headers.get("content-type", [""])[0]
                assert ctype.startswith("application/json"), (case.formatted_path, ctype)

        run()
    assert operations >= 12
    assert not failures, failures
