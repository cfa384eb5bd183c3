"""Bad input at the edge of the API: nested too deep, too large. A clear 4xx, never a 500."""

from __future__ import annotations

import json
from typing import Any

import pytest
from rest_framework.test import APIClient

from crisp_site import parsers

DEEP = "[" * 1000 + "]" * 1000  # a 2 KB body; Python's decoder recursed once per level

ENDPOINTS = ["/api/v1/games/", "/api/v1/games/join/", "/api/v1/me/tokens/"]


@pytest.fixture
def client(make_user: Any) -> APIClient:
    api = APIClient()
    api.force_authenticate(make_user())
    return api


@pytest.mark.parametrize("path", ENDPOINTS)
@pytest.mark.parametrize(
    "body",
    [DEEP, '{"a":' * 1000 + "1" + "}" * 1000, '{"action": ' + "[" * 40 + "1" + "]" * 40 + "}"],
)
def test_json_nested_too_deep_is_a_400_malformed_json(
    client: APIClient, path: str, body: str
) -> None:
    response = client.post(path, body, content_type="application/json")
    assert response.status_code == 400, response.content[:300]
    assert response.json()["code"] == "malformed_json"
    assert "nested" in response.json()["detail"]


def test_reasonable_nesting_and_strictness_are_unchanged(client: APIClient) -> None:
    ok = client.post("/api/v1/games/", {"settings": {"target_score": 100}}, format="json")
    assert ok.status_code == 201, ok.content
    nan = client.post(
        "/api/v1/games/", '{"settings": {"target_score": NaN}}', content_type="application/json"
    )
    assert (nan.status_code, nan.json()["code"]) == (400, "malformed_json")


def test_depth_is_counted_without_recursion() -> None:
    value: Any = 1
    for _ in range(100_000):
        value = [value]
    assert parsers.depth(value) == parsers.MAX_DEPTH + 1  # stops counting once past the bound
    assert parsers.depth({"a": [1, {"b": []}]}) == 4
    assert parsers.depth("flat") == 0
    assert parsers.loads('{"a": [1, {"b": []}]}') == {"a": [1, {"b": []}]}
    with pytest.raises(parsers.TooDeep):
        parsers.loads(DEEP)


@pytest.mark.parametrize("content_type", ["application/json", "application/x-www-form-urlencoded"])
def test_a_body_over_the_limit_is_a_json_413(client: APIClient, content_type: str) -> None:
    body = json.dumps({"target_score": 100, "pad": "x" * 3_000_000})
    response = client.post("/api/v1/games/", body, content_type=content_type)
    assert response.status_code == 413
    assert response["Content-Type"] == "application/json"
    assert response.json()["code"] == "too_large"


def test_the_limit_hit_while_drf_reads_the_body_is_a_json_413() -> None:
    """A body with no Content-Length to check first fails as DRF reads it: the handler maps it."""
    from django.core.exceptions import RequestDataTooBig

    from games.exceptions import api_exception_handler

    response = api_exception_handler(RequestDataTooBig("too big"), {})
    assert response is not None
    assert (response.status_code, response.data["code"]) == (413, "too_large")
