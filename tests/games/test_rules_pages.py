"""The players' rules pages say what the rules documents say: Crisp's turn-based mode (R28).

The table asks "Call crisp?" with the buttons "Call CRISP!" and "No" (static/js, djangojs
catalogues); a player reading the rules page in their language must meet the same words.
"""

from __future__ import annotations

import pytest
from django.test import Client
from django.utils.translation import trans_real

pytestmark = pytest.mark.django_db


def _js(message: str, lang: str) -> str:
    """The table's word for ``message`` in ``lang`` (the JavaScript catalogue)."""
    return trans_real.DjangoTranslation(lang, domain="djangojs").gettext(message)


@pytest.mark.parametrize("lang", ["en", "ja", "ru"])
def test_crisp_rules_page_explains_turn_based_play(lang: str) -> None:
    page = Client(HTTP_ACCEPT_LANGUAGE=lang).get("/rules/crisp/")
    assert page.status_code == 200
    html = page.content.decode()
    assert 'id="turn-based"' in html
    section = html.split('id="turn-based"', 1)[1]
    for message in ("Call crisp?", "Call CRISP!", "No"):
        assert _js(message, lang) in section, (lang, message)
