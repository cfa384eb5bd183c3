"""A client's malformed request to a page is a 4xx and a WARNING line, never an ERROR traceback
(issue 21, item 3): an operator's error alerts are for server faults."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db

LIMIT = 2_621_440  # DATA_UPLOAD_MAX_MEMORY_SIZE


def _no_errors(caplog: Any) -> None:
    loud = [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
    assert not loud, [(r.name, r.levelname, r.getMessage()) for r in loud]


def test_an_oversized_form_post_to_a_page_is_413_and_one_warning(caplog: Any) -> None:
    client = Client(raise_request_exception=False)
    with caplog.at_level(logging.INFO):
        response = client.post("/accounts/login/", {"username": "x" * (LIMIT + 1)})
    assert response.status_code == 413
    assert response["Content-Type"].startswith("text/plain")
    _no_errors(caplog)
    assert any(r.levelno == logging.WARNING for r in caplog.records)


def test_an_oversized_api_body_is_the_api_413(caplog: Any) -> None:
    client = Client(raise_request_exception=False)
    with caplog.at_level(logging.INFO):
        response = client.post("/api/v1/games/", "x" * (LIMIT + 1), content_type="application/json")
    assert response.status_code == 413
    assert response.json()["code"] == "too_large"
    _no_errors(caplog)


def test_too_many_form_fields_is_a_400_and_a_warning_line(caplog: Any) -> None:
    client = Client(raise_request_exception=False)
    fields = {f"f{i}": "1" for i in range(1_001)}  # DATA_UPLOAD_MAX_NUMBER_FIELDS is 1,000
    with caplog.at_level(logging.INFO):
        response = client.post("/accounts/login/", fields)
    assert response.status_code == 400
    _no_errors(caplog)
    [record] = [r for r in caplog.records if r.name == "django.security.TooManyFieldsSent"]
    assert record.levelno == logging.WARNING and record.exc_info is None


MALFORMED = b'--xx\r\nContent-Disposition: form-data; name="a"\r\n\r\nzz'


def test_a_multipart_post_without_a_boundary_is_a_400_page_and_a_warning_line(caplog: Any) -> None:
    """Django refuses it with its 400 page and logs the parser's traceback: the line stays
    (without the traceback), the page has a body and a content type."""
    client = Client(raise_request_exception=False)
    with caplog.at_level(logging.INFO):
        response = client.generic(
            "POST", "/accounts/login/", MALFORMED, content_type="multipart/form-data"
        )
    assert response.status_code == 400
    assert response.content and response["Content-Type"].startswith("text/html")
    _no_errors(caplog)
    assert any(r.name == "django.request" and r.levelno == logging.WARNING for r in caplog.records)


def test_a_multipart_post_without_a_boundary_to_the_api_is_a_json_400(caplog: Any) -> None:
    from tests.factories import UserFactory

    client = Client(raise_request_exception=False)
    client.force_login(UserFactory())
    with caplog.at_level(logging.INFO):
        response = client.generic(
            "POST", "/api/v1/games/", MALFORMED, content_type="multipart/form-data"
        )
    assert response.status_code == 400
    body = response.json()
    assert body["code"] == "malformed_body" and body["detail"]
    _no_errors(caplog)
