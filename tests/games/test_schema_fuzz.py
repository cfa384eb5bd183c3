"""Schemathesis fuzzes every games endpoint from the published OpenAPI schema, authenticated
with a real API token, in-process over WSGI: whatever it sends, never a 5xx, always JSON, and
every answer is one the schema describes (issue 21: the schema must be true) -- its status code,
content type, headers and body (schemathesis's response checks), for valid requests and for
invalid ones (which must be refused: `negative_data_rejection`).

Bounded: a fixed number of examples per operation, derandomised so CI runs are repeatable.
"""

from __future__ import annotations

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from hypothesis import HealthCheck, given, settings
from schemathesis import checks
from schemathesis.core.failures import FailureGroup
from schemathesis.generation import GenerationMode

from accounts.services import token_create
from games import services

EXAMPLES = 20

#: What every answer must satisfy (schemathesis's response checks).
RESPONSE_CHECKS = [
    checks.not_a_server_error,
    checks.status_code_conformance,
    checks.content_type_conformance,
    checks.response_headers_conformance,
    checks.response_schema_conformance,
]


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
    schema = schema.include(path_regex=r"^/api/v1/(games|match)")
    headers = {"Authorization": f"Token {token}"}
    failures: list[str] = []
    operations = 0
    for result in schema.get_all_operations():
        operation = result.ok()
        operations += 1
        # An operation with no input of its own (GET /api/v1/match/: only the credentials)
        # has nothing to make invalid.
        has_input = len(operation.body) > 0 or any(
            p.definition.get("in") in ("path", "query") for p in operation.iter_parameters()
        )
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE)[: 2 if has_input else 1]:

            @given(case=operation.as_strategy(generation_mode=mode))
            @settings(
                max_examples=EXAMPLES,
                deadline=None,
                derandomize=True,
                database=None,
                suppress_health_check=list(HealthCheck),
            )
            def run(case) -> None:
                response = case.call(headers=headers)
                ctype = response.headers.get("content-type", [""])[0]
                if response.status_code != 204 and not ctype.startswith("application/json"):
                    failures.append(f"{case.method} {case.formatted_path}: {ctype}")
                negative = case.meta is not None and (
                    case.meta.generation.mode is GenerationMode.NEGATIVE
                )
                wanted = RESPONSE_CHECKS + ([checks.negative_data_rejection] if negative else [])
                try:
                    case.validate_response(response, checks=wanted, headers=headers)
                except (AssertionError, FailureGroup) as error:
                    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
                    first = " | ".join(lines[1:8])[:700]
                    failures.append(
                        f"{case.method} {case.formatted_path} {response.status_code}: {first}"
                    )

            run()
    assert operations >= 12
    assert not failures, "\n".join(sorted(set(failures)))
