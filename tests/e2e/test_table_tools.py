"""The parts every table has besides its game -- chat, "Leave game", "Play again" -- at the
Cribbage and Triple Crown tables (Crisp's: tests/e2e/test_game_night*.py), on a phone.

They are one shared template (games/_table_tools.html, games/_chat.html) and one shared module
(static/js/table/tools.js, ``mountTableTools``); these tests prove each table mounts them.
"""

from __future__ import annotations

import importlib.util
import random
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings

from accounts.services import token_create
from games import services
from games.models import ChatMessage, Game, Seat
from tests.e2e.test_play import log_in, shot, wait_live
from tests.e2e.test_specials import set_target
from tests.factories import UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.live]

PHONE = {"width": 360, "height": 740}
KINDS = ["cribbage", "triple_crown"]
#: The end score of `test_play_again_after_a_whole_game`'s short games (the product's: 121 for
#: Cribbage, 15 for Triple Crown): reached in a hand or two.
SHORT_TARGET = {"cribbage": 31, "triple_crown": 1}


@pytest.mark.parametrize("kind", KINDS)
def test_chat_and_leaving_the_game(
    chromium: Any, fast_site: str, artifacts: Path, kind: str
) -> None:
    """(`fast_site`, though the computer's pace is not what is under test: the module's other
    tests need it, and one site restart for the module's four is cheaper than two.)"""
    site = fast_site
    person = UserFactory(username=f"talks-{kind}", display_name="Talks")
    game = services.game_vs_computer(user=person, kind=kind, level="easy")
    page = log_in(chromium, site, person.username, PHONE, to=f"/games/{game.pk}/")
    wait_live(page)

    # Chat: below the table on a phone; the header's Chat button goes to it.
    page.click("#chat-jump")
    page.fill("#chat-input", "<b>good game</b>")
    page.press("#chat-input", "Enter")
    page.wait_for_selector("#chat-list .chat-line.mine .chat-text")
    assert page.inner_text("#chat-list .chat-text") == "<b>good game</b>"  # text, never HTML
    assert page.locator("#chat-list b").count() == 0
    message = ChatMessage.objects.get(game=game)
    assert (message.user_id, message.text) == (person.pk, "<b>good game</b>")
    shot(page, artifacts, f"tools-chat-{kind}-phone")

    # Leave game: asked first ("Stay" keeps the seat), then the seat is the computer's.
    page.click("#quit-open")
    page.wait_for_selector("#quit-dialog[open]")
    shot(page, artifacts, f"tools-quit-{kind}-phone")
    page.click("[data-key=quit-cancel]")
    page.wait_for_selector("#quit-dialog", state="hidden")
    assert Seat.objects.get(game=game, user=person).left_at is None
    page.click("#quit-open")
    page.click("[data-key=quit-confirm]")
    page.wait_for_url(f"{site}/games/")
    seat = Seat.objects.get(game=game, user=person)
    assert seat.left_at is not None and seat.sitting_in
    assert page.errors == []


def bot_client() -> Any:
    path = Path(settings.BASE_DIR) / "examples" / "bot_client.py"
    spec = importlib.util.spec_from_file_location("bot_client", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.timeout(420)
@pytest.mark.parametrize("kind", KINDS)
def test_play_again_after_a_whole_game(
    chromium: Any, fast_site: str, artifacts: Path, kind: str
) -> None:
    """A whole game (the person's seat played through the API by examples/bot_client.py), then
    the table's game-over panel offers "Play again", which opens the rematch's table.

    The game is a short one: its end score is lowered in the stored snapshot (tests only) so a
    hand or two ends it -- "Play again" needs a finished game, not a long one. Whole games at
    the product's end scores through the same client: tests/live/test_bot_client.py."""
    person = UserFactory(username=f"again-{kind}", display_name="Again")
    client = bot_client()
    api = client.Api(fast_site, token_create(user=person, name="e2e")[1])
    game_id = client.open_game(api, kind)
    set_target(Game.objects.get(pk=game_id), SHORT_TARGET[kind])
    card = client.play(api, game_id, rng=random.Random(3), poll=0.1)
    assert card["status"] == "finished"

    page = log_in(chromium, fast_site, person.username, PHONE, to=f"/games/{card['id']}/")
    again = page.locator("[data-key=rematch]")
    again.wait_for(state="visible")
    assert again.inner_text().strip() == "Play again"
    shot(page, artifacts, f"tools-game-over-{kind}-phone")
    again.click()
    page.wait_for_url(lambda url: f"/games/{card['id']}/" not in url and "/games/" in url)
    rematch = Game.objects.get(rematch_of_id=card["id"])
    assert page.url.endswith(f"/games/{rematch.pk}/")
    # Against the computer the rematch keeps the table -- the same computer players at their
    # levels -- and starts at the one person's click (issue 24, item 5).
    assert (rematch.kind, rematch.status) == (kind, Game.Status.PLAYING)
    assert Seat.objects.filter(game=rematch, user=person).exists()

    def computers(game_id: int) -> list[str]:
        seats = Seat.objects.filter(game_id=game_id, user__is_bot=True).order_by("number")
        return [s.bot_level for s in seats]

    assert computers(rematch.pk) == computers(card["id"]) != []
    assert page.errors == []
