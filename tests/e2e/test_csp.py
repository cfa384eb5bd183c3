"""In a real browser, under the real Content-Security-Policy: nothing is blocked.

Chromium reports every CSP violation on the console ("Refused to execute inline script …",
"Refused to apply inline style …"); these tests fail on any such message or JavaScript error
while a person uses the language menu, the table page and the API docs.
"""

from __future__ import annotations

from typing import Any

import pytest

from games import services
from tests.e2e.test_play import DESKTOP, log_in
from tests.factories import UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.live]


def watch_console(page: Any) -> list[str]:
    problems: list[str] = []
    page.on(
        "console",
        lambda m: (
            problems.append(m.text)
            if m.type in {"error", "warning"}
            and ("Content Security Policy" in m.text or "Refused" in m.text)
            else None
        ),
    )
    page.on("pageerror", lambda error: problems.append(str(error)))
    return problems


@pytest.mark.django_db(transaction=True)
def test_table_language_menu_and_api_docs_work_under_the_policy(chromium: Any, site: str) -> None:
    host = UserFactory()
    game = services.game_create(host=host, settings={"target_score": 100})
    page = log_in(chromium, site, host.username, DESKTOP)
    problems = watch_console(page)

    page.goto(f"{site}/games/{game.pk}/")
    page.wait_for_selector("#conn[data-state=online]")  # table.js ran and its socket is live

    # The language menu (wired by static/js/site.js, no inline onchange) switches on change.
    page.select_option("form.lang select", "ja")
    page.wait_for_function("() => document.documentElement.lang === 'ja'")
    page.wait_for_selector("#conn[data-state=online]")

    page.goto(f"{site}/api/docs/")
    page.wait_for_selector(".swagger-ui .information-container", timeout=30_000)
    page.wait_for_selector(".opblock", timeout=30_000)  # the schema loaded and rendered

    assert problems == [], problems
    assert page.errors == [], page.errors
