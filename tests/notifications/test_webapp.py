"""The installable web app (issue 26): the manifest, its icons, the service worker served at
the root with its scope header, and both linked from every page."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from django.conf import settings
from django.test import Client

pytestmark = pytest.mark.django_db


def test_the_manifest_names_the_app_and_its_icons():
    answer = Client().get("/manifest.webmanifest")
    assert answer.status_code == 200
    assert answer["Content-Type"] == "application/manifest+json"
    data = answer.json()
    assert data["name"] == "Crisp online"
    assert data["start_url"] == "/" and data["display"] == "standalone"
    sizes = {icon["sizes"]: icon["src"] for icon in data["icons"]}
    for size in (192, 512):
        src = sizes[f"{size}x{size}"]
        assert Client().get(src).status_code == 200
        path = Path(settings.BASE_DIR) / "static" / src.removeprefix(settings.STATIC_URL)
        png = path.read_bytes()
        assert png[:8] == b"\x89PNG\r\n\x1a\n"
        assert struct.unpack(">II", png[16:24]) == (size, size)


def test_the_service_worker_is_served_at_the_root_for_the_whole_site():
    answer = Client().get("/sw.js")
    assert answer.status_code == 200
    assert answer["Content-Type"].startswith("text/javascript")
    assert answer["Service-Worker-Allowed"] == "/"
    assert "no-cache" in answer["Cache-Control"]
    body = answer.content.decode().replace("\\u002D", "-")  # escapejs writes "-" so
    assert f'const STATIC_PREFIX = "{settings.STATIC_URL}";' in body
    assert 'const CACHE = "crisp-static-dev";' in body  # DEBUG: no manifest of hashed files
    for handler in ("fetch", "push", "notificationclick"):
        assert f'addEventListener("{handler}"' in body


def test_every_page_links_the_manifest_and_registers_the_worker():
    page = Client().get("/").content.decode()
    assert '<link rel="manifest" href="/manifest.webmanifest">' in page
    assert "js/sw-register.js" in page


def test_the_content_security_policy_lets_the_worker_run():
    """The worker is a same-origin script: ``worker-src`` falls back to ``script-src`` 'self'
    (CSP3), so the policy allows it with no change."""
    header = Client().get("/").headers["Content-Security-Policy"]
    directives = dict(d.strip().split(" ", 1) for d in header.split(";") if d.strip())
    assert "worker-src" not in directives
    assert directives["script-src"] == "'self'"
