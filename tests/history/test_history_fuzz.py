"""Schemathesis fuzzes the after-game endpoints from the published schema, over finished,
abandoned and running games: whatever it sends, never a 5xx, always JSON (or the documented
plain-text notation)."""

from __future__ import annotations

import random

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from hypothesis import HealthCheck, given, settings

from accounts.services import token_create
from games import services

from .conftest import play

pytestmark = pytest.mark.django_db
EXAMPLES = 15
PATHS = r"^/api/v1/(players|leaderboards|games/\{game_id\}/(rounds|replay|export))"


@pytest.fixture
def keep_connection():
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


def test_no_server_errors(users, start_game, fake_clock, keep_connection):
    g = start_game(users[:2], draw_seconds=30)
    play(g, fake_clock, random.Random(1))  # game 1: finished
    services.game_abandon(game=start_game(users[2:4]), user=users[2])  # game 2: abandoned
    start_game(users[4:6])  # game 3: playing
    _, key = token_create(user=users[0], name="fuzz")
    schema = schemathesis.openapi.from_wsgi("/api/schema/", get_wsgi_application())
    schema = schema.include(path_regex=PATHS)
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
            response = case.call(headers={"Authorization": f"Token {key}"})
            if response.status_code >= 500:
                failures.append(f"{case.method} {case.formatted_path}: {response.status_code}")
            else:
                ctype = response.headers.get("content-type", [""])[0]
                assert ctype.startswith(("application/json", "text/plain")), ctype

        run()
    assert operations == 6
    assert not failures, failures
