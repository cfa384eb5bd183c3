"""Request bodies on a real daphne (crisp_site.serve), where the ASGI server hands Django the
body (issue 21, item 3).

A chunked body (`Transfer-Encoding: chunked`, no `Content-Length`) was taken for an empty one:
`{"kind": "cribbage", "private": true}` made a *public Crisp* game, and a 3 MB chunked body got a
201 where a 3 MB body with a length gets 413. Now it is read, under the same limit.
"""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from typing import Any

import pytest

from accounts.services import token_create
from games.models import Game
from tests import processes as live
from tests.live.conftest import make_user

pytestmark = [pytest.mark.live, pytest.mark.django_db(transaction=True)]

LIMIT = 2_621_440  # DATA_UPLOAD_MAX_MEMORY_SIZE, Django's default, in docs/API.md


def _chunks(body: bytes, size: int = 65_536) -> Iterator[bytes]:
    for start in range(0, len(body), size):
        yield body[start : start + size]


def _post(port: int, path: str, body: bytes, headers: dict[str, str]) -> tuple[int, str, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        connection.request("POST", path, body=_chunks(body), headers=headers, encode_chunked=True)
        response = connection.getresponse()
        return response.status, response.getheader("Content-Type") or "", response.read()
    finally:
        connection.close()


def test_chunked_bodies_are_read_under_the_same_limit(log_dir: Any) -> None:
    user = make_user()
    _, key = token_create(user=user, name="chunks")
    auth = {"Authorization": f"Token {key}", "Content-Type": "application/json"}
    port = live.free_port()
    with live.running(live.daphne(log_dir, port)):
        live.wait_until(lambda: live.port_open(port), 30, "daphne to listen")
        body = json.dumps({"kind": "cribbage", "private": True}).encode()
        status, kind, answer = _post(port, "/api/v1/games/", body, auth)
        assert status == 201, answer
        created = json.loads(answer)
        assert (created["kind"], created["private"]) == ("cribbage", True)

        # Past the limit: the API's 413, as for a body that declares its length.
        padded = json.dumps({"kind": "crisp", "pad": "x" * (LIMIT + 10)}).encode()
        for path, expected_kind in (
            ("/api/v1/games/", "application/json"),
            ("/accounts/signup/", "text/plain"),
        ):
            status, kind, answer = _post(port, path, padded, auth)
            assert status == 413, (path, status, answer[:200])
            assert kind.startswith(expected_kind), (path, kind)
        assert json.loads(_post(port, "/api/v1/games/", padded, auth)[2])["code"] == "too_large"

        # A malformed JSON body sent in chunks is malformed JSON, not an empty request.
        status, _, answer = _post(port, "/api/v1/games/", b'{"kind": "cribb', auth)
        assert (status, json.loads(answer)["code"]) == (400, "malformed_json")
    assert list(Game.objects.values_list("kind", "private")) == [("cribbage", True)]
