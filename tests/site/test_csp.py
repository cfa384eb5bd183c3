"""The Content-Security-Policy header, and pages that need nothing it forbids."""

from __future__ import annotations

import re
import subprocess
import sys
from typing import Any

import pytest
from django.test import Client

from tests.factories import UserFactory
from tests.processes import BASE_DIR

#: Inline code a strict policy blocks: <script> without src (data blocks excepted), <style>,
#: style="" attributes and on*="" handlers.
INLINE = [
    re.compile(r"<script(?![^>]*\bsrc=)(?![^>]*type=\"application/json\")[^>]*>", re.I),
    re.compile(r"<style\b", re.I),
    re.compile(r"\sstyle=", re.I),
    re.compile(r"\son[a-z]+=", re.I),
]


def directives(response: Any) -> dict[str, str]:
    header = response["Content-Security-Policy"]
    return {part.split()[0]: part.strip() for part in header.split(";") if part.strip()}


def assert_no_inline(html: str, where: str) -> None:
    for pattern in INLINE:
        found = pattern.search(html)
        assert found is None, f"{where}: inline {found.group(0)!r}"


@pytest.mark.django_db
def test_every_page_has_a_strict_policy(client: Client) -> None:
    response = client.get("/")
    policy = directives(response)
    assert policy["script-src"] == "script-src 'self'"
    assert policy["style-src"] == "style-src 'self'"
    assert policy["object-src"] == "object-src 'none'"
    assert policy["frame-ancestors"] == "frame-ancestors 'none'"
    assert "unsafe-inline" not in response["Content-Security-Policy"]
    assert "Content-Security-Policy" in client.get("/api/v1/games/").headers


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("path", "signed_in"),
    [
        ("/", False),
        ("/accounts/login/", False),
        ("/accounts/signup/", False),
        ("/accounts/password/reset/", False),
        ("/", True),
        ("/accounts/profile/", True),
        ("/accounts/tokens/", True),
        ("/games/", True),
    ],
)
def test_pages_have_no_inline_script_style_or_handler(
    client: Client, path: str, signed_in: bool
) -> None:
    if signed_in:
        client.force_login(UserFactory(), backend="django.contrib.auth.backends.ModelBackend")
    response = client.get(path)
    assert response.status_code == 200
    assert_no_inline(response.content.decode(), path)


@pytest.mark.django_db
def test_the_tokens_page_with_a_new_key_has_no_inline_handler(client: Client) -> None:
    client.force_login(UserFactory(), backend="django.contrib.auth.backends.ModelBackend")
    response = client.post("/accounts/tokens/", {"name": "bot"})
    html = response.content.decode()
    assert 'data-copy-target="new-key"' in html
    assert_no_inline(html, "tokens page with a new key")


@pytest.mark.django_db
def test_the_api_docs_load_their_script_and_styles_from_files(client: Client) -> None:
    page = client.get("/api/docs/")
    assert page.status_code == 200
    html = page.content.decode()
    assert_no_inline(html, "/api/docs/")
    script = re.search(r'<script src="([^"]*script=[^"]*)"', html)
    assert script, html
    init = client.get(script.group(1).replace("&amp;", "&"))
    assert init.status_code == 200
    assert init["Content-Type"].startswith("application/javascript")
    assert b"SwaggerUIBundle" in init.content
    for asset in re.findall(r'(?:src|href)="(/static/[^"]+)"', html):
        assert client.get(asset).status_code == 200, asset


@pytest.mark.django_db
def test_the_language_cookie_is_same_site_and_secure_in_production(
    client: Client, settings: Any
) -> None:
    response = client.post("/accounts/language/", {"language": "ja", "next": "/"})
    cookie = response.cookies[settings.LANGUAGE_COOKIE_NAME]
    assert cookie["samesite"] == "Lax"

    # Production (DEBUG=0) adds Secure.
    env = {
        "DEBUG": "0",
        "SECRET_KEY": "k" * 60,
        "ALLOWED_HOSTS": "crisp.example",
        "DJANGO_SETTINGS_MODULE": "crisp_site.settings",
        "PATH": "/usr/bin:/bin",
    }
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "import django; django.setup(); from django.conf import settings;"
            "print(settings.LANGUAGE_COOKIE_SECURE, settings.LANGUAGE_COOKIE_SAMESITE)",
        ],
        cwd=BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.stdout.split() == ["True", "Lax"], out.stderr


@pytest.mark.django_db
def test_the_table_page_has_no_inline_code(client: Client) -> None:
    from games import services

    host = UserFactory()
    game = services.game_create(host=host, settings={"target_score": 100})
    client.force_login(host, backend="django.contrib.auth.backends.ModelBackend")
    response = client.get(f"/games/{game.pk}/")
    assert response.status_code == 200
    assert_no_inline(response.content.decode(), "table page")


def test_the_rules_page_may_be_framed_by_the_site_itself_only(client: Any) -> None:
    """The table's "?" shows the rules in a same-origin frame: that page alone relaxes
    frame-ancestors from 'none' to 'self'."""
    framed = client.get("/rules/crisp/?embed=1")
    assert "frame-ancestors 'self'" in framed["Content-Security-Policy"]
    assert framed["X-Frame-Options"] == "SAMEORIGIN"
    assert "frame-ancestors 'none'" in client.get("/")["Content-Security-Policy"]
