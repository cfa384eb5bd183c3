"""The published OpenAPI schema describes the site's own answers (issue 21, item 3).

Fast, direct checks of the three untruths found; tests/games/test_schema_fuzz.py runs
schemathesis's response checks over every operation.
"""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest

from games import services

from .conftest import client_for

pytestmark = pytest.mark.django_db


@pytest.fixture
def schema(users) -> dict[str, Any]:
    return client_for(users[0]).get("/api/schema/", {"format": "json"}).json()


def _nullable_to_json_schema(node: Any) -> Any:
    """OpenAPI 3.0's `nullable: true` as plain JSON Schema (`type: [X, "null"]`)."""
    if isinstance(node, dict):
        out = {k: _nullable_to_json_schema(v) for k, v in node.items() if k != "nullable"}
        if node.get("nullable") and "type" in node:
            out["type"] = [node["type"], "null"]
        return out
    if isinstance(node, list):
        return [_nullable_to_json_schema(v) for v in node]
    return node


def test_a_game_s_settings_match_the_schema_whatever_the_kind(users, schema):
    settings = schema["components"]["schemas"]["GameOutput"]["properties"]["settings"]
    assert "oneOf" not in settings  # menus share option names: a value may match several
    branches = [_nullable_to_json_schema(b) for b in settings["anyOf"]]
    client = client_for(users[0])
    for kind in ("crisp", "cribbage", "triple_crown"):
        game = services.game_create(host=users[0], kind=kind)
        answer = client.get(f"/api/v1/games/{game.pk}/").json()["settings"]
        matching = [b for b in branches if jsonschema.Draft7Validator(b).is_valid(answer)]
        assert matching, (kind, answer)
    shared = {"move_seconds": None}
    assert sum(jsonschema.Draft7Validator(b).is_valid(shared) for b in branches) >= 2


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/games/?kind=",
        "/api/v1/games/?scope=",
        "/api/v1/players/{username}/games/?kind=",
        "/api/v1/leaderboards/crisp/?provisional=",
        "/api/v1/games/{game}/replay/?view=",
        "/api/v1/games/{game}/export/?output=",
    ],
)
def test_an_empty_value_outside_an_enum_is_refused(users, start_game, path):
    game = start_game(users[:2])
    services.game_abandon(game=game, user=users[0])  # over: its replay and export exist
    url = path.format(username=users[0].username, game=game.pk)
    r = client_for(users[0]).get(url)
    assert r.status_code == 400, (url, r.content)
    assert r.json()["code"] == "invalid"


def test_every_operation_documents_throttling_and_server_trouble(schema):
    operations = [
        (path, method, op)
        for path, item in schema["paths"].items()
        if path.startswith("/api/")
        for method, op in item.items()
        if isinstance(op, dict) and "responses" in op
    ]
    assert len(operations) > 20
    for path, method, op in operations:
        for status in ("429", "500", "503"):
            assert status in op["responses"], (method, path, status)
        assert "Retry-After" in op["responses"]["429"]["headers"]
        if op.get("requestBody"):
            assert {"400", "413", "415"} <= set(op["responses"]), (method, path)
